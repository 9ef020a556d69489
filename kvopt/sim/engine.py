"""The event-driven, vectorized continuous-batching engine.

Model (the foundation's convention, notes/seed-001 §1): decision point ``t`` happens at
wall time ``times[t]``; there the policy may evict running requests and start waiting ones;
then batch ``t+1`` runs (prefill of the requests started at ``t`` plus one decode token for
every other running request) from ``times[t]`` to ``times[t+1]``. A request started at ``k``
holds ``s + (tau - k)`` tokens at ``tau = k+1 .. k+o`` and completes at decision point
``k + o``. The capacity ``M`` must hold at every slot: a policy that lets the next slot
overflow is an error (:class:`PolicyError`); policies that tolerate overflow (vLLM-like
FCFS, the alpha family, MC-SF under noisy predictions, Amin) evict when the engine calls them
at the last decision point before an overflow.

What an evicted request keeps is the preemption mode of the
:class:`~kvopt.sim.serving.EngineConfig` (the :mod:`kvopt.core.schedule` semantics):
``restart`` (default) loses the run; ``recompute`` keeps the generated tokens, and the
resumed run re-prefills prompt + generated tokens (charged by the step-time model) and holds
them at once; ``swap`` moves the KV to host memory and back over the host link (charged to the
step that swaps). The same configuration sets KV blocks (memory rounded up per request) and
prefill batching: ``mixed`` (default), vLLM v0's ``prefill-only`` steps (running requests
pause) or ``chunked`` prefill (a token budget per step, decodes first).

State is a struct of arrays (``start``, ``done``, ``is_waiting``, ``kept`` per request; the
running set as an index array with its memory as ``C + count * tau``, where ``start`` is the
*effective* start ``k - offset``, moved by pauses). The loop visits only *events*:
arrivals, completions, the slot before an overflow (exactly, in blocks), the end of a chunked
prefill, and a ``wake`` slot the policy asks for (e.g. the first slot at which MC-SF's
head-of-line candidate can fit). Between events the batch composition is constant, so batch
durations for the whole stretch are one vectorized call of the step-time model and nothing per
token runs in Python.
"""

from __future__ import annotations

import time as _time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance
from kvopt.core.limits import check_allocation
from kvopt.core.schedule import Schedule
from kvopt.sim.decision import (
    Decision,
    LivelockError,
    PolicyError,
    SimulationError,
    WaitQueue,
    evictions_to_cover,
)
from kvopt.sim.serving import (
    EngineConfig,
    block_tokens,
    default_host_memory,
    first_block_overflow,
    swap_seconds_per_token,
)
from kvopt.sim.state import _EMPTY, PolicyProtocol, SimState
from kvopt.sim.steptime import StepTimeModel, UnitStepTime

__all__ = ["Decision", "EngineConfig", "EngineResult", "LivelockError", "PolicyError",
           "PolicyProtocol", "SimState", "SimulationError", "WaitQueue", "evictions_to_cover",
           "run_engine"]

_TIME_EPS = 1e-9


_AR = np.arange(1024, dtype=np.int64)


def _arange(k: int) -> NDArray[np.int64]:
    """``np.arange(k)`` from a cache."""
    global _AR
    if k > _AR.shape[0]:  # a stretch of k slots: per-slot arrays of that size follow
        check_allocation(6 * 8 * 2 * k, f"the simulator's per-slot arrays of a stretch of "
                         f"{k:,} slots", "requests")
        _AR = np.arange(2 * k, dtype=np.int64)
    return _AR[:k]


