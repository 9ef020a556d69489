"""One function per path of the expert solve (a named backend and model): :func:`solve_model`.

:func:`kvopt.mip.solve` dispatches here when ``solver`` or ``formulation`` is given (and
:mod:`kvopt.mip.portfolio` takes its exact path here). :func:`solve_model` checks its
arguments once, then runs one of

- :func:`_solve_milp`: a time-indexed MILP of :mod:`kvopt.mip.model.builder` on a backend;
- :func:`_solve_cp`: a CP-SAT model of :mod:`kvopt.mip.model.cpmodel` (``cp``, ``cp+cores``,
  ``cp+pairs``) after an LP pre-bound;
- :func:`_solve_exact`: ``cp+exact`` (primal search, reduced-cost fixing, ``cp+pairs``),

each given the call's :class:`~kvopt.core.limits.Deadline` and RAM budget (in :class:`_Run`).

Status honesty: ``"optimal"`` only when a proof exists, i.e. the solver closed its gap or a
valid lower bound ``b`` satisfies ``ceil(b) >= objective`` (TEL is an integer). A run stopped
by its time limit reports ``"time_limit"`` with the incumbent, the best bound and the gap.
Every returned schedule has been checked by :func:`kvopt.core.validate.check_schedule`
and its objective recomputed there.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.core.isolate import run_isolated
from kvopt.core.limits import (
    Deadline,
    DeadlineExpired,
    format_bytes,
    resolve_memory_budget,
)
from kvopt.core.progress import Heartbeat, is_terminal, note
from kvopt.core.schedule import Schedule
from kvopt.core.validate import FeasibilityReport, check_profile_fits, check_schedule
from kvopt.mip.backends.base import BackendResult, get_backend, unsolved_child
from kvopt.mip.backends.cpsat import CP_MODELS
from kvopt.mip.bounds.combinatorial import combinatorial_bounds, leave_one_out_deadline
from kvopt.mip.bounds.relaxations import lp_bound
from kvopt.mip.model.builder import FORMULATIONS, build_milp, decode_starts
from kvopt.mip.model.sizing import SizeEstimate, check_memory, memory_refusal
from kvopt.mip.result import Formulation, SolveResult, SolverName, SolveStatus, integral_bound

#: CP-SAT models of :mod:`kvopt.mip.model.cpmodel` (need the ``cpsat`` backend): ``cp``, plus
#: the level-1/2 cores (``cp+cores``), plus the exact pairwise lags (``cp+pairs``), plus a
#: primal search and reduced-cost fixing (``cp+exact``: :func:`kvopt.mip.search.improve.improve`
#: from MC-SF for :data:`EXACT_IMPROVE_SHARE` of the time (at most
#: :data:`EXACT_IMPROVE_STEPS` LNS steps per request; 10 s without a limit), its schedule as
#: hint and upper bound; then the Lagrangian bound of the ``tight+cores`` LP with the
#: lag-interval rows of :mod:`kvopt.mip.bounds.intervals`, the start domains of
#: :func:`kvopt.mip.bounds.fixing.reduced_cost_domains` (which keep every better schedule) and
#: the lag-interval families as ``AddNoOverlap`` constraints).
CP_FORMULATIONS = CP_MODELS
#: Formulation names accepted by :func:`solve`.
ALL_FORMULATIONS = (*FORMULATIONS, *CP_FORMULATIONS)
#: Default backend and formulation (the fastest measured combination, see reports/mip).
DEFAULT_SOLVER: SolverName = "cpsat"
DEFAULT_FORMULATION: Formulation = "cp"
#: Seconds kept for decoding and validating after the solver (subtracted from its limit).
POST_RESERVE_S = 0.1
#: Seconds a solver process may run past the deadline before it is killed.
KILL_GRACE_S = 0.5
#: Share of the remaining time given to the LP pre-bound of the CP formulations.
CP_LP_SHARE = 0.25
#: The CP formulations skip their LP pre-bound above this many (estimated) non-zeros: the LP
#: would not finish in its share of a typical limit (measured: ``tight+cuts`` of model1-seed1,
#: 2.2M non-zeros, took 155 s with HiGHS on a loaded 2-core machine and gave 6008, below the
#: combinatorial bound 6154; ``kvopt bound --lp exact`` computes the ``tight+cores`` LP).
CP_LP_MAX_NNZ = 500_000
#: Share of the time limit given to the primal search of ``cp+exact`` ...
EXACT_IMPROVE_SHARE = 0.1
#: Share of the time left that the MC-SF warm start may take.
WARM_START_SHARE = 0.3
#: Share of the time left that sizing the model may take (its start windows' leave-one-out
#: bounds stop there: an upper-bound estimate, in bounded time).
SIZING_SHARE = 0.3
#: ... and its step cap per request (LNS steps; ``50 x`` as many list decodes).
EXACT_IMPROVE_STEPS = 3

#: What a path's solver step returns: the backend result, decoded starts, model statistics.
JobResult = tuple[BackendResult, NDArray[np.int64] | None, dict[str, Any]]


@dataclass
class _Run:
    """One call of :func:`solve`: its choices, its budgets (time: ``deadline``; RAM:
    ``ram_bytes``) and what its steps record."""

    instance: Instance
    solver: str
    formulation: str
    deadline: Deadline
    ram_bytes: int
    threads: int
    verbose: bool
    progress: bool
    isolate: bool
    cp_lp_bound: bool
    warm_start: bool
    steps: dict[str, float] = field(default_factory=dict)
    bounds: dict[str, dict[str, Any]] = field(default_factory=dict)
    ram: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    ws_starts: NDArray[np.int64] | None = None
    ws_obj: float | None = None
    ws_source: str = "mcsf"
    initial: NDArray[np.int64] | None = None
    lb0: float = -math.inf
    est: SizeEstimate | None = None

    @property
    def label(self) -> str:
        return f"kvopt solve ({self.solver}, {self.formulation})"

    def solver_limit(self) -> float | None:
        """What the solver may take: what is left less :data:`POST_RESERVE_S` (at least a
        sliver, so that no solver reads 0 as "no limit")."""
        return self.deadline.remaining(POST_RESERVE_S, floor=0.05)

    def skip(self, name: str, reason: str) -> None:
        self.bounds[name] = {"value": None, "status": "skipped", "reason": reason}


def solve_model(instance: Instance, *, solver: SolverName, formulation: Formulation | None,
                deadline: Deadline, ram: str | int | float | None = None,
                objective: str = "tel", threads: int = 1, verbose: bool = False,
                progress: bool = False, isolate: bool = True, cp_lp_bound: bool = True,
                warm_start: bool = True, initial: NDArray[np.int64] | None = None
                ) -> SolveResult:
    """Solve ``instance`` with one backend and model within ``deadline`` (the arguments are
    those of :func:`kvopt.mip.solve`, checked here; ``initial``: a feasible schedule's start
    slots, the warm start when better than MC-SF, which the caller has checked).

    Examples
    --------
    >>> from kvopt.core.limits import Deadline
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 2, 1], output=[1, 1, 1])
    >>> solve_model(inst, solver="highs", formulation=None, deadline=Deadline(10)).objective
    4.0
    """
    started = deadline.elapsed()  # time the caller spent before (CLI: interpreter start)
    run = _setup(instance, solver, formulation, objective, deadline, ram, threads=threads,
                 verbose=verbose, progress=progress, isolate=isolate,
                 cp_lp_bound=cp_lp_bound, warm_start=warm_start)
    run.steps["before_solve_s"] = started
    run.initial = initial
    path = (_solve_exact if run.formulation == "cp+exact" else
            _solve_cp if run.formulation in CP_FORMULATIONS else _solve_milp)
    res, starts, model = path(run)
    return _conclude(run, res, starts, model)


def check_tel(instance: Instance, objective: str) -> None:
    """The TEL formulations' requirements (each error names its field).

    Examples
    --------
    >>> check_tel(Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8]), "tel")
    >>> batched = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8],
    ...                    max_batch=1)
    >>> try:
    ...     check_tel(batched, "tel")
    ... except UsageError as exc:
    ...     print(exc.field, "|", exc.reason)
    objective | the TEL formulations do not model a batch limit (instance max_batch);
    use objective='goodput' or drop max_batch
    """
    if objective == "goodput":  # (kvopt.mip.solve sends it to the goodput model first)
        raise UsageError("objective", "the TEL formulations do not model goodput; "
                         "kvopt.mip.goodput.solve_goodput solves it")
    if objective != "tel":
        raise UsageError("objective", f"must be 'tel' or 'goodput', got {objective!r}")
    if instance.max_batch is not None:
        raise UsageError("objective", "the TEL formulations do not model a batch limit "
                         "(instance max_batch); use objective='goodput' or drop max_batch")
    instance.require_slotted()


def _setup(instance: Instance, solver: str, formulation: str | None, objective: str,
           dl: Deadline, ram: str | int | float | None, **choices: Any) -> _Run:
    """Check the arguments (each error names its field) and start the record of the call."""
    check_tel(instance, objective)
    if formulation is None:
        formulation = "cp" if solver == "cpsat" else "tight"
    if formulation not in ALL_FORMULATIONS:
        raise UsageError("formulation", f"unknown formulation {formulation!r}; valid: "
                         f"{', '.join(ALL_FORMULATIONS)}")
    get_backend(solver)
    if formulation in CP_FORMULATIONS and solver != "cpsat":
        raise UsageError("formulation", f"{formulation!r} runs only on the cpsat backend")
    budget = resolve_memory_budget(ram, "ram")
    _preload(solver)
    return _Run(instance, solver, formulation, dl, budget, **choices)


def _prepare(run: _Run, *, warm: bool, search: bool = False) -> None:
    """The steps before the solver: MC-SF warm start (``warm``), the primal search of
    ``cp+exact`` (``search``), the size estimate against the RAM budget and the
    combinatorial bounds."""
    inst, steps = run.instance, run.steps
    # validating any schedule draws its memory profile over the horizon: refused here,
    # before any work, when the budget cannot hold it
    check_profile_fits(inst, run.ram_bytes)
    t = time.monotonic()
    if warm:
        from kvopt.core.mcsf import mcsf_starts

        note(f"{run.label}: MC-SF warm start (n = {inst.n})", enabled=run.progress)
        try:  # at most WARM_START_SHARE of the time left (the whole Azure trace: minutes)
            run.ws_starts = mcsf_starts(inst, deadline=Deadline(
                run.deadline.share(WARM_START_SHARE)))
            run.ws_obj = inst.tel_of_starts(run.ws_starts)
        except DeadlineExpired as exc:
            run.notes.append(f"no MC-SF warm start: {exc}")
        if run.initial is not None and (run.ws_obj is None
                                        or inst.tel_of_starts(run.initial) < run.ws_obj):
            run.ws_starts = np.asarray(run.initial, dtype=np.int64)
            run.ws_obj = inst.tel_of_starts(run.ws_starts)
            run.ws_source = "initial"
    steps["warm_start_s"] = time.monotonic() - t
    if search and run.ws_starts is not None:
        _exact_primal_search(run)
    t = time.monotonic()
    note(f"{run.label}: sizing the model (n = {inst.n}, horizon {inst.horizon:,} slots)",
         enabled=run.progress)
    # the start windows' leave-one-out bounds take O(n^2 log n): the sizing (and the list of
    # formulations that would fit, on a refusal) gets at most SIZING_SHARE of the time left
    with leave_one_out_deadline(Deadline(run.deadline.share(SIZING_SHARE))):
        run.est = check_memory(inst, run.formulation, run.solver, run.ram_bytes,
                               upper=run.ws_obj)
    steps["estimate_s"] = time.monotonic() - t
    t = time.monotonic()
    run.bounds = {k: {"value": v, "status": "computed"}
                  for k, v in combinatorial_bounds(inst).items()}
    run.lb0 = max(b["value"] for b in run.bounds.values())
    steps["bounds_s"] = time.monotonic() - t
    run.ram = {"budget_bytes": run.ram_bytes, "estimate": run.est.to_dict()}


def _exact_primal_search(run: _Run) -> None:
    """``cp+exact``: :func:`kvopt.mip.search.improve.improve` from MC-SF for
    :data:`EXACT_IMPROVE_SHARE` of what is left (10 s without a limit); a better schedule
    becomes the warm start and the upper bound."""
    from kvopt.mip.search.improve import improve

    assert run.ws_starts is not None and run.ws_obj is not None
    t = time.monotonic()
    share = run.deadline.share(EXACT_IMPROVE_SHARE, reserve=POST_RESERVE_S)
    imp = improve(run.instance, time_limit=max(share, 0.05) if share is not None else 10.0,
                  seed=0, initial=run.ws_starts,
                  max_steps=EXACT_IMPROVE_STEPS * run.instance.n)
    if imp.schedule is not None and imp.objective is not None and imp.objective < run.ws_obj:
        run.ws_starts = np.asarray(imp.schedule.run_start, dtype=np.int64)
        run.ws_obj = float(imp.objective)
        run.ws_source = "improve"
    run.steps["improve_s"] = time.monotonic() - t


def _solve_milp(run: _Run) -> JobResult:
    """A time-indexed MILP on a backend (the model is built in the solver process)."""
    _prepare(run, warm=run.warm_start)
    run.skip("lp", "the MILP solver's own bound ('solver') includes the LP relaxation of "
             "this formulation")
    backend = get_backend(run.solver)

    def job() -> JobResult:
        t_build = time.monotonic()
        data = build_milp(run.instance, run.formulation, warm_starts=run.ws_starts)
        # (no warm start when MC-SF stopped at its deadline: a tiny time limit)
        if run.ws_starts is not None and data.x0 is None:  # pragma: no cover - windows keep it
            raise RuntimeError("warm start outside the start windows")
        stats = {**data.stats(), "build_s": round(time.monotonic() - t_build, 3)}
        if run.deadline.remaining(POST_RESERVE_S) == 0.0:
            return (BackendResult("time_limit", None, None, -math.inf, 0.0,
                                  "time limit reached while building the model"), None, stats)
        r = backend.solve(data, time_limit=run.solver_limit(), threads=run.threads,
                          verbose=run.verbose)
        st = decode_starts(data, r.x, run.instance.n) if r.x is not None else None
        return r, st, stats

    return _execute(run, job)


def _solve_cp(run: _Run) -> JobResult:
    """``cp``, ``cp+cores``, ``cp+pairs``: the LP pre-bound, then CP-SAT."""
    _prepare(run, warm=run.warm_start)
    with_cores = run.formulation in ("cp+cores", "cp+pairs")
    lower = _cp_lp_prebound(run, "tight+cores" if with_cores else "tight+cuts")
    if lower is not None:
        run.lb0 = max(run.lb0, lower)

    def job() -> JobResult:
        from kvopt.mip.model.cpmodel import solve_cp

        return solve_cp(run.instance, time_limit=run.solver_limit(), threads=run.threads,
                        warm_starts=run.ws_starts, lower=lower, verbose=run.verbose,
                        cores=(1, 2) if with_cores else (),
                        pairs=run.formulation == "cp+pairs")

    res, starts, model = _execute(run, job)
    model["lp_bound"] = run.bounds["lp"]["value"]
    return res, starts, model


def _solve_exact(run: _Run) -> JobResult:
    """``cp+exact``: primal search, reduced-cost fixing from the interval LP, ``cp+pairs``
    with the fixed domains and the lag-interval families (all in the solver process but the
    search)."""
    _prepare(run, warm=True, search=True)
    refusal = _fixing_skip_reason(run)
    fix_starts = run.ws_starts

    def job() -> JobResult:
        from kvopt.mip.bounds.fixing import reduced_cost_domains
        from kvopt.mip.model.cpmodel import solve_cp

        fx = None
        t_fix = time.monotonic()
        if refusal is None and fix_starts is not None:
            fx = reduced_cost_domains(run.instance, fix_starts, deadline=run.deadline.sub(
                run.deadline.share(CP_LP_SHARE, reserve=POST_RESERVE_S, at_least=0.05)),
                intervals=True)
        fix_s = time.monotonic() - t_fix
        r, st, stats = solve_cp(run.instance, time_limit=run.solver_limit(),
                                threads=run.threads, warm_starts=fix_starts,
                                lower=None if fx is None else fx.bound, verbose=run.verbose,
                                cores=(1, 2), pairs=True,
                                domains=None if fx is None else fx.domains,
                                families=None if fx is None else fx.families,
                                formulation="cp+exact")
        stats["fixing"] = (None if fx is None else
                           {"bound": fx.bound, "lp_value": fx.lp_value,
                            "window_mean": fx.window_mean, "domain_mean": fx.domain_mean,
                            "seconds": round(fix_s, 3)})
        stats["fixing_skipped"] = refusal if refusal is not None else (
            "the LP relaxation was not solved in its share of the time limit"
            if fx is None else None)
        return r, st, stats

    res, starts, model = _execute(run, job)
    fxd = model.get("fixing")
    if fxd is not None:
        run.bounds["lp"] = {"value": fxd["bound"], "status": "computed",
                            "formulation": "tight+cores+intervals (Lagrangian of its LP duals)",
                            "seconds": fxd["seconds"]}
        run.lb0 = max(run.lb0, fxd["bound"])
    else:
        run.skip("lp", model.get("fixing_skipped") or "solver process stopped")
    model["lp_bound"] = run.bounds["lp"]["value"]
    return res, starts, model


def _fixing_skip_reason(run: _Run) -> str | None:
    """Why ``cp+exact`` skips its LP (reduced-cost fixing), or ``None`` if it runs it."""
    if not run.cp_lp_bound:
        return "cp_lp_bound=False"
    return _lp_refusal(run, "tight+cores", "lp-differenced")


def _lp_refusal(run: _Run, lp_form: str, solver: str, why_cap: str = "") -> str | None:
    """Why the LP of ``lp_form`` is skipped: above the RAM budget (the estimate of
    :func:`kvopt.mip.model.sizing.memory_refusal`, no incumbent windows, as the LP is built)
    or above :data:`CP_LP_MAX_NNZ`; ``None`` if it runs."""
    est, refused = memory_refusal(run.instance, lp_form, solver, run.ram_bytes,
                                  what=f"the LP of {lp_form}")
    if refused is not None:
        return refused.reason
    if est.nnz > CP_LP_MAX_NNZ:
        return f"the LP of {lp_form} has up to {est.nnz} non-zeros, above {CP_LP_MAX_NNZ}" + why_cap
    return None


def _cp_lp_prebound(run: _Run, lp_form: str) -> float | None:
    """The LP bound given to CP-SAT, or ``None`` with the reason recorded in ``run.bounds``."""
    refusal = "cp_lp_bound=False" if not run.cp_lp_bound else _lp_refusal(
        run, lp_form, "lp", " (it would not finish within its share of the time limit; "
        "`kvopt bound --lp exact` computes the tight+cores LP)")
    if refusal is not None:
        run.skip("lp", refusal)
        return None
    sub = run.deadline.sub(run.deadline.share(CP_LP_SHARE))

    def job() -> float:
        return lp_bound(run.instance, lp_form, deadline=sub, ram=run.ram_bytes)

    t = time.monotonic()
    if run.isolate:
        out = run_isolated(job, deadline=sub, grace=KILL_GRACE_S, memory_cap=run.ram_bytes)
        value = out.value if out.ok else None
        why = ("killed" if out.killed else "out of memory" if out.out_of_memory
               else out.error.strip().splitlines()[-1] if out.error else "")
    else:
        try:
            value, why = job(), ""
        except RuntimeError as exc:
            value, why = None, str(exc)
    run.steps["lp_bound_s"] = time.monotonic() - t
    if value is None:
        lim = ("" if sub.limit is None
               else f" within its share of the time limit ({sub.limit:.1f} s)")
        run.skip("lp", f"the LP relaxation of {lp_form} was not solved{lim}: {why}")
        return None
    run.bounds["lp"] = {"value": float(value), "status": "computed", "formulation": lp_form,
                        "seconds": round(run.steps["lp_bound_s"], 3)}
    return float(value)


def _preload(solver: str) -> None:
    """Import the solver's Python API before forking, so each child need not."""
    import importlib

    mod = {"cpsat": "ortools.sat.python.cp_model", "scipy": "scipy.optimize",
           "highs": "highspy", "cbc": "pulp"}.get(solver)
    if mod is not None:
        importlib.import_module(mod)
    importlib.import_module("highspy")  # the LP bounds


