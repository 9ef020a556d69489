"""Fitting and validating step-time models against measured steps (issue 12)."""

import dataclasses

import numpy as np
import pytest

from kvopt.core.errors import UsageError
from kvopt.sim import simulate
from kvopt.sim.steptime import (
    H100,
    LLAMA2_7B,
    LLAMA2_70B,
    ProfiledStepTime,
    RooflineStepTime,
    batch_time,
    get_step_time,
    load_step_time,
    save_step_time,
)
from kvopt.sim.steptime.fit import (
    cross_validate,
    fit_constants,
    fit_step_time,
    fitted_constants,
    split_rows,
    validate,
)
from kvopt.sim.steptime.measured import MEASUREMENT_SETS, StepRows, read_steps_csv


def _grid_rows():
    pre = [(p, 0, 0) for p in (16, 64, 256, 512, 1024, 2048, 4096)]
    dec = [(0, b, c) for b in (1, 2, 8, 32, 128) for c in (128, 1024, 4096)]
    mix = [(256, 16, 1024), (1024, 64, 512), (2048, 8, 4096), (128, 128, 256)]
    pts = np.array(pre + dec + mix)
    return StepRows.from_arrays(prefill=pts[:, 0], decode=pts[:, 1],
                                kv=pts[:, 1] * (pts[:, 2] + 1), ms=np.ones(len(pts)))


def _measure(rows, truth, noise=0.0, seed=0):
    ms = rows.predict_ms(truth)
    if noise:
        ms = ms * (1 + np.random.default_rng(seed).normal(0, noise, len(ms)))
    return dataclasses.replace(rows, ms=ms)


def test_fit_recovers_profiled_constants():
    truth = ProfiledStepTime(LLAMA2_70B, tp=2, gpu=H100, overhead=4e-3, profile_scale=1.25,
                             bw_eff=0.55, mfu=0.35, c_seq=1.5e-4)
    rows = _measure(_grid_rows(), truth)
    base = get_step_time("h100-llama2-70b-tp2-gpu")   # starts from the shipped constants
    fit = fit_constants(rows, base)
    got, want = fitted_constants(fit), fitted_constants(truth)
    for k, v in want.items():
        assert got[k] == pytest.approx(v, rel=1e-3, abs=1e-7), k
    assert np.allclose(rows.predict_ms(fit), rows.ms, rtol=1e-4)
    # with 1% measurement noise the constants that matter are still close
    noisy = _measure(_grid_rows(), truth, noise=0.01)
    got = fitted_constants(fit_constants(noisy, base))
    assert got["overhead"] == pytest.approx(4e-3, rel=0.15)
    assert got["profile_scale"] == pytest.approx(1.25, rel=0.03)
    assert got["bw_eff"] == pytest.approx(0.55, rel=0.1)


def test_fit_recovers_roofline_constants():
    truth = RooflineStepTime(LLAMA2_7B, tp=1, gpu=H100, t0=3e-3, c_seq=5e-5, mfu=0.45,
                             bw_eff=0.8)
    rows = _measure(_grid_rows(), truth)
    fit = fit_constants(rows, get_step_time("roofline-h100-llama2-7b-tp1"))
    got, want = fitted_constants(fit), fitted_constants(truth)
    for k in ("t0", "c_seq", "mfu", "bw_eff"):
        assert got[k] == pytest.approx(want[k], rel=1e-3, abs=1e-7), k


def test_unidentified_constants_stay_at_base():
    truth = ProfiledStepTime(LLAMA2_7B, tp=1, overhead=3e-3, bw_eff=0.5)
    rows = _grid_rows()
    dec = rows.take(rows.kind == "decode")          # no prefill_sq at all: mfu unidentified
    base = get_step_time("a100-llama2-7b-tp1")
    fit = fit_constants(_measure(dec, truth), base)
    assert fit.mfu == pytest.approx(base.mfu, rel=1e-3)   # the base value
    assert fit.bw_eff == pytest.approx(0.5, rel=1e-3)


def test_split_is_seeded_stratified_and_disjoint():
    rows = _grid_rows()
    tr, te = split_rows(rows, 0.25, seed=3)
    assert set(tr).isdisjoint(te) and len(tr) + len(te) == len(rows)
    assert {"prefill", "decode", "mixed"} == set(rows.kind[te].tolist())
    _, te2 = split_rows(rows, 0.25, seed=3)
    assert np.array_equal(te, te2)
    assert not np.array_equal(te, split_rows(rows, 0.25, seed=4)[1])
    with pytest.raises(UsageError, match="--holdout"):
        split_rows(rows, 1.0, 0)