@dataclass
class EngineResult:
    """Raw engine output (wrapped into :class:`kvopt.sim.SimResult`).

    Examples
    --------
    Two requests of peak 4 in ``M = 5`` cannot overlap their last slots, so FCFS runs them
    one after the other:

    >>> from kvopt import Instance
    >>> from kvopt.sim import make_policy
    >>> from kvopt.sim.predicted_lengths import resolve_predictions
    >>> from kvopt.sim.steptime import UnitStepTime
    >>> inst = Instance(memory=5, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> rng = np.random.default_rng(0)
    >>> res = run_engine(inst, make_policy(inst, "fcfs", resolve_predictions(inst, None, rng)),
    ...                  UnitStepTime(), rng)
    >>> res.schedule.completion(inst).tolist(), res.decisions, res.stats["slots"]
    ([3, 6], 4, 6)
    """

    schedule: Schedule
    decisions: int
    wall_seconds: float
    stats: dict[str, Any] = field(default_factory=dict)


class _Recorder:
    """Collects runs (and, beyond the seed convention, offsets, prefill slots, swaps)."""

    def __init__(self, plain: bool) -> None:
        self.cols: list[list[NDArray[Any]]] = [[] for _ in range(4 if plain else 7)]

    def add(self, ids: NDArray[np.int64], start: NDArray[np.int64], length: NDArray[np.int64],
            completed: bool, *extended: NDArray[Any]) -> None:
        """One batch of runs; ``extended`` = (offset, prefill, swapped) beyond the seed
        convention."""
        c = self.cols
        c[0].append(ids)
        c[1].append(start)
        c[2].append(length)
        c[3].append(np.full(ids.shape[0], completed, dtype=bool))
        for col, x in zip(c[4:], extended, strict=True):
            col.append(x)

    def arrays(self) -> list[NDArray[Any]]:
        dt = (np.int64, np.int64, np.int64, bool, np.int64, np.int64, bool)
        out = [np.concatenate(c) if c else np.zeros(0, dtype=d)
               for c, d in zip(self.cols, dt, strict=False)]
        return out + [np.zeros(out[0].shape[0], dtype=d) for d in dt[len(out):]]


