""":class:`GreedyPolicy` — admission by *current* memory (next slot only), no look-ahead:

- ``fcfs`` (vLLM-like): arrival order while ``memory(t+1) + s_i + 1 <= M``; on overflow
  preempt the newest (latest-arrived) running request, repeatedly, and recompute it later.
- ``sjf``: the same with true output lengths as the order (shortest first); victims are the
  longest.
- ``alpha-protection`` (seed 001 Sec. 5.2): arrival order while the usage stays
  ``<= (1 - alpha) M``; on overflow all running requests are cleared (restart from the prompt).
- ``alpha-beta-clearing``: on overflow each running request is cleared independently with
  probability ``beta``; passes repeat until memory fits, each extra pass charges one more
  iteration of time to the next batch (A16).

Overflow handling: :mod:`kvopt.sim.policies`.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageTypeError
from kvopt.sim.engine import Decision, LivelockError, SimState, WaitQueue, evictions_to_cover
from kvopt.sim.policies.base import (
    _EMPTY,
    Policy,
    _choice,
    _clear_signature,
    _flag,
    _number,
    arrival_rank,
    due_rank,
)

#: Admission order: arrival, true output length (shortest first), or absolute deadline (EDF).
GreedyOrder = Literal["arrival", "length", "deadline"]
#: On memory overflow: preempt the newest request repeatedly, clear all, or clear each with
#: probability ``beta``.
GreedyOverflow = Literal["preempt", "clear-all", "beta"]


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

    def __init__(self, name: str, *, order: GreedyOrder = "arrival", alpha: float = 0.0,
                 overflow: GreedyOverflow = "preempt", beta: float = 0.1, stall: bool = True,
                 **extra: Any) -> None:
        if extra:
            raise UsageTypeError("options", f"{name}: unknown option(s) {sorted(extra)}")
        order = _choice("order", order, get_args(GreedyOrder))
        overflow = _choice("overflow", overflow, get_args(GreedyOverflow))
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
        if self.order == "deadline":  # EDF: rank of the due time (ties: arrival, id)
            self.key = due_rank(st.instance)
        else:
            self.key = st.o.copy() if self.order == "length" else np.zeros(st.n, dtype=np.int64)
        self.threshold = int(np.floor((1.0 - self.alpha) * st.M + 1e-9))
        self.last_clear: tuple[int, int, int, int] | None = None
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
                k, freed = evictions_to_cover(contrib[idx], used - M)
                ev = run[idx[:k]]
                used -= freed
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
        kept = st.kept  # tokens a resumed request brings back (recompute / swap)
        back = st.kept_if_evicted(ev)
        while len(queue) and len(admitted) < room:
            i = queue.peek()
            need = int(s[i] + (back[i] if i in back else kept[i])) + 1
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
