"""Property tests on random small instances (brute-force OPT as the oracle)."""

import numpy as np
import pytest

from kvopt import Schedule, check_schedule
from kvopt.core.generators import model1, model2, random_small
from kvopt.core.mcsf import mcsf_starts
from kvopt.mip import solve
from kvopt.sim import POLICIES, LivelockError, simulate
from tests.bruteforce import brute_force_opt
from tests.strategies import engine_options

POLICY_NAMES = [p for p in POLICIES if p != "replay"]


def _with_intervals(inst):
    return inst.replace(pred_lower=np.maximum(inst.output // 2, 1), pred_upper=inst.output * 2)


@pytest.mark.parametrize("seed", range(40))
def test_every_policy_valid_and_above_opt(seed):
    inst = _with_intervals(random_small(seed))
    opt, starts = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    for name in POLICY_NAMES:
        try:  # (the seed convention: against the non-preemptive optimum)
            res = simulate(inst, name, seed=seed, preemption="restart",
                           **engine_options(name, inst))
        except LivelockError:
            assert name in ("alpha-protection", "mcsf-margin", "mcsf")
            continue
        rep = check_schedule(inst, res.schedule)
        assert rep.ok, (name, str(rep))
        if res.schedule.times is None:  # (beta-clearing stalls add wall time)
            assert rep.objective == res.metrics.total_latency
        assert opt <= res.metrics.total_latency + 1e-9, name
        if name in ("hsf", "mcsf", "mc-benchmark"):  # exact lengths: never evict
            assert res.schedule.num_evictions == 0, name
    # replay of the brute-force optimum comes back identical
    sched = Schedule.from_starts(inst, starts, source="bruteforce")
    rep = simulate(inst, "replay", schedule=sched)
    assert rep.schedule.same_runs(sched)
    assert rep.metrics.total_latency == opt


@pytest.mark.parametrize("seed", range(60))
def test_engine_equals_plain_mcsf(seed):
    inst = model2(seed) if seed % 2 else model1(seed)
    for order, name in (("shortest", "mcsf"), ("arrival", "mc-benchmark")):
        ref = mcsf_starts(inst, order=order)
        res = simulate(inst, name)
        assert np.array_equal(res.schedule.final_start(inst), ref)
        assert res.schedule.num_evictions == 0


@pytest.mark.parametrize("seed", range(10))
def test_over_predictions_mcsf_equals_reference(seed):
    inst = model2(seed)
    rng = np.random.default_rng(seed)
    pred = np.minimum(inst.output + rng.integers(0, 10, inst.n), inst.memory - inst.prompt)
    ref = mcsf_starts(inst, pred)
    res = simulate(inst, "mcsf", predictions=pred)
    assert np.array_equal(res.schedule.final_start(inst), ref)
    assert res.schedule.num_evictions == 0


def test_replay_with_evictions_identical():
    inst = _with_intervals(model2(3))
    res = simulate(inst, "amin", seed=2)
    assert res.schedule.num_evictions > 0
    back = simulate(inst, "replay", schedule=res.schedule)
    assert back.schedule.same_runs(res.schedule)


@pytest.mark.parametrize("seed", range(3))
def test_mip_schedule_replays_identically(seed):
    inst = random_small(seed + 7)
    sol = solve(inst, time_limit=20.0)  # a broken solver fails the test, never skips it
    assert sol.status == "optimal" and sol.schedule is not None, sol.to_dict()
    back = simulate(inst, "replay", schedule=sol.schedule)
    assert back.schedule.same_runs(sol.schedule)
    assert back.metrics.total_latency == sol.objective
    assert sol.objective <= simulate(inst, "mcsf").metrics.total_latency
