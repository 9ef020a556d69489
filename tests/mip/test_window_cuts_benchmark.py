"""``benchmarks/mip_window_cuts.py`` (reports/mip/README.md section 10.13): every window cut
holds for the optimal schedule and for MC-SF's, the bound after the cut rounds lies between
the interval LP and the brute-force optimum and moves above the LP where it has a gap, and
bad input is refused with one error, exit 2."""

from __future__ import annotations

import numpy as np
import pytest

from kvopt.core.mcsf import mcsf_starts
from kvopt.mip.model.builder import encode_starts
from tests.bruteforce import brute_force_opt
from tests.mip.test_window_lp_benchmark import _instance
from tests.scripts import assert_refused, load_benchmark

WC = load_benchmark("mip_window_cuts")


@pytest.fixture(scope="module")
def runs():
    """Per tiny instance (those of the window-LP test): OPT and its starts, the interval LP
    with every cut of up to 2 rounds (windows of 2-4 slots), the bound after each round."""
    out = []
    for seed in (0, 3, 4, 5, 8, 9, 10, 11):
        inst = _instance(seed)
        opt, starts = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
        width = 2 + seed % 3
        m = WC.CutMaster(inst, float(opt))
        sep = WC.WindowSeparator(inst, m.data, width, max(1, width // 2))
        x, dual = m.solve()
        history = [m.bound(dual)]
        for _ in range(2):
            cuts = [c for w in range(len(sep.windows)) if (c := sep.separate(w, x)) is not None]
            if not cuts:
                break
            for c in cuts:               # each cut is violated by the point it separates
                assert float(c.coef @ x[c.cols]) > c.rhs + 1e-4, seed
            m.add(cuts)
            x, dual = m.solve()
            history.append(m.bound(dual))
        out.append((seed, inst, opt, np.asarray(starts), m, history))
    return out


def test_window_cuts_hold_for_feasible_schedules(runs):
    n_cuts = 0
    for seed, inst, _, starts, m, _ in runs:
        d = m.data
        for s in (starts, mcsf_starts(inst)):
            y = encode_starts(d.col_group, d.col_start, d.groups, np.asarray(s))
            if y is None:                      # outside the start windows of UB = OPT
                continue
            for c in m.cuts:
                assert float(c.coef @ y[c.cols]) <= c.rhs + 1e-7, (seed, c)
        n_cuts += len(m.cuts)
    assert n_cuts >= 10                        # the check above is not vacuous


def test_window_cut_bound_between_interval_lp_and_opt(runs):
    moved = gaps = 0
    for seed, _, opt, _, _, history in runs:
        assert all(b <= opt + 1e-6 for b in history), (seed, history, opt)
        assert max(history) >= history[0] - 1e-6, seed
        if history[0] < opt - 0.5:
            gaps += 1
            moved += max(history) > history[0] + 0.1
    assert gaps >= 6 and moved >= gaps - 2, (gaps, moved)


@pytest.mark.parametrize("argv, field", [
    (["--frontier", "no/such/records.json"], "--frontier"),
    (["--paper", "no/such/folder"], "--paper"),
    (["--frontier", "reports/mip/frontier_cpu_v2.json", "--width", "0"], "--width"),
])
def test_window_cuts_refuse_bad_input(argv, field):
    assert_refused("benchmarks/mip_window_cuts.py", argv, field)
