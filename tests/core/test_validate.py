import numpy as np
import pytest

from kvopt import InfeasibleScheduleError, Instance, Schedule, check_schedule
from kvopt.core.validate import VIOLATION_KINDS, memory_profile

INST = Instance(memory=10, arrival=[0, 0, 2], prompt=[1, 1, 2], output=[4, 8, 2])


def runs(req, start, length, done, inst=INST, **kw):
    return Schedule(req, start, length, done, inst.sha256(), **kw)


def test_feasible_schedule_and_objective():
    rep = check_schedule(INST, Schedule.from_starts(INST, [0, 0, 8]))
    assert rep.ok, str(rep)
    # latencies 4, 8, (8+2-2)=8
    assert rep.objective == 20.0
    assert rep.peak_memory == 10


def test_memory_profile_matches_loop():
    rng = np.random.default_rng(5)
    s = rng.integers(0, 5, 30)
    k = rng.integers(0, 20, 30)
    L = rng.integers(0, 9, 30)
    fast = memory_profile(s, k, L)
    slow = np.zeros(fast.shape[0], dtype=np.int64)
    for si, ki, li in zip(s, k, L, strict=True):
        for tau in range(ki + 1, ki + li + 1):
            slow[tau] += si + tau - ki
    np.testing.assert_array_equal(fast, slow)


@pytest.mark.parametrize(
    ("schedule", "kind", "match"),
    [
        (lambda: Schedule.from_starts(INST, [0, 1, 8]), "memory", r"memory 12 > M = 10 at slot 9"),
        (lambda: Schedule.from_starts(INST, [0, 0, 1]), "before_arrival",
         r"request 2 starts at slot 1 before its arrival 2"),
        (lambda: runs([0, 1], [0, 0], [4, 8], [True, True]), "not_completed",
         r"request 2 never completes"),
        (lambda: runs([0, 1, 2, 2], [0, 0, 8, 10], [4, 8, 2, 2], [True] * 4),
         "multiple_completions", r"request 2 completes 2 times"),
        (lambda: runs([0, 1, 2], [0, 0, 8], [4, 8, 3], [True] * 3), "run_length",
         r"completing run of request 2 has length 3, output is 2"),
        (lambda: runs([0, 1, 2, 2], [0, 0, 4, 8], [4, 8, 2, 2], [True, True, False, True]),
         "run_length", r"evicted run of request 2 has length 2, output is 2"),
        (lambda: runs([0, 1, 2, 2], [0, 0, 8, 8], [4, 8, 1, 2], [True, True, False, True]),
         "overlap", r"request 2: run at slot 8 overlaps"),
        (lambda: runs([0, 1, 2], [0, 0, 8], [4, 8, 2], [True] * 3, claimed_objective=19.0),
         "objective", r"claimed objective 19.0 but recomputed 20.0"),
        (lambda: runs([0, 1, 5], [0, 0, 8], [4, 8, 2], [True] * 3), "bad_run",
         r"request 5.*out of range"),
        (lambda: runs([0, 1, 2], [0, 0, 8], [4, 8, 2], [True] * 3, times=[0.0, 1.0]), "times",
         r"times has 2 entries, needs 11"),
        (lambda: Schedule([0, 1, 2], [0, 0, 8], [4, 8, 2], [True] * 3, "0" * 64),
         "instance_mismatch", r"another instance"),
    ],
)
def test_each_violation_kind(schedule, kind, match):
    rep = check_schedule(INST, schedule())
    assert kind in rep.kinds(), str(rep)
    assert any(v.kind == kind and __import__("re").search(match, v.message)
               for v in rep.violations), str(rep)
    with pytest.raises(InfeasibleScheduleError):
        rep.raise_if_invalid()


def test_violation_kinds_are_all_tested():
    # the parametrized cases above cover every kind the validator can report
    covered = {"memory", "before_arrival", "not_completed", "multiple_completions", "run_length",
               "overlap", "objective", "bad_run", "times", "instance_mismatch",
               "batch", "goodput",  # (these two: tests/core/test_slo.py)
               "progress", "host_memory", "block_size", "paused"}  # test_preemption_modes.py
    assert covered == set(VIOLATION_KINDS)


def test_eviction_then_restart_is_valid():
    # request 2 runs 1 slot from slot 4, is evicted, restarts at slot 8
    sched = runs([0, 1, 2, 2], [0, 0, 4, 8], [4, 8, 1, 2], [True, True, False, True])
    rep = check_schedule(INST, sched)
    assert rep.ok, str(rep)
    assert sched.num_evictions == 1
    assert rep.objective == 20.0


def test_memory_violation_amount_and_slot():
    rep = check_schedule(INST, Schedule.from_starts(INST, [0, 1, 8]))
    v = [x for x in rep.violations if x.kind == "memory"]
    # by hand: request 1 (started 1) holds 1+8=9 at slot 9 and request 2 (started 8) holds 2+1=3
    assert [(x.slot, x.amount) for x in v] == [(9, 2.0)]
    prof = memory_profile(INST.prompt, np.array([0, 1, 8]), INST.output)
    bad = np.flatnonzero(prof > 10)
    assert [x.slot for x in v] == bad.tolist()
    assert [x.amount for x in v] == (prof[bad] - 10).astype(float).tolist()


def test_second_unit_needs_times():
    inst = Instance(memory=10, arrival=[0.0, 0.5], prompt=[1, 1], output=[2, 2],
                    time_unit="second")
    bare = Schedule.from_starts(inst, [0, 1])
    assert "times" in check_schedule(inst, bare).kinds()
    timed = Schedule.from_starts(inst, [0, 1], times=[0.0, 0.6, 1.2, 1.8])
    rep = check_schedule(inst, timed)
    assert rep.ok, str(rep)
    assert rep.objective == pytest.approx((1.2 - 0.0) + (1.8 - 0.5))
    early = Schedule.from_starts(inst, [0, 1], times=[0.0, 0.4, 1.2, 1.8])
    assert "before_arrival" in check_schedule(inst, early).kinds()


def test_schedule_json_roundtrip(tmp_path):
    sched = runs([0, 1, 2, 2], [0, 0, 2, 8], [4, 8, 1, 2], [True, True, False, True],
                 source="hand", meta={"x": 1})
    p = tmp_path / "s.json"
    sched.save(p)
    from kvopt import load_schedule

    again = load_schedule(p)
    assert again.same_runs(sched)
    assert again.meta == {"x": 1}


def test_atomic_write_gives_normal_file_mode(tmp_path):
    import os
    import stat

    p = tmp_path / "x.json"
    Schedule.from_starts(INST, [0, 0, 8]).save(p)
    mode = stat.S_IMODE(os.stat(p).st_mode)
    mask = os.umask(0)
    os.umask(mask)
    assert mode == 0o666 & ~mask
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
