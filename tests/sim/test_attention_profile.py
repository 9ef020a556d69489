"""Attention costs from the measured kernel profile (``kvopt.sim.steptime.attention``) and
their use by the profiled step-time model."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kvopt.core.errors import UsageError
from kvopt.sim.steptime import (
    H100,
    LLAMA2_7B,
    LLAMA2_70B,
    ProfiledStepTime,
    batch_time,
    get_step_time,
    model_from_dict,
)
from kvopt.sim.steptime.attention import (
    PROFILE_BW_EFF,
    PROFILE_MFU,
    attention_profile,
    attention_samples,
)


def test_profile_passes_through_the_measured_samples():
    s = attention_samples("a100", "llama-2-7b")
    p = attention_profile("a100", "llama-2-7b", 1)
    assert len(s["decode"]) == 436 and len(s["prefill"]) == 6
    assert p.levels.tolist() == [32, 256, 1024, 2048, 4032]
    for b, c, ms in s["decode"]:
        if c in (32, 256, 1024, 2048, 4032):
            assert p.decode_ms(b, b * c)[0] == pytest.approx(ms)
            assert p.decode_ms_one(b, b * c) == pytest.approx(ms)
    # the level-1984 samples joined level 2048, scaled by the context ratio
    b, c, ms = next(x for x in s["decode"] if x[1] == 1984)
    assert p.decode_ms_one(b, b * 2048) == pytest.approx(ms * 2048 / 1984)
    for ch, ms in s["prefill"]:
        assert p.prefill_ms(ch, ch * ch) == pytest.approx(ms, abs=0.02)


def test_scalar_and_vector_decode_agree_everywhere():
    p = attention_profile("a100", "llama-2-7b", 1)
    rng = np.random.default_rng(3)
    D = rng.integers(0, 300, 500)
    K = D * rng.uniform(1, 9000, 500)
    vec = p.decode_ms(D, K)
    one = np.array([p.decode_ms_one(int(d), float(k)) for d, k in zip(D, K, strict=True)])
    assert np.allclose(vec, one, rtol=1e-12, atol=0)
    assert (vec[D == 0] == 0).all() and (vec[D > 0] > 0).all()


def test_decode_attention_grows_with_context_and_batch():
    p = attention_profile("a100", "llama-2-7b", 1)
    c = np.array([16, 32, 100, 256, 700, 1024, 2048, 3000, 4032, 6000], dtype=float)
    for b in (1, 8, 64, 128, 200):
        t = p.decode_ms(np.full(c.shape, b), b * c)
        assert (np.diff(t) >= -1e-12).all(), b
    assert p.decode_ms(200, 200 * 1000)[0] == pytest.approx(p.decode_ms(128, 128 * 1000)[0]
                                                            * 200 / 128)


def test_profile_only_where_measured():
    assert attention_profile("a100", "llama-2-7b", 2) is None
    assert attention_profile("h100", "llama-2-7b", 1) is None
    assert get_step_time("a100-llama2-7b-tp1").attention_source == "profile"
    assert get_step_time("h100-llama2-7b-tp1").attention_source == "analytic"
    assert get_step_time("a100-llama2-70b-tp2").attention_source == "analytic"
    with pytest.raises(UsageError, match="attention"):
        ProfiledStepTime(LLAMA2_70B, tp=2, attention="profile")
    with pytest.raises(UsageError, match="attention"):
        ProfiledStepTime(LLAMA2_7B, tp=1, attention="bogus")


def test_profiled_model_uses_the_kernel_times():
    m = get_step_time("a100-llama2-7b-tp1")
    p = attention_profile("a100", "llama-2-7b", 1)
    base = ProfiledStepTime(LLAMA2_7B, tp=1, name="x")
    assert base.attention_source == "profile"
    for d, kv in ((1, 500), (64, 64 * 2048), (128, 128 * 1000)):
        extra = batch_time(m, decode=d, kv=kv)[0] - batch_time(m, decode=d, kv=0)[0]
        want = 32e-3 * (p.decode_ms_one(d, kv) - p.decode_ms_one(d, 0))
        assert extra == pytest.approx(want)
    psq = 1000.0**2 + 3000.0**2
    with_pre = batch_time(m, prefill=4000, prefill_sq=psq)[0]
    ana = dataclasses.replace(m, attention="analytic")
    gap = with_pre - batch_time(ana, prefill=4000, prefill_sq=psq)[0]
    want = 32e-3 * p.prefill_ms(4000, psq) - ana.prefill_sq_coef * psq
    assert gap == pytest.approx(float(want))
    # bw_eff and mfu scale the measured terms like the analytic ones
    slow = dataclasses.replace(m, bw_eff=PROFILE_BW_EFF / 2, mfu=PROFILE_MFU / 2)
    d2 = batch_time(slow, decode=64, kv=64 * 2048)[0] - batch_time(slow, decode=64, kv=0)[0]
    d1 = batch_time(m, decode=64, kv=64 * 2048)[0] - batch_time(m, decode=64, kv=0)[0]
    assert d2 == pytest.approx(2 * d1)


def test_engine_fast_paths_match_durations():
    m = get_step_time("a100-llama2-7b-tp1")
    for count, kv0, length in ((1, 700, 5), (37, 37 * 900, 40), (150, 150 * 3000, 12)):
        run = m.decode_run(count, kv0, length)
        kv = kv0 + count * np.arange(length)
        want = batch_time(m, decode=np.full(length, count), kv=kv)
        assert np.allclose(run, want, rtol=1e-12)
        assert m.first_batch(0, count, kv0, 0.0) == pytest.approx(float(want[0]))
    assert m.first_batch(700, 5, 5 * 400, 700.0**2) == pytest.approx(
        float(m.durations(np.array([705]), np.array([5]), np.array([2000]), np.array([700]),
                          np.array([490000.0]))[0]))


def test_json_round_trip_keeps_the_attention_source():
    m = get_step_time("a100-llama2-7b-tp1")
    doc = m.to_dict()
    assert doc["attention"] == "auto"
    m2 = model_from_dict(doc)
    assert batch_time(m2, decode=64, kv=64 * 1500)[0] == pytest.approx(
        batch_time(m, decode=64, kv=64 * 1500)[0])
    del doc["attention"]      # a file written before attention profiles: analytic
    assert model_from_dict(doc).attention_source == "analytic"


def test_gpu_time_overhead_by_model():
    assert ProfiledStepTime(LLAMA2_7B, tp=1).overhead == pytest.approx(1.5e-3)
    assert ProfiledStepTime(LLAMA2_7B, tp=1, gpu=H100).overhead == pytest.approx(1.5e-3)
    assert ProfiledStepTime(LLAMA2_70B, tp=2).overhead == pytest.approx(2e-3)
    assert ProfiledStepTime(LLAMA2_7B, tp=1, overhead=0.0).overhead == 0.0