class _ProgressPrinter:
    """``elapsed / limit`` on stderr while waiting for the solver process (called from the
    waiting loop, no thread): a rewritten line on a terminal, plain lines otherwise, as
    :class:`kvopt.core.progress.Heartbeat`."""

    def __init__(self, label: str, dl: Deadline) -> None:
        self.label, self.dl = label, dl
        self.tty = is_terminal()
        self.every = 5.0 if self.tty else 30.0
        self.wrote = False

    def __call__(self, _: float) -> None:
        lim = f" / {self.dl.limit:.0f} s" if self.dl.limit else " s"
        line = f"{self.label}: {self.dl.elapsed():.0f}{lim}"
        if self.tty:
            print(f"\r{line}", end="", file=sys.stderr, flush=True)
        else:
            print(line, file=sys.stderr, flush=True)
        self.wrote = True

    def close(self) -> None:
        if self.wrote and self.tty:
            print(file=sys.stderr, flush=True)


def _execute(run: _Run, job: Callable[[], JobResult]) -> JobResult:
    """Run the build + solve ``job``, in a killable child process when ``run.isolate``
    (capped at the RAM budget), with the progress line when asked."""
    t = time.monotonic()
    on_wait = _ProgressPrinter(run.label, run.deadline) if run.progress else None
    try:
        return _run_job(run, job, on_wait)
    finally:
        run.steps["solve_s"] = time.monotonic() - t
        if on_wait is not None:
            on_wait.close()


