"""The event-driven, vectorized continuous-batching engine.

Model (the foundation's convention, notes/seed-001 §1): decision point ``t`` happens at
wall time ``times[t]``; there the policy may evict running requests and start waiting ones;
then batch ``t+1`` runs (prefill of the requests started at ``t`` plus one decode token for
every other running request) from ``times[t]`` to ``times[t+1]``. A request started at ``k``
holds ``s + (tau - k)`` tokens at ``tau = k+1 .. k+o`` and completes at decision point
``k + o``. An evicted run of length ``L = t - k`` loses its progress (recompute preemption)
and the request waits again. The capacity ``M`` must hold at every slot: a policy that lets
the next slot overflow is an error (:class:`PolicyError`); policies that tolerate overflow
(vLLM-like FCFS, the alpha family, MC-SF under noisy predictions, Amin) evict when the engine
calls them at the last decision point before an overflow.

State is a struct of arrays (``start``, ``done``, ``is_waiting`` per request; the running set
as an index array with its memory as ``C + count * tau``). The loop visits only *events*:
arrivals, completions, the slot before an overflow, and a ``wake`` slot the policy asks for
(e.g. the first slot at which MC-SF's head-of-line candidate can fit). Between events the
batch composition is constant, so batch durations for the whole stretch are one vectorized
call of the step-time model and nothing per token runs in Python.
"""

from __future__ import annotations

import heapq
import time as _time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import KvoptError
from kvopt.core.instance import Instance
from kvopt.core.schedule import Schedule
from kvopt.sim.step_time import StepTimeModel, UnitStepTime

_EMPTY = np.zeros(0, dtype=np.int64)
_TIME_EPS = 1e-9


_AR = np.arange(1024, dtype=np.int64)


def _arange(k: int) -> NDArray[np.int64]:
    """``np.arange(k)`` from a cache."""
    global _AR
    if k > _AR.shape[0]:
        _AR = np.arange(2 * k, dtype=np.int64)
    return _AR[:k]


class SimulationError(KvoptError, RuntimeError):
    """The simulation cannot proceed (policy stalled, step budget exhausted, ...)."""


class PolicyError(SimulationError):
    """A policy's decision would exceed the memory ``M`` or is otherwise invalid."""


class LivelockError(SimulationError):
    """A clearing policy evicts the same work forever (no completion between clearings)."""


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
    """

    evict: NDArray[np.int64] | None = None
    admit: NDArray[np.int64] | None = None
    wake: int | None = None
    stall: int = 0
    arrivals_matter: bool = True
    arrival_filter: Any = None
    predictions: int = 0


class PolicyProtocol(Protocol):
    """What the engine needs from a policy (see :mod:`kvopt.sim.policies` for the built-ins;
    :class:`kvopt.sim.policies.Policy` is a base class with no-op hooks)."""

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
        Start of the current run (``-1`` if not running).
    done, is_waiting
        Per-request flags (``is_waiting``: arrived, not running, not done).
    running
        Ids of running requests (unordered index array).
    rng
        The run's ``numpy.random.Generator`` (seeded by ``simulate(seed=...)``).
    """

    def __init__(self, instance: Instance, rng: np.random.Generator,
                 max_batch: int | None = None) -> None:
        self.instance = instance
        self.n = instance.n
        self.M = int(instance.memory)
        self.B = self.n if max_batch is None else int(max_batch)
        self.s = instance.prompt
        self.o = instance.output
        self.a = instance.arrival
        self.start = np.full(self.n, -1, dtype=np.int64)
        self.done = np.zeros(self.n, dtype=bool)
        self.is_waiting = np.zeros(self.n, dtype=bool)
        self.running = _EMPTY
        self.run_end = _EMPTY  # true completion slot of each running request
        self.C = 0  # sum over running of (s_j - start_j)
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

    def next_memory(self) -> int:
        """Memory of the running set at slot ``t+1`` if nobody is evicted or started."""
        return self.C + int(self.running.shape[0]) * (self.t + 1)

    def waiting_ids(self) -> NDArray[np.int64]:
        """Waiting ids in arrival order (O(n); for simple function policies)."""
        ids = np.flatnonzero(self.is_waiting)
        return ids[np.lexsort((ids, self.a[ids]))]


