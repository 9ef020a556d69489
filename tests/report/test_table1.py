"""Table 1 workloads (small smoke run; the full run is in reports/sim)."""

import numpy as np

from kvopt.report.table1 import (
    TABLE1_ROWS,
    azure_workload,
    lmsys_standin,
    noise_markdown,
    run_prediction_noise,
    run_table1,
    to_markdown,
)


def test_workloads_are_seeded_and_valid():
    a1, a2 = azure_workload(200, seed=4), azure_workload(200, seed=4)
    assert a1.sha256() == a2.sha256()
    assert np.all(np.diff(a1.arrival) >= 0) and a1.arrival[0] == 0
    rate = (a1.n - 1) / a1.arrival[-1]
    assert 30 < rate < 75
    s = lmsys_standin(4000, seed=0)
    assert "STAND-IN" in s.source
    assert 30 < s.prompt.mean() < 55 and 70 < s.output.mean() < 105


def test_small_table_ordering():
    res = run_table1("lmsys-standin", seeds=2, n=300, rows=TABLE1_ROWS[:3])
    by = {r["label"]: r for r in res["rows"]}
    assert by["MC-SF"]["mean"] <= by["MC-Benchmark"]["mean"] < by["Benchmark alpha=0.3"]["mean"]
    assert "MC-Benchmark / MC-SF" in to_markdown(res)


def test_noise_experiment_small():
    res = run_prediction_noise("lmsys-standin", seeds=2, eps_values=(0.5,), n=200)
    labels = [r["label"] for r in res["rows"]]
    assert labels[1].startswith("MC-SF margin")
    assert "| 0.5 |" in noise_markdown(res)


def test_trace_is_package_data():
    from kvopt.report.table1 import AZURE

    assert AZURE.is_file() and "data/traces" in str(AZURE).replace("\\", "/")


def test_cli_writes_table1(tmp_path, capsys):
    from kvopt.cli.main import main

    out = tmp_path / "t1"
    assert main(["report", "table1", "--seeds", "1", "--n", "60", "--workloads",
                 "lmsys-standin", "--out", str(out)]) == 0
    assert (out / "table1.md").read_text() in capsys.readouterr().out + "\n"
    assert (out / "table1.json").is_file()
