"""Prediction-aware policies: TRAIL (seed 004), TIE (seed 002), SPRPT/SRPT/SPJF and SSJF.

Both families admit under the same memory convention as the vLLM-like policies of
:mod:`kvopt.sim.policies`: a request started at decision point ``t`` needs ``s_i + 1`` tokens
at slot ``t + 1``, a running one ``s_i + (t + 1 - start_i)``; the total must stay ``<= M``.
What an evicted request keeps is the engine's preemption mode (``simulate(...,
preemption=...)``, default ``"restart"``): with ``"restart"`` it loses its progress; with
``"recompute"`` or ``"swap"`` it keeps its generated tokens and, started again, needs
``s_i + kept_i + 1`` tokens (``SimState.kept``), and ``t - start_i`` counts every token it
generated.

:class:`RankPolicy` (TRAIL family)
    All requests, running and waiting, are ranked by *predicted remaining length* (lower
    first; ties: running before waiting, then arrival). Running request ``i`` with age
    ``a`` (tokens generated in its current run) is **not preemptable** once
    ``a >= floor(C r_i)``, ``r_i`` its initial prediction (TRAIL's ``floor(C r)``
    preemptible iterations, notes/seed-004-002 §1.4). At every decision: (1) if the running
    requests, in rank order, overflow ``M`` at the next slot, the worst-ranked ones are
    evicted (the paper's rank is ``-inf`` for a locked request, so every preemptable running
    request goes before any locked one; among locked ones, and on equal ranks, the latest
    started goes; they re-queue and may restart at once); (2) non-preemptable
    requests keep their memory; (3) the preemptable running requests and the waiting queue
    are walked in rank order with the rest of ``M``: a running request is kept if it fits
    and preempted otherwise, a waiting one is started if it fits, and the first waiting one
    that does not fit blocks all later waiting ones (strict priority, as MC-SF's scan). So a
    running request is preempted only for better-ranked requests that are started. Ranks:

    - static (``refine=False``): ``r_i - a`` with ``r_i`` a point prediction (SPRPT's rank;
      with ``r = o`` it is SRPT's true remaining length);
    - refined (``refine=True``): the :class:`~kvopt.predictions.RefinedPredictor`'s current
      prediction of the remaining length (re-predicted every ``every`` tokens; the policy
      wakes at every refresh and declares the predictions made, for the prediction cost).

    The age in the limit is the current run's (``age="run"``, the paper's model) or the
    *attained* service including the tokens of runs lost to preemption (``age="attained"``,
    the default of ``trail`` with refined ranks): noisy refined ranks can otherwise make two
    requests preempt each other forever (each restart loses the run, so ``age`` never reaches
    ``C r``; observed on small instances), while with attained service a request is
    preempted at most ``floor(C r)`` times; a vLLM request keeps its generated tokens anyway.
    In that mode overflow evicts preemptable requests (worst rank first) before locked ones,
    and locked ones latest-started first, so the oldest locked run always finishes.

    A preempted request waits with its initial rank ``r_i`` under ``restart`` (it lost its
    run) and, under ``recompute`` and ``swap``, with its predicted remaining length at the
    moment it was preempted (``r_i - a`` or the refined prediction: it keeps its tokens, as
    a vLLM request keeps its latest prediction). Queuing it with ``r_i`` instead made it
    wait behind every newcomer it had outranked and, once resumed, preempt them again:
    TRAIL ``C = 0.8`` on the Azure trace (1500 requests) made 18063 evictions under
    ``recompute`` with the initial rank and 2033 with the remaining one.

    ``C >= 1`` equals ``C = inf`` (plain SPRPT) for static ranks as long as no running
    request is evicted for memory: once ``a >= r`` the rank ``r - a <= 0`` is below every
    newcomer's ``r >= 1``, so SPRPT never preempts it either (the digest's sample-path
    argument, §1.5). With overflow evictions ``C = 1`` still equals SPRPT (a locked run's
    ``r - a < 1`` is below every preemptable one's), ``C > 1`` need not: the paper's rank
    (``-inf`` once locked) keeps a locked run that SPRPT evicts (tested). ``C = 0`` never
    preempts a started request: SPJF. Registered: ``trail`` (refined, ``C = 0.8``),
    ``sprpt`` (static point predictions, ``C = inf``), ``srpt`` (true lengths,
    ``C = inf``), ``spjf`` (static, ``C = 0``).

:class:`KeyGreedyPolicy` (TIE family; vLLM-like, no preemption except on overflow)
    A min-priority queue of waiting requests admitted in key order while the next slot's
    memory fits (as ``fcfs``/``sjf``); on overflow the lowest-priority running requests are
    preempted. ``ssjf`` keys by a point prediction. ``tie`` keys by
    ``Score = E[X~] + beta CVaR_alpha[X~]`` of the predicted log-t (``X~ = min(X,
    max_tokens)``), computed once at arrival with the adaptive
    ``beta = min(0.5, max(0.1, 0.1 L_q / B))`` frozen at that moment (``L_q`` = waiting
    queue length, ``B`` = ``batch_size``), and the waiting decay
    ``Score' = Score gamma^{t_w / tau}``. Since ``t_w = t - a_i`` for every queued request,
    ``ln Score'_i = ln Score_i + (a_i / tau) ln(1/gamma) - (t / tau) ln(1/gamma)``: the last
    term is common to all, so the queue order never changes over time and the static key
    ``ln Score_i + (a_i / tau) ln(1/gamma)`` is exact (:func:`decayed_order` shows it; the
    decay does reorder relative to no decay, by favouring earlier arrivals). Keys are
    quantised to ``2^-30`` in log space for the integer heap (ties beyond that go by
    arrival). Ablations: ``beta`` fixed, ``family="lognormal"``, ``beta=0`` (E only).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.predictions.distributions import LogNormal, LogT, TruncationMode
from kvopt.predictions.predictors import RefinedPredictor, RefreshCache
from kvopt.sim.engine import Decision, SimState, WaitQueue
from kvopt.sim.policies import (
    GreedyPolicy,
    Policy,
    PolicyInfo,
    arrival_rank,
    declare_policy_options,
    register_policy,
)
from kvopt.sim.policies.registry import ALL_MODES
from kvopt.sim.predicted_lengths import Predictions

#: The age TRAIL's limit ``C y`` is compared with: since the current start (a restarted
#: request starts over) or all service attained so far.
AgeMode = Literal["run", "attained"]

_EMPTY = np.zeros(0, dtype=np.int64)
_KEY_SCALE = float(2**30)
#: Steps a quiet refined-rank policy looks ahead (and may sleep) at most (RankPolicy._sleep).
SLEEP_STEPS = 256


def _refresh_due(age: NDArray[np.int64], every: int) -> NDArray[np.bool_]:
    """Whether a running request of this ``age`` makes a refined prediction at this step (its
    age is a positive multiple of ``every``).

    Examples
    --------
    >>> _refresh_due(np.array([0, 3, 4, 8]), 4).tolist()
    [False, False, True, True]
    """
    return (age % every == 0) & (age > 0)


def _ordinal(x: NDArray[np.float64]) -> NDArray[np.int64]:
    """Integer keys with the same order (and ties) as the floats ``x``."""
    _, inv = np.unique(x, return_inverse=True)
    return inv.astype(np.int64).reshape(-1)


def _rank_key(x: NDArray[np.float64]) -> NDArray[np.int64]:
    """Integer heap keys of (possibly fractional or negative) ranks, ``1/1024`` apart.

    Examples
    --------
    >>> _rank_key(np.array([3.0, 2.5, -0.25])).tolist()
    [3072, 2560, -256]
    """
    return np.floor(np.asarray(x, dtype=np.float64) * 1024.0).astype(np.int64)


def _head(queue: WaitQueue, rank: NDArray[np.float64]) -> tuple[int, float]:
    """The head of ``queue`` and its rank, or ``(-1, 0.0)`` when it is empty.

    Examples
    --------
    >>> q = WaitQueue(np.arange(3))
    >>> _head(q, np.array([4.0, 2.5, 1.0]))
    (-1, 0.0)
    >>> q.push(np.array([0, 1]), np.array([4, 2]))
    >>> _head(q, np.array([4.0, 2.5, 1.0]))
    (1, 2.5)
    """
    if not len(queue):
        return -1, 0.0
    h = queue.peek()
    return h, float(rank[h])


class RankPolicy(Policy):
    """TRAIL: SPRPT with limited preemption under the memory limit (module docstring).

    Parameters
    ----------
    name
        Registry name.
    r0
        Initial prediction of every request (``r``; TRAIL: the predicted bin's midpoint).
    C
        Preemption limit: preemptable while age ``< floor(C r)``; ``inf`` = always.
    predictor
        A :class:`~kvopt.predictions.RefinedPredictor` for refined ranks, or ``None`` for
        the static rank ``r - age``.

    Examples
    --------
    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> inst = Instance(memory=8, arrival=[0, 1], prompt=[3, 3], output=[5, 2])
    >>> r = simulate(inst, "srpt")           # the short newcomer preempts the long one
    >>> r.schedule.num_evictions, r.schedule.final_start(inst).tolist()
    (1, [3, 1])
    >>> simulate(inst, "spjf", predictions="exact").schedule.final_start(inst).tolist()
    [0, 5]
    """

    def __init__(self, name: str, r0: NDArray[np.float64], *, C: float = 0.8,
                 predictor: RefinedPredictor | None = None, age: AgeMode = "run") -> None:
        if not C >= 0:
            raise UsageError("C", f"must be >= 0, got {C}")
        if age not in ("run", "attained"):
            raise UsageError("age", f"must be 'run' or 'attained', got {age!r}")
        self.age_mode = age
        self.name = name
        self.r0 = np.asarray(r0, dtype=np.float64)
        self.C = float(C)
        self.predictor = predictor
        self.options = {"C": self.C, "predictor": predictor.label() if predictor else "static",
                        "age": age}

    def reset(self, st: SimState) -> None:
        self.rank = arrival_rank(st.a)
        self.queue = WaitQueue(self.rank)
        # the rank a waiting request is queued with: its initial prediction, or (recompute /
        # swap) its predicted remaining length when it was preempted
        self.wrank = self.r0.copy()
        self.keep_rank = st.mode != "restart"
        self.key = _rank_key(self.r0) if self.keep_rank else _ordinal(self.r0)
        if math.isinf(self.C):
            self.limit = np.full(st.n, np.iinfo(np.int64).max, dtype=np.int64)
        else:
            self.limit = np.floor(self.C * self.r0 + 1e-9).astype(np.int64)
        self.attained = np.zeros(st.n, dtype=np.int64)  # tokens of earlier, lost runs
        # refined ranks: each request's estimate at its latest refresh, recomputed only when
        # the refresh moves (equal to predictor.remaining)
        self.refresh = (None if self.predictor is None
                        else RefreshCache(self.predictor, st.o))
        self.stats = {"preemptions": 0, "overflow_evictions": 0}

    def on_arrival(self, st: SimState, ids: NDArray[np.int64]) -> None:
        self.queue.push(ids, self.key[ids])

    def _requeue_rank(self, ids: NDArray[np.int64], rank: NDArray[np.float64]) -> None:
        """Recompute / swap: evicted ``ids`` wait with ``rank``, their predicted remaining
        length when evicted (they keep their tokens; with restart they wait with ``r0``)."""
        self.wrank[ids] = rank
        self.key[ids] = _rank_key(rank)

    def _ranks(self, st: SimState, run: NDArray[np.int64], age: NDArray[np.int64]
               ) -> NDArray[np.float64]:
        if self.refresh is None:
            return self.r0[run] - age
        return self.refresh.remaining(run, age)

    def _quiet_steps(self, st: SimState, rk: NDArray[np.float64], contrib: NDArray[np.int64],
                     locked: NDArray[np.bool_]) -> NDArray[np.bool_]:
        """Per row (a step; columns, the last axis: the running requests, their rank, memory
        at the next slot and lock): whether :meth:`decide` would change nothing there (a 0-d
        array for one step given as 1-d arrays). The running requests
        fit ``M`` (no overflow) and the batch limit, and the queue's head cannot start where
        the merge by rank would try it, behind the non-preemptable requests and the
        preemptable ones ranked at or before it. Then every running request stays, nobody
        starts, and the rest of the queue waits behind the head.
        """
        M, B = st.M, int(getattr(st, "B", st.n))
        quiet = np.asarray(contrib.sum(axis=-1) <= M)
        if contrib.shape[-1] > B:
            return np.zeros(contrib.shape[:-1], dtype=bool)
        head, hr = _head(self.queue, self.wrank)
        if head >= 0:
            before = locked | (rk <= hr)
            need = int(st.s[head] + st.kept[head]) + 1
            quiet &= ((before * contrib).sum(axis=-1) + need > M) | (before.sum(axis=-1) >= B)
        return quiet

    def _quiet(self, st: SimState, rk: NDArray[np.float64], contrib: NDArray[np.int64],
               locked: NDArray[np.bool_]) -> bool:
        """:meth:`_quiet_steps` at this step."""
        return bool(self._quiet_steps(st, rk, contrib, locked))

    def _sleep(self, st: SimState, run: NDArray[np.int64], age: NDArray[np.int64],
               contrib: NDArray[np.int64], served: NDArray[np.int64]
               ) -> tuple[int, NDArray[np.int64]]:
        """After a quiet step (:meth:`_quiet`) with refined ranks: the next step at which
        :meth:`decide` might change something, and the predictions made at the quiet steps
        before it.

        Until an event (arrival, completion: the engine stops there anyway) the running set
        and the queue stay as they are; each running request grows by one token a step, its
        age and service by one, and its rank is its refreshed estimate, read from the refresh
        table as far as the table reaches for every running request (at most
        :data:`SLEEP_STEPS` steps). Step ``t + j`` is quiet under :meth:`_quiet_steps` with
        those values.
        """
        cache = self.refresh
        assert cache is not None
        t = st.t
        reach = cache.reach(run) - age                     # steps j with a table entry: j < reach
        J = min(int(reach.min()), SLEEP_STEPS)
        if J <= 1:
            return t + 1, _EMPTY
        j = np.arange(1, J, dtype=np.int64)[:, None]
        a = age[None, :] + j                               # ages at steps t+1 .. t+J-1
        rk = cache.tabled(run[None, :], a)                 # = cache.remaining(run, a[j - 1])
        quiet = self._quiet_steps(st, rk, contrib[None, :] + j,
                                  served[None, :] + j >= self.limit[run][None, :])
        stop = np.flatnonzero(~quiet)
        k = int(stop[0]) + 1 if stop.size else J           # first step that may not be quiet
        return t + k, _refresh_due(a[: k - 1], cache.every).sum(axis=1).astype(np.int64)

    def decide(self, st: SimState) -> Decision:
        t, s, M = st.t, st.s, st.M
        kept = st.kept
        back: dict[int, int] = {}  # requests evicted here for overflow: what they keep
        B = int(getattr(st, "B", st.n))
        run = st.running
        queue = self.queue
        evict: list[int] = []
        preempted: list[int] = []
        prank: list[float] = []  # their ranks
        gone: list[int] = []  # their positions in the running set
        admit: list[int] = []
        used = count = 0  # memory at t+1 and requests in the next batch (limit B)
        npred = 0
        wake = None
        age = _EMPTY
        if run.shape[0]:
            age = t - st.start[run]
            rk = self._ranks(st, run, age)
            contrib = s[run] + (t + 1) - st.start[run]
            served = age + self.attained[run] if self.age_mode == "attained" else age
            locked = served >= self.limit[run]
            if self._quiet(st, rk, contrib, locked):
                ahead = None
                if self.refresh is not None and st.predictions_free:  # wake at the sleep's end
                    wake, ahead = self._sleep(st, run, age, contrib, served)
                    npred = int(_refresh_due(age, self.refresh.every).sum())
                elif self.predictor is not None:
                    npred, wake = self._refreshes(st, run, age, 0)
                return Decision(evict=None, admit=np.zeros(0, dtype=np.int64), wake=wake,
                                predictions=npred, predictions_ahead=ahead)
            tie = self.rank[run]
            # 1. overflow: the running requests, by rank, must fit M at t+1; the worst go
            #    (non-preemptable ones too: someone must) and may restart at once
            if int(contrib.sum()) > M:  # (else nothing overflows: skip the sort)
                if self.age_mode == "attained":  # locked first, oldest run first: progress
                    sr = st.start[run]
                    order = np.lexsort((tie, sr, np.where(locked, 0.0, rk), np.where(locked, sr, 0),
                                        ~locked))
                else:  # the paper's rank: -inf once locked, so a preemptable run always goes
                    #    first (issue 23); among locked runs, as among preemptable ones, the worst
                    #    r - a goes (then the latest started)
                    order = np.lexsort((tie, st.start[run], rk, ~locked))
                cum = np.cumsum(contrib[order])
                k = int(np.searchsorted(cum, M, side="right"))  # < run.shape[0]
                over = run[order[k:]]
                self.stats["overflow_evictions"] += int(over.size)
                evict.extend(over.tolist())
                back = st.kept_if_evicted(over)
                if self.keep_rank:
                    self._requeue_rank(over, rk[order[k:]])
                queue.push(over, self.key[over])
                keep = np.zeros(run.shape[0], dtype=bool)
                keep[order[:k]] = True
                run, age, rk = run[keep], age[keep], rk[keep]
                contrib, locked, tie = contrib[keep], locked[keep], tie[keep]
            # 2. non-preemptable requests keep their memory
            used = int(contrib[locked].sum())
            count = int(locked.sum())
            # 3. preemptable running merged with the waiting queue by rank (running first
            #    on ties); a waiting request that does not fit blocks the later ones
            pi = np.flatnonzero(~locked)
            pi = pi[np.lexsort((tie[pi], rk[pi]))]
            prk = rk[pi].tolist()
            pids = run[pi].tolist()
            pc = contrib[pi].tolist()
            ppos = pi.tolist()  # positions in run
            head, hr = _head(queue, self.wrank)  # -1: none left to admit (or blocked)
            for j, rj in enumerate(prk):
                # the waiting requests ranked before running request j come first
                while head >= 0 and not rj <= hr:
                    need = int(s[head] + (back[head] if head in back else kept[head])) + 1
                    if used + need <= M and count < B:
                        queue.pop()
                        admit.append(head)
                        used += need
                        count += 1
                        head, hr = _head(queue, self.wrank)
                    else:
                        head = -1  # blocked: it waits, and so do the later ones
                if used + pc[j] <= M and count < B:
                    used += pc[j]
                    count += 1
                else:
                    preempted.append(pids[j])
                    prank.append(rj)
                    gone.append(ppos[j])
                    self.stats["preemptions"] += 1
        else:
            head, hr = _head(queue, self.wrank)
        while head >= 0:  # then the rest of the queue, until one does not fit
            need = int(s[head] + (back[head] if head in back else kept[head])) + 1
            if used + need > M or count >= B:
                break
            queue.pop()
            admit.append(head)
            used += need
            count += 1
            head, hr = _head(queue, self.wrank)
        if preempted:
            ev_ids = np.asarray(preempted, dtype=np.int64)
            if self.keep_rank:
                self._requeue_rank(ev_ids, np.asarray(prank, dtype=np.float64))
            queue.push(ev_ids, self.key[ev_ids])
            evict.extend(preempted)
        if evict and st.mode == "restart":  # (recompute / swap keep the tokens: t - start)
            ev_all = np.asarray(evict, dtype=np.int64)
            self.attained[ev_all] += t - st.start[ev_all]
        adm = np.asarray(admit, dtype=np.int64)
        if self.predictor is not None:
            if gone:  # (the preempted requests predict no more)
                keep = np.ones(run.shape[0], dtype=bool)
                keep[gone] = False
                run, age = run[keep], age[keep]
            npred, wake = self._refreshes(st, run, age, adm.size)
        return Decision(evict=np.asarray(evict, dtype=np.int64) if evict else None,
                        admit=adm, wake=wake, predictions=npred)

    def _refreshes(self, st: SimState, run: NDArray[np.int64], age: NDArray[np.int64],
                   started: int) -> tuple[int, int | None]:
        """The predictions made at this decision, and the slot of the next refresh: the
        requests ``run`` that keep running (at ``age``) refresh when their age is a positive
        multiple of the predictor's ``every``; each of the ``started`` ones makes its initial
        prediction."""
        assert self.predictor is not None
        ev = int(self.predictor.every)
        npred = int(_refresh_due(age, ev).sum())
        wake = int((st.start[run] + ev * (age // ev + 1)).min()) if run.shape[0] else None
        if started:
            npred += started
            wake = st.t + ev if wake is None else min(wake, st.t + ev)
        return npred, wake


class KeyGreedyPolicy(GreedyPolicy):
    """vLLM-like admission by memory in the order of per-request keys (SSJF, TIE).

    Parameters
    ----------
    name
        Registry name.
    keys
        Static float keys (lower first), or ``None`` when :meth:`arrival_keys` computes them
        on arrival.

    Examples
    --------
    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 1], output=[2, 1, 1])
    >>> simulate(inst, "ssjf", predictions=[3, 2, 1]).schedule.final_start(inst).tolist()
    [1, 0, 0]
    """

    def __init__(self, name: str, keys: NDArray[np.float64] | None = None,
                 **kw: Any) -> None:
        kw.setdefault("order", "length")  # key order; arrivals can matter; victims by key
        super().__init__(name, **kw)
        self.static_keys = None if keys is None else np.asarray(keys, dtype=np.float64)

    def reset(self, st: SimState) -> None:
        super().reset(st)
        if self.static_keys is not None:
            self.key = _ordinal(self.static_keys)
        self.pending = 0
        self.stats["predictions"] = 0

    def arrival_keys(self, st: SimState, ids: NDArray[np.int64]) -> NDArray[np.int64]:
        """Integer keys of newly arrived ``ids`` (static keys by default)."""
        return self.key[ids]

    def on_arrival(self, st: SimState, ids: NDArray[np.int64]) -> None:
        self.key[ids] = self.arrival_keys(st, ids)
        self.pending += int(ids.shape[0])
        self.stats["predictions"] += int(ids.shape[0])
        self.queue.push(ids, self.key[ids])

    def decide(self, st: SimState) -> Decision:
        dec = super().decide(st)
        dec.predictions, self.pending = self.pending, 0
        if self.static_keys is None:
            dec.arrival_filter = None  # keys of future arrivals are not known yet
        return dec


def adaptive_beta(queue_length: int, batch_size: int) -> float:
    """TIE's ``beta = min(0.5, max(0.1, 0.1 L_q / B))``.

    Examples
    --------
    >>> [adaptive_beta(q, 10) for q in (0, 10, 30, 50, 90)]
    [0.1, 0.1, 0.3, 0.5, 0.5]
    """
    return min(0.5, max(0.1, 0.1 * queue_length / batch_size))


def decayed_order(score: NDArray[np.float64], arrival: NDArray[np.float64], t: float,
                  gamma: float = 0.9, tau: float = 30.0) -> NDArray[np.int64]:
    """Queue order (argsort, stable) of ``score * gamma^((t - arrival) / tau)`` at time ``t``.

    It does not depend on ``t``: the factor ``gamma^(t / tau)`` is common to every queued
    request (see the module docstring).

    Examples
    --------
    >>> sc, a = np.array([100.0, 95.0]), np.array([0.0, 60.0])
    >>> [decayed_order(sc, a, t).tolist() for t in (60.0, 600.0, 6000.0)]
    [[0, 1], [0, 1], [0, 1]]
    >>> np.argsort(sc).tolist()      # without the decay the later, smaller score goes first
    [1, 0]
    """
    w = score * np.power(gamma, (t - arrival) / tau)
    return np.argsort(w, kind="stable")


class TiePolicy(KeyGreedyPolicy):
    """TIE: log-t (or log-normal) score ``E + beta CVaR`` with adaptive beta and waiting decay.

    Parameters
    ----------
    mu, sigma
        Predicted distribution parameters per request.
    family
        ``"logt"`` or ``"lognormal"``.
    nu, alpha
        Degrees of freedom (log-t) and CVaR level.
    beta
        ``"adaptive"`` or a fixed float (``0`` = E only, SEPT).
    batch_size
        ``B`` in the adaptive beta.
    gamma, tau
        Waiting decay ``gamma^{t_w / tau}`` (``tau`` in the instance's time unit);
        ``decay=False`` drops it.
    max_tokens
        Generation cut-off per request (``X~ = min(X, max_tokens)``).

    Examples
    --------
    Two requests with the same predicted median (2 tokens) and room for one at a time: the
    risk term of the score runs the less uncertain one first.

    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> inst = Instance(memory=3, arrival=[0, 0], prompt=[1, 1], output=[2, 2])
    >>> pol = TiePolicy("tie", np.log([2.0, 2.0]), np.array([1.0, 0.1]), max_tokens=64.0)
    >>> r = simulate(inst, pol)
    >>> r.schedule.final_start(inst).tolist(), pol.score.round(2).tolist()
    ([2, 0], [7.65, 2.29])
    """

    def __init__(self, name: str, mu: NDArray[np.float64], sigma: NDArray[np.float64], *,
                 family: Literal["logt", "lognormal"] = "logt", nu: float = 3.5, alpha: float = 0.9,
                 beta: float | str = "adaptive", batch_size: int = 256, gamma: float = 0.9,
                 tau: float = 30.0, decay: bool = True,
                 max_tokens: NDArray[np.float64] | float = 2048.0,
                 mode: TruncationMode = "censor",
                 **kw: Any) -> None:
        super().__init__(name, None, **kw)
        from kvopt.predictions.distributions import MODES

        if mode not in MODES:
            raise UsageError("mode", f"must be one of {', '.join(MODES)}, got {mode!r}")
        if not isinstance(decay, bool):
            raise UsageError("decay", f"must be true or false, got {decay!r}")
        if family not in ("logt", "lognormal"):
            raise UsageError("family", f"must be 'logt' or 'lognormal', got {family!r}")
        if beta != "adaptive" and not (isinstance(beta, (int, float)) and beta >= 0):
            raise UsageError("beta", f"must be 'adaptive' or a number >= 0, got {beta!r}")
        if batch_size < 1:
            raise UsageError("batch_size", f"must be >= 1, got {batch_size!r}")
        if not 0 < gamma <= 1:
            raise UsageError("gamma", f"must be in (0, 1], got {gamma!r}")
        if not tau > 0:
            raise UsageError("tau", f"must be > 0, got {tau!r}")
        self.mu = np.asarray(mu, dtype=np.float64)
        self.sigma = np.asarray(sigma, dtype=np.float64)
        self.family, self.nu, self.cvar_alpha = family, float(nu), float(alpha)
        self.cvar_beta: float | str = beta
        self.batch_size, self.gamma, self.tau, self.decay = int(batch_size), gamma, tau, decay
        self.max_tokens = max_tokens
        self.mode = mode
        self.options.update({"family": family, "nu": nu, "cvar_alpha": alpha, "beta": beta,
                             "batch_size": batch_size, "gamma": gamma, "tau": tau,
                             "decay": decay, "mode": mode})

    def reset(self, st: SimState) -> None:
        super().reset(st)
        self.xmax = np.broadcast_to(np.asarray(self.max_tokens, dtype=np.float64),
                                    (st.n,)).copy()
        self.score = np.zeros(st.n)
        self.beta_used = np.zeros(st.n)
        self.moments = self._moments(st.n)

    def _dist(self, ids: NDArray[np.int64]) -> Any:
        if self.family == "logt":
            return LogT(self.mu[ids], self.sigma[ids], self.nu)
        return LogNormal(self.mu[ids], self.sigma[ids])

    def scores(self, ids: NDArray[np.int64], beta: float) -> NDArray[np.float64]:
        """``E + beta CVaR`` of the predicted distributions of ``ids`` (after :meth:`reset`,
        which computes every request's ``E`` and ``CVaR``)."""
        mean, cvar = self.moments
        if beta == 0:
            return mean[ids]
        c = (cvar[ids] if cvar is not None  # (none computed for a policy with beta = 0)
             else self._dist(ids).truncated_cvar(self.cvar_alpha, self.xmax[ids], self.mode))
        return mean[ids] + beta * c

    def _moments(self, n: int, block: int = 256) -> tuple[NDArray[np.float64],
                                                          NDArray[np.float64] | None]:
        """``E`` and (unless ``beta = 0``) ``CVaR`` of every request's predicted distribution,
        one vectorised quadrature per ``block`` requests: the score is ``E + beta CVaR``
        with the ``beta`` of the arrival instant, so only ``beta`` waits for the arrival."""
        mean = np.empty(n)
        cvar = None if self.cvar_beta == 0 else np.empty(n)
        for lo in range(0, n, block):
            ids = np.arange(lo, min(n, lo + block))
            d = self._dist(ids)
            mean[ids] = d.truncated_mean(self.xmax[ids], self.mode)
            if cvar is not None:
                cvar[ids] = d.truncated_cvar(self.cvar_alpha, self.xmax[ids], self.mode)
        return mean, cvar

    def arrival_keys(self, st: SimState, ids: NDArray[np.int64]) -> NDArray[np.int64]:
        beta = (adaptive_beta(len(self.queue), self.batch_size)
                if self.cvar_beta == "adaptive" else float(self.cvar_beta))
        sc = self.scores(ids, beta)
        self.score[ids] = sc
        self.beta_used[ids] = beta
        key = np.log(np.maximum(sc, 1e-300))
        if self.decay and self.gamma < 1:
            key = key + st.a[ids].astype(np.float64) / self.tau * math.log(1 / self.gamma)
        return np.rint(key * _KEY_SCALE).astype(np.int64)


# ------------------------------------------------------------------------- factories
def _point(inst: Instance, pr: Predictions) -> NDArray[np.float64]:
    return (pr.point if pr.point is not None else inst.output).astype(np.float64)


def _trail(inst: Instance, pr: Predictions, *, C: float = 0.8, refine: bool = True,
           age: AgeMode | None = None,
           sigma0: float = 0.5, rho: float = 0.5, every: int = 1, bins: int = 10,
           max_len: float | None = None, pred_seed: int = 0) -> Policy:
    if not isinstance(refine, bool):
        raise UsageError("refine", f"must be true or false, got {refine!r}")
    if not refine:
        return RankPolicy("trail", _point(inst, pr), C=C, age=age or "run")
    # bins over [0, max_len]: TRAIL uses 512 (its longest output); default: the memory M
    p = RefinedPredictor(sigma0=sigma0, rho=rho, every=every, bins=bins,
                         max_len=float(inst.memory if max_len is None else max_len),
                         seed=pred_seed)
    r0 = p.initial(np.arange(inst.n), inst.output)
    return RankPolicy("trail", r0, C=C, predictor=p, age=age or "attained")


def _sprpt(inst: Instance, pr: Predictions, *, C: float = math.inf) -> Policy:
    return RankPolicy("sprpt", _point(inst, pr), C=C)


def _srpt(inst: Instance, pr: Predictions) -> Policy:
    return RankPolicy("srpt", inst.output.astype(np.float64), C=math.inf)


def _spjf(inst: Instance, pr: Predictions) -> Policy:
    return RankPolicy("spjf", _point(inst, pr), C=0.0)


def _ssjf(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    return KeyGreedyPolicy("ssjf", _point(inst, pr), **kw)


def _tie(inst: Instance, pr: Predictions, *, sigma: float = 0.5, max_tokens: Any = None,
         **kw: Any) -> Policy:
    if pr.mu is not None and pr.sigma is not None:
        mu, sg = pr.mu, pr.sigma
    else:  # no distributional predictions: centred at the point prediction (or true length)
        mu = np.log(_point(inst, pr))
        sg = np.full(inst.n, float(sigma))
    xm = (inst.memory - inst.prompt).astype(np.float64)
    if max_tokens is not None:
        xm = np.minimum(xm, float(max_tokens))
    return TiePolicy("tie", mu, sg, max_tokens=xm, **kw)


register_policy("trail", _trail, PolicyInfo(modes=ALL_MODES))
register_policy("sprpt", _sprpt, PolicyInfo(modes=ALL_MODES))
register_policy("srpt", _srpt, PolicyInfo(offline=True, modes=ALL_MODES))
register_policy("spjf", _spjf, PolicyInfo(modes=ALL_MODES))
register_policy("ssjf", _ssjf, PolicyInfo(modes=ALL_MODES))
register_policy("tie", _tie, PolicyInfo(modes=ALL_MODES))
declare_policy_options("ssjf", KeyGreedyPolicy)      # what their **options reach (CLI checks)
declare_policy_options("tie", TiePolicy, fixed=("max_tokens",))