def _run_job(run: _Run, job: Callable[[], JobResult],
             on_wait: _ProgressPrinter | None) -> JobResult:
    dl = run.deadline
    if not run.isolate:
        if on_wait is not None:
            with Heartbeat(run.label, dl.limit):  # elapsed / limit on stderr
                return job()
        return job()
    out = run_isolated(job, deadline=dl, grace=KILL_GRACE_S, memory_cap=run.ram_bytes,
                       on_wait=on_wait, wait_every=5.0 if on_wait is None else on_wait.every)
    run.ram["peak_rss_bytes"] = out.peak_rss
    if out.ok:
        return out.value  # type: ignore[no-any-return]
    assert run.est is not None
    res = unsolved_child(out, "the solver process", dl.limit, KILL_GRACE_S,
                         memory=f"its memory budget ({format_bytes(run.ram_bytes)}; "
                         f"estimated {format_bytes(run.est.bytes)})")
    run.notes.append(res.message)
    return res, None, {"formulation": run.est.formulation, "estimate": run.est.to_dict()}


def _conclude(run: _Run, res: BackendResult, starts: NDArray[np.int64] | None,
              model: dict[str, Any]) -> SolveResult:
    """Validate the candidates, settle status, bound and gap, and fill in the record."""
    dl = run.deadline
    t = time.monotonic()
    out = _finish(run.instance, res, starts, run.ws_starts, run.ws_obj, run.lb0, run.solver,
                  run.formulation, model, dl.elapsed(), run.notes, ws_source=run.ws_source)
    run.steps["validate_s"] = time.monotonic() - t
    b = out.model.get("solver_bound")
    run.bounds["solver"] = ({"value": b, "status": "computed"} if b is not None else
                            {"value": None, "status": "skipped",
                             "reason": f"the solver reported no bound ({res.message})"})
    out.bounds = run.bounds
    out.ram = run.ram
    out.steps = {k: round(v, 3) for k, v in run.steps.items()}
    out.time_limit = dl.limit
    out.runtime_s = dl.elapsed()
    out.overrun_s = dl.overrun()
    return out


