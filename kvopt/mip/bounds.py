"""Lower bounds on the hindsight optimum (total end-to-end latency, TEL) at any scale.

All bounds are valid for the model of seed 001 (notes §1): a request started at ``k`` holds
``s + (tau - k)`` tokens at ``tau = k+1 .. k+o``; its memory-time *volume* is
``vol_i = s_i o_i + o_i (o_i + 1) / 2`` and it lies in slots ``a_i+1 .. c_i``.

- :func:`trivial_bound`: ``sum_i o_i`` (nobody waits).
- :func:`volume_bound`: seed 001 Sec. 4, LP (9) (volume LP, solved exactly by the greedy fill
  in increasing volume), minus ``sum a_i`` when arrivals are not all 0.
- :func:`fluid_bound` (this package's design): a single machine of speed ``M`` processes the
  volumes preemptively with release dates ``a_i``; any feasible schedule induces such a fluid
  schedule with completion ``<= c_i``, and SRPT minimises the sum of fluid completions
  (1|r_j, pmtn|sum C_j), so ``sum_i (C_i^SRPT - a_i)`` bounds TEL. It dominates the volume LP
  whenever ``vol_i > M`` and uses arrivals.
- :func:`lp_bound` (in :mod:`kvopt.mip.solving`) and :func:`lagrangian_bound`: the LP relaxation
  of the time-indexed formulation, exactly (HiGHS) or by subgradient ascent on the memory rows
  (any scale, each step is ``O(n T)`` numpy work).
"""

from __future__ import annotations

import heapq
import math

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import InvalidInstanceError
from kvopt.core.instance import Instance


def _require_slotted(instance: Instance) -> None:
    if not instance.is_slotted:
        raise InvalidInstanceError(
            "time_unit",
            "the MIP and its bounds need slot arrivals (time_unit='step'); convert a "
            "time_unit='second' trace explicitly with kvopt.mip.discretize(instance, "
            "slot_seconds)")


def volumes(instance: Instance) -> NDArray[np.float64]:
    """Memory-time volume ``s o + o (o + 1) / 2`` of every request.

    Examples
    --------
    >>> volumes(Instance(memory=10, arrival=[0], prompt=[1], output=[4])).tolist()
    [14.0]
    """
    s = instance.prompt.astype(np.float64)
    o = instance.output.astype(np.float64)
    return s * o + o * (o + 1) / 2


def trivial_bound(instance: Instance) -> float:
    """``sum_i o_i``: every latency is at least the output length.

    Examples
    --------
    >>> trivial_bound(Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8]))
    12.0
    """
    return float(instance.output.sum())


def volume_bound(instance: Instance) -> float:
    """Seed 001's volume-LP bound (LP (9) of Sec. 4, Lemma 4.7), exact greedy solution.

    Requests that finish by slot ``t`` have all their volume in slots ``1..t``, so
    ``sum_{c_i <= t} vol_i <= t M``; the LP over fractional completions is solved by filling
    slots in increasing volume. Arrivals are ignored (valid relaxation), hence ``- sum a``.

    Examples
    --------
    >>> round(volume_bound(Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])), 3)
    5.377
    """
    _require_slotted(instance)
    M = float(instance.memory)
    v = np.sort(volumes(instance))
    V = np.concatenate([[0.0], np.cumsum(v)])

    def F(x: NDArray[np.float64]) -> NDArray[np.float64]:
        # integral over [0, x] of ceil(u / M) du
        q = np.floor(x / M)
        r = x - q * M
        return M * q * (q + 1) / 2 + r * (q + 1)

    comp = (F(V[1:]) - F(V[:-1])) / v
    return float(comp.sum() - instance.arrival.sum())


def fluid_completions(release: NDArray[np.float64], work: NDArray[np.float64]) -> NDArray[
        np.float64]:
    """SRPT completion times on one unit-speed machine with preemption and release dates.

    Examples
    --------
    >>> fluid_completions(np.array([0.0, 0.0, 1.0]), np.array([3.0, 1.0, 0.5])).tolist()
    [4.5, 1.0, 1.5]
    """
    n = release.shape[0]
    order = np.argsort(release, kind="stable")
    done = np.zeros(n)
    heap: list[tuple[float, int]] = []
    t = 0.0
    j = 0
    while j < n or heap:
        if not heap:
            t = max(t, float(release[order[j]]))
        while j < n and release[order[j]] <= t:
            i = int(order[j])
            heapq.heappush(heap, (float(work[i]), i))
            j += 1
        rem, i = heapq.heappop(heap)
        nxt = float(release[order[j]]) if j < n else math.inf
        if t + rem <= nxt:
            t += rem
            done[i] = t
        else:
            heapq.heappush(heap, (rem - (nxt - t), i))
            t = nxt
    return done


