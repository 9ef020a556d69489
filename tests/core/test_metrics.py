import numpy as np
import pytest

from kvopt import Instance, Schedule, compute_metrics

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


def test_metrics_with_times_are_in_seconds():
    times = np.arange(11) * 0.5
    sched = Schedule.from_starts(INST, [0, 0, 8], times=times)
    m = compute_metrics(INST, sched)
    assert m.unit == "second"
    assert m.total_latency == pytest.approx(0.5 * 20)
    assert m.makespan == pytest.approx(5.0)


def test_infeasible_schedule_is_flagged():
    m = compute_metrics(INST, Schedule.from_starts(INST, [0, 1, 8]))
    assert not m.feasible
    assert m.peak_memory == 12