def test_fit_step_time_reports_heldout_and_round_trips(tmp_path):
    truth = ProfiledStepTime(LLAMA2_70B, tp=4, gpu=H100, overhead=6e-3, c_seq=1e-4)
    rows = _measure(_grid_rows(), truth, noise=0.02, seed=1)
    res = fit_step_time(rows, "h100-llama2-70b-tp4-gpu", holdout=0.3, seed=0)
    assert res.heldout["all"]["n"] + res.train["all"]["n"] == len(rows)
    assert res.heldout["all"]["median_abs"] < 0.05 < res.base_heldout["all"]["median_abs"]
    path = tmp_path / "fit.json"
    save_step_time(res.model, path, extra=res.to_dict())
    m = load_step_time(path)
    assert m.name == "h100-llama2-70b-tp4-gpu-fit"
    assert np.array_equal(rows.predict_ms(m), rows.predict_ms(res.model))
    from kvopt import Instance

    inst = Instance(memory=3000, arrival=[0.0, 0.0, 0.2], prompt=[100, 900, 30],
                    output=[40, 5, 60], time_unit="second")
    a = simulate(inst, "mcsf", step_time=res.model)
    b = simulate(inst, "mcsf", step_time=str(path))
    assert np.array_equal(a.schedule.times, b.schedule.times)
    assert a.metrics.total_latency != simulate(inst, "mcsf",
                                               step_time="h100-llama2-70b-tp4").metrics.total_latency


def test_cross_validation_predicts_every_row_out_of_fold():
    truth = ProfiledStepTime(LLAMA2_7B, tp=1, overhead=5e-3)
    rows = _measure(_grid_rows(), truth)
    pred = cross_validate(rows, get_step_time("a100-llama2-7b-tp1"), folds=4, seed=0)
    assert np.allclose(pred, rows.ms, rtol=1e-3)


def test_read_steps_csv_columns_and_errors(tmp_path):
    good = tmp_path / "g.csv"
    good.write_text("model,prefill,batch,kv,ms_median\nx,512,0,0,100\ny,0,8,800,40\n"
                    "x,0,8,800,41\n")
    r = read_steps_csv(good, {"model": "x"})
    assert r.kind.tolist() == ["prefill", "decode"] and r.prefill_sq.tolist() == [512**2, 0]
    cases = {"prefill,decode,kv\n1,0,0\n": "column 'ms'",
             "prefill,decode,kv,ms\n1,0,0,abc\n": "column 'ms'",
             "prefill,decode,kv,ms\n-1,0,0,3\n": "column 'prefill'",
             "prefill,decode,kv,ms\n0,0,0,3\n": "column 'prefill'",
             "prefill,decode,kv,ms,kind\n1,0,0,3,warmup\n": "column 'kind'",
             "prefill,decode,kv,ms,steps\n1,0,0,3,0\n": "column 'steps'",
             "prefill,decode,kv,ms\n": "no rows"}
    for i, (text, msg) in enumerate(cases.items()):
        f = tmp_path / f"b{i}.csv"
        f.write_text(text)
        with pytest.raises(UsageError, match=msg):
            read_steps_csv(f)
    with pytest.raises(UsageError, match="--where"):
        read_steps_csv(good, {"gpu": "h100"})
    with pytest.raises(UsageError, match="no such file"):
        read_steps_csv(tmp_path / "none.csv")


def test_splitwise_rows_compare_like_with_like():
    ss = MEASUREMENT_SETS["splitwise-a100"]()
    assert [s.label for s in ss.setups] == [f"a100 llama2-70b tp{t}" for t in (2, 4, 8)]
    assert [(e["setup"], e["config"]) for e in ss.excluded] == [("tp2", "prompt 512 x batch 64")]
    r = ss.setups[1].rows
    dec = r.take(r.kind == "decode")
    # prompt 512, batch 1, 128 tokens: 127 decode iterations, mean KV read 512 + 64
    i = int(np.flatnonzero(dec.extra["config"] == "prompt 512 x batch 1, 128 tokens "
                                                  "(127 iterations)")[0])
    assert dec.decode[i] == 1 and dec.kv[i] == 512 + 64
    pb = r.take(r.kind == "prefill-batch")
    assert np.all(pb.nsteps > 1) and np.all(pb.prefill == 512)


def test_validation_meets_the_issue_targets():
    res = validate(fit=True, folds=5, seed=0)
    by = {s["set"]: s for s in res["sets"]}
    assert set(by) == set(MEASUREMENT_SETS)
    # A100 70B TP4 single-prompt prefill within 15% of Splitwise (was +47% / +72%), by the
    # GPU-time and by the serving-engine model
    ss = MEASUREMENT_SETS["splitwise-a100"]()
    prompts = ss.setups[1].rows.prefill
    models = {m["model"]: m for m in by["splitwise-a100"]["setups"][1]["models"]}
    assert {"a100-llama2-70b-tp4", "a100-llama2-70b-tp4-gpu"} <= set(models)
    checked = 0
    for name in ("a100-llama2-70b-tp4", "a100-llama2-70b-tp4-gpu"):
        rows = models[name]["rows"]
        for i, k in enumerate(rows["kind"]):
            if k == "prefill" and prompts[i] in (512, 2048):     # the issue's two prompts
                assert abs(rows["default_ms"][i] / rows["measured_ms"][i] - 1) < 0.15
                checked += 1
    assert checked == 4
    # out of the box, A100 set: the serving-engine models (costs calibrated on the H100 set
    # only, so A100 is out-of-sample) are within 10% median; the GPU-time models are not
    a100 = by["splitwise-a100"]
    assert not a100["engine_in_sample"] and by["splitwise-h100"]["engine_in_sample"]
    assert a100["pooled"]["profiled-engine"]["default"]["all"]["median_abs"] <= 0.10
    assert a100["pooled"]["profiled-gpu"]["default"]["all"]["median_abs"] > 0.2
    # after fitting, the held-out median error of every set is <= 5% with at least one model
    # family (the profiled one misses on the power-capped H100 set: reports/steptime/README.md)
    for s in res["sets"]:
        best = min(d["fitted_heldout"]["all"]["median_abs"] for d in s["pooled"].values())
        assert best <= 0.05, s["set"]
    assert set(by["h100-steps"]["pooled"]) == {"profiled-gpu", "roofline-gpu"}   # GPU time only
    assert by["h100-steps"]["pooled"]["profiled-gpu"]["default"]["all"]["median_abs"] <= 0.10


