"""Shared fixtures.

Tests import the brute-force oracle as ``tests.bruteforce`` (the repository root is on the path
through ``pythonpath`` in ``pyproject.toml``) and name shipped files relative to the repository
root, which the autouse fixture below makes the working directory of every test, whatever
directory pytest was started from.
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _run_from_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


@pytest.fixture
def repo_root() -> Path:
    """The repository root (where ``instances/`` and ``reports/`` live)."""
    return ROOT
