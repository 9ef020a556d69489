"""The goodput report: files, determinism, the construction rows."""

import json

from kvopt.cli.main import main
from kvopt.report.goodput import counterexample_rows, edf_sweep, random_rows, random_summary


def test_constructions_rows():
    rows = edf_sweep(N=3, Ms=(8, 16), d=2)
    assert [r["opt_over_edf"] for r in rows] == [8 / 3, 16 / 3]
    assert all(r["gmax_exact"] == r["opt"] == r["M"] and r["edf"] == r["sjf"] == 3 for r in rows)
    c = counterexample_rows(Ws=(17, 18))
    assert [r["below_claim"] for r in c] == [False, True]


def test_random_rows_are_deterministic_and_below_opt():
    a = random_rows(range(3), n=4)
    assert a == random_rows(range(3), n=4)
    for r in a:
        assert r["opt_status"] == "optimal"
        assert all(r[k] <= r["opt"] + 1e-9 for k in ("gmax", "edf", "sjf", "fcfs"))
    s = random_summary(a)
    assert all(0 <= x["worst_ratio"] <= x["mean_ratio"] <= 1 + 1e-9 for x in s if x["instances"])


def test_cli_report(tmp_path, capsys):
    out = tmp_path / "rep"
    code = main(["hardness", "report", "--out", str(out), "--seeds", "0:2", "--n", "3",
                 "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == sorted([*doc["files"], "manifest.json"])
    assert abs(doc["eq43"]["inverse"] - 8.224) < 5e-4


def test_report_above_the_memory_budget_names_n_and_writes_nothing(tmp_path, monkeypatch,
                                                                   capsys):
    """The random instances' size is the user's ``--n``: a goodput MIP above the memory budget
    is refused naming it (it named "instance"), before the fixed parts run, and the output
    folder is not created (it was, empty)."""
    monkeypatch.setenv("KVOPT_MEMORY_BUDGET", "100M")
    out = tmp_path / "r"
    assert main(["hardness", "report", "--out", str(out), "--n", "200", "--seeds", "0:1"]) == 2
    err = capsys.readouterr().err
    assert "invalid --n:" in err and "exceeds the memory budget" in err, err
    assert not out.exists()
