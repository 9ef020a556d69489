"""Every script in ``benchmarks/`` and every report generator under ``reports/`` answers
``--help`` with its usage and exit status 0 (rule 5: nothing a user types ends in a traceback;
``mip_frontier_dual.py --help`` once read ``--help`` as a records file and died on a
FileNotFoundError, and the report generators ignored it and ran). Bad arguments get one error,
exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scripts import assert_refused, run_script

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py") if p.name != "__init__.py")
REPORT_SCRIPTS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "reports").rglob("*.py")
                        if "__main__" in p.read_text())


def test_the_scripts_are_found():
    assert len(SCRIPTS) >= 20 and "mip_frontier_dual.py" in SCRIPTS
    assert "reports/steptime/before_after.py" in REPORT_SCRIPTS


@pytest.mark.parametrize("script", [f"benchmarks/{s}" for s in SCRIPTS] + REPORT_SCRIPTS)
def test_help_prints_usage(script):
    r = run_script(script, "--help")
    assert r.returncode == 0, r.stderr[-2000:]
    assert "usage" in r.stdout.lower()
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("argv, field", [
    (["no/such/records.json"], "RECORDS.json"),
    (["reports/mip/frontier_cpu_v2.json", "--root-cuts", "0"], "--root-cuts"),
    (["reports/mip/frontier_cpu_v2.json", "--root-cuts", "nan"], "--root-cuts"),
])
def test_frontier_dual_refuses_bad_input(argv, field):
    assert_refused("benchmarks/mip_frontier_dual.py", argv, field)


def test_lp_orders_summary_is_its_command_output():
    """``reports/mip/lp_orders_summary.txt`` is what its command prints from the committed
    table (section 10.11 quotes it); bad input is refused with one error, exit 2."""
    r = run_script("benchmarks/mip_lp_orders.py", "--summarise", "reports/mip/lp_orders.txt")
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout == (ROOT / "reports/mip/lp_orders_summary.txt").read_text()
    for argv, field in ((["--summarise", "no/such.txt"], "--summarise"),
                        (["--alphas", "1.5"], "--alphas"), (["--only", "nope"], "--only")):
        assert_refused("benchmarks/mip_lp_orders.py", argv, field)


@pytest.mark.parametrize("name, argv, flag", [
    ("mip_frontier_dual", ["reports/mip/frontier_cpu_v2.json", "--root-cuts", "1",
                           "--root-solver", "scip"], "--root-solver scip"),
    ("mip_partial_int", ["--frontier", "reports/mip/frontier_cpu_v2.json", "--solver", "scip"],
     "--solver scip"),
])
def test_scip_options_refused_without_pyscipopt(monkeypatch, capsys, name, argv, flag):
    """The SCIP options of the MIP benchmarks need PySCIPOpt, which kvopt does not depend
    on: without it, one error naming the flag, exit 2, nothing run (forced here whether or
    not it is installed: an import of ``None`` in ``sys.modules`` raises ImportError)."""
    from tests.scripts import load_benchmark

    mod = load_benchmark(name)
    monkeypatch.setitem(__import__("sys").modules, "pyscipopt", None)
    with pytest.raises(SystemExit) as exc:
        mod.main(argv)
    assert exc.value.code == 2
    out = capsys.readouterr()
    assert flag in out.err and out.out == ""