def _schedule(instance: Instance, starts: NDArray[np.int64], source: str,
              meta: dict[str, Any]) -> tuple[Schedule, FeasibilityReport]:
    claimed = instance.tel_of_starts(starts)
    sched = Schedule.from_starts(instance, starts, source=source, claimed_objective=claimed,
                                 meta=meta)
    return sched, check_schedule(instance, sched)
def _finish(instance: Instance, res: BackendResult, starts: NDArray[np.int64] | None,
            ws_starts: NDArray[np.int64] | None, ws_obj: float | None, lb0: float,
            solver: str, formulation: str, model: dict[str, Any],
            runtime: float, notes: list[str] | None = None,
            ws_source: str = "mcsf") -> SolveResult:
    meta = {"solver": solver, "formulation": formulation, "solver_status": res.message}
    best: tuple[Schedule, FeasibilityReport] | None = None
    source = ""
    notes = list(notes or [])
    if starts is not None:
        sched, rep = _schedule(instance, starts, f"mip:{solver}", meta)
        if rep.ok:
            best, source = (sched, rep), "solver"
        else:
            notes.append(f"solver solution rejected by the validator: {rep}")
    if ws_starts is not None:
        sched, rep = _schedule(instance, ws_starts, f"mip:warm-start({ws_source})", meta)
        if rep.ok and (best is None or (rep.objective or math.inf) < (best[1].objective
                                                                       or math.inf)):
            best, source = (sched, rep), "warm_start"
    if res.status == "infeasible":
        # every request fits alone, so a serial schedule exists: an infeasible model is a bug
        status = "infeasible" if best is None else "error"
        notes.append(f"solver reported infeasible ({res.message})")
    elif res.status == "error":
        status = "error"
        notes.append(f"solver error: {res.message}")
    elif best is None:
        status = "time_limit" if res.status == "time_limit" else "error"
    else:
        status = "time_limit"
    objective = None if best is None else best[1].objective
    bounds = [lb0] + ([res.bound] if res.status != "infeasible" and math.isfinite(res.bound)
                      else [])
    bound = integral_bound(max(bounds))
    if objective is not None:
        if bound > objective:
            notes.append(f"bound {max(bounds)} above a validated objective {objective}: bug")
            status = "error"
        elif status == "time_limit" and bound >= objective:
            status = "optimal"
    gap = None
    if objective is not None and status in ("optimal", "time_limit"):
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
