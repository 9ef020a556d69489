"""Certified gaps at any scale: every lower bound of an instance against its best schedule.

``kvopt bound`` prints :func:`bound_report`; it is the same dictionary from Python.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.mip.result import best_bound, integral_bound

#: ``lp="auto"``: the exact LP up to this ``n * T`` (and within the RAM budget) ...
AUTO_EXACT_MAX_SIZE = 200_000
#: ... the Lagrangian bound up to this one; above it the Lagrangian bound at block-LP
#: multipliers where one evaluation fits :data:`kvopt.mip.bounds.blocks.MAX_WORK` (as
#: ``kvopt solve``'s portfolio), else none.
AUTO_LAGRANGIAN_MAX_SIZE = 20_000_000
#: Seconds of the Lagrangian bound (block LPs, then at most ``iterations`` subgradient steps).
LAGRANGIAN_S = 120.0
#: ``lp="auto"``: the lag-interval LP with this time limit (or ``intervals_time``) in
#: place of the exact / Lagrangian bound (as ``kvopt solve``'s portfolio). On
#: ``model1-seed1`` (n = 50) the exact ``tight+cores`` LP ran out of its 120 s and the
#: default fell back to the Lagrangian bound (5828, after 2 minutes); the interval LP, which
#: holds every ``tight+cores`` row, gives 7488.7 in ~10 s.
AUTO_INTERVALS_S = 120.0


def bound_report(inst: Instance, *, lp: str = "auto", iterations: int = 200,
                 solve_time: float | None = None, improve_time: float | None = None,
                 seed: int = 0, progress: bool = False, ram: str | int | float | None = None,
                 intervals_time: float | None = None,
                 memory_budget: str | int | float | None = None) -> dict[str, Any]:
    """All lower bounds of a slotted instance and the best known schedule's gap.

    ``solve_time`` runs :func:`kvopt.mip.solving.solve` and ``improve_time`` the primal search
    :func:`kvopt.mip.search.improve.improve` (with ``seed``) for a better schedule than MC-SF.

    ``intervals_time`` also computes :func:`kvopt.mip.bounds.intervals.interval_bound` (the
    ``tight+cores`` LP plus lag-interval rows, windows from the best schedule) with that
    time limit; stopped early it is still valid (``doc["interval_status"]`` says which, and
    ``doc["interval_method"]`` where the bound came from: the interval LP, its first stage the
    ``tight+cores`` LP, a restricted LP of its column generation, or subgradient ascent). A
    model above the RAM budget is reported in ``doc["skipped"]``.

    With ``progress`` each phase is announced on stderr and the LP / Lagrangian phase shows
    its elapsed time (:mod:`kvopt.core.progress`).

    ``lp="exact"`` solves the LP relaxation of ``tight+cores`` with HiGHS; its size is
    checked first (:func:`kvopt.mip.model.sizing.check_memory`) and a model above the RAM
    budget (``ram``, default :func:`kvopt.core.limits.resolve_memory_budget`;
    ``memory_budget`` is its deprecated name) is refused with a
    :class:`~kvopt.core.errors.MemoryBudgetError` naming ``lp`` that suggests the Lagrangian
    bound. ``lp="auto"`` (the default) computes, up to ``n * T =``
    :data:`AUTO_LAGRANGIAN_MAX_SIZE`, the bound ``kvopt solve``'s portfolio computes: the
    interval LP above with ``intervals_time`` seconds (default :data:`AUTO_INTERVALS_S`)
    where it fits the budget (``doc["lp_mode"] == "intervals"``; stopped at that limit, the
    Lagrangian bound is computed too, ``"lagrangian"``); otherwise the exact
    LP when ``n * T <=`` :data:`AUTO_EXACT_MAX_SIZE` and it fits the budget, else the
    Lagrangian bound. Above :data:`AUTO_LAGRANGIAN_MAX_SIZE` it computes, as ``solve``, only
    the Lagrangian bound at block-LP multipliers
    (:func:`kvopt.mip.bounds.blocks.block_lagrangian_bound`), where one evaluation scans at
    most :data:`kvopt.mip.bounds.blocks.MAX_WORK` start slots. The Lagrangian bound always
    starts from block-LP multipliers and runs within :data:`LAGRANGIAN_S`.
    ``doc["skipped"]`` says which bounds were not computed and why. Where
    a combinatorial bound (or ``solve``'s) already meets the best schedule, which is then
    proven optimal, auto computes no LP (``"none"``): none can say more.

    Examples
    --------
    >>> from kvopt import Instance
    >>> doc = bound_report(Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8]))
    >>> doc["best_bound"], doc["best_schedule"]["objective"], doc["gap"]
    (12.0, 12.0, 0.0)
    """
    from kvopt.core.deprecation import renamed_argument
    from kvopt.core.limits import resolve_memory_budget
    from kvopt.core.progress import note
    from kvopt.mip.bounds.combinatorial import core_bound, fluid_bound, trivial_bound, volume_bound

    if lp not in ("auto", "exact", "lagrangian", "none"):
        raise UsageError("lp", f"must be auto, exact, lagrangian or none, got {lp!r}")
    if intervals_time is not None and not intervals_time > 0:
        raise UsageError("intervals_time", f"must be > 0 seconds, got {intervals_time!r}")
    budget = resolve_memory_budget(renamed_argument(ram, memory_budget, "memory_budget", "ram"),
                                   "ram")
    t0 = time.perf_counter()
    note(f"bound: combinatorial bounds and MC-SF (n = {inst.n})", enabled=progress)
    bounds: dict[str, float | None] = {
        "trivial": trivial_bound(inst), "volume": volume_bound(inst),
        "fluid": fluid_bound(inst), "core": max(core_bound(inst, 1), core_bound(inst, 2))}
    timing: dict[str, float] = {"combinatorial": time.perf_counter() - t0}
    skipped: dict[str, str] = {}
    best, starts, best_starts = _best_schedule(inst, solve_time, improve_time, seed, progress,
                                               bounds, skipped)
    mode = _lp_mode(inst, lp, budget, skipped, starts)
    closed, value = best_bound(bounds)
    obj = best["objective"]
    if (obj is not None and integral_bound(value) >= obj and lp == "auto"
            and intervals_time is None):  # proven optimal: no LP can say more
        skipped["lp"] = (f"auto: the {closed} bound already meets the best schedule "
                         f"({obj:g}): proven optimal (--lp exact or --intervals "
                         "S computes the LP anyway)")
        mode = "none"

    def intervals(seconds: float) -> tuple[str | None, str | None]:  # the interval LP, timed
        t2 = time.perf_counter()
        got = _interval_phase(inst, seconds, budget, best["objective"], bounds, skipped,
                              progress, best_starts)
        timing["intervals"] = time.perf_counter() - t2
        return got

    status_iv = method_iv = None
    auto_iv = lp == "auto" and mode != "none" and "intervals" not in skipped  # as solve
    if auto_iv:
        status_iv, method_iv = intervals(AUTO_INTERVALS_S if intervals_time is None
                                         else intervals_time)
        if status_iv == "optimal":  # (None: above the memory budget, the LP or Lagrangian)
            mode = "intervals"
            skipped["lp"] = ("auto: the lag-interval LP instead (it holds every tight+cores "
                             "row; --lp exact or --lp lagrangian forces those)")
        elif method_iv == "tight+cores LP":  # the interval LP stopped, the first LP stands
            mode = "intervals"
            skipped["lp"] = ("auto: the lag-interval LP stopped at its time limit; its first "
                             "stage, the tight+cores LP, is the intervals bound (--lp exact "
                             "or --lp lagrangian forces those)")
        elif status_iv is not None:  # stopped at its limit (its subgradient): add the cheap one
            mode = "lagrangian"
            skipped["lp"] = ("auto: the lag-interval LP stopped at its time limit, so the "
                             "Lagrangian bound too (--lp exact forces the exact LP)")
    t1 = time.perf_counter()
    mode = _lp_phase(inst, mode, iterations, budget, best["objective"], bounds, skipped,
                     progress, starts)
    timing["lp"] = time.perf_counter() - t1
    if intervals_time is not None and not auto_iv:
        status_iv, method_iv = intervals(intervals_time)
    best_name, value = best_bound(bounds)
    rounded = integral_bound(value)
    gap = None if obj is None else max(obj - rounded, 0) / max(obj, 1.0)
    return {"instance": inst.name, "n": inst.n, "memory": inst.memory,
            "time_unit": inst.time_unit, "bounds": bounds, "best_bound_name": best_name,
            "best_bound": float(rounded), "best_schedule": best, "gap": gap,
            "lp_mode": mode, "interval_status": status_iv, "interval_method": method_iv,
            "skipped": skipped,
            "memory_budget_bytes": budget,
            "seconds": timing}


def _best_schedule(inst: Instance, solve_time: float | None, improve_time: float | None,
                   seed: int, progress: bool, bounds: dict[str, float | None],
                   skipped: dict[str, str]
                   ) -> tuple[dict[str, Any], NDArray[np.int64], NDArray[np.int64]]:
    """MC-SF, or better: the schedules of ``solve`` and ``improve`` when asked (``solve``'s
    bound joins ``bounds``; an ``improve`` above the memory budget joins ``skipped``);
    MC-SF's starts (the block LPs of the Lagrangian bound read its makespan) and the best
    schedule's (they seed the interval bound's first restricted LP)."""
    from kvopt.core.mcsf import mcsf_schedule
    from kvopt.core.progress import note
    from kvopt.core.validate import check_schedule

    mcsf = mcsf_schedule(inst)
    rep = check_schedule(inst, mcsf)
    starts = best_starts = mcsf.run_start
    best: dict[str, Any] = {"source": "mcsf", "objective": rep.objective, "valid": rep.ok}
    if solve_time is not None:
        from kvopt.mip.solving import solve

        note(f"bound: solve, time limit {solve_time:g} s", enabled=progress)
        res = solve(inst, time_limit=solve_time, progress=progress)
        if (res.objective is not None and res.schedule is not None
                and res.objective < (best["objective"] or math.inf)):
            best = {"source": f"solve:{res.solver}/{res.formulation}",
                    "objective": res.objective, "valid": True}
            best_starts = res.schedule.final_start(inst)
        bounds["solver"] = res.bound
    if improve_time is not None:
        from kvopt.core.errors import MemoryBudgetError
        from kvopt.mip.search.improve import improve

        note(f"bound: improve, budget {improve_time:g} s, seed {seed}", enabled=progress)
        try:
            imp = improve(inst, time_limit=improve_time, seed=seed, progress=progress)
        except MemoryBudgetError as exc:  # a horizon-sized search: said so, the bounds go on
            skipped["improve"] = exc.reason
            return best, starts, best_starts
        if "list_search_skipped" in imp.model:  # LNS only
            skipped["improve"] = ("list search skipped, LNS only: "
                                  f"{imp.model['list_search_skipped']}")
        if (imp.objective is not None and imp.schedule is not None
                and imp.objective < (best["objective"] or math.inf)):
            best = {"source": f"improve(seed={seed})", "objective": imp.objective,
                    "valid": imp.report is not None and imp.report.ok}
            best_starts = imp.schedule.final_start(inst)
    return best, starts, best_starts


def _lp_mode(inst: Instance, lp: str, budget: int, skipped: dict[str, str],
             starts: NDArray[np.int64]) -> str:
    """Which LP bound ``lp`` means on ``inst``: ``"exact"``, ``"lagrangian"`` or ``"none"``
    (the reasons for what is not computed go to ``skipped``)."""
    from kvopt.mip.bounds.blocks import work_refusal
    from kvopt.mip.model.sizing import memory_refusal

    size = inst.n * inst.horizon
    if lp in ("auto", "exact"):
        _, refused = memory_refusal(inst, "tight+cores", "lp", budget, flag="lp",
                                    what="the exact LP", hint="use the Lagrangian bound "
                                    "(--lp lagrangian), which needs O(n T) memory")
        if refused is not None:
            if lp == "exact":
                raise refused
            skipped["lp"] = refused.reason
    if lp == "auto":
        if size <= AUTO_EXACT_MAX_SIZE and "lp" not in skipped:
            return "exact"
        if size <= AUTO_LAGRANGIAN_MAX_SIZE:
            skipped.setdefault("lp", f"n * T = {size} above {AUTO_EXACT_MAX_SIZE} (auto uses "
                               "the Lagrangian bound instead; --lp exact forces it)")
            return "lagrangian"
        skipped.setdefault("lp", f"n * T = {size} above {AUTO_EXACT_MAX_SIZE}")
        too_long = work_refusal(inst, starts)
        if too_long is None:
            skipped["intervals"] = (f"n * T = {size} above {AUTO_LAGRANGIAN_MAX_SIZE}: no LP at "
                                    "this size (the Lagrangian bound at block-LP multipliers "
                                    "instead)")
            return "lagrangian"
        skipped["lagrangian"] = f"{too_long} (--lp lagrangian forces it)"
        return "none"
    if lp == "none":
        skipped["lp"] = skipped["lagrangian"] = "--lp none"
    return lp


def _lp_phase(inst: Instance, mode: str, iterations: int, budget: int, upper: float | None,
              bounds: dict[str, float | None], skipped: dict[str, str],
              progress: bool, starts: NDArray[np.int64]) -> str:
    """The exact LP or the Lagrangian bound (the latter also when the LP is not solved;
    at block-LP multipliers, then at most ``iterations`` subgradient steps, within
    :data:`LAGRANGIAN_S`); returns the mode that ran (``"intervals"``: the interval LP ran
    instead, nothing here)."""
    from kvopt.core.limits import Deadline
    from kvopt.core.progress import Heartbeat, note
    from kvopt.mip.bounds.blocks import block_lagrangian_bound
    from kvopt.mip.bounds.relaxations import LPNotSolvedError, lp_bound

    if mode == "intervals":
        return mode
    if mode != "none":
        note(f"bound: {'LP relaxation (tight+cores)' if mode == 'exact' else 'Lagrangian'} "
             f"bound, n*T = {inst.n * inst.horizon}", enabled=progress)
    with Heartbeat(f"bound: {mode}", enabled=progress and mode != "none"):
        if mode == "exact":
            try:
                bounds["lp"] = lp_bound(inst, "tight+cores", ram=budget)
            except LPNotSolvedError as exc:  # no bound, said so; the Lagrangian one instead
                skipped["lp"] = str(exc)
                mode = "lagrangian"
        if mode == "lagrangian":
            bounds["lagrangian"] = block_lagrangian_bound(
                inst, starts, upper=upper, deadline=Deadline(LAGRANGIAN_S),
                iterations=iterations).value
    return mode


def _interval_phase(inst: Instance, seconds: float, budget: int, upper: float | None,
                    bounds: dict[str, float | None], skipped: dict[str, str],
                    progress: bool, starts: NDArray[np.int64] | None = None
                    ) -> tuple[str | None, str | None]:
    """The lag-interval LP bound within ``seconds`` (skipped above the RAM budget): its
    status and where it came from (:attr:`~kvopt.mip.bounds.intervals.IntervalBound.method`),
    ``(None, None)`` when skipped."""
    from kvopt.core.errors import MemoryBudgetError
    from kvopt.core.progress import Heartbeat, note
    from kvopt.mip.bounds.intervals import interval_bound

    note(f"bound: lag-interval LP, time limit {seconds:g} s", enabled=progress)
    with Heartbeat("bound: intervals", enabled=progress):
        try:
            iv = interval_bound(inst, time_limit=seconds, upper=upper, ram=budget,
                                starts=starts)
        except MemoryBudgetError as exc:
            skipped["intervals"] = exc.reason
            return None, None
    bounds["intervals"] = iv.bound
    return iv.status, iv.method
