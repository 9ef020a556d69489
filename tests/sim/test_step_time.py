"""Step-time models: registry, formulas, monotonicity, inspectable coefficients."""

import json

import numpy as np
import pytest

from kvopt import Instance
from kvopt.sim import STEP_TIME_MODELS, get_step_time, simulate
from kvopt.sim.steptime import (
    LLAMA2_70B,
    ProfiledStepTime,
    RooflineStepTime,
    batch_time,
    load_operator_profile,
)


@pytest.mark.parametrize("name", sorted(STEP_TIME_MODELS))
def test_models_monotone_and_inspectable(name):
    m = get_step_time(name)
    json.dumps(m.coefficients())  # JSON-ready
    dec = batch_time(m, decode=[1, 8, 64, 256], kv=[100, 800, 6400, 25600])
    assert np.all(np.diff(dec) >= 0)
    pre = batch_time(m, prefill=[16, 256, 2048, 8192])
    assert np.all(np.diff(pre) >= 0)
    empty = batch_time(m)
    assert empty[0] == (1.0 if name == "unit" else 0.0)


def test_profiled_70b_matches_vidur_anchor():
    # notes/seed-001 §8: one layer's linear/norm ops at 4096 tokens, TP1 sum to ~30.5 ms
    nt, layer_ms, _ = load_operator_profile("llama-2-70b", 1)
    assert 29.0 < layer_ms[nt == 4096][0] < 32.5
    m = ProfiledStepTime(LLAMA2_70B, tp=2)
    # decode floor is near the HBM bound of the weights (~34 ms at TP2) plus overheads
    t1 = float(batch_time(m, decode=1, kv=100)[0])
    assert 0.03 < t1 < 0.09
    # decode cost grows with the KV read at the analytic rate
    k = 10_000
    d = float(batch_time(m, decode=8, kv=k)[0] - batch_time(m, decode=8, kv=0)[0])
    assert d == pytest.approx(k * m.kv_coef)
    assert m.kv_coef == pytest.approx(80 * 4096 / 2 / (2.039e12 * m.bw_eff))


def test_fast_paths_equal_durations():
    m = get_step_time("a100-llama2-70b-tp2")
    run = m.decode_run(12, 5000, 7)
    ref = m.durations(np.full(7, 12), np.full(7, 12), 5000 + 12 * np.arange(7),
                      np.zeros(7, dtype=np.int64), np.zeros(7))
    assert np.allclose(run, ref)
    one = m.first_batch(300, 5, 1234, 300.0**2)
    assert one == pytest.approx(float(batch_time(m, prefill=300, decode=5, kv=1234)[0]))


def test_roofline_regimes():
    m = RooflineStepTime(LLAMA2_70B, tp=2)
    small = float(batch_time(m, decode=1, kv=0)[0])
    t_ar = 20e-6 + 2 * 0.5 * 8192 * 2 / 600e9
    weights = 68.98e9 * 2 / (2 * 2.039e12 * 0.7)
    assert small == pytest.approx(0.5e-3 + 80 * 20e-6 + 2 * 80 * t_ar + weights, rel=1e-9)
    big = float(batch_time(m, prefill=8192)[0])
    assert big > 10 * small  # compute bound prefill


def test_timed_simulation_records_times():
    inst = Instance(memory=2000, arrival=[0.0, 0.01, 0.5], prompt=[100, 50, 300],
                    output=[20, 5, 7], time_unit="second")
    res = simulate(inst, "mcsf", step_time="a100-llama2-7b-tp1")
    t = res.schedule.times
    assert t is not None and np.all(np.diff(t) >= 0)
    assert res.metrics.unit == "second" and res.metrics.feasible
    # a request arriving at 0.5 s starts at the first decision point at or after 0.5 s
    k = res.schedule.final_start(inst)[2]
    assert t[k] >= 0.5 and (k == 0 or t[k - 1] < 0.5 or res.schedule.final_start(inst)[2] > 0)
    with pytest.raises(ValueError):
        get_step_time("h100-nope")


# --- interconnect, H100 models, monotone profiles, JSON models (issue 12) ---------------------

def _splitwise_prefill_ms(hardware, tp, prompt):
    import csv

    from kvopt.core.io import data_file

    with data_file("measured", "splitwise_perf_model.csv").open("r", newline="") as fh:
        vals = [float(r["prompt_time"]) for r in csv.DictReader(fh)
                if r["model"] == "llama2-70b" and r["hardware"] == hardware
                and int(r["tensor_parallel"]) == tp and int(r["batch_size"]) == 1
                and int(r["prompt_size"]) == prompt]
    return float(np.median(vals))


@pytest.mark.parametrize("prompt", [512, 2048])
def test_tp4_uses_nvswitch_all_reduce_and_matches_splitwise(prompt):
    meas = _splitwise_prefill_ms("a100-80gb", 4, prompt) / 1e3
    nvs = float(batch_time(get_step_time("a100-llama2-70b-tp4"), prefill=prompt)[0])
    pair = float(batch_time(get_step_time("a100-llama2-70b-tp4-pairwise"), prefill=prompt)[0])
    assert abs(nvs / meas - 1) < 0.15          # issue 12: was +47% / +72% with the pairwise table
    assert pair / meas - 1 > 0.4               # the pairwise table stays available, and is slow
    assert get_step_time("a100-llama2-70b-tp4").coefficients()["interconnect"] == "nvswitch"
    assert get_step_time("a100-llama2-70b-tp2").coefficients()["interconnect"] == "pairwise"


