""":class:`FutureMemoryPolicy` — admission by seed 001's future-memory check (eq. (5), the rule
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

Overflow handling: :mod:`kvopt.sim.policies`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError, UsageTypeError
from kvopt.core.limits import check_allocation
from kvopt.sim.admission import FutureProfile, earliest_fit, try_admit
from kvopt.sim.engine import Decision, LivelockError, SimState, WaitQueue, evictions_to_cover
from kvopt.sim.policies.base import (
    _EMPTY,
    Policy,
    _choice,
    _clear_signature,
    _count,
    _flag,
    _number,
    arrival_rank,
    random_rank,
)

#: Scan order: ascending prediction (ties by ``ties``), arrival order, or FIFO with re-queueing.
ScanOrder = Literal["pred", "arrival", "fifo"]
#: Tie-break readings of :class:`FutureMemoryPolicy` (see its ``ties`` parameter).
TieBreak = Literal["arrival", "random", "per-sort", "redraw"]
TIES: tuple[TieBreak, ...] = get_args(TieBreak)
#: A running request past its predicted length: projected to finish next step, or at its end.
Overrun = Literal["next-step", "finished"]
#: On memory overflow: clear every running request, evict the smallest bound first, or raise.
FutureOverflow = Literal["clear-all", "evict-smallest", "error"]


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
        ``"arrival"`` (``(a, id)``); ``"random"`` (one seeded permutation drawn per run and
        used for every admission and eviction tie: the default of ``amin``/``amax``);
        ``"per-sort"`` (seed 000 Algorithm 2 read literally: "sort ... ties uniformly at
        random" at every sort, i.e. a fresh uniform permutation at every decision point for
        both the eviction order and the admission order; with unequal prompts a redraw
        happens only at the simulator's decision points, not at skipped slots); or
        ``"redraw"`` (an experiment: eviction ties redrawn at every decision, admission ties
        by the one per-run permutation). On Amin's two-point worst case ``"random"`` gives
        ~1.16, ``"per-sort"`` and ``"redraw"`` ~1.38 (Theorem 6: 1.375; issue 23).
    tie_order
        With ``ties="random"``: the per-run permutation itself (request ids, the first wins
        every tie) instead of a random draw, so an expectation over all tie orders can be
        computed exactly (:func:`kvopt.report.measure.tie_order_expectation`).
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

    def __init__(self, name: str, pred: NDArray[np.int64], *, order: ScanOrder = "pred",
                 ties: TieBreak = "arrival", margin: float = 0.0, overrun: Overrun = "next-step",
                 overflow: FutureOverflow = "clear-all", raise_on_evict: bool = False,
                 promote: tuple[int, int] | None = None,
                 tie_order: Sequence[int] | NDArray[np.int64] | None = None,
                 **extra: Any) -> None:
        if extra:
            raise UsageTypeError("options", f"{name}: unknown option(s) {sorted(extra)}")
        order = _choice("order", order, get_args(ScanOrder))
        ties = _choice("ties", ties, TIES)
        if tie_order is not None:
            if ties != "random":
                raise UsageError("tie_order", f"needs ties=random, got ties={ties}")
            order_arr = np.asarray(tie_order)
            if order_arr.ndim != 1 or order_arr.dtype.kind not in "iu" or not np.array_equal(
                    np.sort(order_arr), np.arange(order_arr.shape[0])):
                raise UsageError("tie_order", "must be a permutation of the request ids")
            tie_order = order_arr.astype(np.int64)
        overrun = _choice("overrun", overrun, get_args(Overrun))
        overflow = _choice("overflow", overflow, get_args(FutureOverflow))
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
        self.tie_order = tie_order
        self.options = {"order": order, "ties": ties, "margin": margin, "overrun": overrun,
                        "overflow": overflow, "raise_on_evict": raise_on_evict,
                        "promote": list(promote) if promote else None}
        if tie_order is not None:
            self.options["tie_order"] = tie_order.tolist()

    # --------------------------------------------------------------- setup
    def reset(self, st: SimState) -> None:
        n = st.n
        self.cap = int(np.floor((1.0 - self.margin) * st.M + 1e-9))
        self.limit = st.M - st.s  # >= 1 for a valid instance
        self.q = np.clip(self.pred0, 1, self.limit)
        if self.tie_order is not None:
            if self.tie_order.shape[0] != n:
                raise UsageError("tie_order", f"must be a permutation of 0..{n - 1}, got "
                                 f"{self.tie_order.shape[0]} ids")
            rank = np.empty(n, dtype=np.int64)
            rank[self.tie_order] = np.arange(n)
        else:
            rank = random_rank(n, st.rng) if self.ties != "arrival" else arrival_rank(st.a)
        self.rank = rank
        self.queue = WaitQueue(rank)
        self.key = self.q.copy() if self.order == "pred" else np.zeros(n, dtype=np.int64)
        self.seq = 0
        self.pstart = np.full(n, -1, dtype=np.int64)
        self.H = int(self.q.max())
        check_allocation(2 * 8 * 2 * (4 * self.H + 64), f"{self.name}'s predicted-memory "
                         f"window of {self.H:,} slots (the largest predicted output)",
                         "requests.output")
        self.profile = FutureProfile(4 * self.H + 64)
        self.last_clear: tuple[int, int, int, int] | None = None
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
        elif self.ties == "per-sort":  # every sort of Algorithm 2 draws its own tie order
            self.rank = random_rank(st.n, st.rng)
            waiting = self.queue.ids()
            self.queue = WaitQueue(self.rank)
            if waiting.shape[0]:
                self.queue.push(waiting, self.key[waiting])
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
                                        f"policy loops forever (--option overflow=evict-smallest"
                                        f" evicts the shortest-predicted requests until memory "
                                        f"fits instead of clearing them all)")
                self.last_clear = sig
                self.stats["clearings"] += 1
                self._requeue(st, run, None, back=False)
                evicted.append(run)
                run = _EMPTY
            elif over > 0 and self.overflow == "evict-smallest":
                o_key = self.q[run] * st.n + self.rank[run]
                idx = np.argsort(o_key, kind="stable")
                k, _ = evictions_to_cover(contrib[idx], over)
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
        extra0 = lapsed_n = 0
        if len(queue):
            # (pend_min: a lower bound on the predicted ends of the running requests, so
            # the vector check runs only when one of them may have outlived its prediction)
            if self.overrun == "next-step" and run.shape[0] and t >= self.pend_min:
                prog = t - st.start[run]
                lapsed = prog >= self.q[run]
                if lapsed.any():
                    extra0 = int((s[run[lapsed]] + prog[lapsed] + 1).sum())
                    lapsed_n = int(lapsed.sum())
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
                if self.ties in ("redraw", "per-sort"):  # the head may change at every decision
                    extra0 = lapsed_n = 0
                # the requests past their prediction keep running and growing until an event,
                # so they only delay the head's fit (without them the engine woke the policy
                # at every step while one of them ran)
                wake = earliest_fit(self.profile, t, int(s[i]), int(q[i]), cap, until,
                                    extra=extra0, extra_rate=lapsed_n)
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
