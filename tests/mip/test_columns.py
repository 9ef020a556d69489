"""The LP by column generation over start columns (kvopt.mip.bounds.columns): every round's
bound below brute-force OPT, the LP's value at the end, the fallbacks, and interval_bound's
method when only restricted LPs were solved."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import kvopt.mip.bounds.columns as colmod
from kvopt import Instance
from kvopt.core.generators import model1
from kvopt.mip.bounds.columns import (
    grid_columns,
    restrict_columns,
    schedule_columns,
    solve_lp_columns,
)
from kvopt.mip.bounds.intervals import _interval_model_parts, interval_bound
from kvopt.mip.bounds.sparse_lp import solve_lp_duals
from kvopt.mip.model.builder import build_milp
from tests.bruteforce import brute_force_opt
from tests.strategies import small_instances


def _random_instance(rng: np.random.Generator) -> Instance:
    M = int(rng.integers(4, 12))
    n = int(rng.integers(2, 6))
    s = rng.integers(0, min(4, M - 1) + 1, size=n)
    o = np.array([rng.integers(1, M - si + 1) for si in s])
    a = rng.integers(0, 3, size=n)
    return Instance(memory=M, arrival=a, prompt=s, output=o)


@pytest.mark.parametrize("seed", range(40))
def test_every_round_is_a_bound_and_the_last_is_the_lp(seed):
    """Both models of the interval bound: each round's Lagrangian value <= brute-force OPT,
    and at the end the same value as the whole LP (and the model's columns, grid 2 and 3)."""
    inst = _random_instance(np.random.default_rng(4100 + seed))
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    base, data = _interval_model_parts(inst, upper=opt)
    for model in (base, data):
        whole = solve_lp_duals(model)
        for grid in (2, 3):
            res = solve_lp_columns(model, grid=grid)
            assert res.status == "optimal"
            assert res.bound == pytest.approx(whole.value, abs=1e-6)
            assert res.value == pytest.approx(whole.value, abs=1e-6)
            assert all(r["bound"] <= opt + 1e-9 for r in res.rounds)
            assert res.bound == max(r["bound"] for r in res.rounds)


@pytest.mark.parametrize("seed", range(6))
def test_stopped_after_one_round_is_a_bound(seed):
    """A call stopped after its first restricted LP (here by ``max_rounds``; in a call, by the
    deadline) returns that round's bound: below the LP's value and OPT."""
    inst = model1(60 + seed, n=6, memory=12)
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    d = build_milp(inst, "tight+cores", upper=opt)
    one = solve_lp_columns(d, max_rounds=1, grid=4)
    full = solve_lp_columns(d, grid=4)
    assert one.status == "max_rounds" and one.value is None and len(one.rounds) == 1
    assert one.bound <= full.bound + 1e-9 <= opt + 1e-6


def test_infeasible_first_columns_fall_back_to_all():
    """Only the first slot of every window: the requests cannot all start at 0 (memory), so
    the restricted LP is infeasible and the whole model is solved instead."""
    inst = Instance(memory=6, arrival=[0, 0, 0], prompt=[2, 2, 2], output=[3, 3, 4])
    d = build_milp(inst, "tight+cores", upper=40)
    first = d.col_start == 0
    assert solve_lp_duals(restrict_columns(d, first)).status == "infeasible"
    res = solve_lp_columns(d, columns=first)
    assert res.status == "optimal" and res.rounds[0]["columns"] == d.n_cols
    assert res.bound == pytest.approx(solve_lp_duals(d).value, abs=1e-6)


def test_schedule_columns_make_the_first_lp_feasible():
    """The same first columns plus a feasible schedule's: no fallback needed."""
    inst = Instance(memory=6, arrival=[0, 0, 0], prompt=[2, 2, 2], output=[3, 3, 4])
    d = build_milp(inst, "tight+cores", upper=40)
    starts = np.array([0, 3, 6])
    assert inst.tel_of_starts(starts) <= 40
    first = d.col_start == 0
    res = solve_lp_columns(d, columns=first, starts=starts)
    assert res.status == "optimal" and res.rounds[0]["columns"] == int(
        (first | schedule_columns(d, starts)).sum()) < d.n_cols


def test_grid_keeps_each_windows_first_and_last_slot():
    d = build_milp(model1(7, n=10, memory=16), "tight+cores")
    keep = grid_columns(d, 5)
    for g in np.unique(d.col_group):
        ks = d.col_start[d.col_group == g]
        got = d.col_start[(d.col_group == g) & keep]
        assert got[0] == ks.min() and got[-1] == ks.max()
        assert set(np.diff(got[:-1]).tolist()) <= {5}
    with pytest.raises(ValueError, match="grid"):
        grid_columns(d, 0)


def test_deadline_passed_returns_no_bound_and_no_error():
    d = build_milp(model1(3, n=12, memory=15), "tight+cores")
    from kvopt.core.limits import Deadline

    res = solve_lp_columns(d, deadline=Deadline(1e-9))
    assert res.bound is None and res.status != "optimal"


@pytest.mark.parametrize("seed", range(8))
def test_interval_bound_keeps_a_restricted_round(monkeypatch, seed):
    """When no LP of interval_bound finishes but a restricted LP does (each stage stopped after
    one round), its bound stands (``method="restricted LP"``), below OPT and the LP."""
    inst = _random_instance(np.random.default_rng(4300 + seed))
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    full = interval_bound(inst, time_limit=30, upper=opt)
    real = colmod.solve_lp_columns

    def one_round(data, **kw):                  # one round, reported as stopped
        res = real(data, **dict(kw, max_rounds=1, grid=3))
        return dataclasses.replace(res, status="max_rounds", value=None)

    monkeypatch.setattr(colmod, "solve_lp_columns", one_round)
    res = interval_bound(inst, time_limit=30, upper=opt)
    assert (res.status, res.method) == ("time_limit", "restricted LP")
    assert res.bound <= full.bound + 1e-9 and res.bound <= opt + 1e-9
    # stopped for another reason than a round that would not fit: no ascent, no waiting
    assert "subgradient" not in res.meta and res.seconds < 10


def test_fitting_keeps_everything_that_fits_and_caps_by_reduced_cost():
    """Rounds sized to the time left: all the columns when the estimate fits, else the ones
    with the lowest reduced costs, as many as fit; ``None`` when too few would."""
    add = np.array([True, True, False, True, True])
    d = np.array([0.5, -3.0, -9.0, -1.0, 1.5])
    assert colmod._fitting(add, d, 20, 1.0, None) is add           # no deadline
    # 4 columns join 20 taking 1 s: 1.2 ** 1.5 = 1.31 s expected, fits 0.8 of 1.7 s ...
    assert colmod._fitting(add, d, 20, 1.0, 1.7) is add
    # ... not 0.8 of 1.5 s: cap = 20 ((0.8 * 1.5) ** (1 / 1.5) - 1) = 2 columns, the two
    # lowest reduced costs among add (column 2 is not in add)
    assert colmod._fitting(add, d, 20, 1.0, 1.5).tolist() == [False, True, False, True, False]
    assert colmod._fitting(add, d, 20, 1.0, 1.3) is None           # < 5 % of 20 could join
    assert colmod._fitting(add, d, 20, 1.0, 0.0) is None           # no time left at all


@pytest.mark.parametrize("seed", [80, 81, 83, 84, 85, 86])      # LPs of two rounds or more
def test_capped_rounds_still_reach_the_lp(monkeypatch, seed):
    """Rounds that add only some of the columns (as when time is short) price every column
    again, so the call still ends at the LP's value, every round below OPT."""
    inst = model1(seed, n=6, memory=12)
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    d = build_milp(inst, "tight+cores", upper=opt)
    whole = solve_lp_duals(d)

    def half(add, dd, n_keep, seconds, left):
        idx = np.flatnonzero(add)
        out = np.zeros_like(add)
        out[idx[np.argsort(dd[idx], kind="stable")[: max(1, idx.size // 2)]]] = True
        return out

    monkeypatch.setattr(colmod, "_fitting", half)
    res = solve_lp_columns(d, grid=8)
    assert any("next_capped" in r for r in res.rounds)                 # a capped round ran
    assert res.status == "optimal" and res.bound == pytest.approx(whole.value, abs=1e-6)
    assert all(r["bound"] <= opt + 1e-9 for r in res.rounds)


def test_a_round_that_would_not_fit_is_not_started(monkeypatch):
    """With a time estimate that nothing fits (a huge power; a round must double), the call
    stops after its first round with time left, says why, and returns that round's bound and
    multipliers."""
    from kvopt.core.limits import Deadline
    from kvopt.mip.bounds.lagrangian import lagrangian_value, relaxed_rows

    monkeypatch.setattr(colmod, "TIME_POWER", 60.0)
    monkeypatch.setattr(colmod, "MIN_GROWTH", 1.0)
    d = build_milp(model1(3, n=16, memory=15), "tight+cores")    # two rounds without
    dl = Deadline(60)
    res = solve_lp_columns(d, deadline=dl, grid=8)
    assert res.status == "time" and len(res.rounds) == 1 and dl.remaining() > 30
    assert "would not fit" in res.info["stopped"]
    assert res.multipliers is not None and (res.multipliers >= 0).all()
    assert lagrangian_value(d, res.multipliers, relaxed_rows(d))[0] == res.bound


@pytest.mark.parametrize("seed", [80, 81, 83, 84])       # first LPs of two rounds or more
def test_interval_bound_ascends_from_a_stopped_first_lp(monkeypatch, seed):
    """The first LP stopped for time (its next round would not fit): the interval LP is not
    started, and the time left goes to subgradient ascent from that round's multipliers; the
    bound is at least the round's and below OPT."""
    inst = model1(seed, n=6, memory=12)
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    monkeypatch.setattr(colmod, "TIME_POWER", 60.0)
    monkeypatch.setattr(colmod, "MIN_GROWTH", 1.0)
    res = interval_bound(inst, time_limit=3, upper=opt)
    first = res.meta["first_lp"]
    assert first["status"] == "time" and "would not fit" in first["stopped"]
    assert res.meta["lp_status"].startswith("not started")
    assert (res.status, res.method) == ("time_limit", "restricted LP")
    sg = res.meta["subgradient"]
    assert sg["from"] == first["bound"] <= sg["to"] and res.bound <= opt + 1e-9
    assert res.bound >= first["bound"] - 1e-6 * max(1.0, abs(first["bound"]))


@pytest.mark.parametrize("seed", [80, 81, 83])
def test_interval_bound_takes_the_block_lagrangian_when_no_round_fits(monkeypatch, seed):
    """A build that leaves less time than a first round is expected to take (here a build
    slowed by 1 s in a 1.3 s call): no LP is started, and the block-LP Lagrangian bound takes
    the time left (``method="block Lagrangian"``); it is below OPT and the call ends in time."""
    import time

    import kvopt.mip.bounds.intervals as iv

    inst = model1(seed, n=6, memory=12)
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    real = iv._interval_model_parts

    def slow(*a, **kw):
        time.sleep(1.0)
        return real(*a, **kw)

    monkeypatch.setattr(iv, "_interval_model_parts", slow)
    t = time.perf_counter()
    res = interval_bound(inst, time_limit=1.3, upper=opt)
    assert time.perf_counter() - t < 1.8             # the limit, and slack for a loaded CI
    assert (res.status, res.method) == ("time_limit", "block Lagrangian")
    assert res.meta["lp_status"].startswith("not started") and "first_lp" not in res.meta
    assert res.meta["blocks"] and res.bound <= opt + 1e-9


@settings(max_examples=30, deadline=None)
@given(small_instances(), st.sampled_from(["ascent", "blocks"]))
def test_short_call_paths_stay_below_opt(inst, path):
    """Both ways a short call ends (property, against brute force): a first LP stopped because
    its next round would not fit, then the ascent from its multipliers; and no LP at all, the
    block-LP Lagrangian instead (where the first LP needs a second round). Forced by the
    estimates, not by the clock."""
    import kvopt.mip.bounds.intervals as iv

    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    with pytest.MonkeyPatch.context() as mp:
        if path == "ascent":
            mp.setattr(colmod, "TIME_POWER", 60.0)
            mp.setattr(colmod, "MIN_GROWTH", 1.0)
        else:
            mp.setattr(iv, "FIRST_ROUND_PER_BUILD", 1e9)
        res = interval_bound(inst, time_limit=0.2, upper=opt)
    assert res.bound <= opt + 1e-9
    if path == "blocks":
        assert res.method == "block Lagrangian"
