"""The policy base class, the wrappers (replay, plain function), scan orders and the option
checks the policies share (the policy protocol: :mod:`kvopt.sim.engine`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.deprecation import renamed_names
from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.core.schedule import Schedule
from kvopt.core.slo import due_time
from kvopt.sim.engine import Decision, SimState

_EMPTY = np.zeros(0, dtype=np.int64)


def _number(name: str, value: Any, lo: float, hi: float, *, lo_open: bool = False,
            hi_open: bool = False) -> float:
    """``value`` as a float in the interval ``lo .. hi``, else a :class:`UsageError` naming it.

    Examples
    --------
    >>> _number("alpha", 0.5, 0.0, 1.0, hi_open=True)
    0.5
    >>> _number("alpha", "x", 0.0, 1.0)
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid alpha: must be a number in [0, 1], got 'x'
    """
    span = f"{'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if ok:
        v = float(value)
        ok = (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
    if not ok:
        raise UsageError(name, f"must be a number in {span}, got {value!r}")
    return float(value)


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> Any:
    """``value`` if it is one of ``allowed`` (the arguments of a ``Literal`` type), else a
    :class:`UsageError` naming it.

    Examples
    --------
    >>> _choice("ties", "random", ("arrival", "random", "redraw"))
    'random'
    >>> _choice("ties", "coin", ("arrival", "random", "redraw"))
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid ties: must be arrival, random or redraw, got 'coin'
    """
    if value not in allowed:
        raise UsageError(name, f"must be {', '.join(allowed[:-1])} or {allowed[-1]}, "
                               f"got {value!r}")
    return value


def _flag(name: str, value: Any) -> bool:
    """``value`` as a bool (``True``/``False`` only), else a :class:`UsageError` naming it."""
    if not isinstance(value, (bool, np.bool_)):
        raise UsageError(name, f"must be true or false, got {value!r}")
    return bool(value)


def _count(name: str, value: Any, lo: int = 1) -> int:
    """``value`` as an integer ``>= lo``, else a :class:`UsageError` naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise UsageError(name, f"must be an integer >= {lo}, got {value!r}")
    return int(value)


def arrival_rank(arrival: NDArray[Any]) -> NDArray[np.int64]:
    """``rank[i]``: position of ``i`` in the order ``(arrival, id)``.

    Examples
    --------
    >>> arrival_rank(np.array([3, 0, 3, 1])).tolist()   # equal arrivals: lower id first
    [2, 0, 3, 1]
    """
    n = arrival.shape[0]
    idx = np.lexsort((np.arange(n), arrival))
    rank = np.empty(n, dtype=np.int64)
    rank[idx] = np.arange(n)
    return rank


def due_rank(instance: Instance) -> NDArray[np.int64]:
    """``rank[i]``: position of ``i`` in the order (due time, arrival, id), EDF's order; the
    due time is :func:`kvopt.core.slo.due_time` (``inf`` without an SLO).

    Examples
    --------
    >>> inst = Instance(memory=9, arrival=[0, 0, 1], prompt=[0, 0, 0], output=[2, 2, 2],
    ...                 slo_kind=["deadline", "none", "deadline"], deadline=[9, None, 3])
    >>> due_rank(inst).tolist()
    [1, 2, 0]
    """
    n = instance.n
    due = (np.full(n, np.inf) if instance.slo is None
           else due_time(instance.slo, instance.arrival, instance.output))
    idx = np.lexsort((np.arange(n), instance.arrival, due))
    rank = np.empty(n, dtype=np.int64)
    rank[idx] = np.arange(n)
    return rank


