"""Adversarial and worst-case instances of seed 000 and seed 001, as :class:`kvopt.Instance`.

Only builds instances (no simulator import). The adaptive seed 001 adversary needs the
start time ``b`` of the online algorithm on the long request alone; pass it in, or pass a
callable that computes it (:func:`thm41_adaptive`).

=============================  ==========================================================
generator                      construction
=============================  ==========================================================
:func:`thm41_instance`         seed 001 Thm 4.1: long request ``o = M - 1`` at 0, ``M/2``
                               shorts ``o = 1`` at ``r = b + M - sqrt(M)/2``, ``s = 1``
:func:`amax_thm2_instance`     seed 000 Thm 2: ``s = 0``, ``M = l u``, ``a u`` short and
                               ``b l`` long jobs
:func:`two_point_instance`     ``n_short`` jobs of length ``l``, ``n_long`` of length ``u``
:func:`amin_two_point_worst`   two-point mix at Amin's worst ``N_l / N_u = 1/alpha``
:func:`al_two_point_worst`     A_l's worst ``N_l / N_u = max(0, 1/alpha - 2)``
:func:`counts_instance`        any length histogram (all at 0, one prompt size)
:func:`rayleigh_worst_instance`  top generalized eigenvector of ``(A, B)`` as counts
:func:`geometric_instance`     deterministic counts of ``q^(k-1)`` (or LG ``k q^(k-1)``)
:func:`example1`, :func:`example_ec1`  seed 000 Example 1 and Example EC.1
=============================  ==========================================================

Examples
--------
>>> inst = amax_thm2_instance(4, 64, 2, 8)
>>> inst.n, inst.memory, int((inst.output == 4).sum()), int((inst.output == 64).sum())
(160, 256, 128, 32)
>>> thm41_instance(2).arrival.tolist()[:2]
[0, 14]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.theory.rayleigh import worst_distribution

__all__ = [
    "al_two_point_worst",
    "amax_thm2_instance",
    "amin_two_point_worst",
    "counts_instance",
    "example1",
    "example_ec1",
    "geometric_instance",
    "integer_counts",
    "rayleigh_worst_instance",
    "thm41_adaptive",
    "thm41_instance",
    "two_point_instance",
]


def integer_counts(weights: ArrayLike, n: int) -> NDArray[np.int64]:
    """Round ``n * w / sum(w)`` to integers summing to ``n`` (largest remainder, stable).

    Examples
    --------
    >>> integer_counts([0.5, 0.3, 0.2], 7).tolist()
    [4, 2, 1]
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.size == 0 or (w < 0).any() or w.sum() <= 0:
        raise UsageError("weights", "must be a nonnegative, nonzero 1-D array")
    if n < 0:
        raise UsageError("n", f"must be >= 0, got {n}")
    exact = n * w / w.sum()
    base = np.floor(exact).astype(np.int64)
    rest = n - int(base.sum())
    order = np.lexsort((np.arange(w.size), -(exact - base)))
    base[order[:rest]] += 1
    return base


def counts_instance(counts: ArrayLike, *, l: int = 1, memory: int, s: int = 0,
                    pred_lower: int | None = None, pred_upper: int | None = None,
                    name: str | None = None, source: str | None = None) -> Instance:
    """All-at-0 instance with ``counts[k - l]`` requests of output length ``k``.

    Every request gets the interval prediction ``[pred_lower, pred_upper]`` (default: the
    support's ``[l, u]``), as in seed 000 where all jobs share one interval.

    Examples
    --------
    >>> inst = counts_instance([2, 0, 1], l=2, memory=10)
    >>> inst.output.tolist(), inst.pred_lower.tolist(), inst.pred_upper.tolist()
    ([2, 2, 4], [2, 2, 2], [4, 4, 4])
    """
    c = np.asarray(counts, dtype=np.int64)
    if (c < 0).any() or c.sum() == 0:
        raise UsageError("counts", "must be nonnegative with a positive total")
    lengths = np.arange(l, l + c.size, dtype=np.int64)
    o = np.repeat(lengths, c)
    n = o.size
    lo = int(lengths[0]) if pred_lower is None else int(pred_lower)
    hi = int(lengths[-1]) if pred_upper is None else int(pred_upper)
    return Instance(memory=memory, arrival=np.zeros(n, dtype=np.int64),
                    prompt=np.full(n, s, dtype=np.int64), output=o,
                    pred_lower=np.full(n, lo, dtype=np.int64),
                    pred_upper=np.full(n, hi, dtype=np.int64), name=name, source=source)


