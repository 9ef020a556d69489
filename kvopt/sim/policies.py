"""Scheduling policies and their registry :data:`POLICIES`.

A policy is an object with ``reset(state)``, ``on_arrival(state, ids)``,
``on_complete(state, ids)`` and ``decide(state) -> Decision`` (see
:mod:`kvopt.sim.engine`); a plain function ``f(state) -> admit ids | Decision`` is wrapped
by :class:`FunctionPolicy`. Registry entries are factories
``factory(instance, predictions, **options) -> policy``.

Two families cover every policy of the seeds:

:class:`FutureMemoryPolicy` — admission by seed 001's future-memory check (eq. (5), the rule
of :mod:`kvopt.sim.admission`) over a scan order, stopping at the first failure:

========================  =============================  ==========================================
name                      lengths used in the check       order / extras
========================  =============================  ==========================================
``mcsf``                  point prediction (default o)    ascending prediction, ties (a, id)
``mc-benchmark``          true o (seed 001 Alg. 2)        arrival order (head-of-line blocking)
``hsf``                   true o                          ascending o (seed 000 H-SF)
``amax``                  interval upper bound u_i        ascending u, random ties (seed 000 Alg. 1)
``amin``                  lower bound, raised on evict    ascending lower bound, random ties;
                                                          on overflow evict smallest bound first
``amin-multi``            lower end of o's class          as ``amin`` (seed 000 Alg. 5)
``a-l``                   l, then u after promotion       FIFO; a job with l tokens and unfinished
                                                          is evicted and re-queued at the back
                                                          (l, u: options, else min pred_lower /
                                                          max pred_upper, else min/max of o)
``mcsf-margin``           noisy point prediction          as ``mcsf`` with capacity (1-alpha) M
========================  =============================  ==========================================

Running requests whose progress has passed their predicted length are projected to finish
at the next slot (their length ``max(pred, progress + 1)``, notes/seed-000 §6.3 and
seed-001 A5); with exact or over-predictions this never triggers, and the schedules equal
:func:`kvopt.sim.admission.mcsf_starts`. Predicted lengths are capped at
``M - s_i`` (A6); a request that does not pass the check on an empty system (possible
with a margin) is started alone, otherwise it would block the queue forever.

:class:`GreedyPolicy` — admission by *current* memory (next slot only), no look-ahead:

- ``fcfs`` (vLLM-like): arrival order while ``memory(t+1) + s_i + 1 <= M``; on overflow
  preempt the newest (latest-arrived) running request, repeatedly, and recompute it later.
- ``sjf``: the same with true output lengths as the order (shortest first); victims are the
  longest.
- ``alpha-protection`` (seed 001 Sec. 5.2): arrival order while the usage stays
  ``<= (1 - alpha) M``; on overflow all running requests are cleared (restart from the prompt).
- ``alpha-beta-clearing``: on overflow each running request is cleared independently with
  probability ``beta``; passes repeat until memory fits, each extra pass charges one more
  iteration of time to the next batch (A16).

Overflow is detected at the decision point before the slot that would exceed ``M`` (the
engine guarantees a call there); evicted requests keep their priority and may restart in the
same decision point.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.core.schedule import Schedule
from kvopt.core.slo import absolute_deadline
from kvopt.sim.admission import FutureProfile, earliest_fit, try_admit
from kvopt.sim.engine import Decision, LivelockError, SimState, WaitQueue
from kvopt.sim.gmax import GmaxPolicy
from kvopt.sim.predictions import Predictions, buckets

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
    """``rank[i]``: position of ``i`` in the order ``(arrival, id)``."""
    n = arrival.shape[0]
    idx = np.lexsort((np.arange(n), arrival))
    rank = np.empty(n, dtype=np.int64)
    rank[idx] = np.arange(n)
    return rank


def deadline_rank(instance: Instance) -> NDArray[np.int64]:
    """``rank[i]``: position of ``i`` in the order (absolute deadline, arrival, id); the
    deadline is :func:`kvopt.core.slo.absolute_deadline` (``inf`` without an SLO).

    Examples
    --------
    >>> inst = Instance(memory=9, arrival=[0, 0, 1], prompt=[0, 0, 0], output=[2, 2, 2],
    ...                 slo_kind=["deadline", "none", "deadline"], deadline=[9, None, 3])
    >>> deadline_rank(inst).tolist()
    [1, 2, 0]
    """
    n = instance.n
    due = (np.full(n, np.inf) if instance.slo is None
           else absolute_deadline(instance.slo, instance.arrival, instance.output))
    idx = np.lexsort((np.arange(n), instance.arrival, due))
    rank = np.empty(n, dtype=np.int64)
    rank[idx] = np.arange(n)
    return rank


def random_rank(n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """A uniformly random tie-break rank (one draw per request per run)."""
    rank = np.empty(n, dtype=np.int64)
    rank[rng.permutation(n)] = np.arange(n)
    return rank


def _clear_signature(st: SimState, ids: NDArray[np.int64]) -> tuple[int, int, int]:
    """State fingerprint of a clearing: completions so far, requests arrived so far and the
    cleared set. Two equal consecutive fingerprints mean a deterministic policy re-admitted
    the same work from the same state and will overflow again: a livelock."""
    srt = np.sort(ids)
    return (st.completions, int(st.arrived), hash(srt.tobytes()))


class Policy:
    """Base class: no-op hooks; subclasses implement :meth:`decide`."""

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


class FutureMemoryPolicy(Policy):
    """Admission by the future-memory check of seed 001 eq. (5); see the module docstring.

    Parameters
    ----------
    name
        Registry name (recorded in the schedule).
    pred
        Initial predicted length of every request (capped at ``M - s``).
    order
        ``"pred"`` (ascending current prediction), ``"arrival"`` or ``"fifo"`` (arrival, and
        re-queued requests go to the back).
    ties
        ``"arrival"`` (``(a, id)``), ``"random"`` (seeded permutation, drawn once per run and
        used for admission and eviction ties) or ``"redraw"`` (as ``"random"``, but eviction
        ties are redrawn uniformly at every decision: seed 000 Algorithm 2 read
        literally, "sort S_t by lower bound, ties uniformly at random").
    margin
        Check against ``floor((1 - margin) M)`` instead of ``M``.
    overrun
        ``"next-step"`` (default) or ``"finished"`` (literal eq. (5): a running request past
        its prediction is treated as finished).
    overflow
        What to do if real memory would exceed ``M`` at the next slot: ``"clear-all"``
        (seed 001 clearing event), ``"evict-smallest"`` (Amin: evict in ascending predicted
        length, random ties, until it fits) or ``"error"``.
    raise_on_evict
        Amin's update: an evicted request's prediction becomes ``max(pred, progress)``.
    promote
        ``(l, u)`` for A_l: a running request with prediction ``l`` that has generated ``l``
        tokens is evicted, gets prediction ``u`` and re-queues at the back.

    Examples
    --------
    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> pol = FutureMemoryPolicy("mcsf-literal", inst.output, overrun="finished")
    >>> simulate(inst, pol).metrics.total_latency
    12.0
    """

    def __init__(self, name: str, pred: NDArray[np.int64], *, order: str = "pred",
                 ties: str = "arrival", margin: float = 0.0, overrun: str = "next-step",
                 overflow: str = "clear-all", raise_on_evict: bool = False,
                 promote: tuple[int, int] | None = None, **extra: Any) -> None:
        if extra:
            raise TypeError(f"{name}: unknown option(s) {sorted(extra)}")
        if order not in ("pred", "arrival", "fifo"):
            raise UsageError("order", f"must be pred, arrival or fifo, got {order!r}")
        if ties not in ("arrival", "random", "redraw"):
            raise UsageError("ties", f"must be arrival, random or redraw, got {ties!r}")
        if overrun not in ("next-step", "finished"):
            raise UsageError("overrun", f"must be next-step or finished, got {overrun!r}")
        if overflow not in ("clear-all", "evict-smallest", "error"):
            raise UsageError("overflow", f"must be clear-all, evict-smallest or error, got "
                             f"{overflow!r}")
        margin = _number("margin", margin, 0.0, 1.0, hi_open=True)
        raise_on_evict = _flag("raise_on_evict", raise_on_evict)
        if promote is not None:
            if not (isinstance(promote, (tuple, list)) and len(promote) == 2):
                raise UsageError("promote", f"must be a pair (l, u), got {promote!r}")
            lo = _count("promote", promote[0])
            promote = (lo, _count("promote", promote[1], lo))
        self.name = name
        self.pred0 = np.asarray(pred, dtype=np.int64)
        self.order, self.ties, self.margin = order, ties, float(margin)
        self.overrun, self.overflow = overrun, overflow
        self.raise_on_evict, self.promote = raise_on_evict, promote
        self.options = {"order": order, "ties": ties, "margin": margin, "overrun": overrun,
                        "overflow": overflow, "raise_on_evict": raise_on_evict,
                        "promote": list(promote) if promote else None}

    # --------------------------------------------------------------- setup
    def reset(self, st: SimState) -> None:
        n = st.n
        self.cap = int(np.floor((1.0 - self.margin) * st.M + 1e-9))
        self.limit = st.M - st.s  # >= 1 for a valid instance
        self.q = np.clip(self.pred0, 1, self.limit)
        rank = random_rank(n, st.rng) if self.ties != "arrival" else arrival_rank(st.a)
        self.rank = rank
        self.queue = WaitQueue(rank)
        self.key = self.q.copy() if self.order == "pred" else np.zeros(n, dtype=np.int64)
        self.seq = 0
        self.pstart = np.full(n, -1, dtype=np.int64)
        self.H = int(self.q.max())
        self.profile = FutureProfile(4 * self.H + 64)
        self.last_clear: tuple[int, int, int] | None = None
        self.stats = {"clearings": 0, "promotions": 0}
        self.pend_min = 0

    def on_arrival(self, st: SimState, ids: NDArray[np.int64]) -> None:
        if self.order == "fifo":  # behind everything queued so far, re-queued ones included
            self.seq += 1
            self.key[ids] = self.seq
        self.queue.push(ids, self.key[ids])

    def on_complete(self, st: SimState, ids: NDArray[np.int64]) -> None:
        t, s, q, ps = st.t, st.s, self.q, self.pstart
        for i in ids.tolist():
            if ps[i] + q[i] > t:  # over-predicted: drop the rest of its predicted profile
                self.profile.remove(t, int(s[i]), int(ps[i]), int(q[i]))

    # ------------------------------------------------------------- decide
    def _requeue(self, st: SimState, ids: NDArray[np.int64], new_pred: NDArray[np.int64] | None,
                 back: bool) -> None:
        t, s = st.t, st.s
        for i in ids.tolist():
            self.profile.remove(t, int(s[i]), int(self.pstart[i]), int(self.q[i]))
        if new_pred is not None:
            self.q[ids] = np.clip(new_pred, 1, self.limit[ids])
            self.H = max(self.H, int(self.q[ids].max()))
        if self.order == "pred":
            self.key[ids] = self.q[ids]
        elif back:
            self.key[ids] = 1 + self.seq + np.arange(ids.shape[0])
            self.seq += int(ids.shape[0])
        self.queue.push(ids, self.key[ids])

    def decide(self, st: SimState) -> Decision:
        t, s, M = st.t, st.s, st.M
        if self.ties == "redraw":  # eviction ties redrawn at every decision (O(n) per call)
            self.rank = st.rng.permutation(st.n)
        run = st.running
        evicted: list[NDArray[np.int64]] = []
        wake: int | None = None
        if self.promote is not None and run.shape[0]:
            ell, u = self.promote
            pro = (self.q[run] == ell) & (self.q[run] < u) & (t - st.start[run] >= ell)
            if pro.any():
                ids = run[pro]
                self._requeue(st, ids, np.full(ids.shape[0], u, dtype=np.int64), back=True)
                evicted.append(ids)
                run = run[~pro]
                self.stats["promotions"] += int(ids.shape[0])
        if run.shape[0]:
            contrib = s[run] + (t + 1) - st.start[run]
            over = int(contrib.sum()) - M
            if over > 0 and self.overflow == "clear-all":
                sig = _clear_signature(st, run)
                if sig == self.last_clear:
                    raise LivelockError(f"{self.name}: cleared the same requests twice with no "
                                        f"completion or arrival in between (slot {t}); the "
                                        f"policy loops forever")
                self.last_clear = sig
                self.stats["clearings"] += 1
                self._requeue(st, run, None, back=False)
                evicted.append(run)
                run = _EMPTY
            elif over > 0 and self.overflow == "evict-smallest":
                o_key = self.q[run] * st.n + self.rank[run]
                idx = np.argsort(o_key, kind="stable")
                cum = np.cumsum(contrib[idx])
                k = int(np.searchsorted(cum, over, side="left")) + 1
                ids = run[idx[:k]]
                new = np.maximum(self.q[ids], t - st.start[ids]) if self.raise_on_evict else None
                self._requeue(st, ids, new, back=False)
                evicted.append(ids)
                keep = np.ones(run.shape[0], dtype=bool)
                keep[idx[:k]] = False
                run = run[keep]
        # admission: largest feasible prefix of the scan order (seed 001 eq. (6))
        admitted: list[int] = []
        queue = self.queue
        if len(queue):
            extra0 = 0
            # (pend_min: a lower bound on the predicted ends of the running requests, so
            # the vector check runs only when one of them may have outlived its prediction)
            if self.overrun == "next-step" and run.shape[0] and t >= self.pend_min:
                prog = t - st.start[run]
                lapsed = prog >= self.q[run]
                if lapsed.any():
                    extra0 = int((s[run[lapsed]] + prog[lapsed] + 1).sum())
                    self.pend_min = t  # re-check at every decision while some request lapses
                else:
                    self.pend_min = int((st.start[run] + self.q[run]).min())
            cap = self.cap
            base = self.profile.window(t, self.H)
            d = self.profile.d(self.H)
            q, pstart = self.q, self.pstart
            room = st.B - run.shape[0]  # batch-size limit
            while len(queue) and len(admitted) < room:
                i = queue.peek()
                qi = int(q[i])
                # a candidate larger than the checked capacity (1 - margin) M is admitted
                # alone on an empty system (it fits M since pred <= M - s), else it starves
                alone = not admitted and not run.shape[0]
                if not try_admit(base, d, int(s[i]), qi, cap, extra0, force=alone):
                    break
                queue.pop()
                pstart[i] = t
                if t + qi < self.pend_min:
                    self.pend_min = t + qi
                admitted.append(i)
            if len(queue):
                i = queue.peek()
                # search only up to the next completion: an event at which we decide anyway
                until = int(st.run_end.min()) if st.run_end.shape[0] else None
                wake = earliest_fit(self.profile, t, int(s[i]), int(q[i]), cap, until)
        if self.promote is not None:
            ell, u = self.promote
            allrun = np.concatenate([run, np.asarray(admitted, dtype=np.int64)])
            cand = allrun[(self.q[allrun] == ell) & (self.q[allrun] < u)]
            if cand.size:
                # the promotion slot of a running request is when it has generated l tokens
                starts = np.where(self.pstart[cand] >= 0, self.pstart[cand], t)
                w = int((starts + ell).min())
                wake = w if wake is None else min(wake, w)
        ev = np.concatenate(evicted) if evicted else None
        arrivals_matter = not (self.order != "pred" and len(queue))
        filt = None
        if arrivals_matter and len(queue):
            # only a newcomer sorting before the blocked head could be admitted earlier
            head_key = queue.peek_key()
            key = self.key
            filt = lambda ids: key[ids] <= head_key  # noqa: E731
        return Decision(evict=ev, admit=np.asarray(admitted, dtype=np.int64), wake=wake,
                        arrivals_matter=arrivals_matter, arrival_filter=filt)


class GreedyPolicy(Policy):
    """Admission by current memory (vLLM-like); see the module docstring.

    Parameters
    ----------
    name
        Registry name.
    order
        ``"arrival"`` (FCFS) or ``"length"`` (true output length, SJF).
    alpha
        Protection fraction: admit only while the usage stays ``<= (1 - alpha) M``.
    overflow
        ``"preempt"`` (evict lowest priority until it fits), ``"clear-all"`` or ``"beta"``.
    beta
        Clearing probability for ``overflow="beta"``.
    stall
        Charge one iteration of time per extra beta pass (default True).

    Examples
    --------
    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> inst = Instance(memory=10, arrival=[0, 1], prompt=[0, 0], output=[6, 6])
    >>> res = simulate(inst, GreedyPolicy("fcfs"))   # the later arrival is preempted once
    >>> res.metrics.evictions, res.metrics.total_latency
    (1, 16.0)
    """

    def __init__(self, name: str, *, order: str = "arrival", alpha: float = 0.0,
                 overflow: str = "preempt", beta: float = 0.1, stall: bool = True,
                 **extra: Any) -> None:
        if extra:
            raise TypeError(f"{name}: unknown option(s) {sorted(extra)}")
        if order not in ("arrival", "length", "deadline"):
            raise UsageError("order", f"must be arrival, length or deadline, got {order!r}")
        if overflow not in ("preempt", "clear-all", "beta"):
            raise UsageError("overflow", f"must be preempt, clear-all or beta, got {overflow!r}")
        alpha = _number("alpha", alpha, 0.0, 1.0, hi_open=True)
        beta = _number("beta", beta, 0.0, 1.0, lo_open=True)
        stall = _flag("stall", stall)
        self.name, self.order, self.alpha = name, order, float(alpha)
        self.overflow, self.beta, self.stall = overflow, float(beta), bool(stall)
        self.options = {"order": order, "alpha": alpha, "overflow": overflow, "beta": beta,
                        "stall": stall}

    def reset(self, st: SimState) -> None:
        self.rank = arrival_rank(st.a)
        self.queue = WaitQueue(self.rank)
        if self.order == "deadline":  # EDF: rank of the absolute deadline (ties: arrival, id)
            self.key = deadline_rank(st.instance)
        else:
            self.key = st.o.copy() if self.order == "length" else np.zeros(st.n, dtype=np.int64)
        self.threshold = int(np.floor((1.0 - self.alpha) * st.M + 1e-9))
        self.last_clear: tuple[int, int, int] | None = None
        self.stats = {"clearings": 0, "preemptions": 0, "passes": 0}

    def on_arrival(self, st: SimState, ids: NDArray[np.int64]) -> None:
        self.queue.push(ids, self.key[ids])

    def decide(self, st: SimState) -> Decision:
        t, s, M = st.t, st.s, st.M
        run = st.running
        ev = _EMPTY
        stall = 0
        used = st.next_memory()
        if used > M and run.shape[0]:
            contrib = s[run] + (t + 1) - st.start[run]
            if self.overflow == "preempt":
                prio = self.key[run] * st.n + self.rank[run]
                idx = np.argsort(-prio, kind="stable")  # lowest priority first
                cum = np.cumsum(contrib[idx])
                k = int(np.searchsorted(cum, used - M, side="left")) + 1
                ev = run[idx[:k]]
                used -= int(cum[k - 1])
                self.stats["preemptions"] += k
            elif self.overflow == "clear-all":
                sig = _clear_signature(st, run)
                if sig == self.last_clear:
                    raise LivelockError(f"{self.name}: cleared the same requests twice with no "
                                        f"completion or arrival in between (slot {t}); the "
                                        f"policy loops forever")
                self.last_clear = sig
                ev = run
                used = 0
                self.stats["clearings"] += 1
            else:  # independent beta passes (running set in id order for reproducibility)
                srt = np.argsort(run, kind="stable")
                live = run[srt]
                c = contrib[srt]
                gone = np.zeros(live.shape[0], dtype=bool)
                passes = 0
                while used > M:
                    hit = (st.rng.random(live.shape[0]) < self.beta) & ~gone
                    gone |= hit
                    used -= int(c[hit].sum())
                    passes += 1
                ev = live[gone]
                stall = passes - 1 if self.stall else 0
                self.stats["clearings"] += 1
                self.stats["passes"] += passes
            if ev.shape[0]:
                self.queue.push(ev, self.key[ev])
        admitted: list[int] = []
        queue = self.queue
        thr = self.threshold
        room = st.B - run.shape[0] + ev.shape[0]  # batch-size limit
        while len(queue) and len(admitted) < room:
            i = queue.peek()
            need = int(s[i]) + 1
            if used + need > thr and (admitted or used > 0):
                break  # (a request above the threshold still starts on an empty system)
            queue.pop()
            used += need
            admitted.append(i)
        arrivals_matter = not (self.order == "arrival" and len(queue))
        filt = None
        if arrivals_matter and len(queue):
            head_key = queue.peek_key()
            key = self.key
            filt = lambda ids: key[ids] <= head_key  # noqa: E731
        return Decision(evict=ev if ev.shape[0] else None,
                        admit=np.asarray(admitted, dtype=np.int64), stall=stall,
                        arrivals_matter=arrivals_matter, arrival_filter=filt)


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

    def reset(self, st: SimState) -> None:
        sc = self.sched
        if sc.run_request.size and int(sc.run_request.max()) >= st.n:
            raise ValueError("replay: schedule has more requests than the instance")
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


# ------------------------------------------------------------------------- registry
def _need(arr: NDArray[np.int64] | None, what: str, policy: str) -> NDArray[np.int64]:
    if arr is None:
        raise UsageError("predictions", f"{policy} needs {what} predictions, and the instance "
                         "has none (no pred_lower/pred_upper) and no prediction model was given")
    return np.asarray(arr, dtype=np.int64)


def _mcsf(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    pred = pr.point if pr.point is not None else inst.output
    return FutureMemoryPolicy("mcsf", pred, **kw)


def _mc_benchmark(inst: Instance, pr: Predictions, *, use_predictions: bool = False,
                  **kw: Any) -> Policy:
    use_predictions = _flag("use_predictions", use_predictions)
    pred = pr.point if (use_predictions and pr.point is not None) else inst.output
    return FutureMemoryPolicy("mc-benchmark", pred, order="arrival", **kw)


def _hsf(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    return FutureMemoryPolicy("hsf", inst.output, **kw)


def _amax(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    kw.setdefault("ties", "random")
    return FutureMemoryPolicy("amax", _need(pr.upper, "upper-bound", "amax"), **kw)


def _amin(inst: Instance, pr: Predictions, *, lower: int | None = None, **kw: Any) -> Policy:
    kw.setdefault("ties", "random")
    if lower is not None:
        pred = np.full(inst.n, _count("lower", lower), dtype=np.int64)
    elif pr.lower is not None:
        pred = pr.lower
    else:
        pred = np.ones(inst.n, dtype=np.int64)  # no bound known: l = 1 (seed 000 Exp. 1)
    return FutureMemoryPolicy("amin", pred, overflow="evict-smallest", raise_on_evict=True, **kw)


def _amin_multi(inst: Instance, pr: Predictions, *, width: int = 100, **kw: Any) -> Policy:
    kw.setdefault("ties", "random")
    lo, _ = buckets(inst.output, _count("width", width))
    return FutureMemoryPolicy("amin-multi", lo, overflow="evict-smallest", raise_on_evict=True,
                              **kw)


def _a_l(inst: Instance, pr: Predictions, *, ell: int | None = None, u: int | None = None,
         **kw: Any) -> Policy:
    if ell is not None:
        ell = _count("ell", ell)
    if u is not None:
        u = _count("u", u, 1 if ell is None else ell)
    if ell is None:
        ell = int(_need(pr.lower, "lower-bound", "a-l").min()) if pr.lower is not None else int(
            inst.output.min())
    if u is None:
        u = int(pr.upper.max()) if pr.upper is not None else int(inst.output.max())
    pred = np.full(inst.n, int(ell), dtype=np.int64)
    return FutureMemoryPolicy("a-l", pred, order="fifo", promote=(int(ell), int(u)),
                              overflow="evict-smallest", **kw)


def _mcsf_margin(inst: Instance, pr: Predictions, *, alpha: float = 0.1, **kw: Any) -> Policy:
    alpha = _number("alpha", alpha, 0.0, 1.0, hi_open=True)
    pred = pr.point if pr.point is not None else inst.output
    return FutureMemoryPolicy("mcsf-margin", pred, margin=alpha, **kw)


def _fcfs(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    return GreedyPolicy("fcfs", **kw)


def _sjf(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    return GreedyPolicy("sjf", order="length", **kw)


def _edf(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    return GreedyPolicy("edf", order="deadline", **kw)


def _gmax(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    median = pr.point if pr.point is not None else inst.output
    return GmaxPolicy("gmax", median, **kw)  # type: ignore[return-value]


def _alpha(inst: Instance, pr: Predictions, *, alpha: float = 0.25, **kw: Any) -> Policy:
    return GreedyPolicy("alpha-protection", alpha=alpha, overflow="clear-all", **kw)


def _alpha_beta(inst: Instance, pr: Predictions, *, alpha: float = 0.2, beta: float = 0.1,
                **kw: Any) -> Policy:
    return GreedyPolicy("alpha-beta-clearing", alpha=alpha, overflow="beta", beta=beta, **kw)


def _replay(inst: Instance, pr: Predictions, *, schedule: Schedule | None = None,
            **kw: Any) -> Policy:
    if schedule is None:
        raise UsageError("schedule", "replay needs the schedule to replay")
    if kw:
        raise TypeError(f"replay: unknown option(s) {sorted(kw)}")
    return ReplayPolicy(schedule)


#: Registry: name -> factory ``(instance, predictions, **options) -> policy``.
POLICIES: dict[str, Callable[..., Policy]] = {
    "mcsf": _mcsf,
    "mc-benchmark": _mc_benchmark,
    "hsf": _hsf,
    "amax": _amax,
    "amin": _amin,
    "amin-multi": _amin_multi,
    "a-l": _a_l,
    "mcsf-margin": _mcsf_margin,
    "fcfs": _fcfs,
    "sjf": _sjf,
    "edf": _edf,
    "gmax": _gmax,
    "alpha-protection": _alpha,
    "alpha-beta-clearing": _alpha_beta,
    "replay": _replay,
}


#: For each registry factory: the constructor its extra ``**options`` go to, and the keywords
#: of that constructor the factory sets itself (so they are not user options).
_FORWARDS: dict[str, tuple[Callable[..., Any] | None, tuple[str, ...]]] = {
    "mcsf": (FutureMemoryPolicy, ()),
    "mc-benchmark": (FutureMemoryPolicy, ("order",)),
    "hsf": (FutureMemoryPolicy, ()),
    "amax": (FutureMemoryPolicy, ()),
    "amin": (FutureMemoryPolicy, ("overflow", "raise_on_evict")),
    "amin-multi": (FutureMemoryPolicy, ("overflow", "raise_on_evict")),
    "a-l": (FutureMemoryPolicy, ("order", "promote", "overflow")),
    "mcsf-margin": (FutureMemoryPolicy, ("margin",)),
    "fcfs": (GreedyPolicy, ()),
    "sjf": (GreedyPolicy, ("order",)),
    "edf": (GreedyPolicy, ("order",)),
    "gmax": (GmaxPolicy, ()),
    "alpha-protection": (GreedyPolicy, ("alpha", "overflow")),
    "alpha-beta-clearing": (GreedyPolicy, ("alpha", "overflow", "beta")),
    "replay": (None, ()),
}


def _keywords(fn: Callable[..., Any]) -> tuple[dict[str, Any], bool]:
    """Keyword-only parameters of ``fn`` with defaults, and whether it takes ``**kwargs``."""
    params = inspect.signature(fn).parameters.values()
    kw = {p.name: p.default for p in params if p.kind is p.KEYWORD_ONLY}
    return kw, any(p.kind is p.VAR_KEYWORD for p in params)


def declare_policy_options(name: str, target: Callable[..., Policy],
                           fixed: tuple[str, ...] = ()) -> None:
    """Say where policy ``name``'s factory forwards its ``**options`` (``target``, a policy
    class or function) and which of ``target``'s keywords it sets itself, so that
    :func:`policy_options` (and the CLI's checks) see through the ``**kwargs``."""
    _FORWARDS[name] = (target, tuple(fixed))


def _target_keywords(target: Callable[..., Any]) -> dict[str, Any]:
    """Keyword-only parameters of ``target`` (a class: its ``__init__`` chain through
    ``**kwargs`` up the MRO)."""
    if not isinstance(target, type):
        return _keywords(target)[0]
    out: dict[str, Any] = {}
    for klass in target.__mro__:
        if "__init__" not in vars(klass) or klass is object:
            continue
        kw, var = _keywords(vars(klass)["__init__"])
        out = {**kw, **out}
        if not var:
            break
    return out


def policy_options(name: str) -> dict[str, Any] | None:
    """The options policy ``name`` accepts (``simulate(..., **options)``), with defaults.

    ``None`` for a policy registered with a factory taking ``**kwargs`` that kvopt cannot
    see through (every option is then passed on unchecked).

    Examples
    --------
    >>> sorted(policy_options("alpha-protection"))
    ['alpha', 'beta', 'order', 'stall']
    >>> policy_options("amin")["lower"] is None
    True
    """
    if name not in POLICIES:
        raise UsageError("policy", f"unknown policy {name!r}; choose from {sorted(POLICIES)}")
    factory = POLICIES[name]
    own, var = _keywords(factory)
    if not var:
        return own
    if name not in _FORWARDS or _FORWARDS[name][0] is None:
        return None if name not in _FORWARDS else own
    target, fixed = _FORWARDS[name]
    assert target is not None
    forwarded = _target_keywords(target)
    return {**{k: v for k, v in forwarded.items() if k not in fixed}, **own}


@dataclass(frozen=True)
class PolicyInfo:
    """What callers need to know about a policy before running it.

    Attributes
    ----------
    randomized
        Its schedule depends on the seed (random tie-breaks or random clearing), so a
        measurement averages over seeds.
    may_livelock
        It can loop forever on some instances (the engine then raises
        :class:`~kvopt.sim.engine.LivelockError`; seed 001 Sec. 5.2).
    needs
        Predictions it cannot run without: ``"interval-upper"`` (``pred_upper``), or ``None``.
    offline
        Uses hindsight knowledge of the true lengths (a benchmark, not an online policy).
    """

    randomized: bool = False
    may_livelock: bool = False
    needs: str | None = None
    offline: bool = False


#: Metadata of the registered policies (a name missing here has the defaults).
POLICY_INFO: dict[str, PolicyInfo] = {
    "hsf": PolicyInfo(offline=True),
    "mc-benchmark": PolicyInfo(),
    "amax": PolicyInfo(randomized=True, needs="interval-upper"),
    "amin": PolicyInfo(randomized=True),
    "amin-multi": PolicyInfo(randomized=True),
    "alpha-protection": PolicyInfo(may_livelock=True),
    "alpha-beta-clearing": PolicyInfo(randomized=True, may_livelock=True),
    "replay": PolicyInfo(offline=True),
}


def policy_info(name: str) -> PolicyInfo:
    """Metadata of policy ``name`` (:class:`PolicyInfo`).

    Examples
    --------
    >>> policy_info("amax").randomized, policy_info("alpha-protection").may_livelock
    (True, True)
    >>> policy_info("mcsf")
    PolicyInfo(randomized=False, may_livelock=False, needs=None, offline=False)
    """
    if name not in POLICIES:
        raise ValueError(f"unknown policy {name!r}; choose from {sorted(POLICIES)}")
    return POLICY_INFO.get(name, PolicyInfo())


def register_policy(name: str, factory: Callable[..., Policy],
                    info: PolicyInfo | None = None) -> None:
    """Add a policy factory ``(instance, predictions, **options) -> policy`` to the registry,
    with its metadata."""
    POLICIES[name] = factory
    if info is not None:
        POLICY_INFO[name] = info
