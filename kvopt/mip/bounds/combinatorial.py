"""Lower bounds on the hindsight optimum (total end-to-end latency, TEL) at any scale.

All bounds are valid for the model of seed 001 (notes §1): a request started at ``k`` holds
``s + (tau - k)`` tokens at ``tau = k+1 .. k+o``; its memory-time *volume* is
``vol_i = s_i o_i + o_i (o_i + 1) / 2`` and it lies in slots ``a_i+1 .. c_i``.

- :func:`trivial_bound`: ``sum_i o_i`` (nobody waits).
- :func:`volume_bound`: seed 001 Sec. 4, LP (9) (volume LP, solved exactly by the greedy fill
  in increasing volume), applied to blocks of arrivals (each from its first arrival), and
  at least ``sum_i o_i``.
- :func:`fluid_bound` (this package's design): a single machine of speed ``M`` processes the
  volumes preemptively with release dates ``a_i``; any feasible schedule induces such a fluid
  schedule with completion ``<= c_i``, and SRPT minimises the sum of fluid completions
  (1|r_j, pmtn|sum C_j), so ``sum_i (C_i^SRPT - a_i)`` bounds TEL. It dominates the volume LP
  whenever ``vol_i > M`` and uses arrivals.
- :func:`~kvopt.mip.bounds.relaxations.lp_bound` and
  :func:`~kvopt.mip.bounds.relaxations.lagrangian_bound`: the LP relaxation
  of the time-indexed formulation, exactly (HiGHS) or by subgradient ascent on the memory rows
  (any scale, each step is ``O(n T)`` numpy work).
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import math
from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance
from kvopt.core.limits import Deadline


def volumes(instance: Instance) -> NDArray[np.float64]:
    """Memory-time volume ``s o + o (o + 1) / 2`` of every request, in floating point
    (:func:`kvopt.core.stability.lifetime_token_steps`).

    Examples
    --------
    >>> volumes(Instance(memory=10, arrival=[0], prompt=[1], output=[4])).tolist()
    [14.0]
    """
    from kvopt.core.stability import lifetime_token_steps

    return lifetime_token_steps(instance.prompt, instance.output, dtype=np.float64)


def trivial_bound(instance: Instance) -> float:
    """``sum_i o_i``: every latency is at least the output length.

    Examples
    --------
    >>> trivial_bound(Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8]))
    12.0
    """
    return float(instance.output.sum())


def volume_bound(instance: Instance) -> float:
    """Seed 001's volume-LP bound (LP (9) of Sec. 4, Lemma 4.7), exact greedy solution, on
    blocks of arrivals.

    Requests that finish by slot ``t`` have all their volume in slots ``1..t``, so
    ``sum_{c_i <= t} vol_i <= t M``; the LP over fractional completions is solved by filling
    slots in increasing volume. Arrivals are ignored (valid relaxation), hence ``- sum a``.
    With arrivals spread over a long horizon that is weak -- even negative: the relaxed
    completions, counted from slot 0, sum to less than ``sum a`` (on the Azure-code trace in
    0.05 s slots -1.52e7 for the first 2000 requests, below the trivial bound 5.9e4).

    So the LP is applied per block of requests arriving close together: a block ``S`` whose
    first arrival is ``r`` has its volume in slots after ``r``, so
    ``sum_{i in S} (c_i - r) >= LP(S)`` counted from ``r``, i.e.
    ``sum_{i in S} (c_i - a_i) >= LP(S) - sum_{i in S} (a_i - r)``, and at least
    ``sum_{i in S} o_i``. Each block's inequality holds for the schedule restricted to it, so
    the sum over a partition of the requests is a bound; this takes the best of the
    partitions into blocks of ``w`` slots, ``w = 1, 2, 4, ...`` up to one block (the
    seed's bound counted from the first arrival) and into single arrival slots.

    Examples
    --------
    >>> round(volume_bound(Instance(memory=10, arrival=[0] * 6, prompt=[2] * 6,
    ...                             output=[4] * 6)), 3)
    35.444
    >>> round(volume_bound(Instance(memory=10, arrival=[0] * 6 + [100] * 6, prompt=[2] * 12,
    ...                             output=[4] * 12)), 3)  # seed's LP - sum a: -529.1
    70.889
    """
    instance.require_slotted()
    M = float(instance.memory)
    a = instance.arrival.astype(np.int64)
    vol = volumes(instance)
    out = instance.output.astype(np.float64)
    span = int(a.max() - a.min())
    best = float(out.sum())  # the trivial bound, met by every schedule
    for w in [0] + [2**k for k in range(span.bit_length() + 1)]:
        block = a if w == 0 else (a - a.min()) // w
        best = max(best, _blocked_volume_lp(block, a, vol, out, M))
    return best


def _blocked_volume_lp(block: NDArray[np.int64], a: NDArray[np.int64],
                       vol: NDArray[np.float64], out: NDArray[np.float64], M: float) -> float:
    """``sum_S max(LP(S) - sum_S (a - r_S), sum_S o)`` over the blocks ``S`` of ``block``
    (see :func:`volume_bound`)."""
    order = np.lexsort((vol, block))  # by block, then increasing volume (the greedy fill)
    b, v, av, ov = block[order], vol[order], a[order].astype(np.float64), out[order]
    first = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
    cum = np.cumsum(v)
    base = np.repeat(cum[first] - v[first], np.diff(np.r_[first, b.shape[0]]))
    hi = cum - base  # volume filled up to and including this request, within its block
    lo = hi - v

    def F(x: NDArray[np.float64]) -> NDArray[np.float64]:
        # integral over [0, x] of ceil(u / M) du
        q = np.floor(x / M)
        r = x - q * M
        return M * q * (q + 1) / 2 + r * (q + 1)

    comp = (F(hi) - F(lo)) / v
    lp = np.add.reduceat(comp, first)
    r = np.minimum.reduceat(av, first)
    pen = np.add.reduceat(av, first) - r * np.diff(np.r_[first, b.shape[0]])
    return float(np.maximum(lp - pen, np.add.reduceat(ov, first)).sum())


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
    instance.require_slotted()
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
    instance.require_slotted()
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


def combinatorial_bounds(instance: Instance) -> dict[str, float]:
    """Every bound of this module by name: ``trivial``, ``volume``, ``fluid``, ``core1`` and
    ``core2`` (:func:`core_bound` with ``q = 1, 2``).

    Examples
    --------
    >>> b = combinatorial_bounds(Instance(memory=10, arrival=[0, 0], prompt=[1, 1],
    ...                                   output=[4, 8]))
    >>> list(b), b["trivial"], b["core2"]
    (['trivial', 'volume', 'fluid', 'core1', 'core2'], 12.0, 8.0)
    """
    return {"trivial": trivial_bound(instance), "volume": volume_bound(instance),
            "fluid": fluid_bound(instance), "core1": core_bound(instance, 1),
            "core2": core_bound(instance, 2)}


def combinatorial_bound(instance: Instance) -> float:
    """Best of :func:`trivial_bound`, :func:`volume_bound`, :func:`fluid_bound` and
    :func:`core_bound` (``q = 1, 2``): the largest of :func:`combinatorial_bounds`.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[6, 6, 6], output=[4, 4, 4])
    >>> combinatorial_bound(inst)   # one request at a time: OPT = 4 + 8 + 12, met by core1
    24.0
    """
    return max(combinatorial_bounds(instance).values())


#: Deadline of :func:`leave_one_out_bounds` inside :func:`leave_one_out_deadline`.
_LOO_DEADLINE: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar(
    "leave_one_out_deadline", default=None)
#: Complete results of :func:`leave_one_out_bounds` by instance hash (the sizing, the
#: alternatives and the build all ask for the same instance's bounds).
_LOO_CACHE: dict[str, NDArray[np.float64]] = {}


@contextlib.contextmanager
def leave_one_out_deadline(deadline: Deadline | None) -> Iterator[None]:
    """Within the block, :func:`leave_one_out_bounds` stops at ``deadline``: the requests it
    has not reached get the closed form ``sum_{j != i} o_j`` (valid, weaker), so a size
    estimate built on them is an upper bound computed in bounded time.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[6, 6, 6], output=[4, 4, 4])
    >>> with leave_one_out_deadline(Deadline(0.0)):     # expired: closed form only
    ...     print(leave_one_out_bounds(inst).tolist())
    [8.0, 8.0, 8.0]
    >>> leave_one_out_bounds(inst).round(6).tolist()   # no deadline: fluid bounds
    [10.2, 10.2, 10.2]
    """
    token = _LOO_DEADLINE.set(deadline)
    try:
        yield
    finally:
        _LOO_DEADLINE.reset(token)


def leave_one_out_bounds(instance: Instance) -> NDArray[np.float64]:
    """For every ``i``, a lower bound on the TEL of the other ``n - 1`` requests.

    ``max(sum_{j != i} o_j, fluid bound of the instance without i)``; used to cap each
    request's latency by ``UB - LB(I minus i)`` when building start windows. ``n`` fluid
    runs (``O(n^2 log n)``: 14 s for 2000 requests), so a complete result is kept per
    instance, and inside :func:`leave_one_out_deadline` the loop stops at the deadline.

    Examples
    --------
    >>> leave_one_out_bounds(Instance(memory=10, arrival=[0, 0], prompt=[1, 1],
    ...                               output=[4, 8])).tolist()
    [8.0, 4.0]
    """
    n = instance.n
    rest_o = float(instance.output.sum()) - instance.output.astype(np.float64)
    if n == 1:
        return np.zeros(1)
    key = instance.sha256()
    if key in _LOO_CACHE:
        return _LOO_CACHE[key].copy()
    deadline = _LOO_DEADLINE.get()
    a = instance.arrival.astype(np.float64)
    w = volumes(instance) / float(instance.memory)
    out = rest_o.copy()
    idx = np.arange(n)
    for i in range(n):
        if deadline is not None and deadline.expired():
            return out  # partial: the rest keep the closed form
        keep = idx != i
        C = fluid_completions(a[keep], w[keep])
        out[i] = max(rest_o[i], float((C - a[keep]).sum()))
    if len(_LOO_CACHE) >= 8:
        _LOO_CACHE.pop(next(iter(_LOO_CACHE)))
    _LOO_CACHE[key] = out.copy()
    return out