class _Engine:
    """One simulation (see :func:`run_engine`): the state, the event loop and its steps."""

    def __init__(self, instance: Instance, policy: Any, step_time: StepTimeModel,
                 rng: np.random.Generator, *, progress: bool, max_decisions: int | None,
                 source: str, meta: dict[str, Any] | None, max_batch: int | None,
                 prediction_cost: Any, config: EngineConfig | None) -> None:
        cfg = config or EngineConfig()
        cfg.check(instance.memory)
        self.cfg = cfg
        self.plain = cfg.seed_convention
        self.blocks = cfg.block_size > 1
        if max_batch is None:
            max_batch = instance.max_batch
        st = self.st = SimState(instance, rng, max_batch, cfg)
        st.predictions_free = prediction_cost is None
        self.instance, self.policy, self.step_time = instance, policy, step_time
        self.source, self.meta, self.prediction_cost = source, meta, prediction_cost
        n, a = st.n, st.a
        self.slotted = instance.is_slotted
        self.unit = isinstance(step_time, UnitStepTime)
        self.fast_run = getattr(step_time, "decode_run", None)
        self.first_batch = getattr(step_time, "first_batch", None)
        self.order = np.argsort(a, kind="stable")
        self.a_sorted = a[self.order]
        self.ptr = 0
        self.rec = _Recorder(self.plain)
        self.times: list[NDArray[np.float64]] = []
        self.stalls = 0
        self.pred = [0, 0, 0.0]  # prediction batches, items, seconds
        if self.slotted:
            st.t = int(a.min())
            st.now = float(st.t) if self.unit else 0.0
            self.times.append(np.arange(st.t + 1, dtype=np.float64) if self.unit
                              else np.zeros(st.t + 1))
        else:
            st.t = 0
            st.now = float(a.min())
            self.times.append(np.array([st.now]))
        self.budget = (max_decisions if max_decisions is not None
                       else 20 * (n + int(st.o.sum())) + 1000)
        self.decisions = 0
        self.evictions = 0
        self.bar = None
        if progress:
            from kvopt.core.progress import Progress

            self.bar = Progress(n, f"simulate {source}", unit="req")
        self.next_end = -1  # earliest true completion among the running requests
        self.next_a = float(self.a_sorted[0])
        self.comp: list[list[NDArray[Any]]] = [[] for _ in range(6)]
        self.flag = np.zeros(n, dtype=bool)
        # beyond the seed convention: the current run of every request
        self.run_k = np.full(n, -1, dtype=np.int64)
        self.run_off = np.zeros(n, dtype=np.int64)
        self.run_P = np.zeros(n, dtype=np.int64)
        self.run_sw = np.zeros(n, dtype=bool)
        self.paused: list[int] = []
        self.swap_s = 0.0 if self.unit else swap_seconds_per_token(step_time)
        self.host_cap = (cfg.host_memory if cfg.host_memory is not None
                         else default_host_memory(step_time, st.M))
        # recomputed_tokens: prompt + kept tokens prefilled again by resumed runs
        self.counters = {"swap_out": 0, "swap_in": 0, "swap_tokens": 0, "recomputed_tokens": 0,
                         "paused_slots": 0}
        self.swap_tokens_now = 0
        self.force_next = False

    # ------------------------------------------------------------------ the loop
    def run(self) -> EngineResult:
        t_wall = _time.perf_counter()
        st, policy = self.st, self.policy
        n = st.n
        policy.reset(st)
        while True:
            t = st.t
            if t == self.next_end:  # (the running set has not changed since next_end)
                self._complete(t)
            if st.n_done == n:
                break
            if self.ptr < n and self.next_a <= (t if self.slotted else st.now + _TIME_EPS):
                self._arrive(t)
            self.decisions += 1
            if self.decisions > self.budget:
                raise SimulationError(f"policy {self.source!r} exceeded {self.budget} decision "
                                      f"points ({st.n_done}/{n} done); livelock?")
            dec = policy.decide(st)
            self.swap_tokens_now = 0
            if dec.evict is not None and len(dec.evict):
                self._evict(np.asarray(dec.evict, dtype=np.int64), t)
            adm = _EMPTY
            if dec.admit is not None and len(dec.admit):
                adm = self._admit(np.asarray(dec.admit, dtype=np.int64), t)
            self.stalls += dec.stall
            extra = self._prediction_time(dec) if dec.predictions else 0.0
            if self.swap_tokens_now:
                extra += self.swap_tokens_now * self.swap_s
            chunks = self._plan_chunks(t) if st.prefilling.shape[0] else None
            cnt = int(st.running.shape[0])
            if cnt > st.B or self.blocks or st.C + cnt * (t + 1) + st.Cp > st.M:
                self._check_capacity(t)
            if not self._advance(dec, adm, extra, chunks):
                continue
            if dec.predictions_ahead is not None:  # the steps the policy slept through
                done = dec.predictions_ahead[: st.t - t - 1]
                self.pred[0] += int(np.count_nonzero(done))
                self.pred[1] += int(done.sum())
        return self._finish(_time.perf_counter() - t_wall)

    def _complete(self, t: int) -> None:
        st = self.st
        fin = st.run_end == t
        ids = st.running[fin]
        self.comp[0].append(ids)
        if self.plain:
            self.comp[1].append(st.start[ids])
        else:
            k = self.run_k[ids]
            self.comp[1].append(k)
            self.comp[2].append(self.run_off[ids])
            self.comp[3].append(self.run_P[ids])
            self.comp[4].append(self.run_sw[ids])
            self.comp[5].append(t - k)
        st.C -= int((st.s[ids] - st.start[ids]).sum())
        st.done[ids] = True
        st.start[ids] = -1
        keep = ~fin
        st.running = st.running[keep]
        st.run_end = st.run_end[keep]
        st.n_done += ids.shape[0]
        st.completions += ids.shape[0]
        self.policy.on_complete(st, ids)
        if self.bar is not None:
            self.bar.update(ids.shape[0])

    def _arrive(self, t: int) -> None:
        st = self.st
        if self.slotted:
            j = int(np.searchsorted(self.a_sorted, t, side="right"))
        else:
            j = int(np.searchsorted(self.a_sorted, st.now + _TIME_EPS, side="right"))
        ids = self.order[self.ptr:j]
        self.ptr = j
        st.arrived = j
        self.next_a = float(self.a_sorted[self.ptr]) if self.ptr < st.n else np.inf
        st.is_waiting[ids] = True
        self.policy.on_arrival(st, ids)

    def _evict(self, ev: NDArray[np.int64], t: int) -> None:
        st, flag = self.st, self.flag
        flag[ev] = True
        pos = flag[st.running]
        pre = flag[st.prefilling] if st.prefilling.shape[0] else None
        flag[ev] = False
        n_pre = 0 if pre is None else int(pre.sum())
        if int(pos.sum()) + n_pre != ev.shape[0]:
            raise PolicyError(f"{self.source}: evicting requests that are not running")
        if n_pre:
            assert pre is not None
            self._evict_prefilling(st.prefilling[pre], t)
            st.prefilling = st.prefilling[~pre]
            ev = st.running[pos]
        ev_start = st.start[ev]
        if self.plain:
            self.rec.add(ev, ev_start, t - ev_start, False)
        else:
            k = self.run_k[ev]
            self.rec.add(ev, k, t - k, False, self.run_off[ev], self.run_P[ev], self.run_sw[ev])
            if st.mode != "restart":
                self._keep(ev, t - ev_start, t - k > 0)
        st.C -= int((st.s[ev] - ev_start).sum())
        st.start[ev] = -1
        st.is_waiting[ev] = True
        keep = ~pos
        st.running = st.running[keep]
        st.run_end = st.run_end[keep]
        self.evictions += ev.shape[0] + n_pre

    def _evict_prefilling(self, ids: NDArray[np.int64], t: int) -> None:
        """Evict requests in the middle of their chunked prefill: their partial KV is dropped
        (they keep the tokens they resumed from, in recompute and swap mode)."""
        st = self.st
        k = self.run_k[ids]
        self.rec.add(ids, k, t - k, False, self.run_off[ids], t - k, self.run_sw[ids])
        st.Cp -= int(block_tokens(st.s[ids] + self.run_off[ids], st.block).sum())
        st.is_waiting[ids] = True
        if st.mode != "restart":
            st.kept[ids] = self.run_off[ids]

    def _keep(self, ev: NDArray[np.int64], tokens: NDArray[np.int64],
              has_kv: NDArray[np.bool_]) -> None:
        """Recompute / swap: the evicted requests keep ``tokens``; in swap mode their KV goes
        to host memory while it has room (else they are recomputed)."""
        st = self.st
        st.kept[ev] = tokens
        if st.mode != "swap":
            return
        need = block_tokens(st.s[ev] + tokens, st.block)
        for j in np.flatnonzero(has_kv).tolist():
            if st.host_used + int(need[j]) <= self.host_cap:
                i = int(ev[j])
                st.swapped[i] = True
                st.host_used += int(need[j])
                self.swap_tokens_now += int(st.s[i] + tokens[j])
                self.counters["swap_out"] += 1

    def _admit(self, adm: NDArray[np.int64], t: int) -> NDArray[np.int64]:
        st = self.st
        if not st.is_waiting[adm].all():
            bad = adm[~st.is_waiting[adm]][0]
            raise PolicyError(f"{self.source}: request {bad} admitted but not waiting")
        st.is_waiting[adm] = False
        if self.plain:
            st.start[adm] = t
            st.running = np.concatenate([st.running, adm])
            st.run_end = np.concatenate([st.run_end, t + st.o[adm]])
            st.C += int(st.s[adm].sum()) - t * adm.shape[0]
            return adm
        off = st.kept[adm]
        sw = st.swapped[adm]
        self.run_k[adm] = t
        self.run_off[adm] = off
        self.run_P[adm] = 0
        self.run_sw[adm] = sw
        st.kept[adm] = 0
        if sw.any():
            ids = adm[sw]
            st.swapped[ids] = False
            tok = st.s[ids] + off[sw]
            st.host_used -= int(block_tokens(tok, st.block).sum())
            self.swap_tokens_now += int(tok.sum())
            self.counters["swap_in"] += int(ids.shape[0])
        # a resumed run (offset > 0, not swapped in) prefills prompt + kept tokens again
        res = (off > 0) & ~sw
        self.counters["recomputed_tokens"] += int((st.s[adm[res]] + off[res]).sum())
        old = int(st.running.shape[0])
        if self.cfg.batching == "chunked" and not sw.all():
            pre = adm[~sw]
            st.prefilling = np.concatenate([st.prefilling, pre])
            st.pre_left[pre] = st.s[pre] + off[~sw]
            st.Cp += int(block_tokens(st.s[pre] + off[~sw], st.block).sum())
            self._start(adm[sw], t)
            return adm
        if self.cfg.batching == "prefill-only" and old and not sw.all():
            self._pause(t)
        self._start(adm, t)
        return adm

    def _start(self, ids: NDArray[np.int64], t: int) -> None:
        """Requests ``ids`` produce their first token of this run at slot ``t + 1``."""
        st = self.st
        if not ids.shape[0]:
            return
        eff = t - self.run_off[ids]
        st.start[ids] = eff
        st.running = np.concatenate([st.running, ids])
        st.run_end = np.concatenate([st.run_end, eff + st.o[ids]])
        st.C += int((st.s[ids] - eff).sum())

    def _pause(self, t: int) -> None:
        """Slot ``t + 1`` is a prefill-only iteration: every running request holds its memory
        and produces no token (its effective start moves one slot later)."""
        st = self.st
        st.start[st.running] += 1
        st.run_end = st.run_end + 1
        st.C -= int(st.running.shape[0])
        self.paused.append(t + 1)
        self.counters["paused_slots"] += 1
        self.force_next = True

    def _prediction_time(self, dec: Decision) -> float:
        if not dec.predictions:
            return 0.0
        self.pred[0] += 1
        self.pred[1] += int(dec.predictions)
        if self.prediction_cost is None:
            return 0.0
        x = float(self.prediction_cost.seconds(int(dec.predictions)))
        self.pred[2] += x
        return x

    def _memory_at(self, tau: int) -> int:
        """Memory at slot ``tau`` of the current running and prefilling sets (in blocks)."""
        st = self.st
        if st.block == 1:
            return st.C + int(st.running.shape[0]) * tau + st.Cp
        c = st.s[st.running] - st.start[st.running] + tau
        return int(block_tokens(c, st.block).sum()) + st.Cp

    def _check_capacity(self, t: int) -> None:
        st = self.st
        cnt = int(st.running.shape[0]) + int(st.prefilling.shape[0])
        nxt = self._memory_at(t + 1)
        if nxt > st.M:
            raise PolicyError(f"{self.source}: memory {nxt} > M = {st.M} at slot {t + 1}")
        if cnt > st.B:
            raise PolicyError(f"{self.source}: {cnt} requests running > max_batch = {st.B} "
                              f"at slot {t + 1}")

    # ------------------------------------------------------------ chunked prefill
    def _plan_chunks(self, t: int) -> _Chunks:
        """Chunked prefill at decision point ``t``: the step's token budget goes to the
        decodes first, the rest to the prefilling requests in admission order; those whose
        prefill ends in step ``t + 1`` start producing there. Returns the first step's
        statistics and the head request that the following steps work on."""
        st = self.st
        budget_total = int(self.cfg.chunk_budget or 0)
        pf = st.prefilling
        d_old = int(st.running.shape[0])
        kv_first = st.C + d_old * t
        left = st.pre_left[pf]
        base = st.s[pf] + self.run_off[pf]
        room = max(budget_total - d_old, 0)
        before = np.cumsum(left) - left
        take = np.minimum(left, np.maximum(room - before, 0))
        x = base - left
        P = int(take.sum())
        Psq = float(((x + take).astype(np.float64) ** 2 - x.astype(np.float64) ** 2).sum())
        fin = take == left
        ids = pf[fin]
        st.pre_left[pf] = left - take
        if ids.shape[0]:
            self.run_P[ids] = t - self.run_k[ids]
            st.Cp -= int(block_tokens(base[fin], st.block).sum())
            st.prefilling = pf[~fin]
            self._start(ids, t)
        ch = _Chunks(P, Psq, d_old, kv_first)
        budget = budget_total - int(st.running.shape[0])
        if st.prefilling.shape[0] and budget > 0:
            h = int(st.prefilling[0])
            lh = int(st.pre_left[h])
            ch.head, ch.chunk = h, budget
            ch.pos = int(st.s[h] + self.run_off[h]) - lh
            ch.next_transfer = t + -(-lh // budget)
        return ch

    def _chunk_steps(self, ch: _Chunks, m: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Prefill tokens and ``prefill_sq`` of the ``m`` steps after the first one."""
        if ch.head is None:
            return np.zeros(m, dtype=np.int64), np.zeros(m)
        x = (ch.pos + ch.chunk * _arange(m)).astype(np.float64)
        return np.full(m, ch.chunk, dtype=np.int64), (x + ch.chunk) ** 2 - x**2

    # ---------------------------------------------------------------- time steps
    def _overflow_point(self, t: int) -> int:
        """The last decision point before the running set outgrows ``M``."""
        st = self.st
        cnt = int(st.running.shape[0])
        if st.block == 1:
            return (st.M - st.Cp - st.C) // cnt
        c = st.s[st.running] - st.start[st.running]
        tau = first_block_overflow(c, t, st.M - st.Cp, st.block)
        assert tau is not None
        return tau - 1

    def _advance(self, dec: Decision, adm: NDArray[np.int64], extra: float,
                 ch: _Chunks | None) -> bool:
        """Jump to the next event; False if the worker idled until an arrival (timed)."""
        st = self.st
        t = st.t
        cnt = int(st.running.shape[0])
        cands = []
        if cnt:
            self.next_end = int(st.run_end.min())
            cands.append(self.next_end)
            cands.append(self._overflow_point(t))
        else:
            self.next_end = -1
        if ch is not None and ch.next_transfer is not None:
            cands.append(ch.next_transfer)
        if self.force_next:  # after a prefill-only iteration the policy decides again
            cands.append(t + 1)
            self.force_next = False
        if dec.wake is not None:
            cands.append(max(int(dec.wake), t + 1))
        next_arr: float | None = self.next_a if self.ptr < st.n else None
        if self.slotted and next_arr is not None and dec.arrivals_matter:
            if dec.arrival_filter is None or not cands:
                cands.append(int(next_arr))
            else:  # first relevant arrival before the other events
                j_end = int(np.searchsorted(self.a_sorted, min(cands), side="right"))
                if j_end > self.ptr:
                    rel = dec.arrival_filter(self.order[self.ptr:j_end])
                    if rel.any():
                        cands.append(int(self.a_sorted[self.ptr + int(np.argmax(rel))]))
        if not cands:
            if next_arr is None:
                raise SimulationError(f"policy {self.source!r} stalled with "
                                      f"{int(st.is_waiting.sum())} waiting requests and nothing "
                                      f"running")
            if not self.slotted:  # idle until the next arrival
                st.t = t + 1
                st.now = max(st.now, next_arr)
                self.times.append(np.array([st.now]))
                return False
            cands.append(int(next_arr))
        t_ev = max(min(cands), t + 1)
        L = t_ev - t
        dur = self._durations(dec, adm, extra, L, ch)
        if dur is None:
            tt = st.now + (_arange(L) + 1).astype(np.float64)
        else:
            if dec.stall:
                dur[0] *= 1 + dec.stall
            if extra:
                dur[0] += extra
            tt = st.now + np.cumsum(dur)
        if not self.slotted and next_arr is not None and dec.arrivals_matter:
            x = next_arr
            if dec.arrival_filter is not None and x <= tt[-1] + _TIME_EPS:
                j_end = int(np.searchsorted(self.a_sorted, tt[-1] + _TIME_EPS, side="right"))
                rel = dec.arrival_filter(self.order[self.ptr:j_end])
                x = float(self.a_sorted[self.ptr + int(np.argmax(rel))]) if rel.any() else np.inf
            k = int(np.searchsorted(tt, x - _TIME_EPS, side="left"))
            if k < L:
                L = k + 1
                tt = tt[:L]
                t_ev = t + L
        if ch is not None and ch.head is not None and L > 1:
            st.pre_left[ch.head] -= ch.chunk * (L - 1)
        self.times.append(tt)
        st.t = t_ev
        st.now = float(tt[-1])
        return True

    def _first_stats(self, adm: NDArray[np.int64]) -> tuple[int, float, int, int]:
        """Prefill tokens, ``sum prefill**2``, decodes and KV read of the step after ``t``."""
        st = self.st
        t = st.t
        cnt = int(st.running.shape[0])
        if self.plain:
            n_new = adm.shape[0]
            sa = st.s[adm]
            P = int(sa.sum()) if n_new else 0
            Psq = float(np.dot(sa, sa)) if n_new else 0.0
            # the others read sum_old (s + t - start) KV tokens
            return P, Psq, cnt - n_new, st.C + cnt * t - P
        pre = adm[~self.run_sw[adm]] if adm.shape[0] else adm
        base = st.s[pre] + self.run_off[pre]
        P = int(base.sum())
        Psq = float(np.dot(base, base)) if pre.shape[0] else 0.0
        if self.paused and self.paused[-1] == t + 1:  # only the swapped-in decode
            sw = adm[self.run_sw[adm]]
            return P, Psq, int(sw.shape[0]), int((st.s[sw] + self.run_off[sw]).sum())
        return P, Psq, cnt - int(pre.shape[0]), st.C + cnt * t - P

    def _durations(self, dec: Decision, adm: NDArray[np.int64], extra: float, L: int,
                   ch: _Chunks | None) -> NDArray[np.float64] | None:
        """Durations of the batches ``t+1 .. t+L`` (composition constant after ``t+1``);
        ``None`` for plain unit slots."""
        if self.unit:
            return None if not dec.stall and not extra else np.ones(L, dtype=np.float64)
        st, model = self.st, self.step_time
        t = st.t
        cnt = int(st.running.shape[0])
        if ch is not None:
            P, Psq, d_old, kv = ch.P, ch.Psq, ch.d_old, ch.kv
        else:
            P, Psq, d_old, kv = self._first_stats(adm)
        if self.first_batch is not None:
            first = np.array([self.first_batch(P, d_old, kv, Psq)])
        else:
            first = model.durations(np.array([P + d_old]), np.array([d_old]), np.array([kv]),
                                    np.array([P]), np.array([Psq]))
        if L == 1:
            return np.asarray(first, dtype=np.float64).reshape(1)
        # slots t+1+j (j >= 1): cnt decodes reading sum_running (s + t + j - start)
        kv0 = st.C + cnt * (t + 1)
        if ch is not None and ch.head is not None:
            pre, psq = self._chunk_steps(ch, L - 1)
            kvs = kv0 + cnt * _arange(L - 1)
            rest = model.durations(pre + cnt, np.full(L - 1, cnt), kvs, pre, psq)
        elif self.fast_run is not None:
            rest = self.fast_run(cnt, kv0, L - 1)
        else:
            kvs = kv0 + cnt * _arange(L - 1)
            rest = model.durations(np.full(L - 1, cnt), np.full(L - 1, cnt), kvs,
                                   np.zeros(L - 1, dtype=np.int64), np.zeros(L - 1))
        return np.concatenate([first, rest])

    # ------------------------------------------------------------------ the end
    def _finish(self, wall: float) -> EngineResult:
        st, cfg = self.st, self.cfg
        if self.bar is not None:
            self.bar.close()
        if self.comp[0]:
            ci = np.concatenate(self.comp[0])
            k = np.concatenate(self.comp[1])
            if self.plain:
                self.rec.add(ci, k, st.o[ci], True)
            else:
                self.rec.add(ci, k, np.concatenate(self.comp[5]), True,
                             *(np.concatenate(self.comp[j]) for j in (2, 3, 4)))
        req, rs, rl, rc, off, pre, sw = self.rec.arrays()
        all_times = np.concatenate(self.times)
        keep_times = not (self.slotted and self.unit and self.stalls == 0 and self.pred[2] == 0)
        extra: dict[str, Any] = {}
        if not self.plain:
            extra = {"run_offset": off, "run_prefill": pre, "run_swapped": sw,
                     "preemption": cfg.preemption, "block_size": cfg.block_size,
                     "host_memory": self.host_cap if cfg.preemption == "swap" else None,
                     "paused": np.asarray(self.paused, dtype=np.int64)}
        sched = Schedule(
            run_request=req, run_start=rs, run_length=rl, run_completed=rc.astype(bool),
            instance_sha256=self.instance.sha256(), source=self.source,
            times=all_times if keep_times else None, meta=dict(self.meta or {}), **extra,
        )
        stats: dict[str, Any] = {
            "decisions": self.decisions, "evictions": self.evictions, "stalls": self.stalls,
            "slots": int(all_times.shape[0] - 1), "prediction_batches": self.pred[0],
            "predictions": self.pred[1], "prediction_seconds": self.pred[2]}
        if not self.plain:
            stats.update(self.counters)
        return EngineResult(sched, self.decisions, wall, stats)


@dataclass
class _Chunks:
    """The chunked-prefill plan of one decision point (see :meth:`_Engine._plan_chunks`)."""

    P: int
    Psq: float
    d_old: int
    kv: int
    head: int | None = None
    chunk: int = 0
    pos: int = 0
    next_transfer: int | None = None


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
    config: EngineConfig | None = None,
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
    config
        Preemption mode, KV blocks, host memory and prefill batching
        (:class:`~kvopt.sim.serving.EngineConfig`; default: the seed convention).

    Returns
    -------
    EngineResult
        The (unvalidated) schedule and counters.

    Examples
    --------
    Most users call :func:`kvopt.sim.simulate`, which builds the policy and validates the
    schedule; the engine alone, FCFS in unit slots:

    >>> from kvopt import Instance
    >>> from kvopt.sim import make_policy
    >>> from kvopt.sim.predicted_lengths import resolve_predictions
    >>> from kvopt.sim.steptime import UnitStepTime
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 2], output=[4, 3])
    >>> rng = np.random.default_rng(0)
    >>> policy = make_policy(inst, "fcfs", resolve_predictions(inst, None, rng))
    >>> res = run_engine(inst, policy, UnitStepTime(), rng)
    >>> res.schedule, res.decisions, res.stats["evictions"]
    (<Schedule source='sim' runs=2 evictions=0 horizon=4>, 2, 0)
    """
    return _Engine(instance, policy, step_time, rng, progress=progress,
                   max_decisions=max_decisions, source=source, meta=meta, max_batch=max_batch,
                   prediction_cost=prediction_cost, config=config).run()
