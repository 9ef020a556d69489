"""The code base stays ruff clean (part of the default test command)."""

import shutil
import subprocess

import pytest


def test_ruff_clean():
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff not installed")
    r = subprocess.run([ruff, "check", "kvopt", "tests", "notebooks", "benchmarks"],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
