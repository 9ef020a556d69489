"""Schedules in every preemption mode: the validator agrees with an independent slot-by-slot
replay (tests/replay.py) on random schedules with evictions, resumes, swaps, blocks, chunked
prefill and paused slots, valid or corrupted; and the JSON form keeps version 1 for the seed
convention."""

import json

import numpy as np
import pytest
from hypothesis import strategies as st

from kvopt import Instance, Schedule, check_schedule, load_schedule
from kvopt.core.validate import VIOLATION_KINDS, schedule_memory
from tests.replay import KINDS, replay
from tests.strategies import default_and_slow


def _slots_for(tokens, k, P, paused, evicted_tail):
    """Slots a run started at ``k`` needs to produce ``tokens`` (after ``P`` prefill slots);
    an evicted run may keep ``evicted_tail`` more slots (paused or not)."""
    if tokens == 0:
        return P + evicted_tail
    made, tau = 0, k
    while made < tokens:
        tau += 1
        if tau <= k + P:
            continue
        if tau == k + P + 1 or tau not in paused:
            made += 1
    return tau - k + evicted_tail


@st.composite
def mode_schedules(draw):
    mode = draw(st.sampled_from(["restart", "recompute", "swap"]))
    b = draw(st.sampled_from([1, 1, 2, 4]))
    n = draw(st.integers(1, 4))
    s = [draw(st.integers(0, 3)) for _ in range(n)]
    o = [draw(st.integers(1, 6)) for _ in range(n)]
    peak = max(si + oi for si, oi in zip(s, o, strict=True))
    M = b * (-(-peak // b) + draw(st.integers(0, 4))) + draw(st.sampled_from([0, 0, 0, 1]))
    a = [draw(st.integers(0, 3)) for _ in range(n)]
    variant = draw(st.sampled_from(["plain", "chunked", "paused"]))
    paused = sorted(draw(st.sets(st.integers(1, 25), max_size=6))) if variant == "paused" else []
    runs = []
    for i in range(n):
        t = a[i] - (1 if draw(st.integers(0, 12)) == 0 else 0)
        produced = 0
        for _ in range(draw(st.integers(0, 2))):  # evicted runs
            if produced + 1 >= o[i] and mode != "restart":
                break
            left = o[i] - (produced if mode != "restart" else 0)
            tok = draw(st.integers(0, max(left - 1, 0)))
            P = draw(st.integers(0, 2)) if variant == "chunked" else 0
            off = produced if mode != "restart" else 0
            L = _slots_for(tok, max(t, 0), P, set(paused), draw(st.integers(0, 1)))
            runs.append(dict(request=i, start=max(t, 0), length=L, completed=False, offset=off,
                             prefill=P, swapped=bool(runs and mode == "swap"
                                                     and runs[-1]["request"] == i
                                                     and draw(st.booleans()))))
            produced = off + tok
            t = max(t, 0) + L + draw(st.integers(0, 2))
        off = produced if mode != "restart" else 0
        P = draw(st.integers(0, 2)) if variant == "chunked" else 0
        L = _slots_for(o[i] - off, max(t, 0), P, set(paused), 0)
        swapped = bool(mode == "swap" and runs and runs[-1]["request"] == i and draw(st.booleans()))
        runs.append(dict(request=i, start=max(t, 0), length=L, completed=True, offset=off,
                         prefill=P, swapped=swapped))
    # corruptions
    if runs and draw(st.integers(0, 3)) == 0:
        r = draw(st.sampled_from(runs))
        what = draw(st.sampled_from(["offset", "length", "swapped", "start", "drop", "dup"]))
        if what == "offset":
            r["offset"] = max(r["offset"] + draw(st.sampled_from([-1, 1])), 0)
        elif what == "length":
            r["length"] = max(r["length"] + draw(st.sampled_from([-1, 1])), 0)
        elif what == "swapped":
            r["swapped"] = not r["swapped"]
        elif what == "start":
            r["start"] = max(r["start"] + draw(st.sampled_from([-1, 1])), 0)
        elif what == "drop":
            runs.remove(r)
        else:
            runs.append(dict(r))
    host = draw(st.sampled_from([None, 0, 3, 6, 20]))
    if draw(st.integers(0, 9)) == 0 and variant == "paused":
        paused = paused[::-1]
    return dict(M=M, a=a, s=s, o=o, runs=runs, mode=mode, b=b, host=host, paused=paused)


def _build(case):
    inst = Instance(memory=case["M"], arrival=case["a"], prompt=case["s"], output=case["o"])
    r = case["runs"]
    sched = Schedule([x["request"] for x in r], [x["start"] for x in r],
                     [x["length"] for x in r], [x["completed"] for x in r], inst.sha256(),
                     run_offset=[x["offset"] for x in r], run_prefill=[x["prefill"] for x in r],
                     run_swapped=[x["swapped"] for x in r], preemption=case["mode"],
                     block_size=case["b"], host_memory=case["host"], paused=case["paused"])
    return inst, sched


def _validator_equals_slot_by_slot_replay(case):
    inst, sched = _build(case)
    kinds, total, gpu = replay(case["M"], case["a"], case["s"], case["o"], case["runs"],
                               preemption=case["mode"], block_size=case["b"],
                               host_memory=case["host"], paused=case["paused"])
    rep = check_schedule(inst, sched)
    assert rep.kinds() & set(KINDS) == kinds, (str(rep), kinds)
    assert rep.kinds() <= set(KINDS)
    if not kinds & {"not_completed", "multiple_completions", "paused", "run_length"}:
        assert rep.objective == total
    if "paused" not in kinds:
        mem, _ = schedule_memory(inst, sched)
        assert mem.tolist() == gpu[: len(mem)] + [0] * max(0, len(mem) - len(gpu))
    # the JSON round trip keeps everything
    again = Schedule.from_dict(json.loads(json.dumps(sched.to_dict())))
    assert again.same_runs(sched)


# 500 examples in the default run (~8 ms each), 1500 with -m slow
test_validator_equals_slot_by_slot_replay, test_validator_equals_slot_by_slot_replay_1500 = (
    default_and_slow(_validator_equals_slot_by_slot_replay, 500, 1500, case=mode_schedules()))


INST = Instance(memory=10, arrival=[0, 0], prompt=[2, 1], output=[3, 4])


def _two(mode="recompute", **kw):
    # request 0: 1 token, evicted at 1, resumes at 2 from 1 token; request 1 runs 0..4
    base = dict(run_offset=[0, 1, 0], preemption=mode)
    base.update(kw)
    return Schedule([0, 0, 1], [0, 2, 0], [1, 2, 4], [False, True, True], INST.sha256(),
                    **base)


@pytest.mark.parametrize(("schedule", "kind"), [
    (lambda: _two("restart"), "progress"),
    (lambda: _two(run_offset=[0, 0, 0]), "progress"),
    (lambda: _two(run_swapped=[False, True, False]), "progress"),
    (lambda: _two("swap", run_swapped=[False, True, False], host_memory=2), "host_memory"),
    (lambda: _two(block_size=3), "block_size"),
    (lambda: _two(block_size=2), "memory"),
    (lambda: _two(paused=[3, 2]), "paused"),
    (lambda: _two(run_prefill=[0, 1, 0], paused=[2]), "paused"),
])
def test_each_new_violation_kind(schedule, kind):
    rep = check_schedule(INST, schedule())
    assert kind in rep.kinds(), str(rep)


def test_new_kinds_are_registered():
    assert {"progress", "host_memory", "block_size", "paused"} <= set(VIOLATION_KINDS)


def test_recompute_swap_and_restart_read_alike_when_valid():
    rep = check_schedule(INST, _two())
    assert rep.ok, str(rep)
    # latencies: request 0 completes at 4 (2 + 2 tokens), request 1 at 4
    assert rep.objective == 8.0
    swap = _two("swap", run_swapped=[False, True, False], host_memory=3)
    assert check_schedule(INST, swap).ok


def test_seed_convention_files_stay_version_1(tmp_path):
    sched = Schedule.from_starts(INST, [0, 1], source="hand")
    doc = sched.to_dict()
    assert doc["schema_version"] == 1
    assert set(doc["runs"]) == {"request", "start", "length", "completed"}
    assert "preemption" not in doc
    rec = _two()
    doc2 = rec.to_dict()
    assert doc2["schema_version"] == 2 and doc2["preemption"] == "recompute"
    p = tmp_path / "s.json"
    rec.save(p)
    assert load_schedule(p).same_runs(rec)


def test_version_1_document_loads_unchanged():
    doc = {"schema": "kvopt.schedule", "schema_version": 1, "instance_sha256": INST.sha256(),
           "source": "old", "runs": {"request": [0, 1], "start": [0, 1], "length": [3, 4],
                                     "completed": [True, True]}}
    sched = Schedule.from_dict(doc)
    assert sched.preemption == "restart" and sched.is_seed_convention
    assert check_schedule(INST, sched).ok
    assert sched.to_dict() == doc


def test_metrics_of_a_resumed_request():
    from kvopt import compute_metrics

    m = compute_metrics(INST, _two())
    assert m.total_latency == 8.0 and m.evictions == 1
    assert m.ttft_mean == 1.0
    assert np.isclose(m.tpot_mean, (1.0 + 1.0) / 2)  # both final runs: one slot per token