@dataclass
class EngineResult:
    """Raw engine output (wrapped into :class:`kvopt.sim.SimResult`)."""

    schedule: Schedule
    decisions: int
    wall_seconds: float
    stats: dict[str, Any] = field(default_factory=dict)


class _Recorder:
    """Collects runs and time chunks."""

    def __init__(self) -> None:
        self.req: list[NDArray[np.int64]] = []
        self.start: list[NDArray[np.int64]] = []
        self.length: list[NDArray[np.int64]] = []
        self.completed: list[NDArray[np.bool_]] = []

    def add(self, ids: NDArray[np.int64], start: NDArray[np.int64], length: NDArray[np.int64],
            completed: bool) -> None:
        self.req.append(ids)
        self.start.append(start)
        self.length.append(length)
        self.completed.append(np.full(ids.shape[0], completed, dtype=bool))

    def arrays(self) -> tuple[NDArray[np.int64], ...]:
        if not self.req:
            return _EMPTY, _EMPTY, _EMPTY, np.zeros(0, dtype=bool)
        return (np.concatenate(self.req), np.concatenate(self.start),
                np.concatenate(self.length), np.concatenate(self.completed))


def run_engine(
    instance: Instance,
    policy: Any,
    step_time: StepTimeModel,
    rng: np.random.Generator,
    *,
    progress: bool = False,
    max_decisions: int | None = None,
    source: str = "sim",
    meta: dict[str, Any] | None = None,
    max_batch: int | None = None,
    prediction_cost: Any = None,
) -> EngineResult:
    """Run ``policy`` on ``instance``; see the module docstring for the model.

    Parameters
    ----------
    instance
        Slotted (``arrival`` = decision-point index) or timed (arrival in seconds).
    policy
        An object with ``reset(state)``, ``on_arrival(state, ids)``,
        ``on_complete(state, ids)`` and ``decide(state) -> Decision``.
    step_time
        Batch duration model.
    rng
        Random generator handed to the policy through the state.
    max_decisions
        Safety budget of decision points (default ``20 * (n + sum o) + 1000``).
    max_batch
        Batch-size limit ``B`` (default ``instance.max_batch``, unlimited if unset): a
        decision that leaves more than ``B`` requests running is a :class:`PolicyError`.
    prediction_cost
        Optional model with ``seconds(count)``: the latency of a batch of ``count``
        predictions (:class:`kvopt.predictions.PredictionCost`), added to the batch after a
        decision whose :attr:`Decision.predictions` is positive (in slots for ``unit``).

    Returns
    -------
    EngineResult
        The (unvalidated) schedule and counters.
    """
    t_wall = _time.perf_counter()
    if max_batch is None:
        max_batch = instance.max_batch
    st = SimState(instance, rng, max_batch)
    n, s, o, a, M = st.n, st.s, st.o, st.a, st.M
    slotted = instance.is_slotted
    unit = isinstance(step_time, UnitStepTime)
    fast_run = getattr(step_time, "decode_run", None)
    order = np.argsort(a, kind="stable")
    a_sorted = a[order]
    ptr = 0
    rec = _Recorder()
    times: list[NDArray[np.float64]] = []
    stalls = 0
    pred_batches, pred_items, pred_time = 0, 0, 0.0
    if slotted:
        st.t = int(a.min())
        t0 = st.t
        st.now = float(st.t) if unit else 0.0
        times.append(np.arange(t0 + 1, dtype=np.float64) if unit else np.zeros(t0 + 1))
    else:
        st.t = 0
        st.now = float(a.min())
        times.append(np.array([st.now]))
    budget = max_decisions if max_decisions is not None else 20 * (n + int(o.sum())) + 1000
    decisions = 0
    evictions = 0
    bar = None
    if progress:
        from kvopt.core.progress import Progress

        bar = Progress(n, f"simulate {source}", unit="req")
    policy.reset(st)
    next_end = -1  # earliest true completion among the running requests
    next_a = float(a_sorted[0])
    comp_ids: list[NDArray[np.int64]] = []
    flag = np.zeros(n, dtype=bool)
    first_batch = getattr(step_time, "first_batch", None)
    comp_start: list[NDArray[np.int64]] = []

    while True:
        t = st.t
        # 1. completions at t
        if t == next_end:  # (the running set has not changed since next_end was computed)
            fin = st.run_end == t
            ids = st.running[fin]
            comp_ids.append(ids)
            comp_start.append(st.start[ids])
            st.C -= int((s[ids] - st.start[ids]).sum())
            st.done[ids] = True
            st.start[ids] = -1
            keep = ~fin
            st.running = st.running[keep]
            st.run_end = st.run_end[keep]
            st.n_done += ids.shape[0]
            st.completions += ids.shape[0]
            policy.on_complete(st, ids)
            if bar is not None:
                bar.update(ids.shape[0])
        if st.n_done == n:
            break
        # 2. arrivals visible at t
        if ptr < n and next_a <= (t if slotted else st.now + _TIME_EPS):
            if slotted:
                j = int(np.searchsorted(a_sorted, t, side="right"))
            else:
                j = int(np.searchsorted(a_sorted, st.now + _TIME_EPS, side="right"))
            ids = order[ptr:j]
            ptr = j
            st.arrived = j
            next_a = float(a_sorted[ptr]) if ptr < n else np.inf
            st.is_waiting[ids] = True
            policy.on_arrival(st, ids)
        # 3. decide
        decisions += 1
        if decisions > budget:
            raise SimulationError(f"policy {source!r} exceeded {budget} decision points "
                                  f"({st.n_done}/{n} done); livelock?")
        dec = policy.decide(st)
        if dec.evict is not None and len(dec.evict):
            ev = np.asarray(dec.evict, dtype=np.int64)
            flag[ev] = True
            pos = flag[st.running]
            flag[ev] = False
            if int(pos.sum()) != ev.shape[0]:
                raise PolicyError(f"{source}: evicting requests that are not running")
            ev_start = st.start[ev]
            ln = t - ev_start
            rec.add(ev, ev_start, ln, False)
            st.C -= int((s[ev] - ev_start).sum())
            st.start[ev] = -1
            st.is_waiting[ev] = True
            keep = ~pos
            st.running = st.running[keep]
            st.run_end = st.run_end[keep]
            evictions += ev.shape[0]
        adm = _EMPTY
        if dec.admit is not None and len(dec.admit):
            adm = np.asarray(dec.admit, dtype=np.int64)
            if not st.is_waiting[adm].all():
                bad = adm[~st.is_waiting[adm]][0]
                raise PolicyError(f"{source}: request {bad} admitted but not waiting")
            st.is_waiting[adm] = False
            st.start[adm] = t
            st.running = np.concatenate([st.running, adm])
            st.run_end = np.concatenate([st.run_end, t + o[adm]])
            st.C += int(s[adm].sum()) - t * adm.shape[0]
        stalls += dec.stall
        extra = 0.0
        if dec.predictions:
            pred_batches += 1
            pred_items += int(dec.predictions)
            if prediction_cost is not None:
                extra = float(prediction_cost.seconds(int(dec.predictions)))
                pred_time += extra
        cnt = int(st.running.shape[0])
        nxt = st.C + cnt * (t + 1)
        if nxt > M:
            raise PolicyError(f"{source}: memory {nxt} > M = {M} at slot {t + 1}")
        if cnt > st.B:
            raise PolicyError(f"{source}: {cnt} requests running > max_batch = {st.B} "
                              f"at slot {t + 1}")
        # 4. next decision point
        cands = []
        if cnt:
            next_end = int(st.run_end.min())
            cands.append(next_end)
            # first tau > t with C + cnt*tau > M; decide one slot before it
            cands.append((M - st.C) // cnt)
        else:
            next_end = -1
        if dec.wake is not None:
            cands.append(max(int(dec.wake), t + 1))
        next_arr: float | None = next_a if ptr < n else None
        if slotted and next_arr is not None and dec.arrivals_matter:
            if dec.arrival_filter is None or not cands:
                cands.append(int(next_arr))
            else:  # first relevant arrival before the other events
                j_end = int(np.searchsorted(a_sorted, min(cands), side="right"))
                if j_end > ptr:
                    rel = dec.arrival_filter(order[ptr:j_end])
                    if rel.any():
                        cands.append(int(a_sorted[ptr + int(np.argmax(rel))]))
        if not cands:
            if next_arr is None:
                raise SimulationError(f"policy {source!r} stalled with {int(st.is_waiting.sum())} "
                                      f"waiting requests and nothing running")
            # idle until the next arrival
            if slotted:
                cands.append(int(next_arr))
            else:
                st.t = t + 1
                st.now = max(st.now, next_arr)
                times.append(np.array([st.now]))
                continue
        t_ev = max(min(cands), t + 1)
        L = t_ev - t
        # batch statistics of slots t+1 .. t_ev (composition constant after slot t+1)
        if unit and not dec.stall and not extra:
            dur = None
        elif unit:
            dur = np.ones(L, dtype=np.float64)
        else:
            n_new = adm.shape[0]
            if n_new:
                sa = s[adm]
                P = int(sa.sum())
                Psq = float(np.dot(sa, sa))
            else:
                P, Psq = 0, 0.0
            # slot t+1: prefill of the newly started, one decode for the others, which read
            # sum_old (s + t - start) KV tokens; slots t+1+j (j >= 1): cnt decodes reading
            # sum_running (s + t + j - start) = C + cnt (t + j)
            d_old = cnt - n_new
            if first_batch is not None:
                first = np.array([first_batch(P, d_old, st.C + cnt * t - P, Psq)])
            else:
                first = step_time.durations(np.array([P + d_old]), np.array([d_old]),
                                            np.array([st.C + cnt * t - P]), np.array([P]),
                                            np.array([Psq]))
            if L > 1:
                kv0 = st.C + cnt * (t + 1)
                if fast_run is not None:
                    rest = fast_run(cnt, kv0, L - 1)
                else:
                    kv = kv0 + cnt * _arange(L - 1)
                    rest = step_time.durations(np.full(L - 1, cnt), np.full(L - 1, cnt), kv,
                                               np.zeros(L - 1, dtype=np.int64),
                                               np.zeros(L - 1))
                dur = np.concatenate([first, rest])
            else:
                dur = np.asarray(first, dtype=np.float64).reshape(1)
        if dur is None:
            tt = st.now + (_arange(L) + 1).astype(np.float64)
        else:
            if dec.stall:
                dur[0] *= 1 + dec.stall
            if extra:
                dur[0] += extra
            tt = st.now + np.cumsum(dur)
        if not slotted and next_arr is not None and dec.arrivals_matter:
            x = next_arr
            if dec.arrival_filter is not None and x <= tt[-1] + _TIME_EPS:
                j_end = int(np.searchsorted(a_sorted, tt[-1] + _TIME_EPS, side="right"))
                rel = dec.arrival_filter(order[ptr:j_end])
                x = float(a_sorted[ptr + int(np.argmax(rel))]) if rel.any() else np.inf
            k = int(np.searchsorted(tt, x - _TIME_EPS, side="left"))
            if k < L:
                L = k + 1
                tt = tt[:L]
                t_ev = t + L
        times.append(tt)
        st.t = t_ev
        st.now = float(tt[-1])
    if bar is not None:
        bar.close()
    if comp_ids:
        ci = np.concatenate(comp_ids)
        rec.add(ci, np.concatenate(comp_start), o[ci], True)
    req, rs, rl, rc = rec.arrays()
    all_times = np.concatenate(times)
    keep_times = not (slotted and unit and stalls == 0 and pred_time == 0)
    sched = Schedule(
        run_request=req, run_start=rs, run_length=rl, run_completed=rc.astype(bool),
        instance_sha256=instance.sha256(), source=source,
        times=all_times if keep_times else None, meta=dict(meta or {}),
    )
    return EngineResult(sched, decisions, _time.perf_counter() - t_wall,
                        {"decisions": decisions, "evictions": evictions, "stalls": stalls,
                         "slots": int(all_times.shape[0] - 1), "prediction_batches": pred_batches,
                         "predictions": pred_items, "prediction_seconds": pred_time})
