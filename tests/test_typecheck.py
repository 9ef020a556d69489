"""kvopt/ and benchmarks/ type-check clean with mypy (configuration in ``pyproject.toml``).

mypy runs with the interpreter running the tests (``python -m mypy``), so a missing mypy fails
this test instead of skipping it (mypy is in the ``test`` extra).
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_mypy_clean() -> None:
    r = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(ROOT / ".mypy_cache")],
                       capture_output=True, text=True, check=False, cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
