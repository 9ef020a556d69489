"""kvopt: operations research for LLM serving under a KV-cache limit.

The data flow follows the package layout::

    kvopt.core      Instance (input) -> Schedule (output) -> check_schedule -> metrics
    kvopt.mip       hindsight-optimal MIP: Instance -> Schedule (+ status, bound, gap)
    kvopt.sim       vectorized simulator with online policies: Instance -> Schedule
    kvopt.theory    competitive ratios (sympy + numeric)
    kvopt.queueing  M/G/1 SOAP formulas and a rank-policy simulator
    kvopt.report    tables and plots
    kvopt.cli       the ``kvopt`` command

Examples
--------
>>> import kvopt
>>> inst = kvopt.Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
>>> kvopt.check_schedule(inst, kvopt.Schedule.from_starts(inst, [0, 0])).objective
12.0
"""

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
from kvopt.core.io import shipped_path

__version__ = "0.1.0"

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
    "__version__",
    "check_schedule",
    "compute_metrics",
    "load_instance",
    "load_schedule",
    "shipped_path",
]
