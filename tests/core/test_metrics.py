import numpy as np
import pytest

from kvopt import Instance, Schedule, check_schedule, compute_metrics

INST = Instance(memory=10, arrival=[0, 0, 2], prompt=[1, 1, 2], output=[4, 8, 2])


def test_metrics_by_hand():
    # request 2 is evicted after 1 slot at start 4 and restarts at 8
    sched = Schedule([0, 1, 2, 2], [0, 0, 4, 8], [4, 8, 1, 2], [True, True, False, True],
                     INST.sha256())
    m = compute_metrics(INST, sched)
    assert m.feasible
    # completions 4, 8, 10 -> latencies 4, 8, 8
    assert m.total_latency == 20.0
    assert m.mean_latency == pytest.approx(20 / 3)
    assert m.p50_latency == 8.0
    # first tokens at first start + 1: 1, 1, 5 -> TTFT 1, 1, 3
    assert m.ttft_mean == pytest.approx(5 / 3)
    # TPOT of the final runs: (4-1)/3, (8-1)/7, (10-9)/1 -> all 1
    assert m.tpot_mean == pytest.approx(1.0)
    assert m.makespan == 10.0
    assert m.evictions == 1
    assert m.unit == "step"


def test_metrics_with_times_keep_slots_and_add_seconds():
    times = np.arange(11) * 0.5
    sched = Schedule.from_starts(INST, [0, 0, 8], times=times)
    m = compute_metrics(INST, sched)
    # one name, one unit: unsuffixed fields in slots, like the validator's objective
    assert m.unit == "step"
    assert m.total_latency == 20.0 == check_schedule(INST, sched).objective
    assert m.makespan == 10.0
    assert m.has_clock
    assert m.total_latency_s == pytest.approx(0.5 * 20)
    assert m.makespan_s == pytest.approx(5.0)
    assert m.ttft_mean_s == pytest.approx(0.5 * m.ttft_mean)


def test_metrics_without_clock_have_no_seconds():
    m = compute_metrics(INST, Schedule.from_starts(INST, [0, 0, 8]))
    assert not m.has_clock and m.total_latency_s is None and m.makespan_s is None


def test_trace_instance_seconds_are_its_own_unit():
    inst = Instance(memory=10, arrival=[0.0, 0.25], prompt=[1, 1], output=[2, 2],
                    time_unit="second")
    sched = Schedule.from_starts(inst, [0, 1], times=[0.0, 0.5, 1.0, 1.5])
    m = compute_metrics(inst, sched)
    assert m.unit == "second"
    assert m.total_latency == m.total_latency_s == check_schedule(inst, sched).objective


def test_unchecked_metrics_say_so():
    m = compute_metrics(INST, Schedule.from_starts(INST, [0, 1, 8]), check=False)
    assert m.feasible is None


def test_infeasible_schedule_is_flagged():
    m = compute_metrics(INST, Schedule.from_starts(INST, [0, 1, 8]))
    assert not m.feasible
    assert m.peak_memory == 12


@pytest.mark.parametrize("seed", range(5))
def test_peak_memory_is_the_same_with_and_without_the_check(seed):
    """With ``check=True`` the peak comes from the checker's own memory profile (computed
    once); without, from :func:`kvopt.core.validate.schedule_memory`: the same number, and
    every other field too."""
    from kvopt.core.generators import model1
    from kvopt.sim import simulate

    inst = model1(seed, n=30)
    sched = simulate(inst, "mcsf").schedule
    checked, unchecked = compute_metrics(inst, sched), compute_metrics(inst, sched, check=False)
    assert checked.feasible and unchecked.feasible is None
    assert checked.peak_memory == unchecked.peak_memory > 0
    assert {**vars(checked), "feasible": None} == vars(unchecked)


@pytest.mark.parametrize("policy,kw", [("mcsf", {}), ("fcfs", {"preemption": "recompute"}),
                                       ("amin", {"step_time": "a100-llama2-70b-tp2"})])
def test_simulate_measures_with_its_own_check(policy, kw):
    """``simulate`` hands its validator's report to compute_metrics (the memory profile is
    computed once): its metrics equal a separate checked compute_metrics field by field, and
    an unvalidated run says it was not checked."""
    from kvopt.core.generators import model1
    from kvopt.sim import simulate

    inst = model1(3, n=40)
    r = simulate(inst, policy, **kw)
    assert vars(r.metrics) == vars(compute_metrics(inst, r.schedule))
    assert r.metrics.feasible and r.metrics.peak_memory > 0
    rep = check_schedule(inst, r.schedule)
    assert vars(compute_metrics(inst, r.schedule, check=False, report=rep)) == vars(r.metrics)
    unchecked = simulate(inst, policy, validate=False, **kw).metrics
    assert unchecked.feasible is None and {**vars(r.metrics), "feasible": None} == vars(unchecked)
