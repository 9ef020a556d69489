"""``kvopt.mip.solve``: the one entry point of the hindsight optimum.

It checks the time limit once (a :class:`~kvopt.core.limits.Deadline` for the whole call) and
dispatches: ``objective="goodput"`` to :func:`kvopt.mip.goodput.solve_goodput`; no ``solver``
and no ``formulation`` (the default) to :func:`kvopt.mip.portfolio.solve_auto`, the toolkit's
best answer within the limit; otherwise to :func:`kvopt.mip.paths.solve_model`, one backend
and one model (a function per path: MILP, CP, exact).
"""

from __future__ import annotations

from kvopt.core.deprecation import renamed_argument
from kvopt.core.instance import Instance
from kvopt.core.limits import Deadline, as_deadline, memory_budget_scope, resolve_memory_budget
from kvopt.mip.paths import (
    ALL_FORMULATIONS,
    CP_FORMULATIONS,
    CP_LP_MAX_NNZ,
    CP_LP_SHARE,
    DEFAULT_FORMULATION,
    DEFAULT_SOLVER,
    EXACT_IMPROVE_SHARE,
    EXACT_IMPROVE_STEPS,
    KILL_GRACE_S,
    POST_RESERVE_S,
    check_tel,
    solve_model,
)
from kvopt.mip.result import Formulation, SolveResult, SolverName, SolveStatus

__all__ = ["ALL_FORMULATIONS", "CP_FORMULATIONS", "CP_LP_MAX_NNZ", "CP_LP_SHARE",
           "DEFAULT_FORMULATION", "DEFAULT_SOLVER", "EXACT_IMPROVE_SHARE", "EXACT_IMPROVE_STEPS",
           "KILL_GRACE_S", "POST_RESERVE_S", "SolveResult", "SolveStatus", "solve"]


