"""``solve``: build a formulation, run a backend, decode, validate, certify.

Status honesty: ``"optimal"`` only when a proof exists, i.e. the solver closed its gap or a
valid lower bound ``b`` satisfies ``ceil(b) >= objective`` (TEL is an integer). A run stopped
by its time limit reports ``"time_limit"`` with the incumbent, the best bound and the gap.
Every returned schedule has been checked by :func:`kvopt.core.validate.check_schedule`
and its objective recomputed there.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.core.progress import Heartbeat
from kvopt.core.schedule import Schedule
from kvopt.core.validate import FeasibilityReport, check_schedule
from kvopt.mip.backends.base import BackendResult, SolveStatus, get_backend
from kvopt.mip.bounds import _require_slotted, combinatorial_bound
from kvopt.mip.builder import FORMULATIONS, build_milp, decode_starts
from kvopt.mip.relaxations import lp_bound

#: CP-SAT models of :mod:`kvopt.mip.cpmodel` (need the ``cpsat`` backend): ``cp``, plus the
#: level-1/2 cores (``cp+cores``), plus the exact pairwise lags (``cp+pairs``).
CP_FORMULATIONS = ("cp", "cp+cores", "cp+pairs")
#: Formulation names accepted by :func:`solve`.
ALL_FORMULATIONS = (*FORMULATIONS, *CP_FORMULATIONS)
#: Default backend and formulation (the fastest measured combination, see reports/mip).
DEFAULT_SOLVER = "cpsat"
DEFAULT_FORMULATION = "cp"


@dataclass
class SolveResult:
    """Outcome of :func:`solve`.

    Attributes
    ----------
    status
        A :class:`~kvopt.mip.backends.base.SolveStatus` (a ``str`` enum): ``"optimal"``
        (proven), ``"time_limit"``, ``"infeasible"`` or ``"error"``.
    objective
        Validated total end-to-end latency of ``schedule`` (``None`` without incumbent).
    bound
        Best proven lower bound on OPT (solver bound or combinatorial bound).
    gap
        ``(objective - bound) / objective`` (0 when optimal, ``None`` without both).
    schedule
        The validated incumbent.
    """

    status: SolveStatus
    objective: float | None
    bound: float | None
    gap: float | None
    solver: str
    formulation: str
    runtime_s: float
    schedule: Schedule | None = None
    report: FeasibilityReport | None = None
    solver_status: str = ""
    incumbent_source: str = ""
    model: dict[str, Any] = field(default_factory=dict)

    @property
    def proven(self) -> bool:
        """True iff the status is ``"optimal"``."""
        return self.status == "optimal"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (without the schedule)."""
        return {"status": self.status.value, "objective": self.objective, "bound": self.bound,
                "gap": self.gap, "solver": self.solver, "formulation": self.formulation,
                "runtime_s": round(self.runtime_s, 4), "solver_status": self.solver_status,
                "incumbent_source": self.incumbent_source, "model": self.model}


#: elapsed / limit on stderr while a solve runs (a rewritten line on a terminal, plain lines
#: otherwise)
_Heartbeat = Heartbeat


def _schedule(instance: Instance, starts: NDArray[np.int64], source: str,
              meta: dict[str, Any]) -> tuple[Schedule, FeasibilityReport]:
    claimed = instance.tel_of_starts(starts)
    sched = Schedule.from_starts(instance, starts, source=source, claimed_objective=claimed,
                                 meta=meta)
    return sched, check_schedule(instance, sched)


