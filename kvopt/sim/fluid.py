"""WAIT and Nested WAIT: fluid-guided admission (Ao, Luo, Simchi-Levi & Wang, arXiv:2504.11320).

kvopt's own implementation, read from the paper's description and a co-author's Vidur fork
(``Luoxiaogan/vidur_or``: ``booking_limit_replica_scheduler.py``,
``general_nested_booking_limit_replica_scheduler.py``); no code is taken from either.

The fluid model (one truth: the timing convention of notes/seed-001 §1)
------------------------------------------------------------------------
Requests come in *types* ``k`` (prompt ``s_k``, output ``o_k``, arrival share ``q_k``). In
the fluid equilibrium a batch holds, at every decode stage ``j = 1 .. o_k``, the same number
``n_k`` of type-``k`` requests (a *cohort* admitted per slot), so the running set of type
``k`` is ``limit_k = n_k (o_k + 1)`` requests counting the stage-0 cohort (the fork's
``booking_limit``, proportional to ``lambda_k (o_k + 1)``; per stage ``limit_k / (o_k + 1)``,
proportional to ``lambda_k``), and its memory is ``n_k g_k`` with ``g_k = o_k s_k +
o_k (o_k + 1) / 2`` (:mod:`kvopt.core.stability`). Filling ``M`` with ``n_k`` proportional to
the shares gives

.. math:: n_k = q_k \\, M / \\sum_j q_j g_j = q_k \\, \\mu_{slot},

the stability rate split by type: the cohorts do not depend on the arrival rate, only on the
type mix and ``M``. ``total_limit`` (the fork's parameter, the running count
``sum_k limit_k``) rescales them.

WAIT (output lengths known at arrival)
--------------------------------------
Per type a FIFO queue. A type-``k`` cohort of exactly ``round(n_k)`` waiting requests (at least
1) starts when that many are waiting, at most at rate ``n_k`` requests per slot (a token
bucket holding one cohort: with ``n_k >= 1`` this is the fork's "one stage-0 cohort per
iteration", with ``n_k < 1`` one single-request cohort every ``1 / n_k`` slots) and when it
passes the exact future-memory check of the true lengths (so WAIT never evicts). Readings
that differ from the fork, because a kvopt run is never paused: requests in progress always
advance (the fork holds every stage when a stage-0 cohort is incomplete); types are gated
independently (the fork waits until every type's cohort is complete); the incomplete last
cohorts start once every request of the instance has arrived (``flush="end"``, the fork's
``all_requests_arrived``, which instead drops them), or also whenever nothing runs
(``flush="idle"``). Types: the distinct ``(s, o)`` pairs when there are at most ``types``
of them, else ``types`` quantile classes of ``o`` (class mean ``g``); the shares are the
instance's (the paper assumes the rates known).

Nested WAIT (output lengths unknown)
------------------------------------
One FIFO queue; the lengths are unknown but their distribution (the instance's mix, as the
fork's ``prompt_types``) is known. Segments ``(d_{i-1}, d_i]`` of decode stages (quantiles
of ``o``) with survival ``p_i`` = share of requests that outlive segment ``i`` among those
that entered it; per-stage limits ``n_{i+1} = n_i (p_i + margin)`` (the fork's
``seg_margin``); ``n_1`` such that the booked memory ``sum_i n_i sum_{j in seg i} (s + j)``
equals ``M - buffer``, the *safety buffer* of logarithmic size
``log2(1 + running) * sd(s + o)`` tokens (``running = sum_i n_i |seg i|``, the booked
running count; 0 when every request has the same peak; at most ``M / 2``). As in the fork,
the entry gate is an occupancy budget: a cohort of ``max(1, round(n_1))`` waiting requests
starts (at most one per slot) while segment 1 (decode stages ``1 .. d_1``) holds at most
``max(1, round(n_1 d_1))`` runs (the fork's ``remain = seg_total_limit - occupied``) and
the memory at the next slot stays within ``M - buffer``. A run cannot pause, so later
segments are not gated (the fork holds requests at segment entries); if the true memory
would exceed ``M`` the newest runs are preempted (vLLM-like) and re-queued at the front.
The plan is asymptotic (``n_1 >> 1``); with only a handful of requests fitting in ``M``
(``n_1 << 1``, e.g. Llama-2-70B on the Azure trace) the budget rounds to a few runs and the
gate costs capacity (reports/stability).

Preemption modes: both declare ``preemption_modes = ("restart", "recompute", "swap")``:
WAIT never evicts, Nested WAIT evicts only on overflow, and the mode only says what the
engine keeps of an evicted run.

Examples
--------
>>> from kvopt import Instance
>>> from kvopt.sim import simulate
>>> inst = Instance(memory=60, arrival=[0] * 12 + [1] * 12, prompt=[0] * 24, output=[3] * 24)
>>> r = simulate(inst, "wait")
>>> r.stats["fluid"]["cohorts"], r.metrics.evictions      # mu_slot = 60 / 6 = 10
([10], 0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError, UsageTypeError
from kvopt.core.instance import Instance
from kvopt.core.schedule import PREEMPTION_MODES
from kvopt.core.stability import lifetime_token_steps, mean_token_steps
from kvopt.sim.admission import FutureProfile, admit_prefix, earliest_fit
from kvopt.sim.engine import Decision, SimState, evictions_to_cover
from kvopt.sim.policies import PolicyInfo, register_policy
from kvopt.sim.policies.base import Policy, _choice, _count, _number
from kvopt.sim.predicted_lengths import Predictions

__all__ = ["FluidPlan", "NestedWaitPolicy", "WaitPolicy", "fluid_benchmark", "length_types",
           "nested_plan", "simulated_in_slots", "wait_plan"]

_EMPTY = np.zeros(0, dtype=np.int64)


def length_types(prompt: NDArray[np.int64], output: NDArray[np.int64], types: int = 8
                 ) -> NDArray[np.int64]:
    """Type of every request: the distinct ``(s, o)`` pairs if there are at most ``types``,
    else ``types`` quantile classes of ``o`` (fewer if ``o`` has fewer distinct values).

    Examples
    --------
    >>> length_types(np.array([1, 1, 2]), np.array([5, 5, 3])).tolist()
    [1, 1, 0]
    >>> length_types(np.zeros(6, dtype=np.int64), np.arange(1, 7), types=2).tolist()
    [0, 0, 0, 1, 1, 1]
    """
    pairs, inv = np.unique(np.stack([output, prompt], axis=1), axis=0, return_inverse=True)
    if pairs.shape[0] <= types:
        return inv.reshape(-1).astype(np.int64)
    edges = np.unique(np.quantile(output, np.linspace(0, 1, types + 1)[1:-1], method="lower"))
    return np.searchsorted(edges, output, side="left").astype(np.int64)


@dataclass(frozen=True)
class FluidPlan:
    """Cohort sizes and admission rates of a fluid plan (per slot).

    Examples
    --------
    >>> s, o = np.zeros(4, dtype=np.int64), np.array([1, 1, 3, 3])
    >>> plan = wait_plan(s, o, length_types(s, o), 14)    # two types, g = 1 and 6
    >>> plan.mean_g, plan.mu_slot, plan.cohort.tolist()
    (3.5, 4.0, [2, 2])
    >>> plan.to_dict()
    {'rates': [2.0, 2.0], 'cohorts': [2, 2], 'mean_g': 3.5, 'mu_slot': 4.0}
    """

    rate: NDArray[np.float64]        # n_k: requests per slot of each type (fluid)
    cohort: NDArray[np.int64]        # round(n_k), at least 1
    mean_g: float                    # E[g] over the instance
    mu_slot: float                   # M / E[g]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"rates": [round(float(x), 6) for x in self.rate],
                "cohorts": [int(c) for c in self.cohort], "mean_g": self.mean_g,
                "mu_slot": self.mu_slot}


def wait_plan(prompt: NDArray[np.int64], output: NDArray[np.int64], types: NDArray[np.int64],
              memory: int, total_limit: float | None = None) -> FluidPlan:
    """WAIT's fluid plan: ``n_k = q_k M / sum_j q_j g_j`` (module docstring), rescaled so
    that ``sum_k n_k (o_k + 1) = total_limit`` when it is given.

    Examples
    --------
    >>> z = np.zeros(4, dtype=np.int64)
    >>> p = wait_plan(z, np.array([1, 1, 3, 3]), np.array([0, 0, 1, 1]), 14)
    >>> p.rate.tolist(), p.cohort.tolist()       # g = 1 and 6: n = 0.5 * 14 / 3.5 each
    ([2.0, 2.0], [2, 2])
    """
    g = lifetime_token_steps(prompt, output).astype(np.float64)
    K = int(types.max()) + 1
    share = np.bincount(types, minlength=K) / types.shape[0]
    mean_g = float(g.mean())
    mu = memory / mean_g
    rate = share * mu
    if total_limit is not None:
        o_k = np.bincount(types, weights=output, minlength=K) / np.maximum(
            np.bincount(types, minlength=K), 1)
        rate = rate * (total_limit / float(np.sum(rate * (o_k + 1))))
    return FluidPlan(rate, np.maximum(np.rint(rate), 1).astype(np.int64), mean_g, mu)


def fluid_benchmark(instance: Instance, plan: FluidPlan) -> dict[str, float]:
    """The fluid model's throughput and mean latency (slots) for the instance's arrivals.

    Arrivals at ``lambda`` per slot (the instance's rate), served at ``min(lambda, mu)``.
    Below ``mu`` a request's fluid latency is its ``o`` plus the wait to complete its
    cohort, ``(round(n_k) - 1) / (2 lambda_k)`` on average; above ``mu`` the fluid backlog
    grows linearly, so the ``i``-th of ``n`` arrivals waits ``i (1/mu - 1/lambda)`` and the
    mean adds ``n/2 (1/mu - 1/lambda)``. Timed instances are read in slots of ``b`` (the
    full-memory batch, :mod:`kvopt.sim.headroom`) - the caller converts the rate.

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=60, arrival=[i // 2 for i in range(24)], prompt=[0] * 24,
    ...                 output=[3] * 24)
    >>> ty = length_types(inst.prompt, inst.output)
    >>> b = fluid_benchmark(inst, wait_plan(inst.prompt, inst.output, ty, inst.memory))
    >>> {k: round(v, 4) for k, v in b.items()}        # lambda < mu: throughput = lambda
    {'mu_slot': 10.0, 'lambda_slot': 2.0909, 'throughput': 2.0909, 'mean_latency': 5.1522}
    """
    from kvopt.core.stability import arrival_rate

    lam = arrival_rate(instance.arrival)
    mean_o = float(instance.output.mean())
    out = {"mu_slot": plan.mu_slot, "lambda_slot": lam}
    if math.isinf(lam):
        out.update(throughput=plan.mu_slot, mean_latency=math.nan)
        return out
    share = plan.rate / plan.rate.sum()
    fill = float(np.sum(share * (plan.cohort - 1) / (2 * lam * share)))
    over = 0.0
    if lam > plan.mu_slot:
        over = instance.n / 2 * (1 / plan.mu_slot - 1 / lam)
    out.update(throughput=min(lam, plan.mu_slot), mean_latency=mean_o + fill + over)
    return out


def simulated_in_slots(instance: Instance, schedule: Any) -> dict[str, float]:
    """Throughput (completions per slot over the run) and mean latency in slots of a
    simulated schedule, the units of :func:`fluid_benchmark` (a timed instance's arrivals
    are mapped to the first decision point at or after them).

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> inst = Instance(memory=10, arrival=[0, 1], prompt=[1, 1], output=[4, 2])
    >>> simulated_in_slots(inst, Schedule.from_starts(inst, [0, 2]))
    {'throughput': 0.5, 'mean_latency': 3.5}
    """
    done = schedule.completion(instance)
    if instance.is_slotted:
        arr = instance.arrival.astype(np.float64)
    else:
        arr = np.searchsorted(schedule.times, instance.arrival - 1e-9).astype(np.float64)
    span = float(done.max() - arr.min())
    return {"throughput": instance.n / span if span > 0 else math.inf,
            "mean_latency": float(np.mean(done - arr))}


class _Bucket:
    """Token buckets: type ``k`` earns ``rate[k]`` per slot and holds at most one cohort
    plus one slot's earnings (so the long-run admission rate is ``rate[k]`` whatever the
    rounding of the cohort, and a slot may start more than one cohort when ``rate > cohort``).

    A bucket's level is computed from its last withdrawal (or refill), ``min(cap, base +
    rate (t - since))``, so it does not depend on how often the policy looks at it.

    Examples
    --------
    >>> b = _Bucket(np.array([0.25]), np.array([1]))
    >>> b.take(0, 1); b.advance(3); b.level(0), b.wait(0, 1)      # 0.25 + 3 * 0.25
    (1.0, 0)
    >>> b.take(0, 1); b.advance(4); b.level(0), b.wait(0, 1)
    (0.25, 3)
    """

    def __init__(self, rate: NDArray[np.float64], cohort: NDArray[np.int64]) -> None:
        self.rate = rate
        self.cap = cohort.astype(np.float64) + rate
        self.base = self.cap.copy()
        self.since = np.zeros(rate.shape[0], dtype=np.int64)
        self.t = 0

    def advance(self, t: int, idle: bool = False) -> None:
        """Move to slot ``t``; an empty system (``idle``) holds a full bucket (there is no
        pipeline to stagger, and on a trace the engine skips idle time in one slot)."""
        self.t = t
        if idle:
            self.base = self.cap.copy()
            self.since[:] = t

    def level(self, k: int) -> float:
        """Credit of type ``k`` at the current slot."""
        return float(min(self.cap[k], self.base[k] + self.rate[k] * (self.t - self.since[k])))

    def take(self, k: int, size: int) -> None:
        """Withdraw ``size`` requests' credit from type ``k`` at the current slot."""
        self.base[k] = self.level(k) - size
        self.since[k] = self.t

    def wait(self, k: int, need: int) -> int:
        """Slots until type ``k`` holds ``need``."""
        short = need - self.level(k)
        return 0 if short <= 1e-9 else math.ceil(short / self.rate[k] - 1e-9)


