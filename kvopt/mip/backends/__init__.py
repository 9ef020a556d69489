"""MILP backends: HiGHS (highspy), CBC (PuLP), CP-SAT (OR-Tools), scipy.optimize.milp.

Examples
--------
>>> from kvopt.mip.backends import backend_names
>>> backend_names()
['highs', 'cbc', 'cpsat', 'scipy']
"""

from kvopt.mip.backends.base import (
    STATUSES,
    Backend,
    BackendResult,
    Capabilities,
    SolveStatus,
    backend_names,
    get_backend,
    register_backend,
    solver_availability,
)

__all__ = ["STATUSES", "Backend", "BackendResult", "Capabilities", "SolveStatus",
           "backend_names", "get_backend", "register_backend", "solver_availability"]
