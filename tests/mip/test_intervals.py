"""Lag-interval rows (kvopt.mip.bounds.intervals): every family checked on every feasible schedule
of
thousands of small random instances; the bound against brute-force OPT and the plain LP."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt import Instance
from kvopt.mip.bounds.intervals import (
    IntervalFamily,
    add_interval_rows,
    check_family,
    interval_bound,
    interval_families,
)
from kvopt.mip.bounds.lagrangian import lagrangian_value
from kvopt.mip.bounds.relaxations import lp_bound
from kvopt.mip.certify import bound_report
from kvopt.mip.model.builder import build_milp, group_requests
from tests.bruteforce import brute_force_opt
from tests.strategies import small_instances as instances


def _random_instance(rng: np.random.Generator, max_n: int) -> Instance:
    M = int(rng.integers(3, 11))
    n = int(rng.integers(2, max_n + 1))
    s = rng.integers(0, min(4, M - 1) + 1, size=n)
    o = np.array([rng.integers(1, M - si + 1) for si in s])
    a = rng.integers(0, 3, size=n)
    if n >= 3 and rng.random() < 0.3:          # identical requests: aggregated groups
        s[1], o[1], a[1] = s[0], o[0], a[0]
    return Instance(memory=M, arrival=a, prompt=s, output=o)


def _feasible_starts(inst: Instance) -> np.ndarray:
    """Every feasible start vector (rows), by vectorised enumeration."""
    a, s, o = inst.arrival, inst.prompt, inst.output
    H = int(a.max() + o.sum())
    grids = [np.arange(int(a[i]), H - int(o[i]) + 1) for i in range(inst.n)]
    K = np.array(list(itertools.product(*grids)), dtype=np.int64)
    tau = np.arange(H + 1)
    mem = np.zeros((K.shape[0], H + 1), dtype=np.int64)
    for i in range(inst.n):
        d = tau[None, :] - K[:, i, None]
        run = (d >= 1) & (d <= o[i])
        mem += np.where(run, s[i] + d, 0)
    return K[(mem <= inst.memory).all(axis=1)]


def _disjoint(K: np.ndarray, fam: IntervalFamily) -> bool:
    """No slot lies in more than ``fam.level`` intervals, in every schedule (row) of ``K``."""
    lo = K[:, fam.members] + fam.alpha[None, :]
    hi = K[:, fam.members] + fam.beta[None, :]
    t = np.arange(int(lo.min()), int(hi.max()) + 1)
    for chunk in np.array_split(np.arange(K.shape[0]), max(1, K.shape[0] // 2000)):
        cover = ((lo[chunk, :, None] <= t) & (t < hi[chunk, :, None])).sum(axis=1)
        if (cover > fam.level).any():
            return False
    return True


def _check_many(seed: int, count: int, max_n: int) -> int:
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(count):
        inst = _random_instance(rng, max_n)
        K = _feasible_starts(inst)
        for groups in (None, group_requests(inst, aggregate=True)):
            for fam in interval_families(inst, groups, n_families=3, levels=(1, 2)):
                assert check_family(inst, fam), (inst, fam)
                assert _disjoint(K, fam), (inst, fam)
                checked += 1
    return checked


# seed 0 in the default run (150 instances, ~9 s); seeds 1 and 2 with the slow tests
@pytest.mark.parametrize("seed", [0, *(pytest.param(s, marks=pytest.mark.slow) for s in (1, 2))])
def test_intervals_disjoint_on_every_feasible_schedule(seed):
    assert _check_many(seed, 150, 3) > 80


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10, 14))
def test_intervals_disjoint_on_every_feasible_schedule_n4(seed):
    assert _check_many(seed, 500, 4) > 300


def test_check_family_rejects_overlong_interval():
    inst = Instance(memory=10, arrival=[0, 0], prompt=[0, 0], output=[8, 8])   # lag 6
    ok = IntervalFamily(np.array([0, 1]), np.array([0, 0]), np.array([6, 6]))
    bad = IntervalFamily(np.array([0, 1]), np.array([0, 0]), np.array([7, 6]))
    assert check_family(inst, ok) and not check_family(inst, bad)
    # and the overlong one is indeed violated by a feasible schedule: starts 0 and 6
    K = _feasible_starts(inst)
    assert _disjoint(K, ok) and not _disjoint(K, bad)


@settings(max_examples=40, deadline=None)
@given(instances())
def test_interval_bound_between_lp_and_opt(inst):
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    res = interval_bound(inst, time_limit=30)
    assert res.status == "optimal"
    assert res.bound <= opt + 1e-9
    # same rows as tight+cores plus more, windows no wider: dominates the plain LP
    assert res.bound >= lp_bound(inst, "tight+cores") - 1e-6


@settings(max_examples=30, deadline=None)
@given(instances(max_n=5), st.integers(0, 2**31 - 1))
def test_lagrangian_value_valid_for_any_multipliers(inst, seed):
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    base = build_milp(inst, "tight+cores", upper=opt)
    data = add_interval_rows(base, interval_families(inst, base.groups))
    nrel = sum(k != "assign" for k in data.row_kind)
    mu = np.random.default_rng(seed).exponential(0.5, size=nrel)
    assert lagrangian_value(data, mu)[0] <= opt + 1e-9


def test_time_limit_returns_valid_bound():
    from kvopt.core.generators import model1

    inst = model1(3, n=12, memory=15)
    res = interval_bound(inst, time_limit=1e-4)
    assert res.status == "time_limit"
    assert res.bound >= float(inst.output.sum()) - 1e-6      # at least mu = 0: trivial bound
    full = interval_bound(inst, time_limit=60)
    assert full.status == "optimal" and res.bound <= full.bound + 1e-6


@pytest.mark.parametrize("seed", range(12))
def test_staged_fallback_is_the_first_lp(interval_lp_unsolved, seed):
    """When the interval LP is not solved, a staged call keeps the bound of the tight+cores
    LP it solved first (valid: <= brute-force OPT; equal to the plain LP's value), where an
    unstaged one falls back to subgradient ascent; with neither LP solved, both do."""
    inst = _random_instance(np.random.default_rng(900 + seed), 5)
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    full = interval_bound(inst, time_limit=30, upper=opt)
    interval_lp_unsolved()
    res = interval_bound(inst, time_limit=30, upper=opt)
    if full.families == 0:                      # no interval rows: one LP, nothing staged
        assert res.method == "LP" and "first_lp" not in res.meta
        return
    from kvopt.mip.bounds.sparse_lp import solve_lp_duals

    lp = solve_lp_duals(build_milp(inst, "tight+cores", upper=opt)).value
    assert (res.status, res.method) == ("time_limit", "tight+cores LP")
    assert res.bound == pytest.approx(lp, abs=1e-6) and res.bound <= opt + 1e-9
    assert res.bound == pytest.approx(res.meta["first_lp"]["bound"], abs=1e-6)
    assert res.bound <= full.bound + 1e-6
    plain = interval_bound(inst, time_limit=0.5, upper=opt, staged=False)
    assert (plain.status, plain.method) == ("time_limit", "subgradient")
    interval_lp_unsolved(first_too=True)
    none = interval_bound(inst, time_limit=0.5, upper=opt)
    assert (none.method, none.meta["first_lp"]["bound"]) == ("subgradient", None)
    assert none.bound <= opt + 1e-9 and plain.bound <= opt + 1e-9


def test_interval_lp_not_started_with_less_time_left_than_the_first_took(monkeypatch):
    """The interval LP has every row of the first LP and more: with less time left than the
    first took (a second here, added by a slow first solve), it is not started and the call
    returns the first LP's bound before its limit (it used to pass the model to HiGHS anyway:
    up to 1.8 s past a 45 s limit at n = 89)."""
    import time

    import kvopt.mip.bounds.intervals as iv

    real = iv._lp_bound

    def slow_first(data, deadline, form, method, **kw):
        if not any(k.startswith("interval") for k in data.row_kind):
            time.sleep(1.0)
        return real(data, deadline, form, method, **kw)

    monkeypatch.setattr(iv, "_lp_bound", slow_first)
    inst = Instance(memory=11, arrival=[0] * 5, prompt=[4, 5, 4, 1, 5], output=[4, 3, 4, 7, 3])
    t = time.perf_counter()
    res = interval_bound(inst, time_limit=1.6)
    assert time.perf_counter() - t < 1.6
    assert (res.status, res.method) == ("time_limit", "tight+cores LP")
    assert res.meta["lp_status"].startswith("not started") and res.bound <= 52 + 1e-9
    full = interval_bound(inst, time_limit=2.6)               # time for both: both solved
    assert full.method == "LP" and res.bound <= full.bound + 1e-9


def test_bound_auto_keeps_the_first_lp_when_the_interval_lp_stops(interval_lp_unsolved,
                                                                   interval_proves):
    """``kvopt bound`` (auto): the interval LP stopped after its first stage, so the
    tight+cores LP is the intervals bound, and the (weaker) Lagrangian is not added."""
    interval_lp_unsolved()
    doc = bound_report(interval_proves)
    assert (doc["interval_status"], doc["interval_method"]) == ("time_limit", "tight+cores LP")
    assert doc["lp_mode"] == "intervals" and "lagrangian" not in doc["bounds"]
    assert "first stage" in doc["skipped"]["lp"] and doc["bounds"]["intervals"] <= 52


def test_small_model1_gap_closed():
    # n = 8 model1 instance where the tight+cores LP is 18 % below OPT (= 102, cp+pairs)
    from kvopt.core.generators import model1

    rng = np.random.default_rng([0, 8])
    inst = model1(rng, n=8, memory=int(rng.integers(8, 19)))
    assert round(lp_bound(inst, "tight+cores"), 2) == 83.48
    res = interval_bound(inst, time_limit=60)
    assert 99.9 <= res.bound <= 102


@settings(max_examples=15, deadline=None)
@given(instances(max_n=4))
def test_configuration_lp_bound_valid(inst):
    from kvopt.mip.bounds.colgen import colgen_bound

    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    res = colgen_bound(inst, time_limit=20)
    assert res.bound <= opt + 1e-6
    if res.status == "optimal":
        assert res.bound >= lp_bound(inst, "tight") - 1e-6
    cut = colgen_bound(inst, time_limit=1e-4)           # stopped at once: still valid
    assert cut.bound <= opt + 1e-6


def test_bound_auto_computes_no_lp_once_a_cheap_bound_proves_the_schedule_optimal():
    """On a2-example the trivial bound already meets MC-SF (12): auto computes no LP (it took
    0.5 s of interval LP there, to print the same gap 0), and says why; asked for, it runs."""
    from kvopt import load_instance

    inst = load_instance("instances/tiny/a2-example.json")
    doc = bound_report(inst)
    assert doc["lp_mode"] == "none" and doc["gap"] == 0.0 and doc["best_bound"] == 12
    assert "proven optimal" in doc["skipped"]["lp"] and "trivial" in doc["skipped"]["lp"]
    assert "intervals" not in doc["bounds"] and "intervals" not in doc["seconds"]
    assert bound_report(inst, lp="exact")["lp_mode"] == "exact"
    doc = bound_report(inst, intervals_time=30)
    assert doc["interval_status"] == "optimal" and "intervals" in doc["bounds"]


def test_cli_bound_intervals(tmp_path, capsys, interval_proves):
    import json

    from kvopt.cli.main import main

    inst = interval_proves
    path = tmp_path / "inst.json"
    inst.save(path)
    assert main(["bound", str(path), "--intervals", "30", "--lp", "exact", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["interval_status"] == "optimal"
    assert doc["bounds"]["lp"] < 48 < doc["bounds"]["intervals"] <= 52   # OPT = MC-SF = 52
    assert doc["best_bound"] == 52 and doc["gap"] == 0.0


def test_bound_default_is_the_portfolios_interval_lp(tmp_path, capsys, interval_proves):
    """``kvopt bound`` with no flags computes the bound ``kvopt solve``'s portfolio computes
    (the lag-interval LP): on ``model1-seed1`` its exact ``tight+cores`` LP had run out of
    its 120 s and the default fell back to the Lagrangian bound (5828 after 2 minutes,
    against the interval LP's 7488.7). Here the instance of the test above, where the interval
    LP proves MC-SF optimal and the plain LP does not; below the budget, the old fallbacks."""
    import json

    from kvopt.cli.main import main

    inst = interval_proves
    path = tmp_path / "inst.json"
    inst.save(path)
    assert main(["bound", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["lp_mode"] == "intervals" and doc["interval_status"] == "optimal"
    assert "lp" not in doc["bounds"] and "lag-interval" in doc["skipped"]["lp"]
    assert 48 < doc["bounds"]["intervals"] <= 52 and doc["gap"] == 0.0   # OPT = MC-SF = 52
    # --intervals S is its time limit; the exact LP does not run beside it (on model1-seed1
    # `kvopt bound --intervals 1` spent 120 s on the exact LP first)
    assert main(["bound", str(path), "--intervals", "30", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["lp_mode"] == "intervals" and "lp" not in doc["bounds"]
    # stopped at a tiny limit (no time left after the model's build: the block-LP
    # Lagrangian instead of an LP): its value and the Lagrangian bound beside it
    doc = bound_report(inst, intervals_time=1e-9)
    assert doc["interval_status"] == "time_limit" and doc["lp_mode"] == "lagrangian"
    assert doc["interval_method"] == "block Lagrangian"
    assert doc["bounds"]["intervals"] <= 52 and doc["bounds"]["lagrangian"] <= 52
    # asked for by name, the others still run
    assert bound_report(inst, lp="exact")["lp_mode"] == "exact"
    assert bound_report(inst, lp="lagrangian")["lp_mode"] == "lagrangian"
    # above the memory budget: the interval LP is skipped with the reason, Lagrangian instead
    doc = bound_report(inst, ram=1000)
    assert doc["lp_mode"] == "lagrangian" and "memory budget" in doc["skipped"]["intervals"]