class WaitPolicy(Policy):
    """WAIT: full per-type cohorts at the fluid rates, exact memory check (module docstring).

    Parameters
    ----------
    types
        Type of each request (:func:`length_types`).
    plan
        :func:`wait_plan`.
    flush
        ``"end"`` or ``"idle"`` (when incomplete cohorts may start).

    Examples
    --------
    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> inst = Instance(memory=40, arrival=[0] * 8, prompt=[1] * 8, output=[2] * 4 + [6] * 4)
    >>> ty = length_types(inst.prompt, inst.output)
    >>> pol = WaitPolicy(ty, wait_plan(inst.prompt, inst.output, ty, inst.memory))
    >>> r = simulate(inst, pol)
    >>> ty.tolist(), pol.plan.cohort.tolist(), pol.stats["cohorts"], r.metrics.evictions
    ([0, 0, 0, 0, 1, 1, 1, 1], [1, 1], 8, 0)
    """

    name = "wait"
    preemption_modes = PREEMPTION_MODES  # what an evicted run keeps is the engine's business

    def __init__(self, types: NDArray[np.int64], plan: FluidPlan, flush: str = "end",
                 fluid: dict[str, Any] | None = None, **extra: Any) -> None:
        if extra:
            raise UsageTypeError("options", f"wait: unknown option(s) {sorted(extra)}")
        flush = _choice("flush", flush, ("end", "idle"))
        self.types, self.plan, self.flush = types, plan, flush
        self.fluid = {**plan.to_dict(), **(fluid or {})}
        self.options = {"flush": flush, **plan.to_dict()}

    def reset(self, st: SimState) -> None:
        K = self.plan.cohort.shape[0]
        self.queues: list[list[int]] = [[] for _ in range(K)]
        self.heads = [0] * K
        self.bucket = _Bucket(self.plan.rate, self.plan.cohort)
        self.profile = FutureProfile(4 * int(st.o.max()) + 64, owner=self.name)
        self.stats: dict[str, Any] = {"cohorts": 0, "partial_cohorts": 0, "fluid": self.fluid}

    def on_arrival(self, st: SimState, ids: NDArray[np.int64]) -> None:
        for i in ids[np.lexsort((ids, st.a[ids]))].tolist():
            self.queues[int(self.types[i])].append(i)

    def decide(self, st: SimState) -> Decision:
        t = st.t
        self.bucket.advance(t, st.running.shape[0] == 0)
        flush = st.arrived == st.n or (self.flush == "idle" and st.running.shape[0] == 0)
        admitted: list[int] = []
        wake: int | None = None
        order = sorted(range(len(self.queues)), key=lambda k: self._head_key(st, k))
        self.started = 0
        for k in order:
            while True:
                w = self._cohort(st, k, flush, not admitted)
                if isinstance(w, int):
                    if w >= 0:
                        wake = t + w if wake is None else min(wake, t + w)
                    break
                admitted += w
        return Decision(admit=np.asarray(admitted, dtype=np.int64), wake=wake)

    def _cohort(self, st: SimState, k: int, flush: bool, first: bool) -> list[int] | int:
        """Start type ``k``'s next cohort: its ids, or the slots to wait (-1: an arrival)."""
        t, q, h = st.t, self.queues[k], self.heads[k]
        waiting = len(q) - h
        need = min(int(self.plan.cohort[k]), st.B)   # a cohort never exceeds the batch limit
        if waiting == 0 or (waiting < need and not flush):
            return -1
        size = min(need, waiting)
        delay = self.bucket.wait(k, size)
        if delay:
            return delay
        room = st.B - st.running.shape[0] - self.started
        if room < size:  # batch-size limit: the cohort waits for room
            return -1
        ids = np.asarray(q[h: h + size], dtype=np.int64)
        o = st.o[ids]   # how many of the cohort (a prefix) fit the exact future profile
        fit = admit_prefix(self.profile.window(t, int(o.max())), st.s[ids], o, st.M)
        if fit < size and not (first and st.running.shape[0] == 0 and fit > 0):
            if not st.running.shape[0]:
                return 1
            # not before its first request fits alone (the profile only grows until the next
            # completion, where the engine decides anyway)
            return earliest_fit(self.profile, t, int(st.s[ids[0]]), int(o[0]), st.M,
                                int(st.run_end.min())) - t
        ids = ids[:fit]
        for i in ids.tolist():
            self.profile.add(t, int(st.s[i]), int(st.o[i]))
        self.heads[k] = h + ids.shape[0]
        self.started += int(ids.shape[0])
        self.bucket.take(k, int(ids.shape[0]))
        self.stats["cohorts"] += 1
        self.stats["partial_cohorts"] += int(ids.shape[0] < need)
        return ids.tolist()

    def _head_key(self, st: SimState, k: int) -> tuple[float, int]:
        q, h = self.queues[k], self.heads[k]
        return (float(st.a[q[h]]), q[h]) if h < len(q) else (math.inf, 0)


