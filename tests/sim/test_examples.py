"""Seed 000/001 worked examples and simple API checks."""

import numpy as np
import pytest

from kvopt import Instance, check_schedule, load_instance
from kvopt.sim import POLICIES, LivelockError, SimResult, simulate


@pytest.mark.parametrize("policy,expected", [("hsf", 5), ("amax", 9), ("amin", 5)])
def test_seed000_example1(policy, expected):
    inst = load_instance("instances/tiny/seed000-example1.json")
    for seed in range(3):
        res = simulate(inst, policy, seed=seed)
        assert res.metrics.total_latency == expected
        assert inst.expected[f"{policy}_total_latency"] == expected


def test_seed000_example_ec1_hsf():
    inst = load_instance("instances/tiny/seed000-example-ec1.json")
    res = simulate(inst, "hsf")
    assert res.metrics.total_latency == 12
    assert res.schedule.final_start(inst).tolist() == [0, 0, 0, 2]


def test_a2_example_mcsf():
    inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    res = simulate(inst, "mcsf")
    assert res.metrics.total_latency == 12
    assert isinstance(res, SimResult) and res.policy == "mcsf"


def test_mcsf_stops_at_first_failure():
    # seed 001 Alg. 1: the s=2 job does not fit and blocks the s=1 job behind it (no backfill)
    inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 2, 1], output=[1, 1, 1])
    res = simulate(inst, "mcsf")
    assert res.schedule.final_start(inst).tolist() == [0, 1, 2]
    assert res.metrics.total_latency == 6


def test_amin_evicts_and_raises_bound():
    # one job with unknown length [1, 8]: Amin starts it with o~=1 and never evicts it
    # alone; two jobs of length 4 with M=10 and l=1 force an eviction
    inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 1], output=[4, 4, 4],
                    pred_lower=[1, 1, 1], pred_upper=[8, 8, 8])
    res = simulate(inst, "amin", seed=0)
    assert res.schedule.num_evictions >= 1
    assert check_schedule(inst, res.schedule).ok


def test_a_l_two_point():
    inst = Instance(memory=12, arrival=[0] * 4, prompt=[0] * 4, output=[2, 2, 6, 6],
                    pred_lower=[2] * 4, pred_upper=[6] * 4)
    res = simulate(inst, "a-l")
    sch = res.schedule
    # the two long jobs are promoted after 2 tokens (evicted runs of length 2)
    assert sorted(sch.run_length[~sch.run_completed].tolist()) == [2, 2]
    assert res.stats["promotions"] == 2


def test_alpha_protection_livelock_detected():
    # alpha-protection admits both (usage 2 <= 0.9*10) but they overflow before finishing
    inst = Instance(memory=10, arrival=[0, 0], prompt=[0, 0], output=[6, 6])
    with pytest.raises(LivelockError):
        simulate(inst, "alpha-protection", alpha=0.1)


def test_fcfs_preempts_newest():
    inst = Instance(memory=10, arrival=[0, 1], prompt=[0, 0], output=[6, 6])
    res = simulate(inst, "fcfs")
    sch = res.schedule
    ev = ~sch.run_completed
    assert sch.run_request[ev].tolist() == [1]  # the later arrival is the victim
    assert check_schedule(inst, sch).ok


def test_beta_clearing_is_seeded():
    inst = Instance(memory=12, arrival=[0, 0, 1, 1], prompt=[1, 1, 1, 1], output=[5, 6, 7, 8])
    r1 = simulate(inst, "alpha-beta-clearing", seed=3, alpha=0.0, beta=0.5)
    r2 = simulate(inst, "alpha-beta-clearing", seed=3, alpha=0.0, beta=0.5)
    assert r1.schedule.same_runs(r2.schedule)


def test_function_policy_and_unknown_names():
    inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])

    def one_at_a_time(st):
        w = st.waiting_ids()
        return w[:1] if st.running.size == 0 else w[:0]

    res = simulate(inst, one_at_a_time)
    assert res.schedule.final_start(inst).tolist() == [0, 4]
    with pytest.raises(ValueError):
        simulate(inst, "nope")
    with pytest.raises(TypeError):
        simulate(inst, "mcsf", bogus=1)
    assert {"mcsf", "mc-benchmark", "alpha-protection", "alpha-beta-clearing", "mcsf-margin",
            "hsf", "amax", "amin", "amin-multi", "a-l", "fcfs", "sjf", "replay"} <= set(POLICIES)


def test_noisy_predictions_margin_validates():
    rng = np.random.default_rng(5)
    n = 40
    inst = Instance(memory=60, arrival=np.sort(rng.integers(0, 30, n)),
                    prompt=rng.integers(1, 5, n), output=rng.integers(1, 30, n))
    for pol in ("mcsf", "mcsf-margin"):
        try:
            res = simulate(inst, pol, seed=1, predictions={"kind": "uniform", "eps": 0.5})
        except LivelockError:
            continue
        assert check_schedule(inst, res.schedule).ok
