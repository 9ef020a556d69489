"""Event-driven M/G/1 simulator for age-aware rank (SOAP) policies with a memory model.

A job is ``(arrival, size x, prediction y)``; the server always runs the job of lowest rank
(ties: earliest arrival).  The supported policies have ranks that never increase while a
job is served, so preemption can only happen at an arrival; the event loop therefore only
needs arrival and completion events.  Ranks:

=============  ==============================================
fcfs           ``0`` (all tie, so FCFS)
spjf / sjf     ``y`` before the first service, ``-inf`` after
pspjf / psjf   ``y``
sprpt / srpt   ``y - a``
trail (C)      ``y - a`` while ``a < C y``, then ``-inf``
=============  ==============================================

(``sjf``/``psjf``/``srpt`` are the same ranks with perfect predictions ``y = x``.)

Memory model (seed 004 App. D): a job's memory equals its age, so the memory in use is the
sum of the ages of the jobs in the system; unstarted jobs use nothing.  The simulator reports
the time-average and the peak.

FCFS uses a vectorized recursion (``numpy.maximum.accumulate``); the others an event loop
over pre-generated numpy arrays.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats

from kvopt.core.errors import UsageError
from kvopt.queueing.distributions import SizeDistribution
from kvopt.queueing.predictions import Perfect, PredictionModel
from kvopt.queueing.soap import check_policy

__all__ = ["QueueResult", "batch_means", "simulate_jobs", "simulate_queue"]

_NEG = -math.inf


@dataclass
class QueueResult:
    """Summary of a queue simulation (:func:`simulate_queue`).

    Attributes
    ----------
    mean_response, se : float
        Mean response time over the kept jobs and its standard error (batch means).
    n_jobs : int
        Number of kept jobs (after dropping the warm-up and the tail).
    mean_memory, peak_memory : float
        Time-average and peak of the memory in use (sum of ages of jobs in the system).
    responses : ndarray
        Per-job response times in arrival order (all jobs, including warm-up).

    Examples
    --------
    >>> from kvopt.queueing.distributions import Exponential
    >>> r = simulate_queue("srpt", 0.5, Exponential(1.0), n_jobs=2000, seed=0)
    >>> r.policy, r.n_jobs, r.responses.size      # 10 % warm-up and 5 % tail not counted
    ('sprpt', 1700, 2000)
    >>> round(r.mean_response, 3), round(r.se, 3), round(r.mean_memory, 3)  # theory: 1.425
    (1.49, 0.06, 0.625)
    """

    policy: str
    lam: float
    C: float | None
    mean_response: float
    se: float
    n_jobs: int
    mean_memory: float
    peak_memory: float
    responses: np.ndarray = field(repr=False)
    sizes: np.ndarray = field(repr=False)
    predictions: np.ndarray = field(repr=False)

    def ci(self, level: float = 0.95, n_batches: int = 20) -> tuple[float, float]:
        """Student-t confidence interval for the mean response time."""
        q = stats.t.ppf(0.5 + level / 2, n_batches - 1)
        return self.mean_response - q * self.se, self.mean_response + q * self.se

    def to_dict(self) -> dict:
        """JSON-friendly summary (no per-job arrays)."""
        lo, hi = self.ci()
        return {"policy": self.policy, "lam": self.lam, "C": self.C,
                "mean_response": self.mean_response, "se": self.se, "ci95": [lo, hi],
                "n_jobs": self.n_jobs, "mean_memory": self.mean_memory,
                "peak_memory": self.peak_memory}


def batch_means(values: np.ndarray, n_batches: int = 20) -> tuple[float, float]:
    """Mean and batch-means standard error of a (correlated) sequence.

    Examples
    --------
    >>> m, se = batch_means(np.arange(100.0), 10)
    >>> m
    49.5
    """
    v = np.asarray(values, dtype=float)
    k = v.size // n_batches
    if k < 1:
        raise UsageError("n", "too few jobs for the requested number of batches")
    b = v[: k * n_batches].reshape(n_batches, k).mean(axis=1)
    return float(v.mean()), float(b.std(ddof=1) / math.sqrt(n_batches))


def _fcfs(arr: np.ndarray, x: np.ndarray) -> np.ndarray:
    s_cum = np.cumsum(x)
    prev = np.concatenate([[0.0], s_cum[:-1]])
    dep = s_cum + np.maximum.accumulate(arr - prev)
    return dep - arr


def simulate_jobs(policy: str, arrivals: np.ndarray, sizes: np.ndarray, preds: np.ndarray,
                  C: float | None = None, t_window: tuple[float, float] | None = None,
                  ) -> tuple[np.ndarray, float, float]:
    """Simulate a given job sequence; return ``(responses, mean_memory, peak_memory)``.

    Parameters
    ----------
    policy : str
        One of ``fcfs, spjf (sjf), pspjf (psjf), sprpt (srpt), trail``.
    arrivals, sizes, preds : ndarray
        Arrival times (non-decreasing), sizes and predictions.
    C : float, optional
        TRAIL's preemption limit (required for ``trail``).
    t_window : (float, float), optional
        Time window for the memory time-average (default: first to last arrival).

    Examples
    --------
    >>> r, mm, pk = simulate_jobs("srpt", np.array([0.0, 0.5]), np.array([2.0, 0.5]),
    ...                           np.array([2.0, 0.5]))
    >>> r.tolist()  # job 2 preempts job 1 at t=0.5
    [2.5, 0.5]
    """
    p, C = check_policy(policy, C)
    if p == "trail-printed":
        raise UsageError("policy", "trail-printed is a formula, simulate trail instead")
    A = np.asarray(arrivals, dtype=float)
    X = np.asarray(sizes, dtype=float)
    Y = np.asarray(preds, dtype=float)
    n = A.size
    lo_t, hi_t = t_window if t_window is not None else (float(A[0]), float(A[-1]))
    if p == "fcfs":
        resp = _fcfs(A, X)
        start = A + resp - X
        # memory = age of the one running job; integrate service segments inside the window
        s0 = np.clip(start, lo_t, hi_t)
        s1 = np.clip(start + X, lo_t, hi_t)
        area = ((s1 - start) ** 2 - (s0 - start) ** 2).sum() / 2
        return resp, float(area / max(hi_t - lo_t, 1e-300)), float(X.max())

    al, xl, yl = A.tolist(), X.tolist(), Y.tolist()
    dep = [0.0] * n
    rem = xl[:]  # remaining work
    heap: list[tuple[float, int]] = []  # (rank, job): ties go to the earlier arrival
    push, pop = heapq.heappush, heapq.heappop
    t = 0.0
    cur = -1  # running job
    trail = p == "trail"
    age_rank = p in ("sprpt", "trail")
    nonpre = p in ("spjf", "fcfs")
    mem_q = 0.0  # sum of ages of started, waiting jobs
    area = 0.0
    peak = 0.0
    inf = math.inf
    # (one loop iteration per event; the rank of the running job, the window clipping and
    # the job's age are written out inline: this loop is the simulator's whole cost)
    i = 0
    while i < n or cur >= 0 or heap:
        t_next = al[i] if i < n else inf
        if cur < 0 and heap:
            cur = pop(heap)[1]
            mem_q -= xl[cur] - rem[cur]
        if cur >= 0:
            rc_ = rem[cur]
            a0 = xl[cur] - rc_
            fin = t + rc_
            end = fin if fin <= t_next else t_next
            # memory integral over [t, end] clipped to the window (as max(t, lo_t),
            # min(end, hi_t))
            c0 = lo_t if lo_t > t else t
            c1 = hi_t if hi_t < end else end
            if c1 > c0:
                u0, u1 = a0 + (c0 - t), a0 + (c1 - t)
                area += (c1 - c0) * mem_q + (u1 * u1 - u0 * u0) / 2
            m_end = mem_q + a0 + (end - t)
            if m_end > peak:
                peak = m_end
            if fin <= t_next:
                t = fin
                rem[cur] = 0.0
                dep[cur] = t
                cur = -1
                continue
            rem[cur] = rc_ - (end - t)
            t = t_next
        else:
            t = t_next
        # arrival of job i at time t
        yi = 0.0 if p == "fcfs" else yl[i]
        if cur >= 0:
            # the running job's rank now (non-increasing while it is served)
            if nonpre:
                rc = _NEG
            elif age_rank:
                a = xl[cur] - rem[cur]
                rc = _NEG if trail and a >= C * yl[cur] else yl[cur] - a
            else:
                rc = yl[cur]
            if yi < rc:  # strict: the older job wins ties
                mem_q += xl[cur] - rem[cur]
                push(heap, (rc, cur))
                cur = i
            else:
                push(heap, (yi, i))
        else:
            push(heap, (yi, i))
        i += 1
    resp = np.asarray(dep) - A
    return resp, float(area / max(hi_t - lo_t, 1e-300)), float(peak)


def simulate_queue(policy: str, lam: float, sizes: SizeDistribution,
                   predictions: PredictionModel | None = None, C: float | None = None,
                   n_jobs: int = 100_000, seed: int | np.random.Generator | None = 0,
                   warmup: float = 0.1, tail: float = 0.05,
                   n_batches: int = 20) -> QueueResult:
    """Simulate ``n_jobs`` jobs of an M/G/1 queue under a rank policy.

    Parameters
    ----------
    policy : str
        ``fcfs, sjf/spjf, psjf/pspjf, srpt/sprpt, trail``.
    lam : float
        Poisson arrival rate.
    sizes : SizeDistribution
    predictions : PredictionModel, optional
        Default :class:`~kvopt.queueing.predictions.Perfect`.
    C : float, optional
        TRAIL's limit: preemption allowed while the age is below ``C y``.
    n_jobs : int
    seed : int or numpy.random.Generator
    warmup, tail : float
        Fractions of jobs (by arrival index) dropped at the start and the end.
    n_batches : int
        Batches for the batch-means standard error.

    Returns
    -------
    QueueResult

    Examples
    --------
    >>> from kvopt.queueing.distributions import Exponential
    >>> r = simulate_queue("fcfs", 0.5, Exponential(1.0), n_jobs=20_000, seed=1)
    >>> abs(r.mean_response - 2.0) < 5 * r.se
    True
    """
    if not (isinstance(n_jobs, int | np.integer) and n_jobs >= 10 * n_batches):
        raise UsageError("n", f"need an integer number of jobs >= {10 * n_batches}")
    if not (lam > 0 and lam * sizes.mean < 1):
        raise UsageError("load", "need 0 < rho < 1")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    predictions = predictions or Perfect()
    arr = np.cumsum(rng.exponential(1.0 / lam, n_jobs))
    x = sizes.sample(n_jobs, rng)
    y = predictions.sample(x, rng)
    i0, i1 = int(warmup * n_jobs), n_jobs - int(tail * n_jobs)
    resp, mem, peak = simulate_jobs(policy, arr, x, y, C, (arr[i0], arr[i1 - 1]))
    m, se = batch_means(resp[i0:i1], n_batches)
    p, _ = check_policy(policy, C)
    return QueueResult(p, lam, C, m, se, i1 - i0, mem, peak, resp, x, y)