def nested_plan(prompt: NDArray[np.int64], output: NDArray[np.int64], memory: int,
                segments: int = 4, margin: float = 0.05, buffer: int | None = None
                ) -> dict[str, Any]:
    """Nested WAIT's plan (module docstring): segment ends ``d_i``, per-stage limits ``n_i``,
    the safety buffer and the segment-1 budget.

    Examples
    --------
    >>> p = nested_plan(np.zeros(4, dtype=np.int64), np.array([2, 2, 4, 4]), 40, segments=2,
    ...                 margin=0.0, buffer=0)
    >>> p["ends"], p["survival"], [round(x, 3) for x in p["limits"]]   # n_1 = 40 / E[g]
    ([2, 4], [0.5, 0.0], [6.154, 3.077])
    """
    o = np.asarray(output, dtype=np.int64)
    s = np.asarray(prompt, dtype=np.float64)
    ends = sorted({int(x) for x in np.quantile(o, np.linspace(0, 1, segments + 1)[1:],
                                                   method="lower")} | {int(o.max())})
    starts = [0, *ends[:-1]]
    surv = [float(np.mean(o > e)) / max(float(np.mean(o > b)), 1e-12)
            for b, e in zip(starts, ends, strict=True)]
    rel = [1.0]
    for p in surv[:-1]:
        rel.append(rel[-1] * min(p + margin, 0.99) / max(p, 1e-12))
    # booked per unit of n_1: the stages each request occupies in each segment, the segment
    # weighted by the margin's inflation of its entry count (margin 0: exactly E[g])
    per = running = stay1 = 0.0
    for r, b, e in zip(rel, starts, ends, strict=True):
        L = np.clip(o - b, 0, e - b).astype(np.float64)
        per += r * float(np.mean(L * s + L * b + L * (L + 1) / 2))
        running += r * float(np.mean(L))
        stay1 = stay1 or float(np.mean(L))
    if buffer is None:
        buffer = int(min(memory // 2, math.ceil(math.log2(1 + memory / per * running)
                                                * float(np.std(prompt + o)))))
    n1 = max(memory - buffer, 1) / per
    return {"ends": ends, "survival": [round(p, 6) for p in surv],
            "limits": [n1 * r * float(np.mean(o > b)) for r, b in zip(rel, starts, strict=True)],
            "buffer": int(buffer), "rate": n1,
            "cohort": max(1, round(n1)), "budget1": max(1, round(n1), round(n1 * stay1))}


