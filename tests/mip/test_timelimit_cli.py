"""Time-limited solves stay honest; the CLI sub-commands and their exit codes."""

import json

import pytest

from kvopt import check_schedule
from kvopt.cli.main import main
from kvopt.core.generators import model1
from kvopt.mip import solve


@pytest.fixture(scope="module")
def hard():
    return model1(6, n=20)  # MC-SF 2011, LP bound ~1318: not provable in a few seconds


@pytest.mark.parametrize("solver,formulation", [("highs", "tight"), ("cpsat", "cp")])
def test_time_limited_hard_solve_reports_time_limit(hard, solver, formulation):
    res = solve(hard, solver=solver, formulation=formulation, time_limit=2.0)
    assert res.status == "time_limit"
    assert res.objective is not None and res.bound is not None
    assert 0 < res.gap < 1
    assert res.bound < res.objective
    rep = check_schedule(hard, res.schedule)
    assert rep.ok and rep.objective == res.objective


def test_cli_solve_json(tmp_path, capsys):
    out = tmp_path / "sched.json"
    code = main(["solve", "instances/tiny/mcsf-suboptimal-distinct.json", "--solver", "highs",
                 "--json", "--schedule-out", str(out)])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["status"] == "optimal" and doc["objective"] == 9.0 and doc["gap"] == 0.0
    for key in ("bound", "solver", "runtime_s"):
        assert key in doc
    assert main(["validate", "instances/tiny/mcsf-suboptimal-distinct.json", str(out)]) == 0


def test_cli_time_limit_exit_1(tmp_path, capsys, hard):
    p = tmp_path / "hard.json"
    hard.save(p)
    assert main(["solve", str(p), "--time-limit", "1", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "time_limit" and doc["objective"] is not None


def test_cli_refuses_seconds_instances(capsys):
    assert main(["solve", "instances/traces/azure_code_2023.csv"]) == 2
    assert "time_unit" in capsys.readouterr().err


def test_cli_unknown_solver_is_usage_error(capsys):
    assert main(["solve", "instances/tiny/a2-example.json", "--solver", "gurobi"]) == 2


def test_cli_solvers(capsys):
    assert main(["solvers", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["solvers"]
    assert {r["name"] for r in rows if r["available"]} == {"highs", "cbc", "cpsat", "scipy"}
    forms = {r["name"]: r["capabilities"]["formulations"] for r in rows}
    assert "cp+exact" in forms["cpsat"] and "cp+exact" not in forms["highs"]
    assert main(["solvers"]) == 0
    assert "cp+pairs, cp+exact" in capsys.readouterr().out


def test_cli_bound_json(capsys):
    assert main(["bound", "instances/tiny/mcsf-suboptimal-equal.json", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["best_bound"] <= 4 <= doc["best_schedule"]["objective"]
    # the default LP bound is the lag-interval LP (kvopt solve's), which holds the LP's rows
    assert set(doc["bounds"]) >= {"trivial", "volume", "fluid", "intervals"}


def test_cli_bound_on_trace_needs_explicit_discretisation(capsys):
    assert main(["bound", "instances/traces/azure_code_2023.csv"]) == 2
    err = capsys.readouterr().err
    assert "--slot-seconds" in err and "kvopt.mip" not in err  # CLI words, not the Python API
