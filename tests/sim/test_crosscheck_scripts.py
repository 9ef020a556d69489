"""The cross-check scripts in ``benchmarks/`` that need no peer: the parts of
``vllm_crosscheck.py`` that run without vLLM or a GPU (arguments, the model folder, the
comparison), and ``vidur_crosscheck.py``'s inputs (requests, attention table) without Vidur."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kvopt.sim.steptime import LLAMA2_7B
from tests.scripts import load_benchmark

VL = load_benchmark("vllm_crosscheck")
VC = load_benchmark("vidur_crosscheck")


def test_model_config_is_llama2_7b():
    cfg = VL.llama2_7b_config()
    assert cfg["num_hidden_layers"] == LLAMA2_7B.n_layers == 32
    assert cfg["hidden_size"] == LLAMA2_7B.n_embd
    assert cfg["intermediate_size"] == LLAMA2_7B.ffn_dim
    assert cfg["num_attention_heads"] == cfg["num_key_value_heads"] == LLAMA2_7B.n_head
    # KV bytes per token from the config (fp16): 2 (K, V) x layers x kv heads x head dim x 2 B
    head_dim = cfg["hidden_size"] // cfg["num_attention_heads"]
    kv = 2 * cfg["num_hidden_layers"] * cfg["num_key_value_heads"] * head_dim * 2
    assert kv == LLAMA2_7B.kv_bytes_per_token == 524288


def test_dry_run_writes_model_and_engine_args(tmp_path, capsys):
    assert VL.main(["run", "--config", "F", "--out", str(tmp_path), "--dry-run"]) == 0
    doc = json.loads(capsys.readouterr().out)
    ea = doc["engine_args"]
    assert ea["num_gpu_blocks_override"] == 16384 // 16
    assert ea["load_format"] == "dummy" and ea["skip_tokenizer_init"] is True
    assert (ea["max_num_seqs"], ea["max_num_batched_tokens"], ea["block_size"]) == (128, 4096, 16)
    written = json.loads((Path(ea["model"]) / "config.json").read_text())
    assert written == VL.llama2_7b_config()


@pytest.mark.parametrize("argv, flag", [
    (["run", "--config", "Z", "--dry-run"], "--config"),
    (["run", "--config", "A", "--n", "0", "--dry-run"], "--n"),
    (["run", "--config", "A", "--gpu-memory-utilization", "1.5", "--dry-run"],
     "--gpu-memory-utilization"),
    (["run", "--config", "A", "--kv-blocks", "0", "--dry-run"], "--kv-blocks"),
    (["compare", "/nonexistent.json", "--crosscheck", "/nonexistent2.json"], "RESULT"),
])
def test_bad_arguments_exit_2(argv, flag, capsys):
    with pytest.raises(SystemExit) as exc:
        VL.main(argv)
    assert exc.value.code == 2
    assert flag in capsys.readouterr().err


def test_token_ids_have_the_prompt_lengths():
    ids = VL.token_ids(np.array([3, 1, 7]), seed=5)
    assert [len(x) for x in ids] == [3, 1, 7]
    assert ids == VL.token_ids(np.array([3, 1, 7]), seed=5)
    assert all(3 <= t < LLAMA2_7B.vocab_size for x in ids for t in x)


def test_summarize_and_compare_from_synthetic_results(tmp_path, capsys):
    rows = {"arrived_at": np.array([0.0, 1.0, 2.0, 3.0]), "e2e": np.array([1.0, 2.0, 3.0, 4.0]),
            "ttft": np.array([0.1, 0.2, 0.3, 0.4]), "output": np.array([5, 5, 5, 5]),
            "generated": np.array([5, 5, 4, 5])}
    s = VL.summarize("F", rows, {"preemptions": 8})
    assert s["mean_e2e_s"] == 2.5 and s["mean_ttft_s"] == pytest.approx(0.25)
    assert s["p99_e2e_s"] == pytest.approx(np.percentile([1, 2, 3, 4], 99))
    assert s["makespan_s"] == 7.0 and s["short_outputs"] == 1
    vpath = tmp_path / "vllm_F_summary.json"
    vpath.write_text(json.dumps(s))
    fig = {"mean_e2e_s": 5.0, "p99_e2e_s": 8.0, "mean_ttft_s": 0.5, "preemptions": 4}
    cross = {"rows": [{"config": "F", "variant": "fcfs", "step_time": "st", "kvopt": fig,
                       "vidur": {**fig, "mean_e2e_s": 2.0}},
                      {"config": "A", "variant": "fcfs", "step_time": "st", "kvopt": fig,
                       "vidur": fig}]}
    cpath = tmp_path / "cross.json"
    cpath.write_text(json.dumps(cross))
    out = tmp_path / "cmp.md"
    assert VL.main(["compare", str(vpath), "--crosscheck", str(cpath), "--out", str(out)]) == 0
    res = VL.compare([s], cross)
    assert [(r["simulator"], r["config"]) for r in res] == [("vidur", "F"), ("kvopt", "F")]
    assert res[0]["ratio_to_vllm"]["mean_e2e_s"] == pytest.approx(2.0 / 2.5)
    assert res[1]["ratio_to_vllm"] == pytest.approx(
        {"mean_e2e_s": 2.0, "p99_e2e_s": 8.0 / s["p99_e2e_s"], "mean_ttft_s": 2.0,
         "preemptions": 0.5})
    table = out.read_text()
    assert "| F | kvopt | fcfs | st | 5.00 (2.00) |" in table
    assert table.strip() in capsys.readouterr().out


def test_compare_rejects_a_file_that_is_not_a_summary(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"config": "F"}))
    with pytest.raises(SystemExit) as exc:
        VL.main(["compare", str(bad), "--crosscheck", str(bad)])
    assert exc.value.code == 2 and "RESULT" in capsys.readouterr().err


def test_crosscheck_requests_clip_prompts_like_vidur():
    r = VC.requests(300, 2.0)
    assert r["arrival"][0] == 0.0 and np.all(np.diff(r["arrival"]) >= 0)
    assert np.all(r["prompt"] >= 1) and np.all(r["output"] >= 1)
    assert np.all(r["prompt"] + r["output"] <= VC.MAX_TOKENS)
    r1 = VC.requests(300, 1.0)
    assert np.allclose(r["arrival"], 2.0 * r1["arrival"], atol=2e-6)
