"""Every module's docstring examples run (the examples are part of the documentation).

Each ``kvopt`` module is imported and its doctests run with :mod:`doctest`, from the
repository root (examples name shipped files such as ``instances/tiny/...``); a module whose
import fails fails here too. Modules that need an optional extra import it lazily, inside the
functions that use it, so they import without it.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import matplotlib
import pytest

import kvopt

MODULES = sorted(m.name for m in pkgutil.walk_packages(kvopt.__path__, prefix="kvopt.")
                 if not m.name.endswith("__main__"))


def test_every_module_is_listed() -> None:
    assert "kvopt.core.validate" in MODULES and "kvopt.cli.main" in MODULES
    assert len(MODULES) > 50


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    matplotlib.use("Agg")  # examples that draw must not open windows
    mod = importlib.import_module(name)
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                          verbose=False, report=True)
    assert res.failed == 0, f"{res.failed} of {res.attempted} examples failed in {name}"
