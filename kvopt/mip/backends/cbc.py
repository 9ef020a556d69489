"""COIN-OR CBC through PuLP (the CBC binary bundled with PuLP 3.x).

PuLP does not expose CBC's dual bound, so it is read from CBC's log ("Lower bound:"/
"Objective value:" lines of the ``Result -`` block).
"""

from __future__ import annotations

import os
import re
import tempfile
import time
import warnings
from typing import Any

import numpy as np

from kvopt.core.limits import Deadline, as_deadline
from kvopt.mip.backends.base import BackendResult, Capabilities
from kvopt.mip.model.builder import FORMULATIONS
from kvopt.mip.model.data import MILPData
from kvopt.mip.result import BackendStatus


def _parse_log(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    m = re.search(r"^Result - (.*)$", text, re.M)
    if m:
        out["result"] = m.group(1).strip()
    for key, pat in (("objective", r"^Objective value:\s*([-+0-9.eE]+)"),
                     ("bound", r"^Lower bound:\s*([-+0-9.eE]+)")):
        m = re.search(pat, text, re.M)
        if m:
            out[key] = float(m.group(1))
    return out


def _cbc_threads(threads: int) -> int | None:
    """CBC's ``-threads`` value for ``threads`` solver threads: ``None`` (no flag: CBC's serial
    branch-and-bound) for one thread, else ``threads``.

    ``-threads 1`` is not serial in CBC 2.10: it starts its parallel branch-and-bound with one
    worker thread beside the main thread (its log prints ``Cbc0030I Thread 0 used ...``). On
    the two-variable example a clean-clone CI run once stalled there for the whole 10 s limit
    and returned "Stopped on time limit"; 6,400 runs since (binary and backend, with and
    without a competing process on the same core) did not reproduce it, so the cause is not
    proven, but one thread needs no thread pool.

    Examples
    --------
    >>> _cbc_threads(1), _cbc_threads(0), _cbc_threads(4)
    (None, None, 4)
    """
    return None if threads <= 1 else int(threads)


class CbcBackend:
    """CBC via PuLP (``PULP_CBC_CMD``), with MIP start and time limit.

    Examples
    --------
    >>> d = MILPData.example()   # min x0 + x1, x0 + 2 x1 >= 3, integer: optimum 2
    >>> r = CbcBackend().solve(d, time_limit=10, threads=1)
    >>> r.status, r.objective
    ('optimal', 2.0)
    """

    name = "cbc"
    module = "pulp"
    description = "COIN-OR CBC via PuLP (bundled binary)"
    capabilities = Capabilities(mip_start=True, reports_bound=True, threads=True,
                                lp_relaxation=True,
                                formulations=FORMULATIONS)

    def solve(self, data: MILPData, *, time_limit: float | None = None, threads: int = 1,
              relax: bool = False, verbose: bool = False,
              deadline: Deadline | None = None) -> BackendResult:
        """Solve ``data``; see :class:`~kvopt.mip.backends.base.Backend`."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # PuLP 3.x -> 4.0 notices
            return self._solve(data, deadline=as_deadline(time_limit, deadline),
                               threads=threads, relax=relax, verbose=verbose)

    def _solve(self, data: MILPData, *, deadline: Deadline, threads: int,
               relax: bool, verbose: bool) -> BackendResult:
        import pulp

        prob = pulp.LpProblem("kvopt", pulp.LpMinimize)
        cat = "Continuous" if relax else "Integer"
        xs = [pulp.LpVariable(f"x{j}", lowBound=float(data.col_lower[j]),
                              upBound=float(data.col_upper[j]),
                              cat=cat if data.integrality[j] else "Continuous")
              for j in range(data.n_cols)]
        prob += pulp.LpAffineExpression([(xs[j], float(data.c[j])) for j in range(data.n_cols)
                                         if data.c[j] != 0], constant=float(data.obj_offset))
        A = data.A.tocsr()
        for r in range(data.n_rows):
            a, b = A.indptr[r], A.indptr[r + 1]
            expr = pulp.LpAffineExpression([(xs[int(j)], float(v)) for j, v in
                                            zip(A.indices[a:b], A.data[a:b], strict=True)])
            lo, hi = data.row_lower[r], data.row_upper[r]
            if np.isfinite(lo) and np.isfinite(hi) and lo == hi:
                prob += expr == float(lo), f"r{r}"
            else:
                if np.isfinite(lo):
                    prob += expr >= float(lo), f"rl{r}"
                if np.isfinite(hi):
                    prob += expr <= float(hi), f"ru{r}"
        warm = data.x0 is not None and not relax
        if warm:
            assert data.x0 is not None
            for j, v in enumerate(data.x0):
                xs[j].setInitialValue(float(v))
        fd, log_path = tempfile.mkstemp(prefix="kvopt-cbc-", suffix=".log")
        os.close(fd)
        try:
            cmd = pulp.PULP_CBC_CMD(
                msg=bool(verbose), timeLimit=deadline.remaining(floor=1.0),
                threads=_cbc_threads(threads), warmStart=warm, gapRel=0.0,
                gapAbs=(1.0 - 1e-6) if data.objective_is_integer else 0.0, logPath=log_path)
            t0 = time.perf_counter()
            prob.solve(cmd)
            runtime = time.perf_counter() - t0
            with open(log_path) as fh:
                log = _parse_log(fh.read())
        finally:
            os.unlink(log_path)
        vals = [v.varValue for v in xs]
        has_x = all(v is not None for v in vals) and prob.sol_status in (1, 2)
        x = np.array(vals, dtype=np.float64) if has_x else None
        obj = float(pulp.value(prob.objective)) if has_x else None
        result = str(log.get("result", pulp.LpStatus[prob.status]))
        status: BackendStatus
        if prob.status == -1 or "infeasible" in result.lower():
            status, bound = "infeasible", np.inf
        elif "Optimal" in result and prob.status == 1:
            status, bound = "optimal", float(log.get("bound", obj if obj is not None
                                                     else -np.inf))
            if "bound" not in log and obj is not None:
                bound = obj
        elif "time" in result.lower() or prob.sol_status == 2 or prob.status == 0:
            status = "time_limit"
            bound = float(log.get("bound", -np.inf))
        else:
            status, bound = "error", -np.inf
        return BackendResult(status, x, obj, bound, runtime, result)