def test_resolve_interconnect_and_bad_values():
    from kvopt.core.errors import UsageError
    from kvopt.sim.steptime import resolve_interconnect

    assert resolve_interconnect("auto", 8) == "nvswitch"
    assert resolve_interconnect("pairwise", 1) == "none"
    with pytest.raises(UsageError, match="interconnect"):
        resolve_interconnect("pcie", 4)
    with pytest.raises(UsageError, match="tp"):   # no pairwise table at 8 workers
        ProfiledStepTime(LLAMA2_70B, tp=8, interconnect="pairwise")


def test_h100_models_registered_and_faster_than_a100():
    from kvopt.sim.steptime import H100

    assert H100.peak_flops == 989e12 and H100.hbm_bandwidth == 3.35e12
    for name in ("h100-llama2-7b-tp1", "h100-llama2-70b-tp2", "h100-llama2-70b-tp4",
                 "roofline-h100-llama2-7b-tp1", "roofline-h100-llama2-70b-tp2",
                 "roofline-h100-llama2-70b-tp4"):
        assert name in STEP_TIME_MODELS
        a = get_step_time(name.replace("h100", "a100"))
        h = get_step_time(name)
        assert h.name == name
        for kw in ({"decode": 32, "kv": 32 * 1024}, {"prefill": 2048}):
            assert batch_time(h, **kw)[0] < batch_time(a, **kw)[0]


def test_profiles_monotone_and_isotonic():
    from kvopt.sim.steptime import isotonic_increasing, load_all_reduce_profile

    rng = np.random.default_rng(0)
    y = np.cumsum(rng.random(50)) + rng.normal(0, 0.5, 50)
    z = isotonic_increasing(y)
    assert np.all(np.diff(z) >= 0)
    assert z.mean() == pytest.approx(y.mean())          # PAVA preserves the mean
    assert np.sum((z - y) ** 2) <= np.sum((np.maximum.accumulate(y) - y) ** 2)
    for fam in ("a100", "h100"):
        for model in ("llama-2-7b", "llama-2-70b"):
            for tp in (1, 2, 4, 8):
                _, layer, emb = load_operator_profile(model, tp, fam)
                assert np.all(np.diff(layer) >= 0) and np.all(np.diff(emb) >= 0)
        _, ar = load_all_reduce_profile(4, fam, "nvswitch")
        assert np.all(np.diff(ar) >= 0)
    # the decode curve no longer dips between batch 1 and 2 (issue 12)
    m = get_step_time("a100-llama2-70b-tp2")
    d = batch_time(m, decode=np.arange(1, 65), kv=np.arange(1, 65) * 640)
    assert np.all(np.diff(d) > 0)


@pytest.mark.parametrize("name", ["h100-llama2-70b-tp4", "roofline-a100-llama2-7b-tp1", "affine",
                                  "a100-llama2-70b-tp4-pairwise"])
def test_json_model_round_trip_drives_simulate(name, tmp_path):
    from kvopt.sim.steptime import load_step_time, save_step_time

    m = get_step_time(name)
    path = tmp_path / "m.json"
    save_step_time(m, path, extra={"note": "round trip"})
    m2 = get_step_time(str(path))
    assert m2.name == m.name and type(m2) is type(m)
    kw = {"prefill": [0, 100, 3000, 0], "decode": [3, 0, 5, 64], "kv": [300, 0, 900, 64000]}
    assert np.array_equal(batch_time(m, **kw), batch_time(m2, **kw))
    assert load_step_time(path).coefficients() == m.coefficients()
    inst = Instance(memory=2000, arrival=[0.0, 0.01, 0.5], prompt=[100, 50, 300],
                    output=[20, 5, 7], time_unit="second")
    a = simulate(inst, "mcsf", step_time=name)
    b = simulate(inst, "mcsf", step_time=str(path))
    assert np.array_equal(a.schedule.times, b.schedule.times)


def test_bad_json_models_are_usage_errors(tmp_path):
    from kvopt.core.errors import UsageError

    bad = {"not.json": "{", "wrong.json": '{"schema": "x"}',
           "nomodel.json": '{"schema": "kvopt.steptime", "schema_version": 1}',
           "nokey.json": '{"schema": "kvopt.steptime", "schema_version": 1, '
                         '"model": {"type": "profiled"}}',
           "type.json": '{"schema": "kvopt.steptime", "schema_version": 1, '
                        '"model": {"type": "magic"}}'}
    for fname, text in bad.items():
        (tmp_path / fname).write_text(text)
        with pytest.raises(UsageError, match="step_time"):
            get_step_time(str(tmp_path / fname))
    with pytest.raises(UsageError, match="cannot read"):
        get_step_time(str(tmp_path / "missing.json"))
