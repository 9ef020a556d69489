"""Classical size-based M/G/1 oracles: FCFS (Pollaczek-Khinchine), SJF, PSJF, SRPT.

These use only the size distribution's exact partial moments and
:func:`scipy.integrate.quad`; they share no code with :mod:`kvopt.queueing.soap`, so the
prediction formulas with perfect predictions can be tested against them.

With ``rho_le(x) = lam E[S; S <= x]``, ``rho_lt(x) = lam E[S; S < x]`` and
``m2(x) = E[S^2; S <= x]`` (the two differ only at atoms):

* FCFS: ``E[T] = E[S] + lam E[S^2] / (2 (1 - rho))``;
* SJF: ``E[T(x)] = x + lam E[S^2] / (2 (1 - rho_le(x)) (1 - rho_lt(x)))``;
* PSJF: ``E[T(x)] = lam m2(x) / (2 (1-rho_le)(1-rho_lt)) + x / (1 - rho_lt(x))``;
* SRPT (Schrage-Miller): ``E[T(x)] = lam (m2(x) + x^2 P(S > x)) / (2 (1-rho_le)(1-rho_lt))
  + int_0^x dt / (1 - rho_lt(t))``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from scipy import integrate

from kvopt.core.errors import UsageError
from kvopt.queueing.distributions import SizeDistribution

__all__ = ["classical_given_size", "classical_mean", "CLASSICAL"]

CLASSICAL = ("fcfs", "sjf", "psjf", "srpt")


def _quad(f: Callable[[float], float], a: float, b: float, pts: np.ndarray) -> float:
    inner = pts[(pts > a) & (pts < b)]
    edges = np.concatenate([[a], inner, [b]])
    total = 0.0
    for lo, hi in itertools.pairwise(edges):
        if hi > lo:
            v, _ = integrate.quad(f, lo, hi, epsabs=1e-13, epsrel=1e-11, limit=200)
            total += v
    return total


def _check(policy: str, lam: float, dist: SizeDistribution) -> str:
    p = {"fifo": "fcfs"}.get(policy.lower(), policy.lower())
    if p not in CLASSICAL:
        raise UsageError("policy", f"classical policies are {CLASSICAL}, got {policy!r}")
    if not (lam > 0 and lam * dist.mean < 1):
        raise UsageError("load", "need 0 < rho < 1")
    return p


def classical_given_size(policy: str, lam: float, dist: SizeDistribution,
                         x: ArrayLike) -> np.ndarray:
    """Per-size mean response time ``E[T(x)]`` of a classical policy.

    Examples
    --------
    >>> from kvopt.queueing.distributions import Exponential
    >>> float(classical_given_size("fcfs", 0.5, Exponential(1.0), 3.0)[0])
    4.0
    """
    p = _check(policy, lam, dist)
    xs = np.atleast_1d(np.asarray(x, dtype=float))
    es2 = dist.moment(2)
    out = np.empty_like(xs)
    for i, xi in enumerate(xs):
        le = lam * float(dist.partial_moment(1, xi))
        lt = lam * float(dist.partial_moment(1, xi, inclusive=False))
        den = 2 * (1 - le) * (1 - lt)
        if p == "fcfs":
            out[i] = xi + lam * es2 / (2 * (1 - lam * dist.mean))
        elif p == "sjf":
            out[i] = xi + lam * es2 / den
        elif p == "psjf":
            out[i] = lam * float(dist.partial_moment(2, xi)) / den + xi / (1 - lt)
        else:
            tail = 1 - float(dist.partial_moment(0, xi))
            w = lam * (float(dist.partial_moment(2, xi)) + xi * xi * tail) / den
            res = _quad(lambda t: 1 / (1 - lam * float(dist.partial_moment(1, t, False))),
                        0.0, xi, dist.breakpoints)
            out[i] = w + res
    return out


def _expect(dist: SizeDistribution, f: Callable[[float], float]) -> float:
    total = 0.0
    pts = dist.panel_points
    if pts is not None:
        # pdf is vectorized; a scalar works too (kept scalar: same floating-point path)
        total += _quad(lambda t: f(t) * float(dist.pdf(t)),  # type: ignore[arg-type]
                       pts[0], pts[-1], pts)
    av, ap = dist.atoms
    for v, p in zip(av, ap, strict=True):
        total += p * f(v)
    return total


def classical_mean(policy: str, lam: float, dist: SizeDistribution) -> float:
    """Overall mean response time ``E[T]`` of a classical policy.

    Examples
    --------
    >>> from kvopt.queueing.distributions import Exponential
    >>> round(classical_mean("srpt", 0.5, Exponential(1.0)), 4)
    1.4254
    """
    p = _check(policy, lam, dist)
    es2 = dist.moment(2)
    if p == "fcfs":
        return dist.mean + lam * es2 / (2 * (1 - lam * dist.mean))

    def den(x: float) -> float:
        le = lam * float(dist.partial_moment(1, x))
        lt = lam * float(dist.partial_moment(1, x, inclusive=False))
        return 2 * (1 - le) * (1 - lt)

    if p == "sjf":
        return dist.mean + _expect(dist, lambda x: lam * es2 / den(x))
    if p == "psjf":
        return _expect(dist, lambda x: lam * float(dist.partial_moment(2, x)) / den(x)
                       + x / (1 - lam * float(dist.partial_moment(1, x, False))))
    # SRPT: E[W(X)] + int_0^inf P(S > t) / (1 - rho_lt(t)) dt  (Fubini on the residence)
    def w(x: float) -> float:
        tail = 1 - float(dist.partial_moment(0, x))
        return lam * (float(dist.partial_moment(2, x)) + x * x * tail) / den(x)

    res = _quad(lambda t: (1 - float(dist.partial_moment(0, t)))
                / (1 - lam * float(dist.partial_moment(1, t, False))),
                0.0, dist.upper, dist.breakpoints)
    return _expect(dist, w) + res
