"""The GPU profiler: grid and CSV logic without torch; the forward pass where torch exists."""

import sys

import numpy as np
import pytest

from kvopt.core.errors import UsageError
from kvopt.sim.steptime import LLAMA2_7B, LLAMA2_70B, ModelConfig
from kvopt.sim.steptime.fit import fit_step_time
from kvopt.sim.steptime.gpu_profile import (
    GridPoint,
    default_grid,
    point_record,
    profile_gpu,
    shard_kv_bytes_per_token,
    write_steps_csv,
)
from kvopt.sim.steptime.measured import read_steps_csv


def test_full_grid_matches_the_shipped_h100_grid():
    shipped = read_steps_csv(
        __import__("kvopt.core.io", fromlist=["data_file"]).data_file(
            "measured", "h100_llama_steps.csv"), {"model": "llama-2-7b"})
    g = default_grid(LLAMA2_7B, 1, "full", kv_budget_bytes=32 * 2**30)
    got = sorted((p.kind, p.prefill, p.batch, p.kv) for p in g)
    want = sorted(zip(shipped.kind.tolist(), shipped.prefill.tolist(), shipped.decode.tolist(),
                      shipped.kv.astype(int).tolist(), strict=True))
    assert got == want


def test_grid_respects_kv_budget_and_tp():
    per_tok = shard_kv_bytes_per_token(LLAMA2_70B, 4)
    g = default_grid(LLAMA2_70B, 4, "quick", kv_budget_bytes=4 * 2**30)
    assert all(p.batch * p.context * per_tok <= 4 * 2**30 for p in g if p.batch)
    assert {p.kind for p in g} == {"prefill", "decode", "mixed"}
    with pytest.raises(UsageError, match="--tp"):
        default_grid(LLAMA2_70B, 3)
    with pytest.raises(UsageError, match="--grid"):
        default_grid(LLAMA2_7B, 1, "huge")


def test_csv_round_trip_feeds_fit(tmp_path):
    # records as the profiler writes them, timed by a known affine law: fit must read them
    rng = np.random.default_rng(0)
    recs = []
    for p in default_grid(LLAMA2_7B, 1, "full"):
        t = 6.0 + 0.09 * p.tokens + 4e-5 * p.kv + 1e-6 * p.prefill**2
        recs.append(point_record(p, "llama-2-7b", t * (1 + rng.normal(0, 0.003, 30))))
    path = tmp_path / "mine.csv"
    assert write_steps_csv(path, recs) == len(recs)
    rows = read_steps_csv(path)
    assert len(rows) == len(recs) and set(rows.kind.tolist()) == {"prefill", "decode", "mixed"}
    res = fit_step_time(rows, "h100-llama2-7b-tp1", holdout=0.25, seed=0)
    assert res.heldout["all"]["n"] > 0


def test_profile_without_torch_is_a_usage_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)   # import torch -> ImportError
    with pytest.raises(UsageError, match=r"kvopt\[gpu\]"):
        profile_gpu("llama-2-7b", points=[GridPoint("prefill", 16, 0, 0)])
    with pytest.raises(UsageError, match="--model"):
        profile_gpu("gpt-5")


def test_shard_forward_runs_on_cpu():
    torch = pytest.importorskip("torch", reason="the forward pass needs PyTorch "
                                                "(pip install 'kvopt[gpu]')")
    from kvopt.sim.steptime.gpu_profile import _Shard

    tiny = ModelConfig("tiny", 2, 64, 4, 2, 128, 100, 1e5)
    shard = _Shard(torch, tiny, 1, "cpu")
    P, B, C = 5, 3, 7
    caches = [(torch.randn(B, 2, C + 1, 16, dtype=torch.bfloat16),
               torch.randn(B, 2, C + 1, 16, dtype=torch.bfloat16)) for _ in range(2)]
    ids = torch.randint(0, 100, (P + B,))
    pos = torch.cat([torch.arange(P), torch.full((B,), C)]).long()
    with torch.inference_mode():
        out = shard.forward(ids, pos, P, B, caches)
    assert tuple(out.shape) == (P + B,)


def test_profile_on_cuda():
    torch = pytest.importorskip("torch", reason="profiling needs PyTorch")
    if not torch.cuda.is_available():
        pytest.skip("profiling needs a CUDA GPU")
    recs = profile_gpu("llama-2-7b", points=[GridPoint("decode", 0, 4, 128)], repeats=3)
    assert recs[0]["ms_median"] > 0


def test_point_bytes_counts_the_kv_cache_and_flags_what_cannot_fit_beside_70b_weights():
    # a 70B TP-2 shard's weights take ~64 GiB of an 80 GB H100 (79.2 GiB usable): the default
    # 32 GiB KV budget admits decode batches that cannot be allocated beside them (the profiler
    # ran out of device memory there on a real H100 before point_bytes was checked against the
    # free memory); a 7B model's weights (~12.6 GiB) leave room for every default point
    from kvopt.sim.steptime.gpu_profile import point_bytes
    from kvopt.sim.steptime.models import LLAMA2_7B, LLAMA2_70B

    p = GridPoint("decode", 0, 64, 2048)
    assert point_bytes(p, LLAMA2_70B, 2) >= p.kv * 163840
    free_70b = 79.2 * 2**30 - 64.3 * 2**30
    big = [q for q in default_grid(LLAMA2_70B, 2, "full")
           if point_bytes(q, LLAMA2_70B, 2) > free_70b]
    assert big and all(q.kind in ("decode", "mixed") for q in big)
    free_7b = 79.2 * 2**30 - 12.6 * 2**30
    assert all(point_bytes(q, LLAMA2_7B, 1) < free_7b for q in default_grid(LLAMA2_7B, 1, "full"))
