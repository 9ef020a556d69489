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


@pytest.mark.parametrize("argv", [
    ["solve", A2, "--solver", "scipy", "--time-limit", "20"],
    ["solve", A2, "--solver", "highs", "--time-limit", "20"],
    # an instance where MC-SF is not proven optimal at once, so the LNS runs CP-SAT
    ["solve", "instances/synthetic/model1-seed1.json", "--improve", "--time-limit", "2"],
    # (--lp exact: MC-SF is optimal on A2 and its trivial bound proves it, so auto runs no LP)
    ["bound", A2, "--solve", "5", "--lp", "exact"]],
    ids=["solve-scipy", "solve-highs", "improve", "bound"])
def test_json_stdout_survives_a_solver_printing_on_fd_1(monkeypatch, capfd, argv):
    """Without ``--verbose`` too: the HiGHS inside SciPy prints a debug line
    (``HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();``) on file
    descriptor 1 on some MIPs (seen in ``benchmarks/mip_window_lp.py``'s pricing). Simulated
    here by solvers (SciPy's ``milp``, HiGHS, CP-SAT) that write to fd 1 from below Python;
    ``--json`` must still be one document on stdout, the line on stderr."""
    import os

    import highspy
    import scipy.optimize
    from ortools.sat.python import cp_model

    from kvopt.cli.main import main

    line = b"HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();\n"
    milp, run, cp_solve = scipy.optimize.milp, highspy.Highs.run, cp_model.CpSolver.solve

    def noisy_milp(*a, **k):
        os.write(1, line)
        return milp(*a, **k)

    def noisy_run(self):
        os.write(1, line)
        return run(self)

    def noisy_cp_solve(self, *a, **k):
        os.write(1, line)
        return cp_solve(self, *a, **k)

    monkeypatch.setattr(scipy.optimize, "milp", noisy_milp)
    monkeypatch.setattr(cp_model.CpSolver, "solve", noisy_cp_solve)
    monkeypatch.setattr(highspy.Highs, "run", noisy_run)
    assert main([*argv, "--json"]) in (0, 1)
    out, err = capfd.readouterr()
    json.loads(out)                       # the whole of stdout is one JSON document
    assert "tmpSolver.run()" in err and "tmpSolver" not in out


def test_json_stdout_holds_the_document_and_moves_everything_else(capfd):
    """The guard every ``--json`` command runs in (``kvopt.cli.main.main``): C-level and
    Python prints go to stderr, the document to stdout at the end; nested, the document
    still comes out once."""
    import os

    from kvopt.cli.common import json_stdout, write_stdout

    with json_stdout(True):
        os.write(1, b"c-level\n")
        print("python-level")
        with json_stdout(True):
            write_stdout('{"a": 1}\n')
        os.write(1, b"after\n")
    out, err = capfd.readouterr()
    assert out == '{"a": 1}\n'
    assert err.split() == ["c-level", "python-level", "after"]
    with json_stdout(False):                 # inactive: nothing moves
        os.write(1, b"plain\n")
    assert capfd.readouterr().out == "plain\n"


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


@pytest.mark.parametrize("exc_type", [ValueError, TypeError, "infeasible"])
def test_internal_errors_stay_internal(monkeypatch, exc_type):
    """An exception from inside a run is a bug: it propagates (traceback, exit 1), it is never
    reported as a bad option with exit 2."""
    import kvopt.sim
    from kvopt.cli.main import main
    from kvopt.core.errors import InfeasibleScheduleError

    def broken(*args, **kwargs):
        if exc_type == "infeasible":
            raise InfeasibleScheduleError("engine produced an overflow")
        raise exc_type("bug inside the engine")

    monkeypatch.setattr(kvopt.sim, "simulate", broken)
    expected = InfeasibleScheduleError if exc_type == "infeasible" else exc_type
    with pytest.raises(expected):
        main(["simulate", A2, "--policy", "mcsf"])


def test_simulate_text_prints_goodput_when_the_instance_has_slos(capsys):
    """Issue 25: the goodput was only in ``--json``."""
    from kvopt.cli.main import main

    inst = "instances/adversarial/edf-sjf-N9-M20.json"
    assert main(["simulate", inst, "--policy", "mcsf", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(["simulate", inst, "--policy", "mcsf"]) == 0
    text = capsys.readouterr().out
    line = next(x for x in text.splitlines() if "goodput" in x)
    assert f"token goodput {doc['token_goodput']:.6g}" in line
    assert f"request goodput {doc['request_goodput']}" in line
    assert f"deadline {100 * doc['slo_attainment']['deadline']:.1f} %" in line
    assert main(["simulate", "instances/tiny/a2-example.json", "--policy", "mcsf"]) == 0
    assert "goodput" not in capsys.readouterr().out  # no SLOs, no goodput line
