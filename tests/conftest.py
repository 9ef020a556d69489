"""Shared fixtures.

Tests import the brute-force oracle as ``tests.bruteforce`` (the repository root is on the path
through ``pythonpath`` in ``pyproject.toml``) and name shipped files relative to the repository
root, which the autouse fixture below makes the working directory of every test, whatever
directory pytest was started from.
"""

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")


@pytest.fixture(autouse=True)
def _run_from_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.fixture
def repo_root() -> Path:
    """The repository root (where ``instances/`` and ``reports/`` live)."""
    return ROOT


def once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str,
                 build: Callable[[Path], T]) -> T:
    """``build(folder)`` computed once per test run, whichever ``pytest-xdist`` worker asks
    first; the others wait for it and read its pickled result. A module-scoped fixture is
    computed once per *worker* that runs one of its tests, so an expensive one (the fast
    reproduction report: ~40 s) ran twice whenever its tests landed on both workers.

    The shared folder is the run's own temporary root (the parent of each worker's, made
    fresh per run), so nothing carries over from an earlier run."""
    import fcntl
    import os
    import pickle

    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # .../pytest-N, shared by this run's workers
    folder = base / f"once-{name}"
    done = base / f"once-{name}.pickle"
    with open(base / f"once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            folder.mkdir(exist_ok=True)
            value = build(folder)
            tmp = done.with_suffix(".part")
            tmp.write_bytes(pickle.dumps(value))
            tmp.replace(done)
        result: T = pickle.loads(done.read_bytes())
    return result
