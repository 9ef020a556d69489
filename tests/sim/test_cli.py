"""``kvopt simulate``."""

import json

from kvopt.cli.main import main


def test_simulate_json(capsys, tmp_path):
    out = tmp_path / "s.json"
    rc = main(["simulate", "instances/tiny/seed000-example1.json", "--policy", "amax",
               "--seed", "1", "--json", "--schedule-out", str(out)])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    for key in ("policy", "total_latency", "mean_latency", "p99_latency", "ttft_mean",
                "peak_memory", "evictions", "makespan"):
        assert key in doc
    assert doc["total_latency"] == 9
    assert main(["validate", "instances/tiny/seed000-example1.json", str(out)]) == 0


def test_simulate_replay_and_errors(capsys, tmp_path):
    out = tmp_path / "s.json"
    assert main(["simulate", "instances/tiny/a2-example.json", "--policy", "mcsf",
                 "--schedule-out", str(out)]) == 0
    capsys.readouterr()
    assert main(["simulate", "instances/tiny/a2-example.json", "--policy", "replay",
                 "--replay", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total_latency"] == 12
    assert main(["simulate", "instances/tiny/a2-example.json", "--policy", "nope"]) == 2
    assert main(["simulate", "missing.json", "--policy", "mcsf"]) == 2
    assert main(["simulate", "instances/tiny/a2-example.json", "--policy", "mcsf",
                 "--option", "bogus=1"]) == 2


def test_simulate_trace_a100(capsys):
    rc = main(["simulate", "instances/traces/azure_code_2023.csv", "--policy", "fcfs",
               "--step-time", "a100-llama2-7b-tp1", "--json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["unit"] == "second" and doc["feasible"]


def test_simulate_default_seed_is_fixed_and_printed(capsys):
    """A randomized policy without --seed: the same output every run, seed in text and JSON."""
    argv = ["simulate", "instances/adversarial/worst-amin.json", "--policy", "amin"]
    outs = []
    for _ in range(3):
        assert main(argv) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] == outs[2]
    assert "seed 0" in outs[0]
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["seed"] == 0


def test_requests_out_csv(tmp_path, capsys):
    import csv

    out = tmp_path / "r.csv"
    assert main(["simulate", "instances/adversarial/worst-amin.json", "--policy", "amin",
                 "--requests-out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == doc["n"]
    assert sum(float(r["latency"]) for r in rows) == doc["total_latency"]
    assert sum(int(r["evictions"]) for r in rows) == doc["evictions"]
    for r in rows:
        assert float(r["completion"]) - float(r["arrival"]) == float(r["latency"])
        assert int(r["start"]) >= int(r["first_start"]) >= int(r["arrival"])
        assert 1 <= float(r["ttft"]) <= float(r["latency"])
