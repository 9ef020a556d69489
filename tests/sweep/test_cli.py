"""``kvopt sweep SPEC --db``, ``kvopt sweep export`` and ``kvopt report sweep`` (in-process)."""

import csv
import json

from kvopt.cli.main import main

SPEC = '''
name = "clitest"
seeds = "0:2"
metrics = ["total_latency", "p90_latency"]
[[instances]]
name = "small"
generator = "random-small"
[[policies]]
name = "mcsf"
[[policies]]
name = "fcfs"
[[solvers]]
name = "highs"
time_limit = 20
'''


def test_spec_run_resume_export_report(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    db = tmp_path / "r.sqlite"
    assert main(["sweep", str(spec), "--db", str(db), "--workers", "0", "--json"]) == 0
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert doc["outcome"]["ran"] == 6 and doc["outcome"]["skipped"] == 0
    assert cap.err == ""  # no progress under --json
    by = {s["evaluator"]: s for s in doc["summary"]}
    assert by["opt:highs"]["optimal"] == 2 and by["mcsf"]["ratio_count"] == 2
    assert by["mcsf"]["ratio_mean"] >= 1.0

    assert main(["sweep", str(spec), "--db", str(db), "--workers", "0"]) == 0
    cap = capsys.readouterr()
    assert cap.out.startswith("0 tasks run, 6 already recorded")
    assert "2 already in" not in cap.err and "6 already in" in cap.err and "\r" not in cap.err

    out = tmp_path / "x.csv"
    assert main(["sweep", "export", "--db", str(db), "--csv", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 6 and "p90_latency" in rows[0]
    assert {r["status"] for r in rows} == {"simulated", "optimal"}
    assert all(float(r["ratio_to_opt"]) >= 1.0 for r in rows)
    capsys.readouterr()

    assert main(["report", "sweep", "--db", str(db), "--metric", "p90_latency", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["tasks"] == 6 and rep["summary"][0]["metric"] == "p90_latency"
    md = tmp_path / "t.md"
    assert main(["report", "sweep", "--db", str(db), "--out", str(md)]) == 0
    assert md.read_text().startswith("| entry | instance | evaluator |")


def test_internal_task_error_exits_1_after_recording(tmp_path, capsys, monkeypatch):
    import kvopt.sweep.tasks as tasks_mod

    def broken(inst, payload, row):
        raise ZeroDivisionError("bug")

    monkeypatch.setattr(tasks_mod, "_solve", broken)
    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    db = tmp_path / "r.sqlite"
    assert main(["sweep", str(spec), "--db", str(db), "--workers", "0"]) == 1
    cap = capsys.readouterr()
    assert "2 task(s) failed with an internal error" in cap.err
    assert "| small | - | mcsf | 2 | 2 |" in cap.out


def test_flag_form_keeps_a_database_and_resumes(tmp_path, capsys):
    out = tmp_path / "sw"
    argv = ["sweep", "--generator", "random-small", "--seeds", "0:3", "--policies", "mcsf",
            "--workers", "0", "--out", str(out), "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["db"] == str(out / "results.sqlite")
    assert main(argv) == 0
    assert len(list(csv.DictReader((out / "rows.csv").open()))) == 3