class NestedWaitPolicy(Policy):
    """Nested WAIT: one FIFO queue, lengths unknown (module docstring).

    Parameters
    ----------
    plan
        :func:`nested_plan`.
    flush
        ``"end"`` or ``"idle"``.

    Examples
    --------
    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> inst = Instance(memory=40, arrival=[0] * 8, prompt=[1] * 8, output=[2] * 4 + [6] * 4)
    >>> pol = NestedWaitPolicy(nested_plan(inst.prompt, inst.output, inst.memory, segments=2))
    >>> r = simulate(inst, pol)
    >>> pol.plan["ends"], pol.plan["cohort"], pol.plan["buffer"], pol.stats["preemptions"]
    ([2, 6], 2, 7, 0)
    >>> r.metrics.total_latency, r.metrics.evictions
    (44.0, 0)
    """

    name = "nested-wait"
    preemption_modes = PREEMPTION_MODES

    def __init__(self, plan: dict[str, Any], flush: str = "end",
                 fluid: dict[str, Any] | None = None, **extra: Any) -> None:
        if extra:
            raise UsageTypeError("options", f"nested-wait: unknown option(s) {sorted(extra)}")
        flush = _choice("flush", flush, ("end", "idle"))
        self.plan, self.flush = plan, flush
        self.fluid = {**plan, **(fluid or {})}
        self.options = {"flush": flush, **plan}

    def reset(self, st: SimState) -> None:
        self.front: list[int] = []     # preempted runs, re-queued first
        self.queue: list[int] = []
        self.head = 0
        self.stats: dict[str, Any] = {"cohorts": 0, "preemptions": 0, "fluid": self.fluid}

    def on_arrival(self, st: SimState, ids: NDArray[np.int64]) -> None:
        self.queue += ids[np.lexsort((ids, st.a[ids]))].tolist()

    def _overflow(self, st: SimState) -> NDArray[np.int64]:
        """Newest runs to preempt so that the next slot fits ``M``."""
        run = st.running
        used = st.next_memory()
        if used <= st.M or run.shape[0] == 0:
            return _EMPTY
        idx = np.lexsort((-run, -st.start[run]))          # newest first
        contrib = st.s[run[idx]] + (st.t + 1) - st.start[run[idx]]
        k, _ = evictions_to_cover(contrib, used - st.M)
        return run[idx[:k]]

    def decide(self, st: SimState) -> Decision:
        t, s = st.t, st.s
        ev = self._overflow(st)
        if ev.shape[0]:
            self.front = ev.tolist() + self.front
            self.stats["preemptions"] += int(ev.shape[0])
            run = st.running[~np.isin(st.running, ev)]
        else:
            run = st.running
        waiting = len(self.front) + len(self.queue) - self.head
        need = min(int(self.plan["cohort"]), st.B)
        flush = st.arrived == st.n or (self.flush == "idle" and run.shape[0] == 0)
        admitted: list[int] = []
        wake: int | None = None
        room = st.B - run.shape[0]
        if waiting and (waiting >= need or flush) and room > 0:
            d1 = int(self.plan["ends"][0])
            inseg = run[t - st.start[run] < d1]      # still in segment 1 at slot t+1
            size = min(need, waiting, room, int(self.plan["budget1"]) - inseg.shape[0])
            ids = (self.front[:max(size, 0)] + self.queue[self.head: self.head + size])[:size]
            used = int((s[run] + (t + 1) - st.start[run]).sum())
            cap = st.M - int(self.plan["buffer"]) if run.shape[0] else st.M
            take = []
            kept = st.kept_if_evicted(ev) if ev.shape[0] else {}
            for i in ids:                          # the cohort's prefix within the memory cap
                need_i = int(s[i]) + 1 + kept.get(i, int(st.kept[i]))  # resumed: s + kept + 1
                if used + need_i > cap:
                    break
                used += need_i
                take.append(i)
            if size > 0 and (len(take) == size or (not run.shape[0] and take)):
                admitted = take
                nf = min(len(self.front), len(take))
                self.front = self.front[nf:]
                self.head += len(take) - nf
                self.stats["cohorts"] += 1
                if waiting - len(take) >= need or (flush and waiting > len(take)):
                    wake = t + 1                   # one cohort per slot (per iteration)
            elif size <= 0 and inseg.shape[0]:
                wake = int((st.start[inseg] + d1).min())   # when segment 1 has room again
        return Decision(evict=ev if ev.shape[0] else None,
                        admit=np.asarray(admitted, dtype=np.int64), wake=wake)


