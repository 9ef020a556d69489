"""OR-Tools CP-SAT on the canonical form (integer model; coefficients must be integral).

The dedicated CP model with cumulative staircases lives in :mod:`kvopt.mip.model.cpmodel`.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from kvopt.core.limits import Deadline, as_deadline
from kvopt.mip.backends.base import BackendResult, Capabilities
from kvopt.mip.model.builder import FORMULATIONS
from kvopt.mip.model.data import MILPData
from kvopt.mip.result import BackendStatus

#: The CP-SAT models of :mod:`kvopt.mip.model.cpmodel` (only this backend runs them): ``cp``
#: (staircase cumulative, cliques, symmetry breaking, start windows, LP pre-bound),
#: ``cp+cores`` (+ level-1/2 cores), ``cp+pairs`` (+ exact pairwise lags), ``cp+exact``
#: (``cp+pairs`` + primal search + lag intervals + reduced-cost fixing,
#: :mod:`kvopt.mip.bounds.fixing`).
CP_MODELS = ("cp", "cp+cores", "cp+pairs", "cp+exact")


def cpsat_status(solver: object, code: object) -> BackendStatus:
    """Map a CP-SAT status to a kvopt status.

    Examples
    --------
    >>> from ortools.sat.python import cp_model
    >>> [cpsat_status(None, c) for c in (cp_model.OPTIMAL, cp_model.FEASIBLE,
    ...                                  cp_model.INFEASIBLE, cp_model.MODEL_INVALID)]
    ['optimal', 'time_limit', 'infeasible', 'error']
    """
    from ortools.sat.python import cp_model

    if code == cp_model.OPTIMAL:
        return "optimal"
    if code == cp_model.FEASIBLE or code == cp_model.UNKNOWN:
        return "time_limit"
    if code == cp_model.INFEASIBLE:
        return "infeasible"
    return "error"


def run_cpsat(model: object, *, deadline: Deadline, threads: int,
              verbose: bool) -> tuple[Any, Any, float, BackendStatus]:
    """Solve a CP-SAT ``model`` with kvopt's shared options.

    Returns
    -------
    tuple
        ``(solver, status_code, runtime_s, kvopt_status)``; used by the generic backend and
        by the dedicated ``cp`` models of :mod:`kvopt.mip.model.cpmodel`.

    Examples
    --------
    >>> from ortools.sat.python import cp_model
    >>> m = cp_model.CpModel()      # min x + y, x + 2 y >= 3, integer: optimum 2
    >>> x, y = m.NewIntVar(0, 10, "x"), m.NewIntVar(0, 10, "y")
    >>> _ = m.Add(x + 2 * y >= 3)
    >>> m.Minimize(x + y)
    >>> solver, code, runtime, status = run_cpsat(m, deadline=Deadline(10.0), threads=1,
    ...                                           verbose=False)
    >>> status, solver.ObjectiveValue(), solver.StatusName(code)
    ('optimal', 2.0, 'OPTIMAL')
    """
    from ortools.sat.python import cp_model

    solver = cp_model.CpSolver()
    left = deadline.remaining(floor=0.05)  # what is left now: the model build counted
    if left is not None:
        solver.parameters.max_time_in_seconds = float(left)
    solver.parameters.num_workers = int(max(threads, 1))
    solver.parameters.log_search_progress = bool(verbose)
    t0 = time.perf_counter()
    code = solver.Solve(model)
    runtime = time.perf_counter() - t0
    return solver, code, runtime, cpsat_status(solver, code)


class CpSatBackend:
    """CP-SAT (OR-Tools) translating every row into an integer linear constraint.

    Examples
    --------
    >>> d = MILPData.example()   # min x0 + x1, x0 + 2 x1 >= 3, integer: optimum 2
    >>> r = CpSatBackend().solve(d, time_limit=10, threads=1)
    >>> r.status, r.objective
    ('optimal', 2.0)
    """

    name = "cpsat"
    module = "ortools"
    description = "OR-Tools CP-SAT (integer programs; also runs the 'cp' formulation)"
    capabilities = Capabilities(mip_start=True, reports_bound=True, threads=True,
                                lp_relaxation=False,
                                formulations=(*FORMULATIONS, *CP_MODELS))

    def solve(self, data: MILPData, *, time_limit: float | None = None, threads: int = 1,
              relax: bool = False, verbose: bool = False,
              deadline: Deadline | None = None) -> BackendResult:
        """Solve ``data``; see :class:`~kvopt.mip.backends.base.Backend`."""
        from ortools.sat.python import cp_model

        dl = as_deadline(time_limit, deadline)
        if relax:
            raise ValueError("CP-SAT has no LP relaxation mode; use highs or scipy")
        if (data.integrality != 1).any():
            raise ValueError("CP-SAT needs an all-integer model")
        A = data.A.tocsr()
        if not (np.allclose(A.data, np.round(A.data)) and np.allclose(data.c, np.round(data.c))):
            raise ValueError("CP-SAT needs integral coefficients")
        m = cp_model.CpModel()
        lo = np.ceil(data.col_lower - 1e-9).astype(np.int64)
        hi = np.floor(data.col_upper + 1e-9).astype(np.int64)
        xs = [m.NewIntVar(int(lo[j]), int(hi[j]), "") for j in range(data.n_cols)]
        big = 2**40
        for r in range(data.n_rows):
            a, b = A.indptr[r], A.indptr[r + 1]
            expr = sum(int(v) * xs[int(j)] for j, v in zip(A.indices[a:b], A.data[a:b],
                                                            strict=True))
            rl = -big if not np.isfinite(data.row_lower[r]) else int(np.ceil(data.row_lower[r]
                                                                              - 1e-9))
            ru = big if not np.isfinite(data.row_upper[r]) else int(np.floor(data.row_upper[r]
                                                                             + 1e-9))
            m.AddLinearConstraint(expr, rl, ru)
        cint = np.round(data.c).astype(np.int64)
        nz = np.flatnonzero(cint)
        m.Minimize(sum(int(cint[j]) * xs[int(j)] for j in nz))
        if data.x0 is not None:
            for j in range(data.n_cols):
                m.AddHint(xs[j], round(data.x0[j]))
        # the model build counts against the limit
        solver, code, runtime, status = run_cpsat(m, deadline=dl, threads=threads,
                                                  verbose=verbose)
        has = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
        x = np.array([solver.Value(v) for v in xs], dtype=np.float64) if has else None
        obj = float(solver.ObjectiveValue()) + data.obj_offset if has else None
        bound = float(solver.BestObjectiveBound()) + data.obj_offset if has or \
            status == "time_limit" else (np.inf if status == "infeasible" else -np.inf)
        return BackendResult(status, x, obj, bound, runtime, solver.StatusName(code))