def two_point_instance(l: int, u: int, n_short: int, n_long: int, *, memory: int,
                       s: int = 0, name: str | None = None) -> Instance:
    """``n_short`` requests of length ``l`` and ``n_long`` of length ``u`` (interval ``[l, u]``).

    Examples
    --------
    >>> two_point_instance(4, 16, 8, 2, memory=60).output.tolist()
    [4, 4, 4, 4, 4, 4, 4, 4, 16, 16]
    """
    if not 1 <= l <= u:
        raise UsageError("l, u", f"need 1 <= l <= u, got {l}, {u}")
    counts = np.zeros(u - l + 1, dtype=np.int64)
    counts[0] += n_short
    counts[-1] += n_long
    return counts_instance(counts, l=l, memory=memory, s=s,
                           name=name or f"two-point-l{l}-u{u}-{n_short}x{n_long}-M{memory}",
                           source="kvopt.theory.adversarial.two_point_instance")


def _split(n: int, ratio: float) -> tuple[int, int]:
    """``(n_short, n_long)`` with ``n_short / n_long ~ ratio`` and ``n_short + n_long = n``."""
    c = integer_counts([ratio, 1.0], n) if ratio > 0 else np.array([0, n])
    return int(c[0]), int(c[1])


def amin_two_point_worst(l: int, u: int, n: int, *, memory: int, s: int = 0) -> Instance:
    """Two-point instance at Amin's worst mix ``N_l / N_u = u / l`` (Theorem 6, ``t = 1/alpha``).

    Fluid ratio to H-SF: ``(3 - alpha)/2``.

    Examples
    --------
    >>> inst = amin_two_point_worst(4, 16, 1000, memory=600)
    >>> int((inst.output == 4).sum()), int((inst.output == 16).sum())
    (800, 200)
    """
    ns, nl = _split(n, u / l)
    return two_point_instance(l, u, ns, nl, memory=memory, s=s,
                              name=f"amin-two-point-worst-l{l}-u{u}-n{n}-M{memory}")


def al_two_point_worst(l: int, u: int, n: int, *, memory: int, s: int = 0) -> Instance:
    """Two-point instance at A_l's worst mix ``N_l / N_u = max(0, u/l - 2)`` (Theorem 7).

    Examples
    --------
    >>> inst = al_two_point_worst(1, 10, 90, memory=40)
    >>> int((inst.output == 1).sum()), int((inst.output == 10).sum())
    (80, 10)
    """
    ns, nl = _split(n, max(0.0, u / l - 2.0))
    return two_point_instance(l, u, ns, nl, memory=memory, s=s,
                              name=f"al-two-point-worst-l{l}-u{u}-n{n}-M{memory}")


def amax_thm2_instance(l: int, u: int, a: int, b: int) -> Instance:
    """Seed 000 Theorem 2: ``s = 0``, ``M = l u``, ``a u`` jobs of length ``l``, ``b l`` of ``u``.

    The construction's fluid ratio is :func:`kvopt.theory.ratios.amax_construction_at`
    with ``r = a / b`` (the printed claim is not; see NOTES.md).

    Examples
    --------
    >>> amax_thm2_instance(1, 4, 1, 2).output.tolist()
    [1, 1, 1, 1, 4, 4]
    """
    if not (1 <= l <= u and a >= 0 and b >= 0 and a + b > 0):
        raise UsageError("l, u, a, b", "need 1 <= l <= u and a, b >= 0 (not both 0)")
    inst = two_point_instance(l, u, a * u, b * l, memory=l * u, s=0)
    return inst.replace(name=f"amax-thm2-l{l}-u{u}-a{a}-b{b}",
                        source="seed 000 Theorem 2 (kvopt.theory.adversarial)")


def rayleigh_worst_instance(u: int, n: int, *, memory: int, l: int = 1, s: int = 0) -> Instance:
    """The Rayleigh-worst length mix (top generalized eigenvector of ``(A, B)``) as counts.

    Examples
    --------
    >>> inst = rayleigh_worst_instance(10, 1000, memory=100)
    >>> int((inst.output == 1).sum()), int((inst.output == 10).sum())
    (624, 46)
    """
    x = worst_distribution(u, l=l, s=float(s))
    return counts_instance(integer_counts(x, n), l=l, memory=memory, s=s,
                           name=f"rayleigh-worst-l{l}-u{u}-n{n}-M{memory}",
                           source="top generalized eigenvector of (A_u, B_u), seed 000 Cor. 1")


