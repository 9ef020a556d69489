"""Stability headroom of a KV-limited server (Nie, Si & Zhou, arXiv:2605.04595).

The server holds at most ``M`` KV tokens. Under the timing convention of the whole package
(notes/seed-001 §1) a request with prompt ``s`` and output ``o`` started at slot ``k`` holds
``s + (tau - k)`` tokens at ``tau = k+1 .. k+o``, so over its lifetime it occupies

.. math:: g(s, o) = \\sum_{j=1}^{o} (s + j) = o s + o (o + 1) / 2

*token-steps* of KV memory (the area under its memory profile). Little's law applied to the
memory (not to the requests): if requests arrive at ``lambda_step`` per step and every one
eventually runs, the mean memory in use is ``lambda_step E[g]``, which cannot exceed ``M``.
So no policy is stable above ``lambda_step = M / E[g]`` per step; with a step lasting ``b``
seconds the stability rate in requests per second is

.. math:: \\mu = \\frac{M}{b \\, E[g(s, o)]} ,

and the paper shows a work-conserving batching policy is stable below ``mu (1 - delta)``,
``delta`` the slack of the largest single request (a batch cannot pack ``M`` exactly).
``lambda / mu`` is the *load vs capacity* that every simulation and sweep row reports.

This module holds the pure formulas (numbers in, numbers out); the time per step ``b`` of a
step-time model at the batch that fills ``M`` is :func:`kvopt.sim.headroom.step_at_capacity`.

Examples
--------
>>> lifetime_token_steps([0, 2], [3, 1]).tolist()
[6, 3]
>>> stability_rate(memory=60, mean_g=6.0)      # 10 requests per step
10.0
>>> round(stability_rate(memory=60, mean_g=6.0, step=0.5), 6)   # b = 0.5 s per step
20.0
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvopt.core.errors import UsageError

__all__ = ["Backlog", "Headroom", "arrival_rate", "backlog_drift", "lifetime_token_steps",
           "mean_token_steps", "mean_token_steps_from_moments", "stability_rate"]


def lifetime_token_steps(prompt: ArrayLike, output: ArrayLike,
                         dtype: type[np.int64] | type[np.float64] = np.int64) -> NDArray[Any]:
    """``g(s, o) = o s + o (o + 1) / 2``: KV token-steps a request holds over its lifetime
    (its memory-time volume in the seed-001 timing convention: ``s + 1, ..., s + o``).

    ``dtype=np.float64`` computes in floating point (for fractional ``s``, and for lengths
    whose int64 product could overflow; exact while the values stay below ``2**53``).

    Examples
    --------
    >>> lifetime_token_steps(10, 4).tolist()   # 11 + 12 + 13 + 14
    [50]
    >>> lifetime_token_steps(0.5, [1, 2], dtype=np.float64).tolist()
    [1.5, 4.0]
    """
    s = np.atleast_1d(np.asarray(prompt, dtype=dtype))
    o = np.atleast_1d(np.asarray(output, dtype=dtype))
    if dtype is np.int64:
        return o * s + o * (o + 1) // 2
    return o * s + o * (o + 1) / 2


def mean_token_steps(prompt: ArrayLike, output: ArrayLike) -> float:
    """Empirical ``E[g(s, o)]`` of requests (a trace window, a generator's draw).

    Examples
    --------
    >>> mean_token_steps([0, 0], [1, 3])
    3.5
    """
    g = lifetime_token_steps(prompt, output)
    if g.size == 0:
        raise UsageError("requests", "no requests: E[g] is undefined")
    return float(g.mean())


def mean_token_steps_from_moments(mean_s: float, mean_o: float, mean_o2: float,
                                  mean_so: float | None = None) -> float:
    """Closed-form ``E[g] = E[s o] + (E[o^2] + E[o]) / 2`` from moments.

    Parameters
    ----------
    mean_s, mean_o, mean_o2
        ``E[s]``, ``E[o]``, ``E[o^2]``.
    mean_so
        ``E[s o]``; default ``E[s] E[o]`` (prompt and output independent).

    Examples
    --------
    Output geometric on ``{1, 2, ...}`` with success probability ``p`` (``E[o] = 1/p``,
    ``E[o^2] = (2 - p) / p^2``), prompt 10:

    >>> p = 0.25
    >>> mean_token_steps_from_moments(10, 1 / p, (2 - p) / p ** 2)   # 10*4 + (28 + 4)/2
    56.0
    """
    so = mean_s * mean_o if mean_so is None else mean_so
    return float(so + (mean_o2 + mean_o) / 2.0)


def stability_rate(memory: float, mean_g: float, step: float = 1.0) -> float:
    """``mu = M / (b E[g])``: the largest sustainable arrival rate (requests per unit of
    ``step``; per step for ``step = 1``).

    Examples
    --------
    >>> stability_rate(16492, 16492.0)
    1.0
    """
    if not (memory > 0 and mean_g > 0 and step > 0):
        raise UsageError("memory", f"mu needs M > 0, E[g] > 0 and b > 0, got M={memory}, "
                         f"E[g]={mean_g}, b={step}")
    return float(memory) / (float(step) * float(mean_g))


def arrival_rate(arrival: ArrayLike) -> float:
    """Arrival rate of a window: ``(n - 1) / (a_max - a_min)`` (the Poisson rate estimate
    given the first arrival at ``a_min``); ``inf`` when every request arrives at once
    (the offline batch setting, where ``lambda / mu`` is undefined).

    Examples
    --------
    >>> arrival_rate([0, 1, 2, 4])
    0.75
    >>> arrival_rate([0, 0, 0])
    inf
    """
    a = np.asarray(arrival, dtype=np.float64)
    if a.size < 2 or float(a.max() - a.min()) <= 0:
        return math.inf
    return (a.size - 1) / float(a.max() - a.min())


@dataclass(frozen=True)
class Headroom:
    """Load vs capacity of an instance (see the module docstring).

    Attributes
    ----------
    arrival_rate
        ``lambda`` in requests per instance time unit (per slot, or per second for a
        trace); ``inf`` when all requests arrive at once.
    mu
        ``M / (b E[g])`` in the same unit.
    load
        ``lambda / mu`` (``None`` when ``lambda`` is undefined: offline batch).
    mean_g
        ``E[g(s, o)]`` over the requests (token-steps).
    step
        ``b``: duration of one step in the instance's unit (1 for slotted instances).
    memory
        ``M``.
    unit
        ``"step"`` or ``"second"``.
    reading
        How ``b`` was read (``"slot"``: slotted instance, one step is one slot;
        ``"full-memory batch"``: the step-time model at the steady-state batch holding
        ``M`` KV tokens, see :func:`kvopt.sim.headroom.step_at_capacity`).

    Examples
    --------
    >>> h = Headroom.of(arrival=[0, 1, 2, 3], prompt=[0] * 4, output=[2] * 4, memory=6)
    >>> h.mean_g, h.mu, h.load
    (3.0, 2.0, 0.5)
    """

    arrival_rate: float
    mu: float
    load: float | None
    mean_g: float
    step: float
    memory: int
    unit: str = "step"
    reading: str = "slot"

    @classmethod
    def of(cls, arrival: ArrayLike, prompt: ArrayLike, output: ArrayLike, memory: int,
           step: float = 1.0, unit: str = "step", reading: str = "slot") -> Headroom:
        """Headroom of requests with the given arrivals, prompts and outputs."""
        eg = mean_token_steps(prompt, output)
        mu = stability_rate(memory, eg, step)
        lam = arrival_rate(arrival)
        load = None if math.isinf(lam) else lam / mu
        return cls(lam, mu, load, eg, float(step), int(memory), unit, reading)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``arrival_rate`` ``None`` when infinite)."""
        d = asdict(self)
        if math.isinf(self.arrival_rate):
            d["arrival_rate"] = None
        return d

    def describe(self) -> str:
        """One line for the CLI.

        Examples
        --------
        >>> print(Headroom.of([0, 1, 2, 3], [0] * 4, [2] * 4, 6).describe())
        load vs capacity lambda/mu = 0.5 (lambda 1 /step, mu = M/(b E[g]) = 2 /step, \
E[g] 3 token-steps, b 1 step: slot)
        """
        per = "/step" if self.unit == "step" else "/s"
        b = f"{self.step:.4g} {'step' if self.unit == 'step' else 's'}"
        if self.load is None:
            head = "load vs capacity lambda/mu undefined (all requests arrive at once)"
        else:
            head = (f"load vs capacity lambda/mu = {self.load:.4g} (lambda "
                    f"{self.arrival_rate:.4g} {per},")
        tail = (f" mu = M/(b E[g]) = {self.mu:.4g} {per}, E[g] {self.mean_g:.4g} token-steps, "
                f"b {b}: {self.reading})")
        return head + ("," + tail if self.load is None else tail)


@dataclass(frozen=True)
class Backlog:
    """Growth of the number of requests in the system (arrived, not completed) over the
    arrival period; see :func:`backlog_drift`.

    Attributes
    ----------
    window_means
        Mean number in system over each of the equal windows of ``[a_min, a_max]``.
    drift
        ``(N_last - N_second) / (lambda * gap)``: the share of arrivals that piles up
        between the second and the last window (``gap`` the distance of their centres).
        About ``1 - capacity / lambda`` above capacity, about 0 below it.
    stable
        ``drift <= threshold``.
    threshold
        The criterion used.

    Examples
    --------
    Two arrivals per slot, one completion per slot: the backlog grows by half the arrivals.

    >>> a = np.repeat(np.arange(200.0), 2)
    >>> b = backlog_drift(a, np.arange(1.0, 401.0))
    >>> [round(m, 1) for m in b.window_means], round(b.drift, 3), b.stable, b.threshold
    ([26.3, 76.1, 125.8, 175.6], 0.499, False, 0.05)
    """

    window_means: tuple[float, ...]
    drift: float
    stable: bool
    threshold: float


def backlog_drift(arrival: ArrayLike, completion: ArrayLike, *,
                  weights: ArrayLike | None = None, windows: int = 4,
                  threshold: float = 0.05, samples: int = 400) -> Backlog:
    """Is the queue stable? A measurable criterion on one simulated run.

    The arrival period ``[a_min, a_max]`` is cut into ``windows`` equal windows and the mean
    backlog ``N`` is measured in each (at ``samples`` evenly spaced times per window):
    the number of requests in system (arrived, not completed), or with ``weights`` (e.g.
    each request's token-steps ``g``, :func:`lifetime_token_steps`) their total weight -
    the work a size-based policy (shortest first) can leave behind while the *count* stays
    flat. The first window is warm-up; the *drift* is the growth of ``N`` from the second to
    the last window divided by what arrived in between (``lambda E[w]`` times the distance
    of the window centres): the share of the arriving work the server did not keep up
    with. A stable queue has drift about 0 (its backlog fluctuates around a level), an
    overloaded one about ``1 - capacity / lambda``; the run is called unstable when
    ``drift > threshold`` (default 5 %).

    Examples
    --------
    A server completing one request per slot, fed one (stable) or two (unstable) per slot:

    >>> a = np.arange(400.0)
    >>> backlog_drift(a, a + 1.0).stable
    True
    >>> a2 = np.repeat(np.arange(200.0), 2)
    >>> b = backlog_drift(a2, np.arange(1.0, 401.0))
    >>> b.stable, round(b.drift, 2)
    (False, 0.5)

    Shortest first over one long and many short requests: the count is flat, the work is not.

    >>> a3 = np.arange(400.0)
    >>> w = np.where(a3 % 2 == 0, 1.0, 3.0)           # every other request is 3x the work
    >>> c3 = np.where(a3 % 2 == 0, a3 + 1, 1e9)       # ... and never served
    >>> backlog_drift(a3, c3, weights=w).drift > backlog_drift(a3, c3).drift
    True
    """
    if windows < 3:
        raise UsageError("windows", f"must be >= 3, got {windows}")
    a = np.asarray(arrival, dtype=np.float64)
    c = np.asarray(completion, dtype=np.float64)
    w = np.ones(a.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    lo, hi = float(a.min()), float(a.max())
    if hi <= lo:
        raise UsageError("arrival", "all requests arrive at once: no arrival period to watch")
    ia, ic = np.argsort(a, kind="stable"), np.argsort(c, kind="stable")
    a_s, c_s = a[ia], c[ic]
    wa = np.concatenate([[0.0], np.cumsum(w[ia])])
    wc = np.concatenate([[0.0], np.cumsum(w[ic])])
    edges = np.linspace(lo, hi, windows + 1)
    means = []
    for k in range(windows):
        ts = np.linspace(edges[k], edges[k + 1], samples, endpoint=False)
        n = (wa[np.searchsorted(a_s, ts, side="right")]
             - wc[np.searchsorted(c_s, ts, side="right")])
        means.append(float(n.mean()))
    lam = (a.size - 1) / (hi - lo)
    gap = (windows - 2) * (hi - lo) / windows
    drift = (means[-1] - means[1]) / (lam * float(w.mean()) * gap)
    return Backlog(tuple(means), float(drift), bool(drift <= threshold), float(threshold))
