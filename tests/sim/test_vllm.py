"""The vLLM-like scheduler: valid schedules in every batching and preemption mode (checked by
the validator and the independent replay), vLLM's rules on hand-made cases, option errors."""

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvopt import Instance, check_schedule
from kvopt.core.errors import UsageError
from kvopt.sim import simulate
from kvopt.sim.serving import BlockSizeError
from tests.sim.test_preemption_engine import _replay_ok


@st.composite
def block_instances(draw):
    b = draw(st.sampled_from([1, 2, 4]))
    M = b * draw(st.integers(3, 8))
    n = draw(st.integers(1, 6))
    s = [draw(st.integers(0, min(5, M - 1))) for _ in range(n)]
    o = [draw(st.integers(1, M - si)) for si in s]
    a = [draw(st.integers(0, 4)) for _ in range(n)]
    return b, Instance(memory=M, arrival=a, prompt=s, output=o)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=block_instances(), batching=st.sampled_from(["prefill-only", "mixed", "chunked"]),
       mode=st.sampled_from(["recompute", "swap", "restart"]),
       wm=st.sampled_from([0.0, 0.01, 0.3]), budget=st.sampled_from([None, 3, 8]),
       seqs=st.sampled_from([256, 2]), step=st.sampled_from(["unit", "a100-llama2-7b-tp1"]))
def test_vllm_schedules_are_valid_in_every_mode(case, batching, mode, wm, budget, seqs, step):
    b, inst = case
    opts = dict(block_size=b, watermark=wm, batching=batching, max_num_seqs=seqs)
    if budget is not None:
        opts["max_num_batched_tokens"] = max(budget, seqs if batching == "chunked" else 1)
    sim = simulate(inst, "vllm", preemption=mode, step_time=step, **opts)
    sched = sim.schedule
    assert sched.block_size == b and sched.preemption == mode
    assert (sched.paused.size > 0) <= (batching == "prefill-only")
    assert (sched.run_prefill.any()) <= (batching == "chunked")
    kinds, total, _ = _replay_ok(inst, sched)
    assert kinds == set(), kinds
    assert total == check_schedule(inst, sched).objective


def test_prefill_only_step_pauses_the_running_requests():
    inst = Instance(memory=64, arrival=[0, 1], prompt=[14, 14], output=[40, 40])
    sched = simulate(inst, "vllm").schedule
    assert sched.paused.tolist() == [2]
    mixed = simulate(inst, "vllm", batching="mixed").schedule
    assert mixed.paused.size == 0
    # request 0 loses one slot to request 1's prefill
    assert sched.completion(inst)[0] == mixed.completion(inst)[0] + 1


def test_victim_is_the_most_recently_admitted_and_goes_back_to_the_front():
    # 8 blocks of 4 tokens; three requests admitted at 0, 1, 2 outgrow memory together
    three = Instance(memory=32, arrival=[0, 1, 2], prompt=[3, 3, 3], output=[20, 20, 20])
    opts = {"block_size": 4, "watermark": 0.0, "batching": "mixed"}
    sched = simulate(three, "vllm", **opts).schedule
    ev = ~sched.run_completed
    assert sched.run_request[ev][0] == 2  # the first victim: admitted last
    e = int((sched.run_start + sched.run_length)[ev][0])
    # a short request arriving right after the preemption would fit, but the victim is at
    # the front of the waiting queue: it starts only after the victim resumed
    four = Instance(memory=32, arrival=[0, 1, 2, e + 1], prompt=[3, 3, 3, 0],
                    output=[20, 20, 20, 1])
    s4 = simulate(four, "vllm", **opts).schedule
    fin = s4.run_completed
    start = dict(zip(s4.run_request[fin].tolist(), s4.run_start[fin].tolist(), strict=True))
    assert start[2] <= start[3]
    fifo = simulate(four, "fcfs", preemption="recompute").schedule  # token-exact, no blocks
    assert check_schedule(four, fifo).ok


def test_watermark_holds_back_admission():
    inst = Instance(memory=160, arrival=[0, 0], prompt=[60, 60], output=[10, 10])
    # 10 blocks of 16; each request needs 4 blocks at admission, 5 later
    free = simulate(inst, "vllm", watermark=0.0).schedule
    held = simulate(inst, "vllm", watermark=0.3).schedule   # 3 blocks must stay free
    assert free.final_start(inst).tolist() == [0, 0]
    assert held.final_start(inst).tolist() == [0, 10]  # after request 0 completes


