"""What a policy sees and implements: the engine's state and the policy protocol.

:class:`SimState` is the struct-of-arrays state of one run of the engine
(:func:`kvopt.sim.engine.run_engine`), read-only for policies; :class:`PolicyProtocol` is
what the engine calls on a policy. Both are re-exported by :mod:`kvopt.sim.engine`.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance
from kvopt.sim.decision import Decision
from kvopt.sim.serving import EngineConfig

__all__ = ["PolicyProtocol", "SimState"]

_EMPTY = np.zeros(0, dtype=np.int64)


class PolicyProtocol(Protocol):
    """What the engine needs from a policy (see :mod:`kvopt.sim.policies` for the built-ins;
    :class:`kvopt.sim.policies.Policy` is a base class with no-op hooks).

    Examples
    --------
    A sketch of a policy: start waiting requests in arrival order while they fit the next
    slot (it never evicts, so on a harder instance the engine would stop it with a
    :class:`~kvopt.sim.decision.PolicyError` at an overflow; the built-ins handle that):

    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> from kvopt.sim.decision import Decision
    >>> class Greedy:
    ...     name = "greedy-example"
    ...     def reset(self, state): pass
    ...     def on_arrival(self, state, ids): pass
    ...     def on_complete(self, state, ids): pass
    ...     def decide(self, state):
    ...         free, admit = state.M - state.next_memory(), []
    ...         for i in state.waiting_ids().tolist():
    ...             if state.s[i] + 1 <= free:
    ...                 admit.append(i)
    ...                 free -= state.s[i] + 1
    ...         return Decision(admit=admit)
    >>> inst = Instance(memory=8, arrival=[0, 0, 1], prompt=[1, 2, 1], output=[2, 3, 2])
    >>> simulate(inst, Greedy()).metrics.total_latency
    8.0
    """

    name: str

    def reset(self, state: SimState) -> None:
        """Called once before the first decision point."""

    def on_arrival(self, state: SimState, ids: NDArray[np.int64]) -> None:
        """Requests ``ids`` became visible (delivered at the next decision point visited)."""

    def on_complete(self, state: SimState, ids: NDArray[np.int64]) -> None:
        """Requests ``ids`` completed at ``state.t``."""

    def decide(self, state: SimState) -> Decision:
        """Evictions, admissions and the next wake-up at ``state.t``."""
        ...


class SimState:
    """Struct-of-arrays state visible to policies (read-only for them).

    Attributes
    ----------
    t, now
        Current decision point and its wall time.
    s, o, a, M, n
        Prompt sizes, true output lengths, arrivals, capacity, count.
    B
        Batch-size limit (most concurrent running requests; ``n`` when unlimited).
    start
        *Effective* start of the current run (``-1`` if not running): a running request holds
        ``s + (tau - start)`` tokens at slot ``tau`` and has generated ``t - start`` tokens
        (in recompute/swap mode counting the tokens it resumed from; paused slots shift it).
    done, is_waiting
        Per-request flags (``is_waiting``: arrived, not running, not done).
    running
        Ids of running requests (unordered index array; in chunked mode without the requests
        still prefilling, see ``prefilling``).
    kept
        Tokens a waiting request resumes from (``recompute``/``swap``; always 0 with
        ``restart``): started at ``t``, it needs ``s + kept + 1`` tokens at ``t + 1``.
    swapped
        Waiting requests whose KV is in host memory (``swap`` mode).
    config
        The :class:`~kvopt.sim.serving.EngineConfig` (``mode`` is its preemption mode).
    prefilling, pre_left
        Chunked prefill: admitted requests whose prompt is still being processed, in admission
        order, and the prefill tokens each has left; they hold ``s + kept`` tokens (``Cp`` in
        total, in blocks).
    rng
        The run's ``numpy.random.Generator`` (seeded by ``simulate(seed=...)``).
    predictions_free
        Set by the engine: length predictions cost no time in this run, so a policy may sleep
        through steps whose predictions only need counting (:attr:`Decision.predictions_ahead`).

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 2], output=[4, 3])
    >>> state = SimState(inst, np.random.default_rng(0))
    >>> state.n, state.M, state.running.tolist(), state.next_memory()
    (2, 10, [], 0)
    """

    def __init__(self, instance: Instance, rng: np.random.Generator,
                 max_batch: int | None = None, config: EngineConfig | None = None) -> None:
        self.instance = instance
        self.n = instance.n
        self.M = int(instance.memory)
        self.B = self.n if max_batch is None else int(max_batch)
        self.s = instance.prompt
        self.o = instance.output
        self.a = instance.arrival
        self.config = config or EngineConfig()
        self.mode = self.config.preemption
        self.block = self.config.block_size
        self.start = np.full(self.n, -1, dtype=np.int64)
        self.done = np.zeros(self.n, dtype=bool)
        self.is_waiting = np.zeros(self.n, dtype=bool)
        self.kept = np.zeros(self.n, dtype=np.int64)
        self.predictions_free = False
        self.swapped = np.zeros(self.n, dtype=bool)
        self.running = _EMPTY
        self.run_end = _EMPTY  # true completion slot of each running request
        self.C = 0  # sum over running of (s_j - start_j)
        self.prefilling = _EMPTY
        self.pre_left = np.zeros(self.n, dtype=np.int64)
        self.Cp = 0
        self.host_used = 0
        self.t = 0
        self.now = 0.0
        self.rng = rng
        self.n_done = 0
        self.completions = 0
        self.arrived = 0  # requests visible so far

    def progress(self, ids: NDArray[np.int64] | None = None) -> NDArray[np.int64]:
        """Tokens generated so far by running requests ``ids`` (default: all running)."""
        ids = self.running if ids is None else ids
        return self.t - self.start[ids]

    def kept_if_evicted(self, ids: NDArray[np.int64]) -> dict[int, int]:
        """Tokens running requests ``ids`` would resume from if evicted now (empty with
        ``restart``): a policy that evicts and re-admits at the same decision point needs
        ``s + kept + 1`` for them, before the engine updates :attr:`kept`."""
        if self.mode == "restart" or not ids.shape[0]:
            return {}
        return dict(zip(ids.tolist(), (self.t - self.start[ids]).tolist(), strict=True))

    def next_memory(self) -> int:
        """Memory of the running set at slot ``t+1`` if nobody is evicted or started
        (token-exact; plus the prefilling requests' reservations)."""
        return self.C + int(self.running.shape[0]) * (self.t + 1) + self.Cp

    def waiting_ids(self) -> NDArray[np.int64]:
        """Waiting ids in arrival order (O(n); for simple function policies)."""
        ids = np.flatnonzero(self.is_waiting)
        return ids[np.lexsort((ids, self.a[ids]))]
