"""stdout stays machine-readable: ``--json`` is exactly one JSON document even when solvers log
(``--verbose``), and the logs go to stderr."""

import json
import subprocess
import sys

import pytest

A2 = "instances/tiny/a2-example.json"


@pytest.mark.parametrize("solver", ["highs", "cbc", "cpsat"])
def test_verbose_json_keeps_solver_logs_off_stdout(solver):
    r = subprocess.run([sys.executable, "-m", "kvopt", "solve", A2, "--solver", solver,
                        "--time-limit", "20", "--verbose", "--json"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)  # the whole of stdout is one JSON object
    assert doc["status"] == "optimal" and doc["objective"] == 12.0
    assert r.stderr.strip(), "the solver log should be on stderr"


def test_simulate_twice_without_seed_same_output():
    base = [sys.executable, "-m", "kvopt", "simulate", "instances/adversarial/worst-amin.json",
            "--policy", "amin"]
    texts = [subprocess.run(base, capture_output=True, text=True, check=True).stdout
             for _ in range(2)]
    assert texts[0] == texts[1] and "seed 0" in texts[0]  # identical bytes
    docs = [json.loads(subprocess.run([*base, "--json"], capture_output=True, text=True,
                                      check=True).stdout) for _ in range(2)]
    for d in docs:
        d.pop("wall_seconds")  # the only field that measures the machine
    assert docs[0] == docs[1] and docs[0]["seed"] == 0
