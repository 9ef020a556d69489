"""The exact state search (kvopt.mip.search.statespace) against the brute-force oracle: OPT on
random small instances (with and without arrivals), a proof when the incumbent is optimal,
and a valid lower bound (<= OPT) when stopped early."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings

from kvopt import Instance, check_schedule
from kvopt.core.generators import model1
from kvopt.core.limits import Deadline
from kvopt.core.mcsf import mcsf_starts
from kvopt.core.schedule import Schedule
from kvopt.mip.search import statespace
from kvopt.mip.search.statespace import state_search
from tests.bruteforce import brute_force_opt
from tests.strategies import small_instances


def _opt(inst: Instance) -> float:
    return float(brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)[0])


@given(small_instances(max_n=5))
@settings(max_examples=300, deadline=None)
def test_finds_opt_below_any_upper(inst):
    opt = _opt(inst)
    res = state_search(inst, upper=opt + 1, time_limit=30)
    assert res.status == "optimal" and res.objective == opt and res.bound == opt
    rep = check_schedule(inst, Schedule.from_starts(inst, res.starts))
    assert rep.ok and rep.objective == opt


@given(small_instances(max_n=5))
@settings(max_examples=200, deadline=None)
def test_proves_an_optimal_incumbent(inst):
    opt = _opt(inst)
    res = state_search(inst, upper=opt, time_limit=30)
    assert res.status == "optimal" and res.objective is None and res.bound == opt
    mc = inst.tel_of_starts(mcsf_starts(inst))
    res = state_search(inst, upper=mc, time_limit=30)
    assert (res.objective if res.objective is not None else mc) == opt


@pytest.mark.parametrize("seed", range(30))
def test_stopped_early_the_bound_is_below_opt(seed, monkeypatch):
    monkeypatch.setattr(statespace, "CHECK_EVERY", 1)
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 7))
    M = int(rng.integers(6, 14))
    s = rng.integers(0, 3, size=n)
    inst = Instance(memory=M, arrival=rng.integers(0, 3, size=n), prompt=s,
                    output=[int(rng.integers(1, M - x + 1)) for x in s])
    opt = _opt(inst)
    res = state_search(inst, upper=opt + 1, max_states=int(rng.integers(2, 30)),
                       deadline=Deadline(30))
    assert res.bound <= opt + 1e-9
    if res.status == "optimal":
        assert res.objective == opt


def test_a_paper_like_instance_proven():
    """model1(1002, n=10): OPT 511 (cp+pairs in the README's section 9.3)."""
    inst = model1(1002, n=10)
    res = state_search(inst, upper=515, time_limit=120)
    assert res.status == "optimal" and res.objective == 511
    assert math.isclose(inst.tel_of_starts(res.starts), 511)


def _random_small(seed: int, count: int):  # type: ignore[no-untyped-def]
    """``count`` random instances small enough for the oracle (n <= 6, M < 12, half with
    arrivals), drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(1, 7))
        M = int(rng.integers(3, 12))
        s = rng.integers(0, min(4, M), size=n)
        o = [int(rng.integers(1, M - x + 1)) for x in s]
        a = rng.integers(0, 4, size=n) if rng.random() < 0.5 else np.zeros(n, dtype=int)
        yield Instance(memory=M, arrival=a, prompt=s, output=o)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [7, 11])
def test_thousands_against_the_oracle(seed):
    """4000 random small instances per seed (half with arrivals): the search finds OPT below
    MC-SF + 1 and proves OPT when given it as the incumbent (the dominance rule and every
    bound on, as in the exact path)."""
    for inst in _random_small(seed, 4000):
        opt = _opt(inst)
        res = state_search(inst, upper=inst.tel_of_starts(mcsf_starts(inst)) + 1, time_limit=30)
        assert res.status == "optimal" and res.objective == opt, inst
        assert inst.tel_of_starts(res.starts) == opt
        proof = state_search(inst, upper=opt, time_limit=30)
        assert proof.status == "optimal" and proof.objective is None and proof.bound == opt


def _h_below_cost_left(seed: int, count: int) -> int:
    """Along an optimal schedule (brute force) of ``count`` random instances: at every slot
    boundary the bound ``h`` of the state there (bounds (i)-(v)) is at most the cost the
    schedule still pays. Returns the number of states checked."""
    checked = 0
    for inst in _random_small(seed, count):
        n, a, s, o = inst.n, inst.arrival, inst.prompt, inst.output
        opt, starts = brute_force_opt(inst.memory, a, s, o)
        k = np.asarray(starts)
        c = k + o
        sp = statespace._Space(inst, upper=opt + 1)
        kind = {t: i for i, t in enumerate(sp.types)}
        for t in range(int(c.max()) + 1):
            cnt = [0] * len(sp.types)
            running = []
            for j in range(n):
                if k[j] >= t:
                    cnt[kind[int(a[j]), int(s[j]), int(o[j])]] += 1
                elif c[j] > t:
                    running.append((int(s[j]) + t - int(k[j]), int(c[j]) - t))
            left = int(np.maximum(c - np.maximum(a, t), 0).sum())
            assert sp.h(tuple(cnt), tuple(sorted(running)), t) <= left + 1e-9, (inst, t)
            checked += 1
    return checked


def test_h_is_below_the_cost_left_on_an_optimal_schedule():
    assert _h_below_cost_left(3, 300) > 1000


@pytest.mark.slow
def test_h_is_below_the_cost_left_on_thousands():
    assert _h_below_cost_left(5, 5000) > 20000


def test_volume_is_the_core_token_steps_over_m():
    """``_Space.volume`` is the hot path's scalar copy of
    :func:`kvopt.core.stability.lifetime_token_steps` (in slots of the whole memory); the two
    must not drift apart."""
    from kvopt.core.stability import lifetime_token_steps

    inst = model1(np.random.default_rng([7, 8]), n=8, memory=20)
    sp = statespace._Space(inst, upper=inst.tel_of_starts(mcsf_starts(inst)) + 1)
    m, r = np.meshgrid(np.arange(0, 20), np.arange(1, 20))
    core = lifetime_token_steps(m.ravel(), r.ravel()) / inst.memory
    mine = [sp.volume(int(a), int(b)) for a, b in zip(m.ravel(), r.ravel(), strict=True)]
    np.testing.assert_allclose(mine, core, rtol=0, atol=1e-12)
    assert sp.vol == pytest.approx(
        (lifetime_token_steps(np.asarray(sp.ts), np.asarray(sp.to)) / inst.memory).tolist())
