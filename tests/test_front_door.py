"""``import kvopt`` (issue 20): the user-facing functions and every user-facing error, with the
heavy packages imported on first use only."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys

import pytest

import kvopt
from kvopt.core.errors import KvoptError

FRONT = ["solve", "simulate", "check_schedule", "load_instance", "SolveStatus"]


@pytest.mark.parametrize("name", kvopt.__all__)
def test_every_exported_name_resolves(name: str) -> None:
    assert getattr(kvopt, name) is not None
    assert name in dir(kvopt)


def test_the_front_door_names_are_the_package_objects() -> None:
    from kvopt.core import check_schedule, load_instance
    from kvopt.mip import SolveStatus, solve
    from kvopt.sim import simulate

    assert [getattr(kvopt, n) for n in FRONT] == [solve, simulate, check_schedule,
                                                  load_instance, SolveStatus]


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        kvopt.nope  # noqa: B018


def test_import_kvopt_loads_no_solver_simulator_or_scipy() -> None:
    code = ("import sys, kvopt\n"
            "heavy = [m for m in ('kvopt.mip', 'kvopt.sim', 'kvopt.sweep', 'scipy', 'highspy',"
            " 'ortools', 'matplotlib') if m in sys.modules]\n"
            "print(heavy)\n"
            "kvopt.simulate\n"
            "print('kvopt.sim' in sys.modules, 'kvopt.mip' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       check=True)
    assert r.stdout.splitlines() == ["[]", "True False"]


def _kvopt_errors() -> set[type]:
    found: set[type] = set()
    for m in pkgutil.walk_packages(kvopt.__path__, prefix="kvopt."):
        if m.name.endswith("__main__"):
            continue
        mod = importlib.import_module(m.name)
        found |= {obj for _, obj in inspect.getmembers(mod, inspect.isclass)
                  if issubclass(obj, KvoptError) and obj.__module__ == m.name}
    return found


def test_every_kvopt_error_is_at_the_front_door() -> None:
    errors = _kvopt_errors()
    assert KvoptError in errors and len(errors) >= 10
    missing = sorted(f"{e.__module__}.{e.__qualname__}" for e in errors
                     if getattr(kvopt, e.__name__, None) is not e)
    assert not missing, f"errors not exported by kvopt: {missing}"