# --- serving-engine costs ------------------------------------------------------------------

def test_fit_engine_costs_recovers_known_constants():
    from kvopt.sim.steptime import A100, EngineCosts
    from kvopt.sim.steptime.fit import fit_engine_costs

    truth = EngineCosts(step=5e-3, seq=2.2e-4, ar_rank_latency=1.4e-5)
    for family in ("profiled", "roofline"):
        items = []
        for gpu in (A100, H100):
            for tp in (2, 4, 8):
                base = (ProfiledStepTime(LLAMA2_70B, tp=tp, gpu=gpu) if family == "profiled"
                        else RooflineStepTime(LLAMA2_70B, tp=tp, gpu=gpu))
                rows = _grid_rows()
                rows = dataclasses.replace(rows, ms=rows.predict_ms(truth.apply(base)))
                items.append((rows, base, tp, LLAMA2_70B))
        got = fit_engine_costs(items, "synthetic")
        assert got.calibration == "synthetic"
        for k, v in truth.to_dict().items():
            assert got.to_dict()[k] == pytest.approx(v, rel=1e-6), (family, k)


def test_engine_models_add_the_shipped_costs_to_the_gpu_models():
    from kvopt.sim.steptime import ENGINE_CALIBRATION, load_engine_costs

    c = load_engine_costs(ENGINE_CALIBRATION, "profiled")
    for tp in (2, 4, 8):
        eng = get_step_time(f"a100-llama2-70b-tp{tp}")
        gpu = get_step_time(f"a100-llama2-70b-tp{tp}-gpu")
        assert eng.engine == ENGINE_CALIBRATION and gpu.engine == ""
        d = np.array([0, 1, 32])
        kw = dict(prefill=[512, 0, 0], decode=d, kv=[0, 600, 32 * 600])
        extra = batch_time(eng, **kw) - batch_time(gpu, **kw)
        assert np.allclose(extra, c.step + c.seq * d + 2 * 80 * (tp - 1) * c.ar_rank_latency)
        # the engine's fast paths agree with durations
        run = eng.decode_run(12, 5000, 5)
        ref = eng.durations(np.full(5, 12), np.full(5, 12), 5000 + 12 * np.arange(5),
                            np.zeros(5, dtype=np.int64), np.zeros(5))
        assert np.allclose(run, ref)
    r = get_step_time("roofline-h100-llama2-70b-tp8")
    assert r.engine == ENGINE_CALIBRATION and get_step_time("h100-llama2-7b-tp1").engine == ""
    with pytest.raises(UsageError, match="already includes"):
        c.apply(get_step_time("a100-llama2-70b-tp2"))


@pytest.mark.parametrize("name", ["a100-llama2-70b-tp8", "roofline-h100-llama2-70b-tp4"])
def test_engine_model_json_round_trips(tmp_path, name):
    m = get_step_time(name)
    path = tmp_path / "m.json"
    save_step_time(m, path)
    m2 = load_step_time(path)
    assert m2.engine == m.engine and m2.name == name
    kw = dict(prefill=[0, 700, 0], decode=[1, 3, 64], kv=[900, 3000, 64 * 2000])
    assert np.array_equal(batch_time(m, **kw), batch_time(m2, **kw))


def test_shipped_engine_costs_come_from_their_command():
    import json

    from kvopt.core.io import data_file
    from kvopt.sim.steptime.fit import calibrate_engine

    for cal in ("splitwise-h100", "splitwise-a100"):
        shipped = json.loads(data_file("engine", f"{cal}.json").read_text())
        assert shipped["calibrated_on"] == [cal]
        assert shipped["command"] == (f"kvopt steptime calibrate-engine --set {cal} "
                                      f"--out kvopt/data/engine/{cal}.json")
        now = calibrate_engine([cal])
        for fam in ("profiled", "roofline"):
            for k, v in shipped["families"][fam]["costs"].items():
                assert now["families"][fam]["costs"][k] == pytest.approx(v, rel=1e-9), (cal, k)
        # the calibration set is in-sample, the other sets are not
        errs = now["families"]["profiled"]["errors"]
        assert [n for n, e in errs.items() if e["in_sample"]] == [cal]
