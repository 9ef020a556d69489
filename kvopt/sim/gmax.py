"""GMAX, JITServe's goodput-maximising batch selection (seed 003 §4.2, Alg. 1), vectorized.

Every ``frame`` decode steps (Δ, 50 in the paper) GMAX re-selects the batch from all requests
in the system (waiting and running):

1. **Analyze** (vectorized over the requests): the remaining-length upper bound
   ``len_rem = ub(g) - g`` from the conservative quantile bound refined with the progress ``g``
   (:func:`kvopt.predictions.quantile.conditional_upper`; ``lengths="exact"`` is JITServe*),
   ``t_gen = len_rem v_token`` (``v_token`` = 1 slot per token on unit steps, the mean step
   time so far on timed instances), the goodput still achievable ``goodput(r)``
   (:mod:`kvopt.core.slo`: ``R`` for deadline requests; the compound group's total;
   the on-time tokens still reachable for stream requests) plus a starvation bonus
   ``starve * median(R)`` per frame waited, and **priority = goodput / t_gen** (margin goodput,
   §4.2). Requests that cannot meet their SLO even with the bound (``now + t_gen > deadline``;
   compound: the critical path of the unfinished calls over their stages; stream: no reachable
   on-time token) get priority 0 (the App. C feasibility filter).
2. **Candidate filtering**: ``bp`` = the ``B``-th highest priority; candidates are the feasible
   requests with priority ``>= p * bp`` (``candidates="topk"``: the released code's top
   ``topk * B`` by priority instead).
3. **Length grouping**: sort the candidates by input length (``group_key="context"``: the
   code's prompt + generated), take the contiguous window of ``B`` with the largest total
   priority.
4. **Work conservation** (a documented deviation, notes §7.10): free batch slots left by a
   short candidate list are filled by priority, then by shorter bound, then arrival (so
   infeasible and best-effort requests still complete, at goodput 0).
5. **Limited preemption** (§4.2, App. E Eq. 9): a selected waiting request ``w`` displaces a
   running request ``r`` left out of the window only if ``prio(w) > prio(r)`` and
   ``goodput(w) > (1 + delta) goodput(r)`` (``delta = 0.1``, the deployed value); the
   evicted request restarts from scratch (recompute).

Between frames (arrivals, completions) free batch slots are filled in the same priority
order, with no preemption. Admission also respects the KV limit ``M`` (next-slot memory,
``s + 1`` per newcomer); if the running set would overflow, the lowest-priority running
requests are evicted first. The batch limit is the engine's ``B`` (``max_batch``).

Compound requests: stage precedence is not a scheduling constraint in kvopt
(:mod:`kvopt.core.slo`), so a member's priority is the group's goodput over the generation
time of *all* its unfinished calls (the paper sums over the current stage).

Examples
--------
>>> from kvopt import Instance
>>> from kvopt.sim import simulate
>>> inst = Instance(memory=20, arrival=[0, 0], prompt=[0, 0], output=[1, 20],
...                 slo_kind=["deadline", "deadline"], deadline=[20, 20], value=[2, 20],
...                 max_batch=1)
>>> r = simulate(inst, "gmax", lengths="exact")
>>> r.metrics.token_goodput, r.schedule.final_start(inst).tolist()
(2.0, [0, 1])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.arrays import lex_smallest
from kvopt.core.errors import UsageError
from kvopt.core.slo import COMPOUND, DEADLINE, NONE, STREAM, group_arrival
from kvopt.predictions.quantile import conditional_upper
from kvopt.sim.engine import Decision, SimState, evictions_to_cover

_EMPTY = np.zeros(0, dtype=np.int64)


def gmax_select(prio: NDArray[np.float64], key: NDArray[Any], B: int, p: float = 0.95, *,
                topk: int | None = None) -> NDArray[np.int64]:
    """Alg. 1's selection: positions of the batch among ``prio`` (only ``prio > 0`` qualify).

    Parameters
    ----------
    prio
        Priorities (0 = infeasible).
    key
        Grouping key (input length).
    B
        Batch size.
    p
        Cutoff: candidates have priority ``>= p * (B-th highest priority)``.
    topk
        Instead of the cutoff, the top ``topk * B`` by priority (the released code).

    Examples
    --------
    >>> prio = np.array([5.0, 4.9, 4.8, 1.0, 0.0])
    >>> key = np.array([100, 1, 2, 3, 4])
    >>> # candidates 0, 1, 2 sorted by input length: 1, 2, 0; best window of 2: {2, 0}
    >>> sorted(gmax_select(prio, key, 2, p=0.9).tolist())
    [0, 2]
    >>> sorted(gmax_select(prio, key, 2, p=1.0).tolist())   # only the top 2 qualify
    [0, 1]
    """
    feas = np.flatnonzero(prio > 0)
    if feas.size <= B:
        return feas
    pf = prio[feas]
    if topk is None:
        bp = np.partition(pf, pf.size - B)[pf.size - B]
        cand = feas[pf >= p * bp]
    else:
        k = min(topk * B, pf.size)
        cand = feas[np.argpartition(-pf, k - 1)[:k]]
    if cand.size <= B:
        return cand
    order = cand[np.argsort(key[cand], kind="stable")]
    cs = np.concatenate(([0.0], np.cumsum(prio[order])))
    s = int(np.argmax(cs[B:] - cs[:-B]))
    return order[s:s + B]


def _greedy_fit(need: NDArray[np.int64], room: int) -> tuple[NDArray[np.int64], int]:
    """Admission in order under ``room`` tokens, skipping what does not fit now: the
    positions taken and the room left.

    Examples
    --------
    >>> taken, left = _greedy_fit(np.array([4, 5, 2, 1]), 7)
    >>> taken.tolist(), left
    ([0, 2, 3], 0)
    """
    fits = np.cumsum(need) <= room
    if fits.all():
        return np.arange(need.size, dtype=np.int64), room - int(need.sum())
    k = int(np.argmin(fits))
    keep = list(range(k))
    room -= int(need[:k].sum())
    late = k + np.flatnonzero(need[k:] <= room)  # the room only shrinks: others never fit
    for i, nd in zip(late.tolist(), need[late].tolist(), strict=True):
        if nd <= room:
            keep.append(i)
            room -= nd
    return np.asarray(keep, dtype=np.int64), room


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise UsageError(name, f"must be one of {', '.join(allowed)}, got {value!r}")
    return str(value)


def _num(name: str, value: Any, lo: float, hi: float, *, lo_open: bool = False) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if ok:
        v = float(value)
        ok = (v > lo if lo_open else v >= lo) and v <= hi
    if not ok:
        raise UsageError(name, f"must be a number in {'(' if lo_open else '['}{lo:g}, {hi:g}], "
                         f"got {value!r}")
    return float(value)


class GmaxPolicy:
    """GMAX (module docstring); registry name ``"gmax"``.

    Parameters
    ----------
    name
        Registry name.
    median
        Per-request median length of the predictive distribution (a point prediction; the
        registry passes the predictions' point values, else the true lengths).
    lengths
        ``"quantile"`` (conservative bound refined with progress, default) or ``"exact"``.
    sigma, quantile
        Log-spread and level ``q`` of the bound (default 0.5 and 0.95).
    p
        Candidate cutoff (default 0.95).
    frame
        Δ: decode steps between re-selections (default 50).
    delta
        Preemption threshold ``R(new) > (1 + delta) R(running)`` (default 0.1).
    starve
        Starvation bonus per frame waited, as a fraction of the median base goodput (1e-3).
    candidates
        ``"cutoff"`` (paper) or ``"topk"`` (code: top ``topk * B``).
    topk
        Factor of ``candidates="topk"`` (default 2).
    group_key
        ``"input"`` (paper: prompt length) or ``"context"`` (code: prompt + generated).
    infeasible
        ``"filter"`` (paper, App. C: priority 0) or ``"discount"`` (code: the goodput of a
        deadline/compound request is multiplied by ``min(1, D / (elapsed + t_gen))``).

    Examples
    --------
    A policy object built directly (the registry's ``"gmax"`` passes the point predictions
    as ``median``) and given to :func:`kvopt.sim.simulate`:

    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> inst = Instance(memory=20, arrival=[0, 0], prompt=[0, 0], output=[1, 20],
    ...                 slo_kind=["deadline", "deadline"], deadline=[20, 20], value=[2, 20],
    ...                 max_batch=1)
    >>> pol = GmaxPolicy("gmax", inst.output, lengths="exact", frame=10)
    >>> r = simulate(inst, pol)   # priority 2 / 1 slot beats 20 / 20 slots
    >>> r.schedule.final_start(inst).tolist(), r.metrics.token_goodput
    ([0, 1], 2.0)
    >>> GmaxPolicy("gmax", inst.output, frame=0)
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid frame: must be an integer >= 1, got 0
    """

    def __init__(self, name: str, median: NDArray[Any], *, lengths: str = "quantile",
                 sigma: float = 0.5, quantile: float = 0.95, p: float = 0.95, frame: int = 50,
                 delta: float = 0.1, starve: float = 1e-3, candidates: str = "cutoff",
                 topk: int = 2, group_key: str = "input", infeasible: str = "filter") -> None:
        self.name = name
        self.median = np.maximum(np.asarray(median, dtype=np.float64), 1.0)
        self.lengths = _choice("lengths", lengths, ("quantile", "exact"))
        self.sigma = _num("sigma", sigma, 0.0, 10.0)
        self.q = _num("quantile", quantile, 0.0, 1.0, lo_open=True)
        if self.q >= 1.0:
            raise UsageError("quantile", f"must be < 1, got {quantile!r}")
        self.p = _num("p", p, 0.0, 1.0, lo_open=True)
        if isinstance(frame, bool) or not isinstance(frame, (int, np.integer)) or frame < 1:
            raise UsageError("frame", f"must be an integer >= 1, got {frame!r}")
        self.frame = int(frame)
        self.delta = _num("delta", delta, 0.0, 1e9)
        self.starve = _num("starve", starve, 0.0, 1e9)
        self.candidates = _choice("candidates", candidates, ("cutoff", "topk"))
        if isinstance(topk, bool) or not isinstance(topk, (int, np.integer)) or topk < 1:
            raise UsageError("topk", f"must be an integer >= 1, got {topk!r}")
        self.topk = int(topk)
        self.group_key = _choice("group_key", group_key, ("input", "context"))
        self.infeasible = _choice("infeasible", infeasible, ("filter", "discount"))
        self.options = {"lengths": lengths, "sigma": sigma, "quantile": quantile, "p": p,
                        "frame": frame, "delta": delta, "starve": starve,
                        "candidates": candidates, "topk": topk, "group_key": group_key,
                        "infeasible": infeasible}

    # ------------------------------------------------------------------ setup
    def reset(self, st: SimState) -> None:
        inst = st.instance
        n = st.n
        spec = inst.slo
        self.slotted = inst.is_slotted
        self.a = inst.arrival.astype(np.float64)
        self.s = inst.prompt
        self.o = inst.output
        rule = inst.goodput
        self.w_in, self.w_out = rule.input_weight, rule.output_weight
        if spec is None:
            self.kind = np.zeros(n, dtype=np.int64)
            self.R = np.zeros(n)
            self.due = np.full(n, np.inf)
            self.ttft = self.tbt = self.value = np.full(n, np.nan)
            self.group = np.full(n, -1, dtype=np.int64)
            self.stage = np.zeros(n, dtype=np.int64)
            self.a_g = self.a
        else:
            self.kind = spec.kind
            self.R = spec.base_value(inst.prompt, inst.output, rule)
            self.a_g = group_arrival(spec, inst.arrival)
            self.due = np.where((self.kind == DEADLINE) | (self.kind == COMPOUND),
                                self.a_g + np.nan_to_num(spec.deadline, nan=np.inf), np.inf)
            self.ttft, self.tbt, self.value = spec.ttft, spec.tbt, spec.value
            self.group, self.stage = spec.group, spec.stage
        comp = np.flatnonzero(self.kind == COMPOUND)
        self.comp = comp
        if comp.size:
            gid, inv = np.unique(self.group[comp], return_inverse=True)
            self.comp_g = inv.reshape(-1)               # dense group index of each member
            self.n_groups = gid.size
            self.group_R = np.bincount(self.comp_g, weights=self.R[comp], minlength=gid.size)
            self.dense = np.full(n, -1, dtype=np.int64)
            self.dense[comp] = self.comp_g
            _, self.comp_gs = np.unique(self.comp_g * (int(self.stage.max()) + 1)
                                        + self.stage[comp], return_inverse=True)
            self.comp_gs = self.comp_gs.reshape(-1)
            self.gs_group = np.zeros(int(self.comp_gs.max()) + 1, dtype=np.int64)
            self.gs_group[self.comp_gs] = self.comp_g
        pos = self.R[self.R > 0]
        self.starve_unit = self.starve * (float(np.median(pos)) if pos.size else 0.0)
        self.waited = np.zeros(n)
        self.next_frame = st.t
        self.t0, self.now0 = st.t, st.now
        self.rank = np.empty(n, dtype=np.int64)
        self.rank[np.lexsort((np.arange(n), inst.arrival))] = np.arange(n)
        # the bound of a request that has generated nothing (every waiting one), computed once
        self.ub0 = (None if self.lengths == "exact" else
                    conditional_upper(self.median, self.sigma, self.q, np.zeros(n, np.int64)))
        # without SLOs (every kind "none") every priority and goodput is 0, so a waiting
        # request's place in the ranking (bound, then arrival) never changes: one sort here
        self.no_slo = not bool((self.kind != NONE).any())
        if self.no_slo:
            ub_wait = np.maximum(self.o, 1) if self.ub0 is None else self.ub0
            self.wait_order = np.lexsort((self.rank, ub_wait))
            self.wait_need = self.s[self.wait_order] + 1      # prompt + 1: the need to start
        self.stats = {"frames": 0, "preemptions": 0, "overflow_evictions": 0}

    def on_arrival(self, st: SimState, ids: NDArray[np.int64]) -> None:
        """Nothing to do: priorities are recomputed at every decision (without SLOs they are
        all 0, and the waiting requests are ranked once, in :meth:`reset`)."""

    def on_complete(self, st: SimState, ids: NDArray[np.int64]) -> None:
        """Nothing to do."""

    # -------------------------------------------------------------- analyze
    def _v_token(self, st: SimState) -> float:
        if self.slotted:
            return 1.0  # SLOs are in slots; one token per slot
        steps = st.t - self.t0
        return (st.now - self.now0) / steps if steps > 0 and st.now > self.now0 else 0.02

    def _bound(self, ids: NDArray[np.int64], g: NDArray[np.int64]) -> NDArray[np.int64]:
        if self.lengths == "exact":
            return np.maximum(self.o[ids], g + 1)
        assert self.ub0 is not None
        ub = self.ub0[ids]
        grown = g > 0
        if grown.any():
            ub[grown] = conditional_upper(self.median[ids[grown]], self.sigma, self.q, g[grown])
        return ub

    def analyze(self, st: SimState, ids: NDArray[np.int64], g: NDArray[np.int64]
                ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
        """Priority, estimated goodput and length bound of requests ``ids`` with progress ``g``.

        Vectorized over ``ids``; see the module docstring.
        """
        ub = self._bound(ids, g)
        if self.no_slo:  # no SLOs: what the kind "none" gets below, without the passes
            return np.zeros(ids.size), np.zeros(ids.size), ub
        now = float(st.t) if self.slotted else st.now
        v = self._v_token(st)
        len_rem = np.maximum(ub - g, 1)
        t_gen = len_rem * v
        kind = self.kind[ids]
        good = np.zeros(ids.size)
        feas = np.zeros(ids.size, dtype=bool)
        work = t_gen.astype(np.float64).copy()
        d = kind == DEADLINE
        if d.any():
            good[d] = self.R[ids[d]]
            feas[d] = now + t_gen[d] <= self.due[ids[d]] + 1e-9
            if self.infeasible == "discount":
                el = now - self.a[ids[d]] + t_gen[d]
                good[d] *= np.minimum(1.0, (self.due[ids[d]] - self.a[ids[d]]) / el)
                feas[d] = True
        sm = kind == STREAM
        if sm.any():
            good[sm], feas[sm] = self._stream(ids[sm], g[sm], len_rem[sm], ub[sm], now, v)
        cm = kind == COMPOUND
        if cm.any():
            good[cm], feas[cm], work[cm] = self._compound(st, ids[cm], now, v, ids, ub)
        good += self.starve_unit * self.waited[ids] * (kind != NONE)
        prio = np.where(feas, good / (work + 1e-9), 0.0)
        return prio, good, ub

    def _stream(self, ids: NDArray[np.int64], g: NDArray[np.int64], len_rem: NDArray[np.int64],
                ub: NDArray[np.int64], now: float, v: float
                ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        # token j (g < j <= g + len_rem) is emitted at now + (j - g) v and due at
        # a + ttft + (j - 1) tbt: on time iff (v - tbt) j <= a + ttft - tbt - now + g v
        tbt = self.tbt[ids]
        c0 = self.a[ids] + self.ttft[ids] - tbt - now + g * v
        slope = v - tbt
        lo, hi = g + 1, g + len_rem
        with np.errstate(divide="ignore", invalid="ignore"):
            lim = c0 / slope
            up = np.clip(np.floor(lim + 1e-9), lo - 1, hi)        # slope > 0: j <= lim
            dn = np.clip(np.ceil(lim - 1e-9), lo, hi + 1)          # slope < 0: j >= lim
        cnt = np.where(slope > 0, up - lo + 1, np.where(slope < 0, hi - dn + 1,
                                                        np.where(c0 >= 0, len_rem, 0)))
        cnt = np.maximum(cnt, 0).astype(np.float64)
        first = (g == 0) & (now + v <= self.a[ids] + self.ttft[ids] + 1e-9)
        val = self.value[ids]
        good = np.where(np.isnan(val), self.w_out * cnt + self.w_in * self.s[ids] * first,
                        np.nan_to_num(val) * cnt / ub)
        return good, cnt > 0

    def _compound(self, st: SimState, ids: NDArray[np.int64], now: float, v: float,
                  all_ids: NDArray[np.int64], all_ub: NDArray[np.int64]
                  ) -> tuple[NDArray[np.float64], NDArray[np.bool_], NDArray[np.float64]]:
        comp = self.comp
        live = ~st.done[comp]
        gm = np.where(st.start[comp] >= 0, st.t - st.start[comp], 0)
        where = np.full(st.n, -1, dtype=np.int64)
        where[all_ids] = np.arange(all_ids.size)
        pos = where[comp]
        ub = np.empty(comp.size, dtype=np.int64)
        known = pos >= 0
        ub[known] = all_ub[pos[known]]
        if not known.all():  # members not in the system yet (or done): bound from g
            ub[~known] = self._bound(comp[~known], gm[~known])
        t_gen = np.maximum(ub - gm, 1) * v * live
        work = np.bincount(self.comp_g, weights=t_gen, minlength=self.n_groups)
        stage_max = np.zeros(self.gs_group.size)
        np.maximum.at(stage_max, self.comp_gs, t_gen)
        crit = np.bincount(self.gs_group, weights=stage_max, minlength=self.n_groups)
        gi = self.dense[ids]
        due = self.due[ids]
        feas = now + crit[gi] <= due + 1e-9
        good = self.group_R[gi].copy()
        if self.infeasible == "discount":
            el = now - self.a_g[ids] + crit[gi]
            good *= np.minimum(1.0, (due - self.a_g[ids]) / np.maximum(el, 1e-9))
            feas[:] = True
        return good.astype(np.float64), feas, work[gi].astype(np.float64)

    # --------------------------------------------------------------- decide
    def _could_fit(self, ids: NDArray[np.int64], pos: NDArray[np.int64], room: int
                   ) -> NDArray[np.int64]:
        """The positions of ``pos`` whose request fits ``room`` tokens alone (prompt + 1).

        Admission takes candidates in order and skips those that do not fit the room left,
        which only shrinks; so when every candidate may start (the batch limit does not cut the
        list), dropping those that do not fit even the whole room first changes nothing, and
        spares ranking a long queue of which only a few can start.
        """
        return pos[self.s[ids[pos]] + 1 <= room]

    def _fitting_head(self, ids: NDArray[np.int64], pos: NDArray[np.int64], room: int,
                      ranked: Callable[[NDArray[np.int64]], NDArray[np.int64]],
                      keys: Callable[[NDArray[np.int64]], list[NDArray[Any]]]
                      ) -> NDArray[np.int64]:
        """A head of ``ranked(pos)`` that admission can stop at: after admitting from it in
        order (:func:`_greedy_fit`), the room left is below every need outside it, so the
        rest of the order would all be skipped. Heads of 32, 128, ... positions are found
        with :func:`~kvopt.core.arrays.lex_smallest` on ``keys`` (``ranked``'s order), so a
        long queue of which only a few can start is not sorted whole."""
        k = 32
        while k < pos.size:
            inside = np.zeros(pos.size, dtype=bool)
            inside[lex_smallest(keys(pos), k)] = True
            head = ranked(pos[inside])
            left = _greedy_fit(self.s[ids[head]] + 1, room)[1]
            if int(self.s[ids[pos[~inside]]].min()) + 1 > left:
                return head
            k *= 4
        return ranked(pos)

    def _overflow(self, st: SimState, prio: NDArray[np.float64], excess: int
                  ) -> tuple[NDArray[np.int64], int]:
        """Overflow of the next slot by ``excess`` tokens: the positions in ``st.running``
        to evict, lowest priority first (``prio``, one per running request; ties: the latest
        arrival first) until the excess is covered, and the tokens they free."""
        run = st.running
        contrib = self.s[run] + (st.t + 1) - st.start[run]
        low = np.lexsort((-self.rank[run], prio))
        k, freed = evictions_to_cover(contrib[low], excess)
        self.stats["overflow_evictions"] += k
        return low[:k], freed

    def _decide_no_slo(self, st: SimState) -> Decision:
        """Between frames without SLOs: :meth:`decide` with every priority 0, so the ranking
        of the waiting requests is the fixed ``wait_order`` and nothing needs analysing."""
        M = st.M
        run = st.running
        waiting = st.is_waiting[self.wait_order]      # over the ranking order
        n_wait = int(np.count_nonzero(waiting))
        used = st.next_memory()
        ev = None
        if used > M and run.size:  # priorities all 0: the latest arrival first
            out, freed = self._overflow(st, np.zeros(run.size), used - M)
            ev = run[out]
            used -= freed
        free = st.B - run.size + (0 if ev is None else ev.size)
        room = M - used
        if n_wait <= free:  # all may start: only those that fit the room alone can
            pos = np.flatnonzero(waiting & (self.wait_need <= room))
        else:               # the first free of the ranking
            pos = np.flatnonzero(waiting)[:max(free, 0)]
        adm = self.wait_order[pos[_greedy_fit(self.wait_need[pos], room)[0]]]
        waiting_left = n_wait - adm.size + (0 if ev is None else ev.size)
        return Decision(evict=ev, admit=adm, wake=self.next_frame if waiting_left else None)

    def decide(self, st: SimState) -> Decision:
        t, M, B = st.t, st.M, st.B
        run = st.running
        frame = t >= self.next_frame
        if self.no_slo and not frame:
            return self._decide_no_slo(st)
        wait = np.flatnonzero(st.is_waiting)
        if frame:
            self.next_frame = t + self.frame
            self.stats["frames"] += 1
            self.waited[wait] += 1
        ids = np.concatenate([run, wait])
        g = np.concatenate([t - st.start[run], np.zeros(wait.size, dtype=np.int64)])
        prio, good, ub = self.analyze(st, ids, g)
        nr = run.size
        tie = ub - g

        def keys(pos: NDArray[np.int64]) -> list[NDArray[Any]]:
            """The ranking's keys, primary first: priority desc, shorter bound, arrival."""
            return [-prio[pos], tie[pos], self.rank[ids[pos]]]

        def ranked(pos: NDArray[np.int64]) -> NDArray[np.int64]:
            """``pos`` in the order of ``keys`` (strict: arrival ranks are distinct)."""
            return pos[np.lexsort(keys(pos)[::-1])]

        def top(pos: NDArray[np.int64], k: int) -> NDArray[np.int64]:
            """The first ``k`` of ``ranked(pos)`` without sorting all of ``pos``."""
            if k <= 0:
                return _EMPTY
            if pos.size > k:  # the first k of the same strict order, by partitions
                pos = pos[lex_smallest(keys(pos), k)]
            return ranked(pos)[:k]

        evict: list[NDArray[np.int64]] = []
        used = st.next_memory()
        alive = np.ones(nr, dtype=bool)
        if used > M and nr:
            out, freed = self._overflow(st, prio[:nr], used - M)
            evict.append(run[out])
            alive[out] = False
            used -= freed
        n_run = int(alive.sum())
        want: NDArray[np.int64]
        if frame:
            key = (self.s[ids] + (g if self.group_key == "context" else 0)).astype(np.float64)
            sel = gmax_select(prio, key, B, self.p,
                              topk=self.topk if self.candidates == "topk" else None)
            chosen = np.zeros(ids.size, dtype=bool)
            chosen[sel] = True
            if sel.size < B:  # work conservation: fill by priority, bound, arrival
                rest = np.flatnonzero(~chosen)
                chosen[rest if rest.size <= B - sel.size else top(rest, B - sel.size)] = True
            chosen[:nr] &= alive
            picked = nr + np.flatnonzero(chosen[nr:])            # selected waiting
            free = B - n_run
            if picked.size <= free:  # all may start: only those that fit can (see below)
                picked = self._could_fit(ids, picked, M - used)
            new = ranked(picked)
            out = ranked(np.flatnonzero(~chosen[:nr] & alive))[::-1]  # unselected running
            want = new[:max(free, 0)]
            extra = new[max(free, 0):]
            victims: list[int] = []
            for w, r in zip(extra.tolist(), out.tolist(), strict=False):
                if prio[w] > prio[r] and good[w] > (1 + self.delta) * good[r]:
                    victims.append(r)
                else:
                    break
            if victims:
                vic = np.asarray(victims, dtype=np.int64)
                evict.append(run[vic])
                alive[vic] = False
                used -= int((self.s[run[vic]] + (t + 1) - st.start[run[vic]]).sum())
                want = np.concatenate([want, extra[:vic.size]])
                self.stats["preemptions"] += vic.size
        else:
            pos = nr + np.arange(wait.size)
            if pos.size <= B - n_run:  # all may start: only those that fit can (see below)
                pos = self._could_fit(ids, pos, M - used)
                want = self._fitting_head(ids, pos, M - used, ranked, keys)
            else:
                want = top(pos, B - n_run)
        # admission under the KV limit: in order, skipping requests that do not fit now
        cand = ids[want]
        admitted = cand[_greedy_fit(self.s[cand] + 1, M - used)[0]]
        ev = np.concatenate(evict) if evict else None
        adm = admitted.astype(np.int64)
        waiting_left = wait.size - adm.size + (0 if ev is None else ev.size)
        return Decision(evict=ev, admit=adm, wake=self.next_frame if waiting_left else None)
