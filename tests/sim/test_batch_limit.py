"""Batch-size limit B beside M in the engine."""

import numpy as np
import pytest

from kvopt import Instance, check_schedule
from kvopt.core.validate import memory_profile
from kvopt.sim import POLICIES, PolicyError, simulate

LIMITED = ["fcfs", "sjf", "mcsf", "mc-benchmark", "hsf"]


def _running(sched):
    cnt = np.zeros(sched.horizon + 2, dtype=np.int64)
    np.add.at(cnt, sched.run_start + 1, 1)
    np.add.at(cnt, sched.run_start + sched.run_length + 1, -1)
    return np.cumsum(cnt)


@pytest.mark.parametrize("policy", LIMITED)
@pytest.mark.parametrize("B", [1, 2, 3])
def test_policies_respect_max_batch(policy, B):
    rng = np.random.default_rng(B)
    for _ in range(5):
        n = int(rng.integers(3, 12))
        inst = Instance(memory=60, arrival=rng.integers(0, 6, n), prompt=rng.integers(0, 4, n),
                        output=rng.integers(1, 9, n), max_batch=B)
        res = simulate(inst, policy)
        assert check_schedule(inst, res.schedule).ok
        assert _running(res.schedule).max() <= B
        # the memory is not binding here, so B is: someone waits whenever B < n
        free = simulate(inst.replace(max_batch=None), policy)
        assert _running(free.schedule).max() >= _running(res.schedule).max()


def test_simulate_option_overrides_instance_and_unlimited_is_unchanged():
    inst = Instance(memory=60, arrival=[0, 0, 0], prompt=[1, 1, 1], output=[3, 3, 3])
    assert simulate(inst, "fcfs", max_batch=1).schedule.run_start.tolist() == [0, 3, 6]
    assert simulate(inst, "fcfs").schedule.run_start.tolist() == [0, 0, 0]
    assert simulate(inst, "fcfs", max_batch=99).schedule.same_runs(
        simulate(inst, "fcfs").schedule)


def test_engine_rejects_a_policy_that_exceeds_b():
    inst = Instance(memory=60, arrival=[0, 0], prompt=[1, 1], output=[3, 3], max_batch=1)
    with pytest.raises(PolicyError, match="max_batch"):
        simulate(inst, lambda st: st.waiting_ids())


def test_memory_profile_unchanged_by_b_when_unlimited():
    inst = Instance(memory=12, arrival=[0, 0, 1], prompt=[2, 2, 2], output=[4, 5, 3])
    for p in ("fcfs", "mcsf"):
        a = simulate(inst, p).schedule
        b = simulate(inst, p, max_batch=inst.n).schedule
        assert a.same_runs(b)
        assert memory_profile(inst.prompt[a.run_request], a.run_start, a.run_length).max() <= 12
    assert "fcfs" in POLICIES
