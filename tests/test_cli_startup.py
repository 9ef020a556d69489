"""``kvopt --help`` builds only what it shows (issue 25: it took 1.2 s because every
sub-command's parser was built, importing scipy through the simulator's policies). The time
itself is measured by ``benchmarks/cli_startup.py``; here: which modules a command line loads."""

from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("scipy", "sympy", "ortools", "highspy", "pulp", "matplotlib", "dask", "pandas")


def _loaded(argv: list[str]) -> set[str]:
    code = ("import sys, contextlib, io\n"
            "from kvopt.cli.main import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    main({argv!r})\n"
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       check=True)
    return set(r.stdout.split())


@pytest.mark.parametrize("argv", [["--help"], ["info", "--help"], ["--version"],
                                  ["info", "instances/tiny/a2-example.json"]])
def test_light_command_lines_load_no_heavy_package(argv):
    assert not _loaded(argv) & set(HEAVY)


def test_the_listing_names_every_command():
    from kvopt.cli.main import build_parser

    full = build_parser()._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    light = build_parser("")._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(light) == list(full)
    assert [p.description for p in light.values()] == [None] * len(light)  # not built


@pytest.mark.parametrize("module", ["kvopt.sim.policies", "kvopt.sim", "kvopt.predictions"])
def test_the_simulator_imports_without_scipy(module):
    """The issue's cause: ``kvopt.sim.policies`` imported scipy (through the predictors'
    ``scipy.special``) at start-up; scipy is now imported where a quantile or a fit needs it."""
    code = (f"import sys, {module}; "
            "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert not set(r.stdout.split()) & set(HEAVY)


def test_simulate_help_loads_no_heavy_package():
    assert not _loaded(["simulate", "--help"]) & set(HEAVY)
