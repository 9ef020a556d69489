"""GSA and GBA: geometric slicing / batching (Feng, Yang & Zhang, arXiv:2601.22996).

The paper's text was not available to this implementation (only its abstract: "a geometric
phase structure that periodically restarts jobs to bound memory exposure, combined with a
staggered pipeline mechanism that enables high concurrency by smoothing aggregate memory
consumption"; GSA's competitive ratio <= 61.92, 32 for large ``M``; the clairvoyant GBA
10.67, 6.75 for large ``M``; the offline batch setting, every request at time 0). What
follows is kvopt's reading of that description, in the one timing convention (a run started
at ``k`` holds ``s + (tau - k)`` at ``tau = k+1 .. k+L``); the ratios are *tested* against the
proven optimum on every small instance the counterexample search tries, not derived here.

GSA (non-clairvoyant)
---------------------
- *Geometric phases.* Request ``i`` in phase ``p`` may run at most its *slice*
  ``c_i = min(first * base^p, M - s_i)`` tokens. A run that reaches its slice without
  completing is evicted at that decision point - a *restart*: its progress is lost - and the
  request moves to phase ``p + 1``. Since ``o_i <= M - s_i`` every request completes in the
  phase whose slice reaches ``o_i``; the work thrown away is a geometric sum, at most
  ``base / (base - 1)`` times the last slice.
- *Bounded exposure.* A running request never holds more than ``s_i + c_i``, so admission
  reserves the slice profile ``s_i + j, j = 1 .. c_i`` (eq. (5) of seed 001 with the slice as
  the prediction): the memory can never overflow, whatever the true lengths.
- *Priority.* Lower phases first (ties: arrival, id); a request is started only when every
  request of a lower phase has been started (the scan stops at the first that does not fit).
- *Staggered pipeline.* Starts are paced by their lifetime memory area
  ``g(s, c) = c s + c (c + 1) / 2`` (the token-steps of :mod:`kvopt.core.stability`): a
  credit earns ``M`` per slot (holding at most ``M``), a start is allowed while the credit is
  positive and costs its area. Starts of equal slices are then spread so that in steady state
  the aggregate memory is ``M`` on average (Little's law on memory) instead of the
  synchronised sawtooth of starting a whole batch at once, which leaves half the memory idle.
  ``pipeline=False`` turns the pacing off (pure phase batching, an ablation).

GBA (clairvoyant)
-----------------
The same pipeline over *geometric classes* instead of phases: request ``i`` belongs to class
``ceil(log_base(o_i / first))`` (``o <= first`` is class 0), classes are served in increasing
order (ties: arrival, id), admission reserves the true profile (``c_i = o_i``), the pacing
area is ``g(s_i, o_i)``, and nothing is ever evicted.

Readings not fixed by the description: the base (2) and first slice (1) are options; phases
and classes are not separated by barriers (a higher phase starts as soon as every lower one
has started and memory allows); with arrivals after 0 (outside the paper's setting) a
newcomer enters phase 0 / its class and takes priority over higher phases.

Preemption modes: GSA's evictions are restarts by design (``preemption_modes =
("restart",)``); GBA never evicts (every mode).

Examples
--------
>>> from kvopt import Instance
>>> from kvopt.sim import simulate
>>> inst = Instance(memory=12, arrival=[0] * 4, prompt=[1] * 4, output=[1, 2, 3, 5])
>>> r = simulate(inst, "gsa")
>>> r.metrics.total_latency, r.metrics.evictions, r.stats["restarts"]
(23.0, 6, 6)
>>> simulate(inst, "gba").metrics.total_latency, simulate(inst, "mcsf").metrics.total_latency
(12.0, 11.0)
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageTypeError
from kvopt.core.instance import Instance
from kvopt.sim.admission import FutureProfile, earliest_fit, try_admit
from kvopt.sim.engine import Decision, SimState, WaitQueue
from kvopt.sim.policies import PolicyInfo, declare_policy_options, register_policy
from kvopt.sim.policies.base import Policy, _count, _flag, _number, arrival_rank
from kvopt.sim.predicted_lengths import Predictions

__all__ = ["GeometricPolicy", "geometric_class"]

#: Proven ratios of the paper (general instances, large-memory regime).
GSA_RATIO, GSA_RATIO_LARGE_M = 61.92, 32.0
GBA_RATIO, GBA_RATIO_LARGE_M = 10.67, 6.75


def geometric_class(output: NDArray[np.int64], base: float = 2.0, first: int = 1
                    ) -> NDArray[np.int64]:
    """``ceil(log_base(o / first))``, 0 for ``o <= first``: the phase in which a request
    of length ``o`` completes under GSA (ignoring the ``M - s`` cap), GBA's class.

    Examples
    --------
    >>> geometric_class(np.array([1, 2, 3, 4, 5, 8, 9])).tolist()
    [0, 1, 2, 2, 3, 3, 4]
    """
    o = np.asarray(output, dtype=np.float64)
    k = np.ceil(np.log(np.maximum(o / first, 1.0)) / math.log(base) - 1e-9)
    return np.maximum(k, 0).astype(np.int64)


class GeometricPolicy(Policy):
    """GSA (``clairvoyant=False``) or GBA (``clairvoyant=True``); see the module docstring.

    Parameters
    ----------
    name
        Registry name.
    clairvoyant
        GBA: classes from the true lengths, no slices, no restarts.
    base, first
        Geometric ratio of the slices / classes and the first slice.
    pipeline
        Pace starts by their memory area (the staggered pipeline).

    Examples
    --------
    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> inst = Instance(memory=12, arrival=[0] * 4, prompt=[1] * 4, output=[1, 2, 3, 5])
    >>> gsa = GeometricPolicy("gsa", clairvoyant=False, base=3)   # slices 1, 3, 9, ...
    >>> simulate(inst, gsa).metrics.total_latency, gsa.stats
    (18.0, {'restarts': 4, 'phases': 2})
    >>> GeometricPolicy("gba", clairvoyant=True).preemption_modes   # GBA never evicts
    ('restart', 'recompute', 'swap')
    """

    def __init__(self, name: str, *, clairvoyant: bool, base: float = 2.0, first: int = 1,
                 pipeline: bool = True, **extra: Any) -> None:
        if extra:
            raise UsageTypeError("options", f"{name}: unknown option(s) {sorted(extra)}")
        self.name = name
        self.clairvoyant = bool(clairvoyant)
        self.base = _number("base", base, 1.0, math.inf, lo_open=True, hi_open=True)
        self.first = _count("first", first)
        self.pipeline = _flag("pipeline", pipeline)
        self.preemption_modes = (("restart", "recompute", "swap") if clairvoyant
                                 else ("restart",))
        self.options = {"base": self.base, "first": self.first, "pipeline": self.pipeline}

    def _slice(self, st: SimState, i: int) -> int:
        """Request ``i``'s slice ``min(ceil(first * base^phase), M, M - s_i)`` (GBA: its
        length); the phase's part is computed once per phase and kept."""
        if self.clairvoyant:
            return int(st.o[i])
        p = int(self.phase[i])
        c = self.phase_slice.get(p)
        if c is None:
            raw = np.minimum(self.first * np.power(self.base, np.array([float(p)])), float(st.M))
            c = self.phase_slice[p] = int(np.ceil(raw - 1e-9).astype(np.int64)[0])
        return min(c, int(st.M - st.s[i]))

    def reset(self, st: SimState) -> None:
        n = st.n
        self.phase = (geometric_class(st.o, self.base, self.first) if self.clairvoyant
                      else np.zeros(n, dtype=np.int64))
        self.queue = WaitQueue(arrival_rank(st.a))
        self.cap = np.zeros(n, dtype=np.int64)
        self.pstart = np.zeros(n, dtype=np.int64)  # own copy: the engine clears st.start first
        # windows of M slots: the buffer is sized by the memory
        self.profile = FutureProfile(4 * int(st.M) + 64, "memory", self.name)
        self.credit = float(st.M)
        self.t_credit = st.t
        self.stats = {"restarts": 0, "phases": 0}
        self.phase_slice: dict[int, int] = {}

    def on_arrival(self, st: SimState, ids: NDArray[np.int64]) -> None:
        self.queue.push(ids, self.phase[ids])

    def on_complete(self, st: SimState, ids: NDArray[np.int64]) -> None:
        for i in ids.tolist():  # finished before its slice: free the rest of the reservation
            self.profile.remove(st.t, int(st.s[i]), int(self.pstart[i]), int(self.cap[i]))

    def decide(self, st: SimState) -> Decision:
        t, s, M = st.t, st.s, st.M
        run = st.running
        ev = None
        if not self.clairvoyant and run.shape[0]:
            used_up = t - st.start[run] >= self.cap[run]
            cut = run[used_up]
            if cut.shape[0]:  # slice used up without completing: restart in the next phase
                ev = cut
                self.phase[cut] += 1
                self.stats["restarts"] += int(cut.shape[0])
                self.stats["phases"] = max(self.stats["phases"], int(self.phase[cut].max()))
                self.queue.push(cut, self.phase[cut])
                run = run[~used_up]
        if self.pipeline:
            self.credit = min(float(M), self.credit + M * (t - self.t_credit))
        self.t_credit = t
        admitted: list[int] = []
        queue = self.queue
        wake: int | None = None
        H = int(M)
        base = self.profile.window(t, H)
        d = self.profile.d(H)
        room = st.B - run.shape[0]
        while len(queue) and len(admitted) < room:
            if self.pipeline and self.credit <= 0:
                wake = t + int(-self.credit // M) + 1
                break
            i = queue.peek()
            c = self._slice(st, i)
            alone = not admitted and run.shape[0] == 0
            if not try_admit(base, d, int(s[i]), c, M, force=alone):
                until = int((self.pstart[run] + self.cap[run]).min()) if run.shape[0] else None
                wake = earliest_fit(self.profile, t, int(s[i]), c, M, until)
                break
            queue.pop()
            self.cap[i] = c
            self.pstart[i] = t
            if self.pipeline:
                self.credit -= c * int(s[i]) + c * (c + 1) / 2
            admitted.append(i)
        if not self.clairvoyant:  # the next slice end is a decision point
            allrun = np.concatenate([run, np.asarray(admitted, dtype=np.int64)])
            if allrun.shape[0]:
                w = int((self.pstart[allrun] + self.cap[allrun]).min())
                wake = w if wake is None else min(wake, w)
        return Decision(evict=ev, admit=np.asarray(admitted, dtype=np.int64), wake=wake)


# ------------------------------------------------------------------------- registry
def _gsa(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    return GeometricPolicy("gsa", clairvoyant=False, **kw)


def _gba(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    return GeometricPolicy("gba", clairvoyant=True, **kw)


register_policy("gsa", _gsa, PolicyInfo())            # restart only: its restarts are the algorithm
register_policy("gba", _gba, PolicyInfo(offline=True, modes=("restart", "recompute", "swap")))
declare_policy_options("gsa", GeometricPolicy, fixed=("clairvoyant",))
declare_policy_options("gba", GeometricPolicy, fixed=("clairvoyant",))