def geometric_instance(q: float, u: int, n: int, *, memory: int, linear: bool = False,
                       s: int = 0) -> Instance:
    """Deterministic counts of the geometric ``q^(k-1)`` (or LG ``k q^(k-1)``) on ``[1, u]``.

    Examples
    --------
    >>> geometric_instance(0.5, 4, 15, memory=20).output.tolist()
    [1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 4]
    """
    k = np.arange(1, u + 1, dtype=np.float64)
    w = q ** (k - 1.0) * (k if linear else 1.0)
    kind = "lg" if linear else "geometric"
    return counts_instance(integer_counts(w, n), memory=memory, s=s,
                           name=f"{kind}-q{q:g}-u{u}-n{n}-M{memory}",
                           source=f"kvopt.theory.adversarial.geometric_instance({kind})")


def thm41_instance(m: int, *, b: int = 0, r_offset: int = 0) -> Instance:
    """Seed 001 Theorem 4.1 for ``M = 4 m^2`` given the algorithm's lone start time ``b``.

    One long request (``a = 0``, ``s = 1``, ``o = M - 1``: it alone fills ``M``) and
    ``M/2 = 2 m^2`` short requests (``s = 1``, ``o = 1``) released at
    ``r = b + M - m + r_offset`` (the construction's ``b + M - sqrt(M)/2``; the proof's
    ``b + (M-1) - sqrt(M)/2`` is ``r_offset = -1``).

    Examples
    --------
    >>> inst = thm41_instance(2)
    >>> inst.memory, inst.n, int(inst.output[0]), int(inst.arrival[1])
    (16, 9, 15, 14)
    """
    if m < 1:
        raise UsageError("m", f"must be >= 1, got {m}")
    M = 4 * m * m
    r = b + M - m + r_offset
    if r < 0:
        raise UsageError("r_offset", f"release time r = {r} < 0")
    k = M // 2
    return Instance(memory=M, arrival=np.r_[0, np.full(k, r)].astype(np.int64),
                    prompt=np.ones(k + 1, dtype=np.int64),
                    output=np.r_[M - 1, np.ones(k)].astype(np.int64),
                    name=f"thm41-m{m}-M{M}-b{b}", source="seed 001 Theorem 4.1 adversary")


def thm41_adaptive(m: int, lone_start: Callable[[Instance], int], *, r_offset: int = 0
                   ) -> Instance:
    """Theorem 4.1's instance adapted to a deterministic algorithm.

    ``lone_start(inst)`` must return the slot at which the algorithm starts the long request
    when it is the only request (the algorithm sees nothing else before ``r``, so it behaves
    the same on the full instance up to ``r``).

    Examples
    --------
    >>> thm41_adaptive(2, lambda inst: 3).arrival.tolist()[1]
    17
    """
    M = 4 * m * m
    lone = Instance(memory=M, arrival=np.zeros(1, np.int64), prompt=np.ones(1, np.int64),
                    output=np.array([M - 1]), name="thm41-lone")
    b = int(lone_start(lone))
    return thm41_instance(m, b=b, r_offset=r_offset)


def example1() -> Instance:
    """Seed 000 Example 1: ``n = 5, s = 1, o = 1``, interval ``[1, 4]``, ``M = 10``.

    Examples
    --------
    >>> example1().expected["amax_total_latency"]
    9
    """
    return Instance(memory=10, arrival=np.zeros(5, np.int64), prompt=np.ones(5, np.int64),
                    output=np.ones(5, np.int64), pred_lower=np.ones(5, np.int64),
                    pred_upper=np.full(5, 4), name="seed000-example1",
                    source="seed 000 Example 1 (Sec. 3.2)",
                    expected={"opt_total_latency": 5, "hsf_total_latency": 5,
                              "amax_total_latency": 9, "amin_total_latency": 5})


def example_ec1() -> Instance:
    """Seed 000 Example EC.1: ``M = 7, s = 1, o = (1, 2, 3, 4)``; interval ``[1, 4]``.

    Examples
    --------
    >>> example_ec1().output.tolist()
    [1, 2, 3, 4]
    """
    return Instance(memory=7, arrival=np.zeros(4, np.int64), prompt=np.ones(4, np.int64),
                    output=np.arange(1, 5), pred_lower=np.ones(4, np.int64),
                    pred_upper=np.full(4, 4), name="seed000-example-ec1",
                    source="seed 000 Example EC.1",
                    expected={"opt_total_latency": 12, "hsf_total_latency": 12})
