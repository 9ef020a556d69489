"""kvopt: operations research for LLM serving under a KV-cache limit.

The data flow follows the package layout::

    kvopt.core      Instance (input) -> Schedule (output) -> check_schedule -> metrics
    kvopt.mip       hindsight-optimal MIP: Instance -> Schedule (+ status, bound, gap)
    kvopt.sim       vectorized simulator with online policies: Instance -> Schedule
    kvopt.theory    competitive ratios (sympy + numeric)
    kvopt.queueing  M/G/1 SOAP formulas and a rank-policy simulator
    kvopt.report    tables and plots
    kvopt.cli       the ``kvopt`` command

The front door: :func:`load_instance`, :func:`solve` (:func:`kvopt.mip.solve`),
:func:`simulate` (:func:`kvopt.sim.simulate`), :func:`check_schedule`, :class:`SolveStatus` and
every error a user can meet (all derive from :class:`KvoptError`). ``import kvopt`` loads only
``kvopt.core``; ``solve``, ``simulate`` and the simulator's errors load their packages on first
use, so ``kvopt --help`` and scripts that only read instances stay fast.

Examples
--------
>>> import kvopt
>>> inst = kvopt.Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
>>> kvopt.check_schedule(inst, kvopt.Schedule.from_starts(inst, [0, 0])).objective
12.0
>>> kvopt.simulate(inst, "mcsf").metrics.total_latency
12.0
>>> res = kvopt.solve(inst, solver="scipy", time_limit=10)
>>> res.status == kvopt.SolveStatus.OPTIMAL, res.objective
(True, 12.0)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import kvopt._started  # noqa: F401  (first of kvopt: a command's time limit counts from here)
from kvopt.core import (
    FeasibilityReport,
    InfeasibleScheduleError,
    Instance,
    InvalidInstanceError,
    KvoptError,
    Metrics,
    Schedule,
    SolverNotAvailableError,
    Violation,
    check_schedule,
    compute_metrics,
    load_instance,
    load_schedule,
)
from kvopt.core.errors import (
    InvalidScheduleError,
    MemoryBudgetError,
    UsageError,
    UsageTypeError,
)
from kvopt.core.io import shipped_path

if TYPE_CHECKING:  # what the lazy names are, for type checkers (not imported at run time)
    from kvopt.mip import SolveResult, SolveStatus, solve
    from kvopt.sim import SimResult, simulate
    from kvopt.sim.engine import LivelockError, PolicyError, SimulationError
    from kvopt.sim.serving import BlockSizeError
    from kvopt.sweep.spec import SpecError

__version__ = "0.1.0"

#: Names imported on first use: name -> module that defines it.
_LAZY = {
    "solve": "kvopt.mip",
    "SolveResult": "kvopt.mip",
    "SolveStatus": "kvopt.mip",
    "simulate": "kvopt.sim",
    "SimResult": "kvopt.sim",
    "SimulationError": "kvopt.sim",
    "PolicyError": "kvopt.sim",
    "LivelockError": "kvopt.sim",
    "BlockSizeError": "kvopt.sim.serving",
    "SpecError": "kvopt.sweep.spec",
}

__all__ = [
    "BlockSizeError",
    "FeasibilityReport",
    "InfeasibleScheduleError",
    "Instance",
    "InvalidInstanceError",
    "InvalidScheduleError",
    "KvoptError",
    "LivelockError",
    "MemoryBudgetError",
    "Metrics",
    "PolicyError",
    "Schedule",
    "SimResult",
    "SimulationError",
    "SolveResult",
    "SolveStatus",
    "SolverNotAvailableError",
    "SpecError",
    "UsageError",
    "UsageTypeError",
    "Violation",
    "__version__",
    "check_schedule",
    "compute_metrics",
    "load_instance",
    "load_schedule",
    "shipped_path",
    "simulate",
    "solve",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'kvopt' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