def random_rank(n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """A uniformly random tie-break rank (one draw per request per run).

    Examples
    --------
    >>> rank = random_rank(4, np.random.default_rng(0))
    >>> rank.tolist(), sorted(rank.tolist())   # a permutation of 0 .. n-1
    ([1, 2, 0, 3], [0, 1, 2, 3])
    """
    rank = np.empty(n, dtype=np.int64)
    rank[rng.permutation(n)] = np.arange(n)
    return rank


def _clear_signature(st: SimState, ids: NDArray[np.int64]) -> tuple[int, int, int, int]:
    """State fingerprint of a clearing: completions so far, requests arrived so far, the
    cleared set and (when evicted requests keep their tokens) the tokens they generated. Two
    equal consecutive fingerprints mean a deterministic policy re-admitted the same work from
    the same state and will overflow again: a livelock."""
    srt = np.sort(ids)
    kept = 0 if st.mode == "restart" else int((st.t - st.start[ids]).sum())
    return (st.completions, int(st.arrived), hash(srt.tobytes()), kept)


class Policy:
    """Base class: no-op hooks; subclasses implement :meth:`decide`.

    Examples
    --------
    A policy that runs one request at a time (asked again at the next event: a completion
    or an arrival):

    >>> from kvopt.sim import simulate
    >>> class Serial(Policy):
    ...     name = "serial"
    ...     def decide(self, st):
    ...         if st.running.size:
    ...             return Decision()
    ...         return Decision(admit=st.waiting_ids()[:1])
    >>> tight = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> r = simulate(tight, Serial())
    >>> r.schedule.source, r.schedule.final_start(tight).tolist(), r.metrics.total_latency
    ('sim:serial', [0, 3], 9.0)
    """

    name = "policy"
    options: dict[str, Any]

    def reset(self, st: SimState) -> None:
        """Called once before the first decision point."""

    def on_arrival(self, st: SimState, ids: NDArray[np.int64]) -> None:
        """Requests ``ids`` became visible at decision point ``st.t``."""

    def on_complete(self, st: SimState, ids: NDArray[np.int64]) -> None:
        """Requests ``ids`` completed at decision point ``st.t``."""

    def decide(self, st: SimState) -> Decision:  # pragma: no cover - abstract
        """Evictions and admissions at ``st.t``."""
        raise NotImplementedError


class ReplayPolicy(Policy):
    """Replays the runs of a :class:`Schedule` (e.g. a MIP optimum) through the engine.

    At decision point ``k`` it evicts the runs that end there without completing and starts
    the runs that start there. On unit steps the result is the same schedule; with another
    step-time model the decision points move in wall time, so on a timed instance a replayed
    start may precede its arrival (the validator then rejects the result).

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> from kvopt.sim import simulate
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> s = Schedule.from_starts(inst, [0, 4])
    >>> simulate(inst, "replay", schedule=s).schedule.same_runs(s)
    True
    """

    def __init__(self, schedule: Schedule, name: str = "replay") -> None:
        self.name = name
        self.sched = schedule
        self.options = {"source": schedule.source}
        # replayed in the schedule's own preemption mode and blocks (mixed batching)
        self.preemption = schedule.preemption
        self.serving = {"block_size": schedule.block_size}

    def reset(self, st: SimState) -> None:
        sc = self.sched
        if sc.run_request.size and int(sc.run_request.max()) >= st.n:
            raise UsageError("schedule", "replay: the schedule has more requests than the instance")
        order = np.argsort(sc.run_start, kind="stable")
        self.adm_slot = sc.run_start[order]
        self.adm_req = sc.run_request[order]
        ev = ~sc.run_completed
        ev_slot = (sc.run_start + sc.run_length)[ev]
        o2 = np.argsort(ev_slot, kind="stable")
        self.ev_slot = ev_slot[o2]
        self.ev_req = sc.run_request[ev][o2]

    def decide(self, st: SimState) -> Decision:
        t = st.t
        a0, a1 = np.searchsorted(self.adm_slot, [t, t + 1])
        e0, e1 = np.searchsorted(self.ev_slot, [t, t + 1])
        nxt = []
        if a1 < self.adm_slot.shape[0]:
            nxt.append(int(self.adm_slot[a1]))
        if e1 < self.ev_slot.shape[0]:
            nxt.append(int(self.ev_slot[e1]))
        return Decision(evict=self.ev_req[e0:e1] if e1 > e0 else None,
                        admit=self.adm_req[a0:a1], wake=min(nxt) if nxt else None,
                        arrivals_matter=False)


class FunctionPolicy(Policy):
    """Wraps ``f(state) -> admit ids | Decision``; asked at every slot while requests wait.

    Examples
    --------
    >>> def everyone(st):
    ...     return st.waiting_ids()
    >>> FunctionPolicy(everyone).name
    'everyone'
    """

    def __init__(self, func: Callable[[SimState], Any], name: str | None = None) -> None:
        self.func = func
        self.name: str = name or str(getattr(func, "__name__", "function"))
        self.options = {}

    def decide(self, st: SimState) -> Decision:
        r = self.func(st)
        dec = r if isinstance(r, Decision) else Decision(admit=np.asarray(r, dtype=np.int64))
        if dec.wake is None and st.is_waiting.any():
            dec.wake = st.t + 1
        return dec


#: Deprecated (one release): ``deadline_rank``, now :func:`due_rank`.
__getattr__ = renamed_names(__name__, {"deadline_rank": "due_rank"})
