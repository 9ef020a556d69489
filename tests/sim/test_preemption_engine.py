"""The engine in every preemption mode: valid schedules (the validator and the independent
slot-by-slot replay agree), the restart path unchanged, swap space honoured, options checked."""

import numpy as np
import pytest
from hypothesis import strategies as st

from kvopt import Instance, check_schedule
from kvopt.core.errors import UsageError
from kvopt.sim import POLICIES, policy_info, simulate
from kvopt.sim.engine import LivelockError
from tests.replay import replay
from tests.strategies import default_and_slow, engine_options, small_instances

MODES = ("restart", "recompute", "swap")


def _replay_ok(inst, sched):
    runs = [dict(request=int(r), start=int(k), length=int(L), completed=bool(c), offset=int(f),
                 prefill=int(p), swapped=bool(w))
            for r, k, L, c, f, p, w in zip(sched.run_request, sched.run_start, sched.run_length,
                                           sched.run_completed, sched.run_offset,
                                           sched.run_prefill, sched.run_swapped, strict=True)]
    return replay(int(inst.memory), inst.arrival.tolist(), inst.prompt.tolist(),
                  inst.output.tolist(), runs, preemption=sched.preemption,
                  block_size=sched.block_size, host_memory=sched.host_memory,
                  paused=sched.paused.tolist())


def _policies(mode):
    return [p for p in sorted(POLICIES) if p != "replay" and mode in policy_info(p).modes]


def _every_mode_gives_schedules_the_replay_accepts(inst, seed, mode, host):
    for name in _policies(mode):
        try:
            sim = simulate(inst, name, seed=seed, preemption=mode,
                           host_memory=host if mode == "swap" else None,
                           **engine_options(name, inst))
        except LivelockError:
            assert policy_info(name).may_livelock, name
            continue
        sched = sim.schedule
        assert sched.preemption == mode
        kinds, total, _ = _replay_ok(inst, sched)
        assert kinds == set(), (name, mode, kinds)
        assert total == check_schedule(inst, sched).objective == sim.metrics.total_latency
        if mode == "restart" and name != "vllm":  # (vllm: blocks, prefill-only steps)
            assert sched.is_seed_convention
        if mode != "swap":
            assert not sched.run_swapped.any()


# 40 examples in the default run, 2000 with -m slow (~30 s; every policy in the drawn mode)
(test_every_mode_gives_schedules_the_replay_accepts,
 test_every_mode_gives_schedules_the_replay_accepts_2000) = default_and_slow(
    _every_mode_gives_schedules_the_replay_accepts, 40, 2000,
    inst=small_instances(min_memory=4, max_memory=12, max_arrival=4, predictions=True),
    seed=st.integers(0, 2**16), mode=st.sampled_from(MODES), host=st.sampled_from([None, 0, 4]))


def _two():
    # request 1 arrives later and overflows M: FCFS evicts it (the newest)
    return Instance(memory=10, arrival=[0, 1], prompt=[0, 0], output=[6, 6])


def test_recompute_keeps_the_generated_tokens():
    inst = _two()
    restart = simulate(inst, "fcfs").schedule
    rec = simulate(inst, "fcfs", preemption="recompute").schedule
    assert restart.num_evictions == rec.num_evictions == 1
    # both: request 1 starts at 1 and is evicted at 5 (4 tokens; 6 + 5 > 10 at slot 6)
    # restart: it starts again from its prompt at once (6 + 1 fits) and finishes at 11
    # recompute: it needs 4 + 1 tokens, waits for request 0 (done at 6), finishes at 8
    assert restart.completion(inst).tolist() == [6, 11]
    assert rec.completion(inst).tolist() == [6, 8]
    ev = ~rec.run_completed
    assert rec.run_offset[rec.run_completed & (rec.run_request == 1)].tolist() == [4]
    assert rec.run_offset[ev].tolist() == [0]


def test_swap_without_host_memory_is_recompute():
    inst = _two()
    for step in ("unit", "a100-llama2-7b-tp1"):
        rec = simulate(inst, "fcfs", preemption="recompute", step_time=step)
        sw0 = simulate(inst, "fcfs", preemption="swap", host_memory=0, step_time=step)
        assert not sw0.schedule.run_swapped.any()
        assert np.array_equal(rec.schedule.run_start, sw0.schedule.run_start)
        if rec.schedule.times is not None:
            assert np.allclose(rec.schedule.times, sw0.schedule.times)
        sw = simulate(inst, "fcfs", preemption="swap", step_time=step)
        assert sw.schedule.run_swapped.sum() == 1
        assert sw.stats["swap_out"] == sw.stats["swap_in"] == 1


def test_swap_charges_the_transfer_and_skips_the_reprefill():
    from kvopt.sim.serving import swap_seconds_per_token
    from kvopt.sim.steptime import batch_time, get_step_time

    inst = Instance(memory=4000, arrival=[0.0, 0.01], prompt=[1500, 1500], output=[600, 600],
                    time_unit="second")
    model = get_step_time("a100-llama2-7b-tp1")
    sw = simulate(inst, "fcfs", preemption="swap", step_time=model)
    sched = sw.schedule
    res = np.flatnonzero(sched.run_swapped)
    assert res.size == 1
    k = int(sched.run_start[res[0]])
    kv = 1500 + int(sched.run_offset[res[0]])
    # the step after the swap-in: the resumed request decodes (no prefill) and its KV moved
    # back over the host link; the other request has completed by then
    step = float(sched.times[k + 1] - sched.times[k])
    expect = float(batch_time(model, decode=1, kv=kv)[0]) + kv * swap_seconds_per_token(model)
    assert step == pytest.approx(expect, rel=1e-9)


@pytest.mark.parametrize("policy", ["mcsf", "amin", "gmax", "hsf"])
def test_restart_only_policies_refuse_other_modes(policy):
    inst = Instance(memory=10, arrival=[0, 1], prompt=[0, 0], output=[6, 6],
                    pred_lower=[1, 1], pred_upper=[8, 8])
    with pytest.raises(UsageError, match="preemption"):
        simulate(inst, policy, preemption="recompute")


def test_bad_engine_options_name_the_option():
    inst = _two()
    with pytest.raises(UsageError, match="invalid preemption"):
        simulate(inst, "fcfs", preemption="pause")
    with pytest.raises(UsageError, match="invalid host_memory"):
        simulate(inst, "fcfs", preemption="swap", host_memory=-1)
