"""The hindsight-optimal IP of seed 001: formulations, four backends, bounds, ``kvopt solve``.

Data flow::

    Instance -> build_milp (MILPData, solver-neutral) -> backend -> x -> decode -> Schedule
             -> check_schedule (objective recomputed) -> SolveResult (status, bound, gap)

Examples
--------
>>> from kvopt import Instance
>>> from kvopt.mip import solve
>>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
>>> res = solve(inst, solver="scipy", time_limit=10)
>>> res.status, res.objective
('optimal', 12.0)
"""

from kvopt.mip.backends import backend_names, get_backend, solver_availability
from kvopt.mip.bounds.combinatorial import (
    combinatorial_bound,
    core_bound,
    fluid_bound,
    trivial_bound,
    volume_bound,
)
from kvopt.mip.bounds.relaxations import lagrangian_bound, lp_bound
from kvopt.mip.model.builder import FORMULATIONS, build_milp, decode_starts
from kvopt.mip.model.data import MILPData
from kvopt.mip.model.discretize import discretize
from kvopt.mip.result import Formulation, SolveResult, SolverName, SolveStatus
from kvopt.mip.solving import ALL_FORMULATIONS, solve

__all__ = [
    "ALL_FORMULATIONS",
    "SolveStatus",
    "FORMULATIONS",
    "Formulation",
    "MILPData",
    "SolveResult",
    "SolverName",
    "backend_names",
    "build_milp",
    "combinatorial_bound",
    "core_bound",
    "decode_starts",
    "discretize",
    "fluid_bound",
    "get_backend",
    "lagrangian_bound",
    "lp_bound",
    "solve",
    "solver_availability",
    "trivial_bound",
    "volume_bound",
]
