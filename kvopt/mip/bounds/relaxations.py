"""Relaxation bounds of the time-indexed IP: the LP relaxation and a windowed Lagrangian.

These sit above :mod:`kvopt.mip.model.builder` (they build or reuse its start windows), while the
combinatorial bounds of :mod:`kvopt.mip.bounds.combinatorial` sit below it, so the imports run one
way:
``bounds -> builder -> relaxations``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance
from kvopt.core.limits import Deadline, as_deadline
from kvopt.core.mcsf import mcsf_starts
from kvopt.mip.backends.base import get_backend
from kvopt.mip.model.builder import build_milp, group_requests, start_windows

#: Start slots :func:`lagrangian_bound` scans between two looks at its deadline (a few
#: hundredths of a second of prefix-sum arithmetic).
CHECK_SLOTS = 1 << 22


class LPNotSolvedError(RuntimeError):
    """The LP relaxation was not solved (time limit or solver failure): no bound.

    Raised by :func:`lp_bound`; a caller that still wants a bound catches it and falls back
    to :func:`lagrangian_bound` (valid for any multipliers).

    Examples
    --------
    >>> try:
    ...     raise LPNotSolvedError("LP relaxation not solved: time_limit (Time limit reached)")
    ... except LPNotSolvedError as exc:
    ...     print(isinstance(exc, RuntimeError), "|", exc)
    True | LP relaxation not solved: time_limit (Time limit reached)
    """


def lp_bound(instance: Instance, formulation: str = "tight", *, solver: str = "highs",
             time_limit: float | None = 120.0, ram: str | int | float | None = None,
             deadline: Deadline | None = None,
             memory_budget: str | int | float | None = None) -> float:
    """LP-relaxation bound of a time-indexed formulation (HiGHS or scipy).

    The model's size is estimated before it is built (:func:`kvopt.mip.model.sizing.check_memory`);
    above the RAM budget ``ram`` (default :func:`kvopt.core.limits.resolve_memory_budget`;
    ``memory_budget`` is its deprecated name) a :class:`~kvopt.core.errors.MemoryBudgetError`
    suggests :func:`lagrangian_bound`. ``time_limit`` seconds, or a caller's ``deadline``.
    With HiGHS the same LP is solved in its row-differenced form by interior point
    (:func:`kvopt.mip.bounds.sparse_lp.solve_lp_duals`, the interval bound's solver): the
    ``tight+cores`` LP of ``model1-seed1`` in 3.9 s instead of 25.1 s by dual simplex on the
    dense rows, of ``model2-seed1`` in 15.2 s instead of 109.2 s, the same values to 1e-12
    (``reports/mip/lp_exact_speed.txt``).

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 2, 1], output=[1, 1, 1])
    >>> 3.0 <= lp_bound(inst) <= 4.0
    True
    """
    from kvopt.core.deprecation import renamed_argument
    from kvopt.core.limits import resolve_memory_budget
    from kvopt.mip.model.sizing import check_memory

    dl = as_deadline(time_limit, deadline)
    budget = resolve_memory_budget(renamed_argument(ram, memory_budget, "memory_budget", "ram"),
                                   "ram")
    check_memory(instance, formulation, "lp", budget, what="the LP relaxation",
                 hint="lagrangian_bound (kvopt bound --lp lagrangian) needs O(n T) memory")
    data = build_milp(instance, formulation)
    if solver == "highs":
        from kvopt.mip.bounds.sparse_lp import solve_lp_duals

        lp = solve_lp_duals(data, deadline=dl)
        if lp.status != "optimal" or lp.value is None:
            raise LPNotSolvedError(f"LP relaxation not solved: {lp.status} "
                                   f"({lp.info.get('message', '')})")
        return float(lp.value)
    res = get_backend(solver).solve(data, deadline=dl, threads=1, relax=True)
    if res.status != "optimal" or res.objective is None:
        raise LPNotSolvedError(f"LP relaxation not solved: {res.status} ({res.message})")
    return float(res.objective)


def lagrangian_bound(
    instance: Instance,
    *,
    iterations: int = 300,
    horizon: int | None = None,
    upper: float | None = None,
    seed_multipliers: NDArray[np.float64] | None = None,
    tighten_every: int = 10,
    deadline: Deadline | None = None,
    step: float = 2.0,
    narrow: bool = True,
) -> tuple[float, NDArray[np.float64]]:
    """Lagrangian relaxation of the memory rows of the time-indexed IP (subgradient ascent).

    For multipliers ``lam_tau >= 0`` the relaxed problem splits per request:
    ``L(lam) = sum_i m_i(lam) - M sum lam`` with
    ``m_i(lam) = min_k [k + o_i - a_i + sum_{d=1..o_i} lam_{k+d} (s_i + d)]``, each minimum
    over the start window of ``i`` computed at once with prefix sums. Any ``lam >= 0`` gives
    a valid bound; the best value over the iterations is returned. Its limit is the
    LP-relaxation bound. Past the last slot ``h`` with ``lam_h > 0`` the cost of a start
    ``k >= h`` is ``k + o_i - a_i``, increasing in ``k``, so each window is scanned only up to
    ``max(lo_i, h)``: the same minimum as the whole window, at a cost per iteration of
    ``O(sum of min(window, h - a_i))`` (on traces ``h`` is about the makespan, far below the
    serial horizon ``T``).

    Windows start as :func:`kvopt.mip.model.builder.start_windows` (incumbent ``UB`` and the
    leave-one-out fluid bound) and are tightened every ``tighten_every`` iterations by
    Lagrangian reduced costs: if some optimal schedule lies in the windows ``W``, then
    ``L_W(lam) - m_i(lam)`` bounds the other requests' TEL in it, so
    ``latency_i <= UB - L_W(lam) + m_i(lam)`` keeps it (a standard reduced-cost argument).

    Parameters
    ----------
    instance
        A slotted instance.
    iterations
        Subgradient steps (Polyak steps towards ``upper``).
    horizon
        ``T`` (default ``max a + sum o``, exact).
    upper
        A known feasible TEL (default from MC-SF).
    seed_multipliers
        Starting multipliers, length ``T + 1`` (index = slot).
    tighten_every
        Window tightening period (0: never).
    deadline
        Stop when this :class:`~kvopt.core.limits.Deadline` passes, also inside an evaluation
        (default: run all ``iterations``); if before the first one ends, the bound is the value
        at multipliers 0 (every request at the start of its window).
    step
        The first Polyak step's scale (halved after 20 steps without a new best); a small one
        keeps good ``seed_multipliers`` near where they are.
    narrow
        Windows narrowed by ``UB`` and the leave-one-out fluid bound first
        (:func:`~kvopt.mip.model.builder.start_windows`; 7 s at 2000 requests); ``False``:
        ``[a_i, T - o_i]``, narrowed only by the reduced costs below.

    Returns
    -------
    (bound, multipliers)

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 2, 1], output=[1, 1, 1])
    >>> b, _ = lagrangian_bound(inst, iterations=50)
    >>> 3.0 <= b <= 4.0
    True
    """

    instance.require_slotted()
    a = instance.arrival.astype(np.int64)
    o = instance.output.astype(np.int64)
    M = float(instance.memory)
    T = instance.horizon if horizon is None else int(horizon)
    if upper is None:
        upper = instance.tel_of_starts(mcsf_starts(instance))
    lo, hi = start_windows(instance, horizon=T, upper=upper if narrow else None)
    groups = group_requests(instance, aggregate=True)
    rep = np.array([int(g[0]) for g in groups])
    cnt = np.array([g.size for g in groups], dtype=np.float64)
    gs, go = instance.prompt[rep].astype(np.float64), o[rep]
    glo, ghi = lo[rep], np.array([int(hi[g].max()) for g in groups])
    Tw = int((ghi + go).max())
    lam = np.zeros(Tw + 1)
    if seed_multipliers is not None:
        m0 = np.asarray(seed_multipliers, dtype=np.float64)[: Tw + 1]
        lam[: m0.size] = m0
    tau = np.arange(Tw + 1, dtype=np.float64)
    best = -math.inf
    step_scale = float(step)
    since = 0
    base = float((o - a).sum())
    for it in range(iterations):
        got = None if deadline is not None and deadline.expired() else \
            _cheapest_starts(lam, tau, gs, go, glo, ghi, deadline)
        if got is None:   # stopped: at least the value at multipliers 0 (each start at glo)
            best = max(best, base + float(cnt @ glo))
            break
        mins, argk = got
        val = base + float(cnt @ mins) - M * lam.sum()
        if val > best + 1e-9:
            best, since = val, 0
        else:
            since += 1
            if since >= 20:
                step_scale /= 2.0
                since = 0
        if tighten_every and (it + 1) % tighten_every == 0 and math.isfinite(val):
            # latency of one request of g <= UB - L + (m_g + o_g - a_g)   (m_g excludes o - a)
            slack = upper - val
            new_hi = np.floor(slack + mins + 1e-9).astype(np.int64)  # k <= UB - L + cost
            ghi = np.maximum(np.minimum(ghi, new_hi), glo)
        g_sub = _subgradient(argk, gs, go, cnt, Tw, M)
        gnorm = float((g_sub[1:] ** 2).sum())
        if gnorm < 1e-12:
            break
        gap = max(upper - val, 1e-3 * max(abs(upper), 1.0))
        lam = np.maximum(lam + step_scale * gap / gnorm * g_sub, 0.0)
        lam[0] = 0.0
    return float(best), lam


def _subgradient(argk: NDArray[np.int64], gs: NDArray[np.float64], go: NDArray[np.int64],
                 cnt: NDArray[np.float64], Tw: int, M: float) -> NDArray[np.float64]:
    """The memory of the chosen starts ``argk`` (``cnt`` requests per group) less ``M``,
    per slot ``0..Tw`` (slot 0 holds nothing): a subgradient of the Lagrangian."""
    g_sub = np.full(Tw + 1, -M)
    g_sub[0] = 0.0
    for g in range(gs.size):
        kk, oi = int(argk[g]), int(go[g])
        g_sub[kk + 1: kk + oi + 1] += cnt[g] * (gs[g] + np.arange(1, oi + 1))
    return g_sub


def _cheapest_starts(lam: NDArray[np.float64], tau: NDArray[np.float64],
                     gs: NDArray[np.float64], go: NDArray[np.int64], glo: NDArray[np.int64],
                     ghi: NDArray[np.int64], deadline: Deadline | None = None
                     ) -> tuple[NDArray[np.float64], NDArray[np.int64]] | None:
    """Per group ``g`` (prompt ``gs``, output ``go``, window ``[glo, ghi]``): the least
    ``k + sum_{d=1..o} lam_{k+d} (s + d)`` over its window and the first ``k`` attaining it,
    by prefix sums; windows are scanned only to the last priced slot (past it the cost is
    ``k``, increasing; :func:`lagrangian_bound`). ``None`` if ``deadline`` passes first
    (checked after every :data:`CHECK_SLOTS` start slots scanned)."""
    P0 = np.concatenate([[0.0], np.cumsum(lam)])          # P0[t] = sum_{tau < t} lam
    P1 = np.concatenate([[0.0], np.cumsum(lam * tau)])
    priced = np.flatnonzero(lam)
    top = np.minimum(ghi, np.maximum(glo, int(priced[-1]) if priced.size else 0))
    mins = np.zeros(gs.size)
    argk = np.zeros(gs.size, dtype=np.int64)
    scanned = 0
    for g in range(gs.size):
        if deadline is not None and scanned > CHECK_SLOTS:
            if deadline.expired():
                return None
            scanned = 0
        scanned += int(top[g] - glo[g]) + 1
        k = np.arange(glo[g], top[g] + 1)
        oi = int(go[g])
        cost = (gs[g] - k) * (P0[k + oi + 1] - P0[k + 1]) + (P1[k + oi + 1] - P1[k + 1]) + k
        j = int(np.argmin(cost))
        mins[g], argk[g] = cost[j], k[j]
    return mins, argk
