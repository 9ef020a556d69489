"""Certified gaps at any scale: every lower bound of an instance against its best schedule.

``kvopt bound`` prints :func:`bound_report`; it is the same dictionary from Python.
"""

from __future__ import annotations

import math
import time
from typing import Any

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance


def bound_report(inst: Instance, *, lp: str = "auto", iterations: int = 200,
                 solve_time: float | None = None, improve_time: float | None = None,
                 seed: int = 0, progress: bool = False,
                 memory_budget: str | int | float | None = None,
                 intervals_time: float | None = None) -> dict[str, Any]:
    """All lower bounds of a slotted instance and the best known schedule's gap.

    ``solve_time`` runs :func:`kvopt.mip.solving.solve` and ``improve_time`` the primal search
    :func:`kvopt.mip.search.improve.improve` (with ``seed``) for a better schedule than MC-SF.

    ``intervals_time`` also computes :func:`kvopt.mip.bounds.intervals.interval_bound` (the
    ``tight+cores`` LP plus lag-interval rows, windows from the best schedule) with that
    time limit; stopped early it is still valid (``doc["interval_status"]`` says which). A
    model above the memory budget is reported in ``doc["skipped"]``.

    With ``progress`` each phase is announced on stderr and the LP / Lagrangian phase shows
    its elapsed time (:mod:`kvopt.core.progress`).

    ``lp="exact"`` solves the LP relaxation of ``tight+cores`` with HiGHS; its size is
    estimated first (:func:`kvopt.mip.model.sizing.estimate`) and a model above the memory budget
    (``memory_budget``, default :func:`kvopt.core.limits.memory_budget`) is refused with a
    :class:`~kvopt.core.errors.MemoryBudgetError` naming ``lp`` that suggests the Lagrangian
    bound. ``lp="auto"`` takes the exact LP when ``n * T <= 2e5`` and it fits the budget,
    else the Lagrangian bound up to ``n * T = 2e7``; ``doc["skipped"]`` says which bounds
    were not computed and why.

    Examples
    --------
    >>> from kvopt import Instance
    >>> doc = bound_report(Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8]))
    >>> doc["best_bound"], doc["best_schedule"]["objective"], doc["gap"]
    (12.0, 12.0, 0.0)
    """
    from kvopt.core.mcsf import mcsf_schedule
    from kvopt.core.progress import Heartbeat, note
    from kvopt.core.validate import check_schedule
    from kvopt.mip.bounds.combinatorial import core_bound, fluid_bound, trivial_bound, volume_bound
    from kvopt.mip.bounds.relaxations import lagrangian_bound

    t0 = time.perf_counter()
    note(f"bound: combinatorial bounds and MC-SF (n = {inst.n})", enabled=progress)
    bounds: dict[str, float | None] = {
        "trivial": trivial_bound(inst), "volume": volume_bound(inst),
        "fluid": fluid_bound(inst), "core": max(core_bound(inst, 1), core_bound(inst, 2))}
    timing: dict[str, float] = {"combinatorial": time.perf_counter() - t0}
    sched = mcsf_schedule(inst)
    rep = check_schedule(inst, sched)
    best: dict[str, Any] = {"source": "mcsf", "objective": rep.objective, "valid": rep.ok}
    if solve_time is not None:
        from kvopt.mip.solving import solve

        note(f"bound: solve, time limit {solve_time:g} s", enabled=progress)
        res = solve(inst, time_limit=solve_time, progress=progress)
        if res.objective is not None and res.objective < (best["objective"] or math.inf):
            best = {"source": f"solve:{res.solver}/{res.formulation}",
                    "objective": res.objective, "valid": True}
        bounds["solver"] = res.bound
    if improve_time is not None:
        from kvopt.mip.search.improve import improve

        note(f"bound: improve, budget {improve_time:g} s, seed {seed}", enabled=progress)
        imp = improve(inst, time_limit=improve_time, seed=seed, progress=progress)
        if imp.objective is not None and imp.objective < (best["objective"] or math.inf):
            best = {"source": f"improve(seed={seed})", "objective": imp.objective,
                    "valid": imp.report is not None and imp.report.ok}
    from kvopt.core.errors import MemoryBudgetError
    from kvopt.core.limits import format_bytes
    from kvopt.core.limits import resolve_memory_budget as resolve_budget
    from kvopt.mip.model.sizing import estimate

    if lp not in ("auto", "exact", "lagrangian", "none"):
        raise UsageError("lp", f"must be auto, exact, lagrangian or none, got {lp!r}")
    budget = resolve_budget(memory_budget, "memory_budget")
    skipped: dict[str, str] = {}
    size = inst.n * inst.horizon
    mode = lp
    if lp in ("auto", "exact"):
        est = estimate(inst, "tight+cores", "lp")  # as lp_bound builds it (no incumbent)
        if est.bytes > budget:
            reason = (f"the exact LP ({est.describe()}) exceeds the memory budget of "
                      f"{format_bytes(budget)} (memory_budget / --memory-budget / "
                      "KVOPT_MEMORY_BUDGET)")
            if lp == "exact":
                raise MemoryBudgetError("lp", f"{reason}; use the Lagrangian bound (--lp "
                                        "lagrangian), which needs O(n T) memory",
                                        estimate=est, budget=budget)
            skipped["lp"] = reason
    if lp == "auto":
        if size <= 200_000 and "lp" not in skipped:
            mode = "exact"
        elif size <= 20_000_000:
            mode = "lagrangian"
            skipped.setdefault("lp", f"n * T = {size} above 200000 (auto uses the "
                               "Lagrangian bound instead; --lp exact forces it)")
        else:
            mode = "none"
            skipped.setdefault("lp", f"n * T = {size} above 200000")
            skipped["lagrangian"] = f"n * T = {size} above 2e7 (--lp lagrangian forces it)"
    elif lp == "none":
        skipped["lp"] = skipped["lagrangian"] = "--lp none"
    t1 = time.perf_counter()
    if mode != "none":
        note(f"bound: {'LP relaxation (tight+cores)' if mode == 'exact' else 'Lagrangian'} "
             f"bound, n*T = {size}", enabled=progress)
    with Heartbeat(f"bound: {mode}", enabled=progress and mode != "none"):
        if mode == "exact":
            from kvopt.mip.bounds.relaxations import LPNotSolvedError, lp_bound

            try:
                bounds["lp"] = lp_bound(inst, "tight+cores", memory_budget=budget)
            except LPNotSolvedError as exc:  # no bound, said so; the Lagrangian one instead
                skipped["lp"] = str(exc)
                mode = "lagrangian"
        if mode == "lagrangian":
            ub = best["objective"]
            bounds["lagrangian"] = lagrangian_bound(inst, iterations=iterations, upper=ub)[0]
    timing["lp"] = time.perf_counter() - t1
    status_iv = None
    if intervals_time is not None:
        from kvopt.mip.bounds.intervals import interval_bound

        if not intervals_time > 0:
            raise UsageError("intervals_time", f"must be > 0 seconds, got {intervals_time!r}")
        note(f"bound: lag-interval LP, time limit {intervals_time:g} s", enabled=progress)
        t2 = time.perf_counter()
        with Heartbeat("bound: intervals", enabled=progress):
            try:
                iv = interval_bound(inst, time_limit=intervals_time, upper=best["objective"],
                                    memory_budget=budget)
                bounds["intervals"] = iv.bound
                status_iv = iv.status
            except MemoryBudgetError as exc:
                skipped["intervals"] = exc.reason
        timing["intervals"] = time.perf_counter() - t2
    valid = {k: v for k, v in bounds.items() if v is not None and math.isfinite(v)}
    best_name = max(valid, key=valid.__getitem__)
    best_bound = math.ceil(valid[best_name] - 1e-9)
    obj = best["objective"]
    gap = None if obj is None else max(obj - best_bound, 0) / max(obj, 1.0)
    return {"instance": inst.name, "n": inst.n, "memory": inst.memory,
            "time_unit": inst.time_unit, "bounds": bounds, "best_bound_name": best_name,
            "best_bound": float(best_bound), "best_schedule": best, "gap": gap,
            "lp_mode": mode, "interval_status": status_iv, "skipped": skipped,
            "memory_budget_bytes": budget,
            "seconds": timing}
