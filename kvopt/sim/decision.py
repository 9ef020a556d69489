"""What policies and the engine exchange: :class:`Decision`, the :class:`WaitQueue` heap
policies keep their waiting requests in, the eviction step they share
(:func:`evictions_to_cover`) and the simulation errors. Re-exported by
:mod:`kvopt.sim.engine` (with the policy protocol)."""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import KvoptError


class SimulationError(KvoptError, RuntimeError):
    """The simulation cannot proceed (policy stalled, step budget exhausted, ...).

    Examples
    --------
    >>> try:
    ...     evictions_to_cover(np.array([3, 4]), 9)   # every victim frees 7 tokens, not 9
    ... except SimulationError as exc:
    ...     print(exc)
    eviction: 7 tokens from all victims cannot cover an excess of 9
    >>> issubclass(PolicyError, SimulationError), issubclass(LivelockError, SimulationError)
    (True, True)
    """


class PolicyError(SimulationError):
    """A policy's decision would exceed the memory ``M`` or is otherwise invalid.

    Examples
    --------
    A policy that admits every waiting request, whatever the memory:

    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> tight = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> try:
    ...     simulate(tight, lambda st: st.waiting_ids())
    ... except PolicyError as exc:
    ...     print(exc)
    sim:<lambda>: memory 8 > M = 6 at slot 3
    """


class LivelockError(SimulationError):
    """A clearing policy evicts the same work forever (no completion between clearings).

    Examples
    --------
    Without protection (``alpha=0``) both requests are admitted, overflow, are cleared and
    are admitted again:

    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> tight = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> try:
    ...     simulate(tight, "alpha-protection", alpha=0.0)
    ... except LivelockError as exc:
    ...     print(exc)
    alpha-protection: cleared the same requests twice with no completion or arrival in \
between (slot 4); the policy loops forever
    """


@dataclass
class Decision:
    """What a policy does at one decision point.

    Attributes
    ----------
    evict
        Running request ids to evict (applied first; they restart from scratch).
    admit
        Waiting request ids to start now (after the evictions).
    wake
        Earliest later decision point at which the policy wants to be asked again even if
        no event (arrival, completion, imminent overflow) happens; ``None`` = only on events.
    stall
        Extra iterations of wall time charged to the next batch (beta-clearing passes).
    arrivals_matter
        If False the engine need not stop at arrivals until the next other event (the
        policy knows that no newcomer can be admitted before then).
    arrival_filter
        Optional ``f(ids) -> bool mask``: only arrivals with a True mask can change the
        decision before the next other event (e.g. MC-SF: only requests that would sort
        before the blocked head of the queue). Others are delivered at the next event.
    predictions
        Number of length predictions the policy made at this decision point (one batch);
        with ``run_engine(prediction_cost=...)`` their latency is added to the next batch.
    predictions_ahead
        Only when :attr:`SimState.predictions_free`: the predictions the policy makes at each
        step ``t+1, t+2, ...`` before ``wake`` at which it would decide nothing; the engine
        counts those of the steps it skips.

    Examples
    --------
    A function policy that runs one request at a time:

    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> def one_at_a_time(st):
    ...     if st.running.size:
    ...         return Decision()          # nothing to do (asked again next slot)
    ...     return Decision(admit=st.waiting_ids()[:1])
    >>> tight = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> r = simulate(tight, one_at_a_time)
    >>> r.schedule.final_start(tight).tolist(), r.metrics.total_latency
    ([0, 3], 9.0)
    """

    evict: NDArray[np.int64] | None = None
    admit: NDArray[np.int64] | None = None
    wake: int | None = None
    stall: int = 0
    arrivals_matter: bool = True
    arrival_filter: Any = None
    predictions: int = 0
    predictions_ahead: Any = None


class WaitQueue:
    """Priority queue of waiting request ids (a heap of Python ints, no per-request objects).

    Priority of request ``i`` is ``key * n + rank[i]`` where ``rank`` is a permutation
    (tie-break order, e.g. by ``(arrival, id)``), so the head is the smallest ``key`` with
    ties by rank and the id is recovered as ``inv[prio % n]``.

    Examples
    --------
    >>> q = WaitQueue(rank=np.array([0, 1, 2]))
    >>> q.push(np.array([2, 0, 1]), np.array([5, 7, 5]))
    >>> [q.pop() for _ in range(3)]
    [1, 2, 0]
    """

    def __init__(self, rank: NDArray[np.int64]) -> None:
        self.n = int(rank.shape[0])
        self.rank = np.asarray(rank, dtype=np.int64)
        self.inv = np.empty(self.n, dtype=np.int64)
        self.inv[self.rank] = np.arange(self.n)
        self.heap: list[int] = []

    def __len__(self) -> int:
        return len(self.heap)

    def push(self, ids: NDArray[np.int64], keys: NDArray[np.int64]) -> None:
        """Add ``ids`` with integer ``keys``."""
        prios = (np.asarray(keys, dtype=np.int64) * self.n + self.rank[ids]).tolist()
        if len(prios) > 8 and len(prios) > len(self.heap):
            self.heap.extend(prios)
            heapq.heapify(self.heap)
        else:
            for p in prios:
                heapq.heappush(self.heap, p)

    def push_one(self, i: int, key: int) -> None:
        """Add one id."""
        heapq.heappush(self.heap, key * self.n + int(self.rank[i]))

    def peek(self) -> int:
        """Id of the head (queue must be non-empty)."""
        return int(self.inv[self.heap[0] % self.n])

    def peek_key(self) -> int:
        """Key of the head."""
        return self.heap[0] // self.n

    def pop(self) -> int:
        """Remove and return the head id."""
        return int(self.inv[heapq.heappop(self.heap) % self.n])

    def ids(self) -> NDArray[np.int64]:
        """All queued ids in priority order (O(q log q); diagnostics only)."""
        return self.inv[np.array(sorted(self.heap), dtype=np.int64) % self.n]


def evictions_to_cover(freed: NDArray[np.int64], excess: int) -> tuple[int, int]:
    """The eviction step of every policy that evicts in a fixed order until the memory fits:
    with ``freed[j]`` the memory the ``j``-th victim in that order gives back, the smallest
    ``k`` with ``freed[:k].sum() >= excess`` and that sum.

    ``excess > 0`` must be coverable (``freed.sum() >= excess``): the victims are taken from
    the requests whose memory makes the excess.

    Examples
    --------
    >>> evictions_to_cover(np.array([3, 4, 5]), 5)
    (2, 7)
    >>> evictions_to_cover(np.array([3, 4, 5]), 3)
    (1, 3)
    """
    cum = np.cumsum(freed)
    k = int(np.searchsorted(cum, excess, side="left")) + 1
    if k > cum.shape[0]:
        raise SimulationError(f"eviction: {int(cum[-1]) if cum.shape[0] else 0} tokens from "
                              f"all victims cannot cover an excess of {excess}")
    return k, int(cum[k - 1])