def solve(
    instance: Instance,
    *,
    solver: SolverName | None = None,
    formulation: Formulation | None = None,
    time_limit: float | None = 60.0,
    threads: int = 1,
    warm_start: bool = True,
    verbose: bool = False,
    progress: bool = False,
    cp_lp_bound: bool = True,
    objective: str = "tel",
    ram: str | int | float | None = None,
    deadline: Deadline | None = None,
    isolate: bool = True,
    seed: int = 0,
    memory_budget: str | int | float | None = None,
) -> SolveResult:
    """Compute a hindsight-optimal schedule (or the best one found within the time limit).

    Parameters
    ----------
    instance
        A slotted instance (``time_unit="step"``; see :func:`kvopt.mip.discretize`).
    solver, formulation
        Neither given (the default): the toolkit's best answer within the limit,
        :func:`kvopt.mip.portfolio.solve_auto` (the exact path inside the frontier, else the
        improvement search beside the strongest bound that fits). For experts: a backend
        (``highs``, ``cbc``, ``cpsat`` or ``scipy``; default ``cpsat``) and one of
        :data:`ALL_FORMULATIONS` (default ``"cp"`` for ``cpsat`` and ``"tight"`` otherwise).
    time_limit
        Seconds for the *whole call* (warm start, bounds, model build, LP pre-bound,
        solve, validation), ``> 0``; ``None``: no limit. ``kvopt solve`` also counts the
        interpreter's start-up (its deadline starts with the process). Each step gets what
        is left; the solver runs in a child process killed :data:`KILL_GRACE_S` after the
        limit, so the call returns within the limit plus that grace plus the final
        validation. ``runtime_s`` and ``overrun_s`` of the result report what happened.
    threads
        Solver threads / CP-SAT workers.
    warm_start
        Start from the MC-SF schedule (true lengths; always IP-feasible). It is also kept as
        the incumbent if the solver returns nothing better. ``cp+exact`` always runs its
        primal search (from MC-SF) and uses its schedule the same way.
    verbose, progress
        Solver log on stdout; heartbeat line on stderr while solving.
    cp_lp_bound
        For the CP formulations: first solve the LP relaxation of ``tight+cuts`` (``cp``) or
        ``tight+cores`` (``cp+cores``, ``cp+pairs``) when it fits the RAM budget and
        :data:`CP_LP_MAX_NNZ`, within :data:`CP_LP_SHARE` of the remaining time, and give
        CP-SAT ``objective >= LP`` (its own bound rarely moves). ``bounds["lp"]`` of the
        result says whether it was computed, and if not, why. ``cp+exact`` solves the
        ``tight+cores`` LP in the solver process for its reduced-cost fixing (same limits);
        ``False`` skips the fixing.
    objective
        ``"tel"`` (total end-to-end latency, minimised) or ``"goodput"`` (SLO goodput,
        maximised: :func:`kvopt.mip.goodput.solve_goodput`; ``formulation`` is ignored, its
        ``bound`` is an upper bound; default solver HiGHS when ``solver`` is the TEL default).
    ram
        Bytes the formulation may take (``"4G"``, ``2e9``, ...); default
        :func:`kvopt.core.limits.resolve_memory_budget` (env ``KVOPT_MEMORY_BUDGET`` or half
        the available memory). A formulation estimated above it (:mod:`kvopt.mip.model.sizing`)
        is refused before it is built (:class:`~kvopt.core.errors.MemoryBudgetError` naming
        the formulations that fit); the solver process is also capped at it.
        ``memory_budget`` is its deprecated name.
    deadline
        A caller's :class:`~kvopt.core.limits.Deadline` to share (then ``time_limit`` is
        ignored): a caller that solves as one step of a longer call passes its own.
    isolate
        Run the model build and the solver in a forked child process killed at the deadline
        (POSIX). ``False`` runs them in-process: the limit is then only the solver's own.
    seed
        Seed of the default path's improvement search.

    Returns
    -------
    SolveResult

    Raises
    ------
    UsageError
        A non-positive ``time_limit``, an unknown ``formulation`` or ``objective``, or a
        formulation above the RAM budget (:class:`~kvopt.core.errors.MemoryBudgetError`).

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 2, 1], output=[1, 1, 1])
    >>> res = solve(inst, solver="highs", time_limit=10)
    >>> res.status, res.objective, res.schedule.run_start.tolist()
    ('optimal', 4.0, [0, 1, 0])
    >>> res.overrun_s, res.bounds["solver"]["status"]
    (0.0, 'computed')
    """
    dl = as_deadline(time_limit, deadline)
    ram = renamed_argument(ram, memory_budget, "memory_budget", "ram")
    with memory_budget_scope(ram, "ram"):  # every allocation of the call, not only the model's
        return _solve(instance, solver, formulation, dl, ram, objective, threads, warm_start,
                      verbose, progress, isolate, cp_lp_bound, seed)


def _solve(instance: Instance, solver: SolverName | None, formulation: Formulation | None,
           dl: Deadline, ram: str | int | float | None, objective: str, threads: int,
           warm_start: bool, verbose: bool, progress: bool, isolate: bool, cp_lp_bound: bool,
           seed: int) -> SolveResult:
    """:func:`solve` inside its memory-budget scope."""
    if objective == "goodput":
        return _solve_goodput(instance, solver, dl, threads, warm_start, verbose)
    if solver is None and formulation is None:
        from kvopt.mip.portfolio import solve_auto

        check_tel(instance, objective)
        return solve_auto(instance, deadline=dl, ram_bytes=resolve_memory_budget(ram, "ram"),
                          threads=threads, progress=progress, verbose=verbose, isolate=isolate,
                          seed=seed)
    return solve_model(instance, solver=solver or DEFAULT_SOLVER, formulation=formulation,
                       deadline=dl, ram=ram, objective=objective, threads=threads,
                       verbose=verbose, progress=progress, isolate=isolate,
                       cp_lp_bound=cp_lp_bound, warm_start=warm_start)


def _solve_goodput(instance: Instance, solver: str | None, dl: Deadline, threads: int,
                   warm_start: bool, verbose: bool) -> SolveResult:
    from kvopt.mip.goodput import DEFAULT_GOODPUT_SOLVER, solve_goodput

    return solve_goodput(instance, solver=DEFAULT_GOODPUT_SOLVER if solver in (None, DEFAULT_SOLVER)
                         else solver, deadline=dl, threads=threads, warm_start=warm_start,
                         verbose=verbose)
