"""The LP by column generation over start columns (kvopt.mip.bounds.columns): every round's
bound below brute-force OPT, the LP's value at the end, the fallbacks, and interval_bound's
method when only restricted LPs were solved."""

import dataclasses

import numpy as np
import pytest

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
