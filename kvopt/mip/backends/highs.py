"""HiGHS through highspy (``passModel`` of a column-wise ``HighsLp``, MIP start by
``setSolution``). An LP relaxation solved to optimality also returns its row duals
(``info["row_dual"]``, HiGHS' sign convention), used by :mod:`kvopt.mip.bounds.fixing`."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from kvopt.core.limits import Deadline, as_deadline
from kvopt.mip.backends.base import BackendResult, Capabilities
from kvopt.mip.model.builder import FORMULATIONS
from kvopt.mip.model.data import MILPData
from kvopt.mip.result import BackendStatus


class HighsBackend:
    """HiGHS MIP/LP solver (highspy >= 1.13).

    Examples
    --------
    >>> d = MILPData.example()   # min x0 + x1, x0 + 2 x1 >= 3, integer: optimum 2
    >>> r = HighsBackend().solve(d, time_limit=10, threads=1)
    >>> r.status, r.objective
    ('optimal', 2.0)
    """

    name = "highs"
    module = "highspy"
    description = "HiGHS MIP solver via highspy"
    capabilities = Capabilities(mip_start=True, reports_bound=True, threads=True,
                                lp_relaxation=True,
                                formulations=FORMULATIONS)

    def solve(self, data: MILPData, *, time_limit: float | None = None, threads: int = 1,
              relax: bool = False, verbose: bool = False, deadline: Deadline | None = None,
              options: dict[str, object] | None = None) -> BackendResult:
        """Solve ``data``; see :class:`~kvopt.mip.backends.base.Backend`.

        ``options`` are extra HiGHS options (name -> value, e.g. ``{"solver": "ipm"}``),
        set after the defaults above; an option HiGHS rejects raises ``ValueError``.
        """
        import highspy

        dl = as_deadline(time_limit, deadline)
        h = highspy.Highs()
        h.setOptionValue("output_flag", bool(verbose))
        h.setOptionValue("threads", int(max(threads, 1)))
        h.setOptionValue("mip_rel_gap", 0.0)
        for name, value in (options or {}).items():
            if h.setOptionValue(name, value) != highspy.HighsStatus.kOk:
                raise ValueError(f"HiGHS rejected option {name}={value!r}")
        if data.objective_is_integer:
            h.setOptionValue("mip_abs_gap", 1.0 - 1e-6)
        h.passModel(highs_lp(data, relax=relax))
        if data.x0 is not None and not relax:
            sol = highspy.HighsSolution()
            sol.col_value = list(map(float, data.x0))
            sol.value_valid = True
            h.setSolution(sol)
        if dl.limit is not None:  # the model transfer counts against the limit
            h.setOptionValue("time_limit", dl.remaining(floor=0.05))
        t0 = time.perf_counter()
        h.run()
        runtime = time.perf_counter() - t0
        ms = h.getModelStatus()
        info = h.getInfo()
        S = highspy.HighsModelStatus
        has_x = info.primal_solution_status == 2  # kSolutionStatusFeasible
        x = np.array(h.getSolution().col_value, dtype=np.float64) if has_x else None
        obj = float(info.objective_function_value) if has_x else None
        status: BackendStatus
        if ms == S.kOptimal:
            status = "optimal"
            bound = float(info.mip_dual_bound) if not relax else float(obj or -np.inf)
        elif ms in (S.kTimeLimit, S.kIterationLimit, S.kSolutionLimit, S.kInterrupt):
            status = "time_limit"
            bound = float(info.mip_dual_bound) if not relax else -np.inf
        elif ms == S.kInfeasible:
            status, bound = "infeasible", np.inf
        else:
            status, bound = "error", -np.inf
        if not np.isfinite(bound) and status != "infeasible":
            bound = -np.inf
        extra: dict[str, object] = {"nodes": int(getattr(info, "mip_node_count", 0))}
        if relax and status == "optimal" and info.dual_solution_status == 2:
            extra["row_dual"] = np.array(h.getSolution().row_dual, dtype=np.float64)
        return BackendResult(status, x, obj, bound, runtime, h.modelStatusToString(ms), extra)


def highs_lp(data: MILPData, *, relax: bool = False) -> Any:
    """``data`` as a column-wise ``highspy.HighsLp`` (integrality dropped when ``relax``), for
    :meth:`HighsBackend.solve` and for callers that keep one ``highspy.Highs`` across
    solves (``passModel``).

    Examples
    --------
    >>> lp = highs_lp(MILPData.example(), relax=True)
    >>> lp.num_col_, lp.num_row_, lp.col_cost_.tolist(), len(lp.integrality_)
    (2, 1, [1.0, 1.0], 0)
    """
    import highspy

    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_col_ = data.n_cols
    lp.num_row_ = data.n_rows
    lp.col_cost_ = data.c.astype(np.float64)
    lp.offset_ = float(data.obj_offset)
    lp.col_lower_ = data.col_lower
    lp.col_upper_ = data.col_upper
    lp.row_lower_ = np.where(np.isinf(data.row_lower), -inf, data.row_lower)
    lp.row_upper_ = np.where(np.isinf(data.row_upper), inf, data.row_upper)
    csc = data.A.tocsc()
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = csc.indptr.astype(np.int32)
    lp.a_matrix_.index_ = csc.indices.astype(np.int32)
    lp.a_matrix_.value_ = csc.data.astype(np.float64)
    lp.a_matrix_.num_col_ = data.n_cols
    lp.a_matrix_.num_row_ = data.n_rows
    if not relax:
        lp.integrality_ = [highspy.HighsVarType.kInteger if v else
                           highspy.HighsVarType.kContinuous for v in data.integrality]
    return lp
