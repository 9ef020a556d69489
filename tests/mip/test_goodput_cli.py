"""``kvopt hardness knapsack`` and ``kvopt solve --objective goodput``."""

import json

from kvopt.cli.main import main
from kvopt.mip.hardness import knapsack_instance


def test_hardness_knapsack_json(capsys):
    code = main(["hardness", "knapsack", "--weights", "2,3,4", "--values", "3,4,6",
                 "--capacity", "5", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["knapsack_optimum"] == doc["goodput_optimum"] == doc["dp_optimum"] == 7.0


def test_hardness_multiple_knapsacks_has_no_dp(capsys, tmp_path):
    out = tmp_path / "mapped.json"
    code = main(["hardness", "knapsack", "--weights", "2,3,4", "--values", "3,4,6",
                 "--capacity", "5", "--knapsacks", "2", "--instance-out", str(out), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["dp_optimum"] is None
    assert doc["knapsack_optimum"] == doc["goodput_optimum"] == 13.0
    assert json.loads(out.read_text())["max_batch"] == 2


def test_solve_objective_goodput(capsys, tmp_path):
    path = tmp_path / "k.json"
    knapsack_instance([2, 3, 4], [3, 4, 6], 5, 1).save(path)
    sched = tmp_path / "s.json"
    code = main(["solve", str(path), "--objective", "goodput", "--schedule-out", str(sched),
                 "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0
    assert doc["status"] == "optimal" and doc["objective"] == 7.0 and doc["gap"] == 0.0
    assert doc["formulation"] == "goodput" and doc["objective_kind"] == "goodput"
    assert main(["validate", str(path), str(sched), "--json"]) == 0
    val = json.loads(capsys.readouterr().out)
    assert val["ok"] and val["token_goodput"] == 7.0
