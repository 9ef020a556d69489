"""The scripts of ``benchmarks/`` as modules, for the tests of their parts."""

from __future__ import annotations

import importlib.util
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
