"""The code base stays ruff clean (part of the default test command): the package, the tests,
the notebooks, the benchmarks and the scripts that write reports (``reports/*/*.py``).

ruff runs as ``python -m ruff`` with the interpreter running the tests, so it is found whether or
not the virtual environment is activated; a missing ruff fails the test (it is in the ``test``
extra).
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_clean():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "kvopt", "tests", "notebooks",
                        "benchmarks", "reports"], capture_output=True, text=True, check=False,
                       cwd=ROOT)
    assert r.returncode == 0, r.stdout + r.stderr
