"""Reduced-cost fixing (kvopt.mip.bounds.fixing) and the cp+exact formulation.

The validity check is exhaustive: on random small instances, every feasible schedule that
is strictly better than the incumbent is enumerated (plain Python DFS, no kvopt code) and
must start every request inside its fixed domain; the Lagrangian bound must not exceed
the brute-force optimum.
"""

import random

import numpy as np
import pytest

from kvopt import Instance, check_schedule
from kvopt.core.mcsf import mcsf_starts
from kvopt.mip import solve
from kvopt.mip.bounds.fixing import reduced_cost_domains
from kvopt.mip.bounds.lagrangian import lagrangian_reduced_costs
from kvopt.mip.model.builder import build_milp
from kvopt.mip.model.cpmodel import canonical_starts
from tests.bruteforce import brute_force_opt


def _random_instance(rng: random.Random, max_n: int = 4, max_m: int = 10) -> Instance:
    M = rng.randint(3, max_m)
    n = rng.randint(2, max_n)
    s = [rng.randint(0, min(3, M - 1)) for _ in range(n)]
    o = [rng.randint(1, M - si) for si in s]
    a = [rng.choice([0, 0, 1, 2]) for _ in range(n)]
    return Instance(memory=M, arrival=a, prompt=s, output=o)


def _schedules_below(inst: Instance, cap: int):
    """Every feasible start vector with TEL <= cap (DFS over requests, memory as a list)."""
    a, s, o = (list(map(int, x)) for x in (inst.arrival, inst.prompt, inst.output))
    n, M = inst.n, int(inst.memory)
    H = max(a) + sum(o)
    mem = [0] * (H + 2)
    ks = [0] * n
    rest = [sum(o[j:]) for j in range(n)] + [0]

    def rec(i: int, partial: int):
        if i == n:
            yield tuple(ks)
            return
        for k in range(a[i], H - o[i] + 1):
            lat = k + o[i] - a[i]
            if partial + lat + rest[i + 1] > cap:
                break
            if all(mem[t] + s[i] + t - k <= M for t in range(k + 1, k + o[i] + 1)):
                for t in range(k + 1, k + o[i] + 1):
                    mem[t] += s[i] + t - k
                ks[i] = k
                yield from rec(i + 1, partial + lat)
                for t in range(k + 1, k + o[i] + 1):
                    mem[t] -= s[i] + t - k

    yield from rec(0, 0)


def _check_fixing_on(inst: Instance, incumbent, fx) -> int:
    """Assert the fixing ``fx`` (:func:`reduced_cost_domains` of ``incumbent``) keeps every
    schedule strictly better than ``incumbent``; returns how many such schedules were
    checked."""
    ub = int(inst.tel_of_starts(np.asarray(incumbent)))
    assert fx is not None
    dom = [set(d.tolist()) for d in fx.domains]
    for i, k in enumerate(incumbent):
        assert int(k) in dom[i]
    checked = 0
    for ks in _schedules_below(inst, ub - 1):
        checked += 1
        canon = canonical_starts(inst, np.array(ks))
        for i in range(inst.n):
            assert int(canon[i]) in dom[i], (inst, incumbent, ks, i, fx.domains)
    return checked


def _incumbents(inst: Instance, rng: random.Random, opt: int):
    """MC-SF, an optimum, and a few feasible schedules of TEL between OPT and OPT + 6."""
    out = [mcsf_starts(inst).tolist()]
    good = list(_schedules_below(inst, opt + 6))
    out += [list(g) for g in rng.sample(good, min(3, len(good)))]
    return out


def _run(seed: int, count: int, max_n: int) -> tuple[int, int]:
    rng = random.Random(seed)
    instances = schedules = 0
    for _ in range(count):
        inst = _random_instance(rng, max_n=max_n)
        opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
        for j, inc in enumerate(_incumbents(inst, rng, opt)):
            intervals = bool(j % 2)  # with and without the lag-interval rows
            fx = reduced_cost_domains(inst, np.asarray(inc), intervals=intervals)
            assert fx is not None and fx.bound <= opt + 1e-6, (inst, inc)
            schedules += _check_fixing_on(inst, inc, fx)
        instances += 1
    return instances, schedules


# seed 0 in the default run (40 instances, ~4 s); seeds 1 and 2 with the slow tests
@pytest.mark.parametrize("seed", [0, *(pytest.param(s, marks=pytest.mark.slow) for s in (1, 2))])
def test_fixing_keeps_every_better_schedule(seed):
    instances, schedules = _run(seed, 40, max_n=4)
    assert instances == 40 and schedules > 50


@pytest.mark.slow
def test_fixing_keeps_every_better_schedule_thousands():
    instances, schedules = _run(1000, 2500, max_n=5)
    assert instances == 2500 and schedules > 10_000


def test_lagrangian_at_lp_duals_equals_lp_and_zero_multipliers_are_trivial():
    from kvopt.core.generators import model1

    inst = model1(np.random.default_rng([3, 10]), n=10, memory=15)
    fx = reduced_cost_domains(inst, mcsf_starts(inst))
    assert fx is not None
    assert abs(fx.bound - fx.lp_value) <= 1e-6 * fx.lp_value
    assert fx.domain_mean < fx.window_mean
    d = build_milp(inst, "tight+cores")
    L0, delta = lagrangian_reduced_costs(d, np.zeros(d.n_rows))
    assert float(inst.output.sum()) == pytest.approx(L0)
    assert (delta >= 0).all()
    with pytest.raises(ValueError, match="'<=' rows"):
        bad = build_milp(inst, "tight")
        object.__setattr__(bad, "row_kind", ["memory"] * bad.n_rows)  # assignment rows too
        lagrangian_reduced_costs(bad, np.ones(bad.n_rows))


@pytest.mark.parametrize("seed", range(4))
def test_cp_exact_matches_oracle(seed):
    rng = random.Random(500 + seed)
    for _ in range(3):
        inst = _random_instance(rng, max_n=6, max_m=12)
        opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
        res = solve(inst, solver="cpsat", formulation="cp+exact", time_limit=20,
                    warm_start=bool(seed % 2))
        assert res.status == "optimal" and res.objective == opt
        assert check_schedule(inst, res.schedule).objective == opt
        assert res.bounds["lp"]["status"] == "computed"
        assert res.bounds["lp"]["value"] <= opt + 1e-6


def test_cp_exact_without_lp_and_its_model_record():
    inst = Instance(memory=10, arrival=[0, 0, 0, 0], prompt=[1, 1, 2, 0], output=[8, 8, 3, 5])
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    res = solve(inst, solver="cpsat", formulation="cp+exact", time_limit=20,
                cp_lp_bound=False)
    assert res.status == "optimal" and res.objective == opt
    assert res.bounds["lp"]["status"] == "skipped"
    assert res.bounds["lp"]["reason"] == "cp_lp_bound=False"
    assert res.model["formulation"] == "cp+exact" and res.model["pairs"] >= 1
    res = solve(inst, solver="cpsat", formulation="cp+exact", time_limit=20)
    assert res.status == "optimal" and res.objective == opt
    assert res.model["lag_intervals"] >= 2 and res.model["fixing"]["bound"] <= opt
    assert "improve_s" in res.steps
