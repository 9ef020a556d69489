"""``kvopt steptime`` and ``--step-time FILE.json`` on the command line (issue 12)."""

import doctest
import json

import pytest

import kvopt.cli.steptime_cmds
from kvopt.cli.main import main
from kvopt.sim.steptime import get_step_time, save_step_time


def test_doctests():
    res = doctest.testmod(kvopt.cli.steptime_cmds, optionflags=doctest.ELLIPSIS)
    assert res.failed == 0 and res.attempted > 0


def test_simulate_takes_h100_names_and_json_files(tmp_path, capsys):
    path = tmp_path / "m.json"
    save_step_time(get_step_time("h100-llama2-70b-tp4"), path)
    docs = []
    for spec in ("h100-llama2-70b-tp4", str(path)):
        assert main(["simulate", "instances/tiny/a2-example.json", "--policy", "mcsf",
                     "--step-time", spec, "--json"]) == 0
        docs.append(json.loads(capsys.readouterr().out))
    assert docs[0]["step_time"] == docs[1]["step_time"] == "h100-llama2-70b-tp4"
    assert docs[0]["total_latency"] == docs[1]["total_latency"] > 0


@pytest.mark.parametrize("spec", ["nope", "missing.json"])
def test_simulate_bad_step_time_exits_2(spec, capsys):
    assert main(["simulate", "instances/tiny/a2-example.json", "--policy", "mcsf",
                 "--step-time", spec]) == 2
    assert "--step-time" in capsys.readouterr().err


def test_validate_text_json_and_report(tmp_path, capsys):
    assert main(["steptime", "validate", "--set", "h100-steps"]) == 0
    out = capsys.readouterr().out
    assert "| h100 llama2-7b tp1 | h100-llama2-7b-tp1-gpu | decode |" in out
    assert main(["steptime", "validate", "--set", "splitwise-a100", "--fit", "--json",
                 "--out", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    s = doc["sets"][0]
    assert s["set"] == "splitwise-a100" and "rows" not in s["setups"][0]["models"][0]
    e = s["pooled"]["profiled-engine"]["fitted_heldout"]["all"]
    assert set(e) == {"n", "median_abs", "worst", "mean"}
    assert {p.name for p in tmp_path.iterdir()} == {"validate.json", "validate.md",
                                                    "pred_vs_measured.png"}
    assert (tmp_path / "pred_vs_measured.png").read_bytes()[:4] == b"\x89PNG"


def test_fit_saves_a_model_that_drives_simulate(tmp_path, capsys):
    out = tmp_path / "fit.json"
    assert main(["steptime", "fit", "kvopt/data/measured/h100_llama_steps.csv",
                 "--where", "model=llama-2-70b-tp2-shard", "--base", "h100-llama2-70b-tp2",
                 "--interconnect", "none", "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["heldout_error"]["all"]["n"] > 0 and doc["rows"] == 57
    assert doc["heldout_error"]["all"]["median_abs"] < doc["base_heldout_error"]["all"][
        "median_abs"]
    saved = json.loads(out.read_text())
    assert saved["schema"] == "kvopt.steptime" and saved["fit"]["seed"] == 0
    assert main(["simulate", "instances/tiny/a2-example.json", "--policy", "mcsf",
                 "--step-time", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["step_time"] == "h100-llama2-70b-tp2-none-fit"


@pytest.mark.parametrize("argv, flag", [
    (["--holdout", "1.5"], "--holdout"),
    (["--where", "gpu"], "--where"),
    (["--where", "gpu=h100"], "--where"),
    (["--base", "unit"], "--base"),
    (["--base", "roofline-h100-llama2-7b-tp1", "--interconnect", "none"], "--interconnect"),
])
def test_fit_bad_input_exits_2_naming_the_flag(argv, flag, tmp_path, capsys):
    out = tmp_path / "never.json"
    base = [] if "--base" in argv else ["--base", "h100-llama2-7b-tp1"]
    assert main(["steptime", "fit", "kvopt/data/measured/h100_llama_steps.csv", *base, *argv,
                 "--out", str(out)]) == 2
    assert flag in capsys.readouterr().err
    assert not out.exists()


def test_fit_bad_csv_names_the_column(tmp_path, capsys):
    f = tmp_path / "m.csv"
    f.write_text("prefill,decode,kv\n1,0,0\n")
    assert main(["steptime", "fit", str(f), "--base", "h100-llama2-7b-tp1"]) == 2
    assert "column 'ms'" in capsys.readouterr().err


def test_profile_without_torch_exits_2(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "torch", None)
    assert main(["steptime", "profile", "--out", str(tmp_path / "p.csv")]) == 2
    assert "kvopt[gpu]" in capsys.readouterr().err
    assert not (tmp_path / "p.csv").exists()


def test_calibrate_engine_cli_and_validate_variants(tmp_path, capsys):
    out = tmp_path / "c.json"
    assert main(["steptime", "calibrate-engine", "--family", "profiled", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "splitwise-a100       out" in text and "splitwise-h100       in" in text
    doc = json.loads(out.read_text())
    assert doc["schema"] == "kvopt.engine_costs" and list(doc["families"]) == ["profiled"]
    assert doc["command"].endswith(f"--family profiled --out {out}")
    assert main(["steptime", "calibrate-engine", "--set", "splitwise-a100", "--json"]) == 0
    j = json.loads(capsys.readouterr().out)
    assert j["calibrated_on"] == ["splitwise-a100"]
    assert not j["families"]["roofline"]["errors"]["splitwise-h100"]["in_sample"]
    assert main(["steptime", "validate", "--set", "splitwise-a100"]) == 0
    text = capsys.readouterr().out
    assert "| splitwise-a100 | profiled-engine | out-of-sample |" in text
    assert "| splitwise-a100 | profiled-gpu | - |" in text
    assert "Calibration transfer" in text
    assert main(["steptime", "list", "--json"]) == 0
    lst = json.loads(capsys.readouterr().out)
    assert "a100-llama2-70b-tp4-gpu" in lst["models"]
    assert "serving-engine" in lst["descriptions"]["a100-llama2-70b-tp4"]
    assert lst["descriptions"]["a100-llama2-70b-tp4-gpu"] == "profiled GPU time"
    assert main(["simulate", "instances/tiny/a2-example.json", "--policy", "mcsf",
                 "--step-time", "a100-llama2-70b-tp8", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["step_time"] == "a100-llama2-70b-tp8"
