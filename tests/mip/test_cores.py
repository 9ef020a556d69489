"""The level-q cores (kvopt.mip.bounds.combinatorial.core_lengths): checked on every feasible
schedule of
small random instances, their bound and their formulations against the brute-force oracle."""

import itertools
import random

import numpy as np
import pytest

from kvopt import Instance
from kvopt.core.generators import model1
from kvopt.mip import solve
from kvopt.mip.bounds.combinatorial import core_bound, core_lengths
from kvopt.mip.bounds.relaxations import lp_bound
from kvopt.mip.model.builder import build_milp
from kvopt.mip.model.cpmodel import pair_lags, solve_cp
from tests.bruteforce import brute_force_opt


def _random_instance(rng: random.Random, max_n: int = 4) -> Instance:
    M = rng.randint(3, 12)
    n = rng.randint(2, max_n)
    s = [rng.randint(0, min(4, M - 1)) for _ in range(n)]
    o = [rng.randint(1, M - si) for si in s]
    a = [rng.randint(0, 2) for _ in range(n)]
    return Instance(memory=M, arrival=a, prompt=s, output=o)


def _feasible_schedules(inst: Instance):
    a, s, o = (inst.arrival.tolist(), inst.prompt.tolist(), inst.output.tolist())
    H = max(a) + sum(o)
    for ks in itertools.product(*[range(a[i], H - o[i] + 1) for i in range(inst.n)]):
        mem = [0] * (H + 2)
        for i, k in enumerate(ks):
            for tau in range(k + 1, k + o[i] + 1):
                mem[tau] += s[i] + tau - k
        if max(mem) <= inst.memory:
            yield ks


@pytest.mark.parametrize("seed", range(4))
def test_at_most_q_cores_on_every_feasible_schedule(seed):
    rng = random.Random(seed)
    checked = 0
    for _ in range(40):
        inst = _random_instance(rng, max_n=3)
        for ks in _feasible_schedules(inst):
            checked += 1
            for q in (1, 2, 3):
                L, _ = core_lengths(inst, q)
                cover: dict[int, int] = {}
                for i, k in enumerate(ks):
                    start = k - int(inst.prompt[i])
                    for t in range(start, start + max(int(L[i]), 0)):
                        cover[t] = cover.get(t, 0) + 1
                assert max(cover.values(), default=0) <= q, (inst, ks, q)
            lag = pair_lags(inst)
            for i, j in itertools.combinations(range(inst.n), 2):
                assert ks[j] >= ks[i] + lag[i, j] or ks[i] >= ks[j] + lag[j, i], (inst, ks)
    assert checked > 100


def test_cores_are_tight_on_two_equal_requests():
    # o = 8, s = 0, M = 10: the second may start 6 slots after the first, not 5
    inst = Instance(memory=10, arrival=[0, 0], prompt=[0, 0], output=[8, 8])
    assert core_lengths(inst, 1)[0].tolist() == [6, 6]
    assert core_bound(inst) == brute_force_opt(10, [0, 0], [0, 0], [8, 8])[0] == 22


@pytest.mark.parametrize("seed", range(6))
def test_core_formulations_and_bounds_match_oracle(seed):
    rng = random.Random(100 + seed)
    for _ in range(3):
        inst = _random_instance(rng, max_n=6)
        opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
        for q in (1, 2, 3):
            assert core_bound(inst, q) <= opt + 1e-9
        assert lp_bound(inst, "tight+cores") <= opt + 1e-6
        for solver, formulation in (("highs", "tight+cores"), ("cpsat", "cp+cores"),
                                    ("cpsat", "cp+pairs")):
            # n <= 6: each solve takes well under a second; the generous wall limit only keeps
            # a starved machine from turning a correct solve into a time-limit failure
            res = solve(inst, solver=solver, formulation=formulation, time_limit=120,
                        warm_start=bool(seed % 2))
            assert res.status == "optimal" and res.objective == opt, (solver, formulation)
        cp, starts, _ = solve_cp(inst, time_limit=120, threads=1, pairs=True)  # pairs alone
        assert cp.status == "optimal" and cp.objective == opt
        assert starts is not None


def test_core_rows_tighten_the_lp():
    inst = model1(np.random.default_rng([3, 10]), n=10, memory=15)
    assert lp_bound(inst, "tight+cores") > lp_bound(inst, "tight+cuts") + 1.0
    d = build_milp(inst, "tight+cores")
    assert {"core1", "core2"} <= set(d.row_kind)