def test_chunked_prefill_splits_a_long_prompt():
    inst = Instance(memory=4096, arrival=[0, 0], prompt=[1000, 10], output=[5, 5])
    sched = simulate(inst, "vllm", batching="chunked", max_num_batched_tokens=256,
                     max_num_seqs=8).schedule
    fin = sched.run_completed
    P = dict(zip(sched.run_request[fin].tolist(), sched.run_prefill[fin].tolist(),
                 strict=True))
    assert P[0] == 3  # 1000 tokens in chunks of 256: three chunk slots, the fourth produces
    # request 1 waits for budget (each step goes to request 0's chunks) and is admitted at
    # decision 3, when request 0's last chunk (232 tokens) leaves room for its 10 tokens
    assert P[1] == 0 and sched.final_start(inst)[1] == 3
    assert check_schedule(inst, sched).ok


@pytest.mark.parametrize(("opts", "name"), [
    ({"watermark": 1.0}, "watermark"), ({"watermark": -0.1}, "watermark"),
    ({"block_size": 7}, "block_size"), ({"max_num_batched_tokens": 0}, "max_num_batched_tokens"),
    ({"batching": "chunked", "max_num_batched_tokens": 8}, "max_num_batched_tokens"),
    ({"batching": "lazy"}, "batching"), ({"max_num_seqs": 0}, "max_num_seqs")])
def test_bad_options_name_the_option(opts, name):
    inst = Instance(memory=64, arrival=[0], prompt=[4], output=[4])
    with pytest.raises(UsageError, match=f"invalid {name}"):
        simulate(inst, "vllm", **opts)


@pytest.mark.parametrize(("args", "flag"), [
    (["--policy", "vllm", "--option", "block_size=5"], "--option block_size"),
    (["--policy", "vllm", "--option", "watermark=1"], "--option watermark"),
    (["--policy", "vllm", "--option", "batching=chunked", "--option",
      "max_num_batched_tokens=0"], "--option max_num_batched_tokens"),
    (["--policy", "vllm"], "--option block_size"),  # 16 does not divide M = 16492
    (["--policy", "vllm", "--option", "watermark=-0.1"], "--option watermark"),
    (["--policy", "vllm", "--option", "block_size=4", "--option", "batching=chunked",
      "--option", "max_num_batched_tokens=0"], "--option max_num_batched_tokens"),
    (["--policy", "mcsf", "--preemption", "recompute"], "--preemption"),
])
def test_cli_bad_options_exit_2_naming_the_option(tmp_path, args, flag):
    out = tmp_path / "s.json"
    r = subprocess.run([sys.executable, "-m", "kvopt", "simulate",
                        "instances/traces/azure_conv_2023.csv", *args, "--schedule-out",
                        str(out)], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    assert f"invalid {flag}" in r.stderr
    assert "Traceback" not in r.stderr and not out.exists()


def test_block_size_error_suggests_the_fix(tmp_path):
    """The vllm policy's default blocks of 16 do not divide the Azure trace's M = 16492: the
    error names the option and the nearest memories and block sizes, and both fixes run."""
    r = subprocess.run([sys.executable, "-m", "kvopt", "simulate",
                        "instances/traces/azure_conv_2023.csv", "--policy", "vllm"],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "invalid --option block_size: 16 does not divide the KV memory M = 16492" in r.stderr
    assert "16480 or 16496" in r.stderr and "(1, 2, 4, 7, 14)" in r.stderr
    assert "e.g. --memory 16480 or --option block_size=4" in r.stderr
    err = BlockSizeError(16492, 16)
    arrays = {"arrival": [0, 1], "prompt": [40, 30], "output": [20, 20]}
    inst = Instance(memory=16492, **arrays)
    with pytest.raises(BlockSizeError, match="invalid block_size"):
        simulate(inst, "vllm")
    other = Instance(memory=err.memories[0], **arrays)
    for case, r in ((other, simulate(other, "vllm")),
                    (inst, simulate(inst, "vllm", block_size=err.suggested_block))):
        assert check_schedule(case, r.schedule).ok
    assert BlockSizeError(10, 4).memories == (8, 12)
    assert BlockSizeError(3, 4).memories == (4,) and BlockSizeError(3, 4).blocks == (1, 3)
