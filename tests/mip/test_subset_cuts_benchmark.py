"""``benchmarks/mip_subset_cuts.py`` (reports/mip/README.md section 10.24): each set's optimum
is the brute-force optimum of its requests, every subset-latency row holds for the optimal
schedule and for MC-SF's, the bound after the cut rounds lies between the interval LP and the
brute-force optimum and moves above the LP on some instance, and bad input is refused with
one error, exit 2."""

from __future__ import annotations

import numpy as np
import pytest

from kvopt.core.mcsf import mcsf_starts
from kvopt.mip.model.builder import encode_starts
from tests.bruteforce import brute_force_opt
from tests.mip.test_window_lp_benchmark import _instance
from tests.scripts import assert_refused, load_benchmark

SC = load_benchmark("mip_subset_cuts")
SEEDS = (0, 3, 4, 5, 8, 9, 10, 11)


@pytest.fixture(scope="module")
def runs():
    """Per tiny instance: OPT and its starts (brute force), and the cut rounds' outcome with
    sets of up to all but one request."""
    out = []
    for seed in SEEDS:
        inst = _instance(seed)
        opt, starts = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
        r = SC.subset_cut_bound(inst, float(opt), inst.n - 1, 3, 30, seed, 10.0)
        out.append((seed, inst, float(opt), np.asarray(starts), r))
    return out


def test_set_optimum_is_the_brute_force_optimum():
    rng = np.random.default_rng(5)
    for seed in SEEDS[:5]:
        inst = _instance(seed)
        reqs = sorted(rng.choice(inst.n, size=3, replace=False).tolist())
        sub = [np.asarray(v)[reqs].tolist() for v in (inst.arrival, inst.prompt, inst.output)]
        assert SC.subset_opt(inst, reqs, {}, 10.0) == brute_force_opt(inst.memory, *sub)[0]


def test_subset_rows_hold_for_feasible_schedules(runs):
    n_rows = 0
    for seed, inst, _, starts, r in runs:
        d = r["data"]
        for s in (starts, mcsf_starts(inst)):
            y = encode_starts(d.col_group, d.col_start, d.groups, np.asarray(s))
            if y is None:                      # outside the start windows of UB = OPT
                continue
            for groups, v in r["cuts"]:
                cols = np.isin(d.col_group, sorted(groups))
                assert float(d.c[cols] @ y[cols]) >= v - 1e-7, (seed, groups)
        n_rows += len(r["cuts"])
    assert n_rows >= 5                         # the check above is not vacuous


def test_subset_cut_bound_between_interval_lp_and_opt(runs):
    moved = 0
    for seed, _, opt, _, r in runs:
        assert r["lp"] - 1e-7 <= r["bound"] <= opt + 1e-7, seed
        moved += r["bound"] > r["lp"] + 1e-3
    assert moved >= 2


@pytest.mark.parametrize("argv, field", [
    (["no/such/records.json"], "RECORDS.json"),
    (["reports/mip/frontier_cpu_v2.json", "--max-size", "1"], "--max-size"),
    (["reports/mip/frontier_cpu_v2.json", "--sub-time", "nan"], "--sub-time"),
    (["reports/mip/frontier_cpu_v2.json", "--n", "7"], "--n"),
    (["tests"], "RECORDS.json"),                          # a folder without instances
    (["reports/mip/paper_scale", "--only", "nope"], "--only"),
])
def test_refuses_bad_input(argv, field):
    assert_refused("benchmarks/mip_subset_cuts.py", argv, field)