def solve(
    instance: Instance,
    *,
    solver: str = DEFAULT_SOLVER,
    formulation: str | None = None,
    time_limit: float | None = 60.0,
    threads: int = 1,
    warm_start: bool = True,
    verbose: bool = False,
    progress: bool = False,
    cp_lp_bound: bool = True,
    objective: str = "tel",
) -> SolveResult:
    """Compute a hindsight-optimal schedule (or the best one found within the time limit).

    Parameters
    ----------
    instance
        A slotted instance (``time_unit="step"``; see :func:`kvopt.mip.discretize`).
    solver
        Backend name: ``highs``, ``cbc``, ``cpsat`` or ``scipy``.
    formulation
        One of :data:`ALL_FORMULATIONS`; default ``"cp"`` for ``cpsat`` and ``"tight"``
        otherwise.
    time_limit
        Seconds for the solver (``None``: no limit).
    threads
        Solver threads / CP-SAT workers.
    warm_start
        Start from the MC-SF schedule (true lengths; always IP-feasible). It is also kept as
        the incumbent if the solver returns nothing better.
    verbose
        Solver log on stdout.
    progress
        Heartbeat line on stderr while solving.
    cp_lp_bound
        For the CP formulations: first solve the LP relaxation of ``tight+cuts`` (``cp``) or
        ``tight+cores`` (``cp+cores``, ``cp+pairs``) if small
        and give CP-SAT ``objective >= LP`` (its own bound rarely moves).
    objective
        ``"tel"`` (total end-to-end latency, minimised) or ``"goodput"`` (SLO goodput,
        maximised: :func:`kvopt.mip.goodput.solve_goodput`; ``formulation`` is ignored, its
        ``bound`` is an upper bound; default solver HiGHS when ``solver`` is the TEL default).

    Returns
    -------
    SolveResult

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 2, 1], output=[1, 1, 1])
    >>> res = solve(inst, solver="highs", time_limit=10)
    >>> res.status, res.objective, res.schedule.run_start.tolist()
    ('optimal', 4.0, [0, 1, 0])
    """
    if objective == "goodput":
        from kvopt.mip.goodput import DEFAULT_GOODPUT_SOLVER, solve_goodput

        return solve_goodput(  # type: ignore[no-any-return]
            instance, solver=DEFAULT_GOODPUT_SOLVER if solver == DEFAULT_SOLVER else solver,
            time_limit=time_limit, threads=threads, warm_start=warm_start, verbose=verbose)
    if objective != "tel":
        raise UsageError("objective", f"must be 'tel' or 'goodput', got {objective!r}")
    if instance.max_batch is not None:
        raise UsageError("objective", "the TEL formulations do not model a batch limit "
                         "(instance max_batch); use objective='goodput' or drop max_batch")
    _require_slotted(instance)
    if formulation is None:
        formulation = "cp" if solver == "cpsat" else "tight"
    if formulation not in ALL_FORMULATIONS:
        raise ValueError(f"unknown formulation {formulation!r}; valid: "
                         f"{', '.join(ALL_FORMULATIONS)}")
    backend = get_backend(solver)
    if formulation in CP_FORMULATIONS and solver != "cpsat":
        raise ValueError(f"formulation {formulation!r} runs only on the cpsat backend")
    t_start = time.perf_counter()
    o = instance.output
    ws_starts: NDArray[np.int64] | None = None
    ws_obj: float | None = None
    if warm_start:
        from kvopt.core.mcsf import mcsf_starts

        ws_starts = mcsf_starts(instance)
        ws_obj = instance.tel_of_starts(ws_starts)
    lb0 = combinatorial_bound(instance)
    label = f"kvopt solve ({solver}, {formulation})"
    model: dict[str, Any]
    with _Heartbeat(label, time_limit) if progress else _nullcontext():
        if formulation in CP_FORMULATIONS:
            from kvopt.mip.cpmodel import solve_cp

            with_cores = formulation in ("cp+cores", "cp+pairs")
            lower = None
            t_lp = time.perf_counter()
            if cp_lp_bound and instance.n * (instance.arrival.max() + o.sum()) <= 20_000:
                try:  # at most a quarter of the budget; skipped if the LP is not done by then
                    lower = lp_bound(instance, "tight+cores" if with_cores else "tight+cuts",
                                     time_limit=None if time_limit
                                     is None else 0.25 * time_limit)
                except RuntimeError:
                    lower = None
            left = None if time_limit is None else max(
                time_limit - (time.perf_counter() - t_lp), 0.5)
            res, starts, model = solve_cp(instance, time_limit=left, threads=threads,
                                          warm_starts=ws_starts, lower=lower, verbose=verbose,
                                          cores=(1, 2) if with_cores else (),
                                          pairs=formulation == "cp+pairs")
            model["lp_bound"] = lower
            if lower is not None:
                lb0 = max(lb0, lower)
        else:
            data = build_milp(instance, formulation, warm_starts=ws_starts)
            if warm_start and data.x0 is None:  # pragma: no cover - windows keep MC-SF
                raise RuntimeError("warm start outside the start windows")
            model = data.stats()
            res = backend.solve(data, time_limit=time_limit, threads=threads, verbose=verbose)
            starts = None
            if res.x is not None:
                starts = decode_starts(data, res.x, instance.n)
    return _finish(instance, res, starts, ws_starts, ws_obj, lb0, solver, formulation, model,
                   time.perf_counter() - t_start)


class _nullcontext:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _finish(instance: Instance, res: BackendResult, starts: NDArray[np.int64] | None,
            ws_starts: NDArray[np.int64] | None, ws_obj: float | None, lb0: float,
            solver: str, formulation: str, model: dict[str, Any],
            runtime: float) -> SolveResult:
    meta = {"solver": solver, "formulation": formulation, "solver_status": res.message}
    best: tuple[Schedule, FeasibilityReport] | None = None
    source = ""
    notes: list[str] = []
    if starts is not None:
        sched, rep = _schedule(instance, starts, f"mip:{solver}", meta)
        if rep.ok:
            best, source = (sched, rep), "solver"
        else:
            notes.append(f"solver solution rejected by the validator: {rep}")
    if ws_starts is not None:
        sched, rep = _schedule(instance, ws_starts, "mip:warm-start(mcsf)", meta)
        if rep.ok and (best is None or (rep.objective or math.inf) < (best[1].objective
                                                                       or math.inf)):
            best, source = (sched, rep), "warm_start"
    if res.status == "infeasible":
        # every request fits alone, so a serial schedule exists: an infeasible model is a bug
        status = "infeasible" if best is None else "error"
        notes.append(f"solver reported infeasible ({res.message})")
    elif best is None:
        status = "error"
    else:
        status = "time_limit"
    objective = None if best is None else best[1].objective
    bounds = [lb0] + ([res.bound] if res.status != "infeasible" and math.isfinite(res.bound)
                      else [])
    bound = max(bounds)
    if objective is not None:
        if bound > objective + 1e-6:
            notes.append(f"bound {bound} above a validated objective {objective}: bug")
            status = "error"
        elif status == "time_limit" and math.ceil(bound - 1e-6) >= objective:
            status = "optimal"
    gap = None
    if objective is not None and status != "error":
        gap = 0.0 if status == "optimal" else max(objective - bound, 0.0) / max(objective, 1.0)
    model = {**model, "solver_bound": res.bound if math.isfinite(res.bound) else None,
             "combinatorial_bound": lb0, "solver_objective": res.objective,
             "solver_runtime_s": res.runtime_s, "warm_start_objective": ws_obj,
             "notes": notes}
    sched_out, rep_out = (None, None) if best is None else best
    if sched_out is not None:
        sched_out = sched_out.with_meta(status=str(status), bound=bound, gap=gap)
    return SolveResult(status=SolveStatus(status), objective=objective, bound=bound, gap=gap,
                       solver=solver, formulation=formulation, runtime_s=runtime,
                       schedule=sched_out, report=rep_out, solver_status=res.message,
                       incumbent_source=source, model=model)
