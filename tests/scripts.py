"""The scripts of ``benchmarks/`` as modules, for the tests of their parts."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_benchmark(name: str) -> ModuleType:
    """The module ``benchmarks/<name>.py``, loaded by path (``benchmarks/`` is not a
    package) and registered as ``_bench_<name>``."""
    spec = importlib.util.spec_from_file_location(f"_bench_{name}",
                                                  ROOT / "benchmarks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def run_script(path: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """``python path argv...`` from the repository root with the tree on ``PYTHONPATH``
    (``path`` relative to the root, e.g. ``benchmarks/mip_chain_lp.py``)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, path, *argv], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)


def assert_refused(path: str, argv: list[str], field: str) -> None:
    """``python path argv...`` is refused the way rule 5 asks: exit 2, one error naming
    ``field`` on stderr, no traceback, nothing on stdout."""
    r = run_script(path, *argv)
    assert r.returncode == 2, (argv, r.returncode, r.stderr[-2000:])
    assert field in r.stderr and "Traceback" not in r.stderr, (argv, r.stderr[-2000:])
    assert r.stdout == "", argv
