"""``kvopt steptime`` and ``--step-time FILE.json`` on the command line (issue 12)."""

import doctest
import json

import pytest

import kvopt.cli.steptime_cmds
from kvopt.cli.main import main
from kvopt.sim.step_time import get_step_time, save_step_time


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
