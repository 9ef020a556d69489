"""Issue 25: ``kvopt report sweep`` gives one row per grid point (or an explicit
``--group-by``), also on the shipped ``smoke.toml``; a sweep task has a wall-clock limit and a
task past it is recorded as ``timeout`` while the sweep goes on."""

from __future__ import annotations

import json
import time

import pytest

import kvopt.sweep.tasks as tasks_mod
from kvopt.cli.main import main
from kvopt.sweep.spec import expand_tasks, load_spec, parse_spec
from kvopt.sweep.summary import summarize

GRID = '''
name = "grid"
seeds = "0:3"
[[instances]]
name = "small"
generator = "random-small"
params = { max_arrival = [0, 6] }
[[policies]]
name = "mcsf"
[[policies]]
name = "alpha-protection"
params = { alpha = [0.1, 0.3] }
'''


def _fake_rows(spec):
    """A result row per task of ``spec`` (what the summary reads), TEL = seed + grid index."""
    rows = []
    for t in expand_tasks(spec):
        p = t.payload(ship_instance=False)
        rows.append({"entry": p["entry"], "instance_params": p["instance_params"],
                     "seed": p["seed"], "evaluator": p["label"], "status": "simulated",
                     "total_latency": float(p["seed"])})
    return rows


def test_smoke_spec_summary_has_one_row_per_grid_point():
    spec = load_spec("instances/sweeps/smoke.toml")
    rows = _fake_rows(spec)
    points = {(r["entry"], json.dumps(r["instance_params"], sort_keys=True), r["evaluator"])
              for r in rows}
    summary = summarize(rows)
    assert len(summary) == len(points)  # before: one row per (entry, evaluator)
    model1 = [s for s in summary if s["entry"] == "model1" and s["evaluator"] == "mcsf"]
    assert [s["instance"] for s in model1] == ["n=100", "n=400"]
    assert len(summarize(rows, group_by=("entry", "evaluator"))) == len(
        {(r["entry"], r["evaluator"]) for r in rows})


def test_report_sweep_rows_per_grid_point_and_group_by(tmp_path, capsys):
    spec = tmp_path / "g.toml"
    spec.write_text(GRID)
    db = tmp_path / "g.sqlite"
    assert main(["sweep", str(spec), "--db", str(db), "--workers", "0", "--json"]) == 0
    capsys.readouterr()
    assert main(["report", "sweep", "--db", str(db), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    keys = [(s["instance"], s["evaluator"]) for s in doc["summary"]]
    assert len(keys) == len(set(keys)) == 2 * 3  # 2 instance grid points x 3 evaluators
    assert all(s["instances"] == 3 for s in doc["summary"])  # the 3 seeds of one point
    assert main(["report", "sweep", "--db", str(db), "--group-by", "evaluator"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("| evaluator | tasks |") and text.count("| mcsf | 6 |") == 1
    assert main(["report", "sweep", "--db", str(db), "--group-by", "entry,bogus"]) == 2
    assert "--group-by" in capsys.readouterr().err


def test_a_hung_task_is_recorded_as_timeout_and_the_sweep_goes_on(monkeypatch):
    spec = parse_spec('seeds = "0:3"\n[[instances]]\ngenerator = "random-small"\n'
                      '[[policies]]\nname = "fcfs"')
    payloads = [t.payload(ship_instance=True) for t in expand_tasks(spec)]
    real = tasks_mod.run_task
    hung = payloads[1]["key"]

    def run_task(p):
        if p["key"] == hung:
            time.sleep(3600)  # a simulation that hangs without a livelock being detected
        return real(p)

    monkeypatch.setattr(tasks_mod, "run_task", run_task)
    t0 = time.monotonic()
    rows = list(tasks_mod.iter_tasks(payloads, task_time_limit=1.0))
    assert time.monotonic() - t0 < 30
    assert [r["status"] for r in rows] == ["simulated", "timeout", "simulated"]
    assert "per-task wall-clock limit of 1 s" in rows[1]["error"]
    assert [r["task"] for r in rows] == [p["key"] for p in payloads]


def test_task_time_limit_in_the_spec_and_on_the_command_line(tmp_path, capsys, monkeypatch):
    real = tasks_mod._simulate

    def slow(inst, payload, row):
        if payload["seed"] == 1:
            time.sleep(3600)
        real(inst, payload, row)

    monkeypatch.setattr(tasks_mod, "_simulate", slow)
    spec = tmp_path / "t.toml"
    spec.write_text('seeds = "0:2"\ntask_time_limit = 1\n[[instances]]\n'
                    'generator = "random-small"\n[[policies]]\nname = "fcfs"\n')
    db = tmp_path / "t.sqlite"
    assert main(["sweep", str(spec), "--db", str(db), "--workers", "0", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["outcome"]["statuses"] == {"simulated": 1, "timeout": 1}
    assert doc["summary"][0]["timeout"] == 1
    assert main(["report", "sweep", "--db", str(db)]) == 0
    assert "| timeout |" in capsys.readouterr().out
    spec.write_text(spec.read_text().replace("task_time_limit = 1", "task_time_limit = -1"))
    assert main(["sweep", str(spec), "--db", str(db)]) == 2
    assert "task_time_limit" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["0", "-1", "nan"])
def test_task_time_limit_flag_is_checked(tmp_path, capsys, value):
    assert main(["sweep", "--out", str(tmp_path / "o"), "--task-time-limit", value]) == 2
    assert "--task-time-limit" in capsys.readouterr().err
