"""``benchmarks/mip_window_lp.py`` (reports/mip/README.md section 10.12): the window
configuration LP is a relaxation, so on tiny instances it lies between the interval LP
(whose rows its master keeps) and the brute-force optimum, at every slack cost; bad input is
refused with one error, exit 2."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from kvopt.core.instance import Instance
from kvopt.mip.bounds.intervals import interval_bound
from tests.bruteforce import brute_force_opt
from tests.conftest import once_per_run
from tests.scripts import assert_refused, load_benchmark

WL = load_benchmark("mip_window_lp")


def _instance(seed: int) -> Instance:
    """Five or six requests, memory within 2 of the largest peak: the interval LP is below
    OPT on most of them."""
    rng = np.random.default_rng([seed, 1212])
    n = int(rng.integers(5, 7))
    out = rng.integers(2, 8, size=n)
    pr = rng.integers(0, 4, size=n)
    if seed % 3 == 0:                      # identical requests: an aggregated group
        out[1], pr[1] = out[0], pr[0]
    M = int((pr + out).max() + rng.integers(0, 3))
    return Instance(memory=M, arrival=[0] * n, prompt=pr.tolist(), output=out.tolist())


def _runs(_folder: Path) -> list:
    out = []
    for seed in (0, 3, 5, 8, 9, 10):
        inst = _instance(seed)
        opt, starts = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
        lp = interval_bound(inst, upper=opt, time_limit=30).bound
        width = 2 + seed % 3
        r = WL.window_bound(inst, float(opt), width, max(1, width // 2), 60.0,
                            starts=np.asarray(starts) if seed % 2 == 0 else None,
                            bigs=(1.0, 50.0))
        out.append((seed, opt, lp, r))
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Per tiny instance: OPT, the interval LP and the window LP's converged values at slack
    costs 1 and 50 (windows of 2-4 slots; the columns seeded with OPT's schedule on even
    seeds, from slacks alone on odd ones). Seeds whose window LP is quick (4 and 11 took 11 of
    the fixture's 21 s); the interval LP is at least 0.5 below OPT on five of the six.
    Computed once per run (not once per xdist worker)."""
    return once_per_run(tmp_path_factory, "window-lp", _runs)


def test_window_lp_between_interval_lp_and_opt(runs):
    for seed, opt, lp, r in runs:
        assert [b for b, _, _ in r["levels"]] == [1.0, 50.0], seed     # both converged
        values = [v for _, v, _ in r["levels"]]
        assert all(v <= opt + 1e-6 for v in values), (seed, values, opt)
        assert values[0] <= values[1] + 1e-6, (seed, values)           # monotone in the cost
        assert values[1] >= lp - 1e-6, (seed, values, lp)


def test_window_lp_cuts_the_interval_lp(runs):
    """A relaxation that never moves would pass the test above: where the interval LP is
    below OPT, the window LP is strictly above it on most of these instances."""
    gap = [(lp, r) for _, opt, lp, r in runs if lp < opt - 0.5]
    assert len(gap) >= 4  # five (seed 10's gap is 0.5 less 6e-8)
    assert sum(r["levels"][1][1] > lp + 0.1 for lp, r in gap) >= len(gap) - 1


@pytest.mark.parametrize("argv, field", [
    (["no/such/records.json"], "RECORDS.json"),
    (["reports/mip/frontier_cpu_v2.json", "--stride", "1.5"], "--stride"),
])
def test_window_lp_refuses_bad_input(argv, field):
    assert_refused("benchmarks/mip_window_lp.py", argv, field)
