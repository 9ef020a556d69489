"""Step-time models: registry, formulas, monotonicity, inspectable coefficients."""

import json

import numpy as np
import pytest

from kvopt import Instance
from kvopt.sim import STEP_TIME_MODELS, get_step_time, simulate
from kvopt.sim.step_time import (
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