def fluid_bound(instance: Instance) -> float:
    """SRPT fluid bound: volumes processed at rate ``M`` with release dates (see module doc).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> round(fluid_bound(inst), 2)   # volumes 14 and 44 -> 1.4 + 5.8
    7.2
    """
    _require_slotted(instance)
    C = fluid_completions(instance.arrival.astype(np.float64),
                          volumes(instance) / float(instance.memory))
    return float((C - instance.arrival).sum())


def core_lengths(instance: Instance, q: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Level-``q`` *cores* of the requests: no slot lies in more than ``q`` of them.

    The core of request ``i`` started at ``k`` is the slot range
    ``[k - s_i, k + o_i - y_i)`` of length ``L_i = s_i + o_i - y_i`` with
    ``y_i = max(floor((M - s_i - o_i) / q), sigma)`` and ``sigma = max_j s_j``. Requests with
    ``L_i <= 0`` have no core.

    Proof that at most ``q`` cores contain a slot ``t``: suppose ``q + 1`` do, and let ``i``
    be the one of them that completes first (``c_i = k_i + o_i <= c_j``). For each other
    ``j``, ``t >= k_j - s_j`` and ``t < c_i - y_i`` give ``k_j < c_i - y_i + s_j <= c_i``
    (as ``y_i >= sigma >= s_j``), so ``j`` is running at ``c_i`` with age
    ``c_i - k_j >= y_i - s_j + 1``, i.e. it holds ``s_j + c_i - k_j >= y_i + 1`` tokens.
    With ``i`` at its peak ``s_i + o_i``, memory at ``c_i`` is at least
    ``s_i + o_i + q (y_i + 1) > M`` because ``y_i + 1 > (M - s_i - o_i) / q``: infeasible.

    For ``q = 1`` this is a disjunctive (single-machine) structure over the requests with
    ``2 (s_i + o_i) > M``: the time-extended version of the "at most one item above ``M/2``"
    rounding cut, which also accounts for the other request's ramp.

    Returns
    -------
    (L, y)
        Core lengths and tails (``c_i = core end + y_i``).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[0, 0], output=[8, 8])
    >>> core_lengths(inst, 1)
    (array([6, 6]), array([2, 2]))
    """
    s = instance.prompt.astype(np.int64)
    peak = s + instance.output.astype(np.int64)
    y = np.maximum((int(instance.memory) - peak) // int(q), int(s.max()))
    return peak - y, y


def core_bound(instance: Instance, q: int = 1) -> float:
    """Parallel-machine bound from the level-``q`` cores (:func:`core_lengths`).

    Cores are intervals of length ``L_i`` released at ``a_i - s_i`` (as ``k_i >= a_i``), at
    most ``q`` of which contain any slot, so they form a schedule on ``q`` identical machines
    (interval colouring). Its sum of completions is at least that of SRPT on one machine of
    speed ``q`` (``1|r_j, pmtn|sum C_j``, work ``L_i / q``). With ``c_i = core end + y_i``
    and ``c_i - a_i >= o_i`` for core-less requests::

        TEL >= sum_{L_i > 0} (C_i^SRPT + y_i - a_i) + sum_{L_i <= 0} o_i.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[0, 0], output=[8, 8])
    >>> core_bound(inst)      # cores of length 6: ends 6 and 12, tails 2 -> 8 + 14
    22.0
    """
    _require_slotted(instance)
    L, y = core_lengths(instance, q)
    B = L > 0
    o = instance.output.astype(np.float64)
    if not B.any():
        return float(o.sum())
    a = instance.arrival.astype(np.float64)
    shift = float(instance.prompt.max())  # fluid_completions starts its clock at 0
    C = fluid_completions((a - instance.prompt + shift)[B].astype(np.float64),
                          L[B].astype(np.float64) / q) - shift
    return float((C + y[B] - a[B]).sum() + o[~B].sum())


def combinatorial_bound(instance: Instance) -> float:
    """Best of :func:`trivial_bound`, :func:`volume_bound`, :func:`fluid_bound` and
    :func:`core_bound` (``q = 1, 2``)."""
    return max(trivial_bound(instance), volume_bound(instance), fluid_bound(instance),
               core_bound(instance, 1), core_bound(instance, 2))


def leave_one_out_bounds(instance: Instance) -> NDArray[np.float64]:
    """For every ``i``, a lower bound on the TEL of the other ``n - 1`` requests.

    ``max(sum_{j != i} o_j, fluid bound of the instance without i)``; used to cap each
    request's latency by ``UB - LB(I minus i)`` when building start windows.
    """
    n = instance.n
    rest_o = float(instance.output.sum()) - instance.output.astype(np.float64)
    if n == 1:
        return np.zeros(1)
    a = instance.arrival.astype(np.float64)
    w = volumes(instance) / float(instance.memory)
    out = np.empty(n)
    idx = np.arange(n)
    for i in range(n):
        keep = idx != i
        C = fluid_completions(a[keep], w[keep])
        out[i] = max(rest_o[i], float((C - a[keep]).sum()))
    return out


def lagrangian_bound(
    instance: Instance,
    *,
    iterations: int = 300,
    horizon: int | None = None,
    upper: float | None = None,
    seed_multipliers: NDArray[np.float64] | None = None,
    tighten_every: int = 10,
) -> tuple[float, NDArray[np.float64]]:
    """Lagrangian relaxation of the memory rows of the time-indexed IP (subgradient ascent).

    For multipliers ``lam_tau >= 0`` the relaxed problem splits per request:
    ``L(lam) = sum_i m_i(lam) - M sum lam`` with
    ``m_i(lam) = min_k [k + o_i - a_i + sum_{d=1..o_i} lam_{k+d} (s_i + d)]``, each minimum
    over the start window of ``i`` computed at once with prefix sums. Any ``lam >= 0`` gives
    a valid bound; the best value over the iterations is returned. Its limit is the
    LP-relaxation bound. Cost per iteration ``O(sum of window lengths)``.

    Windows start as :func:`kvopt.mip.builder.start_windows` (incumbent ``UB`` and the
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
    from kvopt.mip.builder import group_requests, start_windows

    _require_slotted(instance)
    a = instance.arrival.astype(np.int64)
    o = instance.output.astype(np.int64)
    M = float(instance.memory)
    T = int(a.max() + o.sum()) if horizon is None else int(horizon)
    if upper is None:
        from kvopt.sim.admission import mcsf_starts

        st = mcsf_starts(instance)
        upper = float((st + o - a).sum())
    lo, hi = start_windows(instance, horizon=T, upper=upper)
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
    step_scale = 2.0
    since = 0
    base = float((o - a).sum())
    mins = np.zeros(len(groups))
    argk = np.zeros(len(groups), dtype=np.int64)
    for it in range(iterations):
        P0 = np.concatenate([[0.0], np.cumsum(lam)])          # P0[t] = sum_{tau < t} lam
        P1 = np.concatenate([[0.0], np.cumsum(lam * tau)])
        for g in range(len(groups)):
            k = np.arange(glo[g], ghi[g] + 1)
            oi = int(go[g])
            cost = (gs[g] - k) * (P0[k + oi + 1] - P0[k + 1]) + (P1[k + oi + 1] - P1[k + 1]) + k
            j = int(np.argmin(cost))
            mins[g], argk[g] = cost[j], k[j]
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
        g_sub = np.full(Tw + 1, -M)
        g_sub[0] = 0.0
        for g in range(len(groups)):
            kk, oi = int(argk[g]), int(go[g])
            g_sub[kk + 1: kk + oi + 1] += cnt[g] * (gs[g] + np.arange(1, oi + 1))
        gnorm = float((g_sub[1:] ** 2).sum())
        if gnorm < 1e-12:
            break
        gap = max(upper - val, 1e-3 * max(abs(upper), 1.0))
        lam = np.maximum(lam + step_scale * gap / gnorm * g_sub, 0.0)
        lam[0] = 0.0
    return float(best), lam
