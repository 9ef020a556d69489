"""scipy.optimize.milp (HiGHS bundled in SciPy; no MIP start)."""

from __future__ import annotations

import time

import numpy as np

from kvopt.core.limits import Deadline, as_deadline
from kvopt.mip.backends.base import BackendResult, Capabilities
from kvopt.mip.model.builder import FORMULATIONS
from kvopt.mip.model.data import MILPData
from kvopt.mip.result import BackendStatus


class ScipyBackend:
    """``scipy.optimize.milp`` (and ``linprog`` for the relaxation).

    Examples
    --------
    >>> d = MILPData.example()   # min x0 + x1, x0 + 2 x1 >= 3, integer: optimum 2
    >>> r = ScipyBackend().solve(d, time_limit=10, threads=1)
    >>> r.status, r.objective
    ('optimal', 2.0)
    """

    name = "scipy"
    module = "scipy"
    description = "scipy.optimize.milp (HiGHS inside SciPy, no warm start)"
    capabilities = Capabilities(mip_start=False, reports_bound=True, threads=False,
                                lp_relaxation=True,
                                formulations=FORMULATIONS)

    def solve(self, data: MILPData, *, time_limit: float | None = None, threads: int = 1,
              relax: bool = False, verbose: bool = False,
              deadline: Deadline | None = None) -> BackendResult:
        """Solve ``data``; see :class:`~kvopt.mip.backends.base.Backend`."""
        from scipy.optimize import Bounds, LinearConstraint, milp

        t0 = time.perf_counter()
        dl = as_deadline(time_limit, deadline)
        options: dict[str, object] = {"disp": bool(verbose), "mip_rel_gap": 0.0}
        cons = LinearConstraint(data.A, data.row_lower, data.row_upper)
        if dl.limit is not None:  # the conversion counts against the limit
            options["time_limit"] = dl.remaining(floor=0.05)
        res = milp(data.c, constraints=cons,
                   integrality=np.zeros_like(data.integrality) if relax else data.integrality,
                   bounds=Bounds(data.col_lower, data.col_upper), options=options)
        runtime = time.perf_counter() - t0
        x = None if res.x is None else np.asarray(res.x, dtype=np.float64)
        obj = None if x is None else float(res.fun) + data.obj_offset
        bound = getattr(res, "mip_dual_bound", None)
        status: BackendStatus
        if res.status == 0:
            status = "optimal"
            b = float(bound) + data.obj_offset if bound is not None else obj
        elif res.status == 1:
            status = "time_limit"
            b = float(bound) + data.obj_offset if bound is not None and np.isfinite(bound) \
                else -np.inf
        elif res.status == 2:
            status, b = "infeasible", np.inf
        else:
            status, b = "error", -np.inf
        if relax and status == "optimal":
            b = obj
        return BackendResult(status, x, obj, float(b if b is not None else -np.inf), runtime,
                             str(res.message))
