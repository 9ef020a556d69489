"""Core data model: instances, schedules, the independent validator and metrics.

Data flow: :class:`Instance` (input, immutable) -> a producer (``kvopt.mip`` or
``kvopt.sim``) -> :class:`Schedule` -> :func:`check_schedule` -> :mod:`metrics`.
"""

from kvopt.core.errors import (
    InfeasibleScheduleError,
    InvalidInstanceError,
    KvoptError,
    SolverNotAvailableError,
)
from kvopt.core.instance import Instance, load_instance
from kvopt.core.metrics import Metrics, compute_metrics
from kvopt.core.schedule import Schedule, load_schedule
from kvopt.core.validate import FeasibilityReport, Violation, check_schedule

__all__ = [
    "FeasibilityReport",
    "InfeasibleScheduleError",
    "Instance",
    "InvalidInstanceError",
    "KvoptError",
    "Metrics",
    "Schedule",
    "SolverNotAvailableError",
    "Violation",
    "check_schedule",
    "compute_metrics",
    "load_instance",
    "load_schedule",
]