# ------------------------------------------------------------------------- registry
def _wait(inst: Instance, pr: Predictions, *, types: int = 8, total_limit: float | None = None,
          flush: str = "end") -> Policy:
    types = _count("types", types)
    if total_limit is not None:
        total_limit = _number("total_limit", total_limit, 0.0, math.inf, lo_open=True,
                              hi_open=True)
    ty = length_types(inst.prompt, inst.output, types)
    plan = wait_plan(inst.prompt, inst.output, ty, inst.memory, total_limit)
    return WaitPolicy(ty, plan, flush, fluid_benchmark(inst, plan))


def _nested_wait(inst: Instance, pr: Predictions, *, segments: int = 4, margin: float = 0.05,
                 buffer: int | None = None, flush: str = "end") -> Policy:
    segments = _count("segments", segments)
    margin = _number("margin", margin, 0.0, 1.0, hi_open=True)
    if buffer is not None:
        buffer = _count("buffer", buffer, 0)
        if buffer >= inst.memory:
            raise UsageError("buffer", f"must be < M = {inst.memory}, got {buffer}")
    plan = nested_plan(inst.prompt, inst.output, inst.memory, segments, margin, buffer)
    mean_g = mean_token_steps(inst.prompt, inst.output)
    fp = FluidPlan(np.array([plan["rate"]]), np.array([plan["cohort"]]), mean_g,
                   (inst.memory - plan["buffer"]) / mean_g)
    return NestedWaitPolicy(plan, flush, fluid_benchmark(inst, fp))


register_policy("wait", _wait, PolicyInfo(offline=True, modes=PREEMPTION_MODES))  # true o
register_policy("nested-wait", _nested_wait, PolicyInfo(modes=PREEMPTION_MODES))
