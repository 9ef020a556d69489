"""Closed-form and numeric competitive ratios (fast float functions).

Every function here has a sympy twin in :mod:`kvopt.theory.symbolic`; the tests check that
both agree on a grid. Conventions (seed 000, digest §3): ratios are against H-SF, in the
fluid limit ``n, M -> oo``, with ``alpha = l / u``; for "ratio vs alpha" the default is
``l = 1, u = round(1/alpha), s = 0`` (Corollary 1).

Amax (seed 000 §3.2):

* :func:`amax_upper` -- Theorem 1, proven: ``alpha^-1 (1 + alpha^-1) / 2``;
* :func:`amax_lower_claimed` -- Theorem 2 as printed: ``alpha^-1 (1 + alpha^-1/2) / 2``
  ("claimed"; its own construction does not give it, see NOTES.md);
* :func:`amax_construction` -- what Theorem 2's instance actually gives,
  ``alpha^-1 (r + alpha)(r + 1) / (r^2 + 2 alpha r + 1)`` with ``r = a/b``; maximised over
  ``r`` by default ("construction").

Examples
--------
>>> amax_upper(0.5), round(amax_lower_claimed(0.25), 6), round(amax_construction(0.25), 4)
(3.0, 6.0, 4.5298)
>>> amin_two_point(0.25), round(al_two_point(0.25), 6)
(1.375, 1.166667)
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvopt.core.errors import UsageError
from kvopt.theory.rayleigh import amin_ratio_lemma2, harmonic, lambda_max

__all__ = [
    "ALPHA_STAR",
    "GEOMETRIC_LIMIT",
    "LG_LIMIT",
    "THM43_MCSF_C1",
    "THM43_MCSF_C2",
    "THM43_OPT_C",
    "THM43_RATIO",
    "UNIFORM_LIMIT",
    "al_two_point",
    "al_two_point_at",
    "alpha_to_lu",
    "alpha_to_u",
    "amax_construction",
    "amax_construction_argmax",
    "amax_construction_at",
    "amax_lower_claimed",
    "amax_upper",
    "amin_geometric",
    "amin_lg",
    "amin_lg_numeric",
    "amin_log_bound",
    "amin_rayleigh",
    "amin_two_point",
    "amin_two_point_at",
    "amin_two_point_lus",
    "amin_two_point_lus_at",
    "amin_uniform",
    "arandom_upper",
    "arandom_upper_general",
    "jaillet_lemma44_bound",
    "jaillet_lemma47_bound",
    "jaillet_thm41_lower",
    "jaillet_thm41_opt_upper",
    "lg_denominator_sum",
    "min_two_point",
    "vol",
]

#: Switching point of seed 000 §5.1: use A_l iff alpha < (3 - sqrt 5)/2.
ALPHA_STAR = (3.0 - math.sqrt(5.0)) / 2.0
#: sup over q of CR(Amin; geometric), reached as q -> 1 with u = oo (digest R9).
GEOMETRIC_LIMIT = 10.0 - 12.0 * math.log(2.0)
#: Theorem 8: CR(Amin; LG(p)) <= 14/9 (q -> 1).
LG_LIMIT = 14.0 / 9.0
#: CR(Amin; uniform on [1, u]) as u -> oo (continuous limit; digest [mine], checked here).
UNIFORM_LIMIT = 11.0 / 8.0
#: Seed 001 Thm 4.3 constants: MC-SF <= C1/M * sum n_o sum n_o' vol_o' + C2 * sum n_o o (Lemma 4.4),
#: OPT >= (1/C) (same double sum / M + sum n_o o) (Lemma 4.7, C = 6); ratio <= C * max(C1, C2).
THM43_MCSF_C1 = 1536.0
THM43_MCSF_C2 = 24.0
THM43_OPT_C = 6.0
THM43_RATIO = THM43_OPT_C * max(THM43_MCSF_C1, THM43_MCSF_C2)  # 9216 (not optimised by the paper)


def _alpha(alpha: float) -> float:
    a = float(alpha)
    if not (0.0 < a <= 1.0):
        raise UsageError("alpha", f"must be in (0, 1], got {alpha!r}")
    return a


def alpha_to_lu(alpha: float, *, max_u: int = 1_000_000) -> tuple[int, int]:
    """Smallest integers ``(l, u)`` with ``l / u = alpha`` (``u <= max_u``).

    This is Corollary 1's ``(1, 1/alpha)`` whenever ``1/alpha`` is an integer; for other
    ``alpha`` (e.g. 0.75 -> (3, 4)) ``l > 1``, and the Rayleigh value depends on ``l``
    (digest §3.3 caveat).

    Examples
    --------
    >>> alpha_to_lu(0.1), alpha_to_lu(0.75), alpha_to_lu(1/3)
    ((1, 10), (3, 4), (1, 3))
    """
    from fractions import Fraction

    fr = Fraction(_alpha(alpha)).limit_denominator(max_u)
    return fr.numerator, fr.denominator


def alpha_to_u(alpha: float) -> int:
    """The ``u`` of Corollary 1's convention (``l = 1``): ``round(1 / alpha)``.

    Examples
    --------
    >>> alpha_to_u(0.1), alpha_to_u(1/3)
    (10, 3)
    """
    return max(1, round(1.0 / _alpha(alpha)))


# ----------------------------------------------------------------------------------- Amax
def amax_upper(alpha: float) -> float:
    """Theorem 1 (proven): ``CR(Amax) <= alpha^-1 (1 + alpha^-1) / 2``.

    Examples
    --------
    >>> amax_upper(0.1)
    55.0
    """
    a = _alpha(alpha)
    return (1.0 + 1.0 / a) / (2.0 * a)


def amax_lower_claimed(alpha: float) -> float:
    """Theorem 2 as printed ("claimed"): ``alpha^-1 (1 + alpha^-1/2) / 2``.

    Examples
    --------
    >>> round(amax_lower_claimed(0.1), 3)
    20.811
    """
    a = _alpha(alpha)
    return (1.0 + a**-0.5) / (2.0 * a)


def amax_construction_at(alpha: float, r: float) -> float:
    """Ratio of Theorem 2's instance for ``r = a / b`` (printed latencies, corrected algebra).

    ``alpha^-1 (r + alpha)(r + 1) / (r^2 + 2 alpha r + 1)``; at the paper's ``r = sqrt(alpha)``
    it is about ``alpha^-1/2``.

    Examples
    --------
    >>> round(amax_construction_at(0.25, 0.5), 6)
    3.0
    """
    a = _alpha(alpha)
    if r < 0:
        raise UsageError("r", f"must be >= 0, got {r}")
    return (r + a) * (r + 1.0) / (a * (r * r + 2.0 * a * r + 1.0))


def amax_construction_argmax(alpha: float) -> float:
    """``r* = 1 + sqrt(2 + 2 alpha)``, the maximiser of :func:`amax_construction_at`.

    Examples
    --------
    >>> round(amax_construction_argmax(0.5), 6)
    2.732051
    """
    return 1.0 + math.sqrt(2.0 + 2.0 * _alpha(alpha))


def amax_construction(alpha: float, r: float | None = None) -> float:
    """Theorem 2's construction, at ``r`` or (default) maximised over ``r``.

    ``max_r = alpha^-1 [1 + (1 - alpha) / (c (c + 2))]``, ``c = sqrt(2 (1 + alpha))``;
    ``~ 1.2071 / alpha`` as ``alpha -> 0`` (Theta(alpha^-1), not Theta(alpha^-1.5)).

    Examples
    --------
    >>> round(amax_construction(0.1), 3)
    11.742
    """
    a = _alpha(alpha)
    if r is not None:
        return amax_construction_at(a, r)
    c = math.sqrt(2.0 * (1.0 + a))
    return (1.0 + (1.0 - a) / (c * (c + 2.0))) / a


def arandom_upper(alpha: float) -> float:
    """Theorem EC.1(b), ``s = 0``: ``CR(Arandom) <= (1 + alpha^-1) / 2``.

    Examples
    --------
    >>> arandom_upper(0.1)
    5.5
    """
    return (1.0 + 1.0 / _alpha(alpha)) / 2.0


def arandom_upper_general(l: float, u: float, s: float = 0.0) -> float:
    """Arandom two-point supremum with prompt ``s``: ``(1 + beta^-1/2)/2``.

    ``beta = l (s + l) / (u (s + u))`` (digest [mine]; reduces to ``(1 + 1/alpha)/2`` at s = 0).

    Examples
    --------
    >>> arandom_upper_general(1, 10, 0) == arandom_upper(0.1)
    True
    """
    beta = l * (s + l) / (u * (s + u))
    return (1.0 + beta**-0.5) / 2.0


# ----------------------------------------------------------------------------------- Amin
def amin_rayleigh(alpha: float | None = None, *, u: int | None = None, l: int = 1,
                  s: float = 0.0) -> float:
    """``CR(Amin)`` = ``lambda_max(A, B)`` (Lemma 2 / Corollary 1); give ``alpha`` or ``u``.

    With ``alpha``, ``(l, u) = alpha_to_lu(alpha)`` (``l`` is then ignored); with ``u``, the
    lengths are ``[l, u]``.

    Examples
    --------
    >>> round(amin_rayleigh(0.5), 6), round(amin_rayleigh(u=20, l=2), 4)
    (1.25, 1.7385)
    """
    if u is None:
        if alpha is None:
            raise UsageError("alpha", "give alpha or u")
        l, u = alpha_to_lu(alpha)
    return float(lambda_max(int(u), l=l, s=s))  # type: ignore[arg-type]


def amin_log_bound(alpha: float) -> float:
    """The trace bound ``lambda_max <= tr(B^-1 A) = H_u`` (``O(log 1/alpha)``), ``u = 1/alpha``.

    Examples
    --------
    >>> round(amin_log_bound(0.1), 6)
    2.928968
    """
    return harmonic(alpha_to_u(alpha))


def amin_two_point_at(alpha: float, t: float) -> float:
    """Theorem 6: ``CR(Amin; t) = 1 + alpha (1 - alpha^2) t / (alpha^2 t^2 + 2 alpha^2 t + 1)``.

    ``t = x_l / x_u``.

    Examples
    --------
    >>> amin_two_point_at(0.5, 2.0)
    1.25
    """
    a = _alpha(alpha)
    return 1.0 + a * (1.0 - a * a) * t / (a * a * t * t + 2.0 * a * a * t + 1.0)


def amin_two_point(alpha: float) -> float:
    """Theorem 6: ``sup_t CR(Amin; two-point) = (3 - alpha) / 2`` at ``t = 1/alpha``.

    Examples
    --------
    >>> amin_two_point(0.1)
    1.45
    """
    return (3.0 - _alpha(alpha)) / 2.0


def _two_point_forms(l: float, u: float, s: float) -> tuple[tuple[float, float, float],
                                                              tuple[float, float, float]]:
    """Lemma 2 on the support ``{l, u}`` as two quadratic forms in ``(x_l, x_u)``.

    Returns the coefficients ``(c_ll, c_lu, c_uu)`` of ``N = c_ll x_l^2 + c_lu x_l x_u +
    c_uu x_u^2`` and the same for ``D``. With ``delta(l) = s + l`` and ``delta(k) = 1`` for
    ``l < k <= u``, Lemma 2's sum over the periods ``k`` gives

    * ``k = l``: ``(s + l)(l x_l + u x_u)(x_l + (s + 2u - l) x_u / (s + u))``;
    * ``l < k <= u``: ``u x_u^2 (1 + 2 (u - k)) / (s + u)``, summing to
      ``u (u - l)^2 x_u^2 / (s + u)``;

    and ``D = l (s + l) x_l^2 + 2 l (s + l) x_l x_u + u (s + u) x_u^2``.
    """
    a = (s + 2.0 * u - l) / (s + u)
    num = ((s + l) * l, (s + l) * (l * a + u), (s + l) * u * a + u * (u - l) ** 2 / (s + u))
    den = (l * (s + l), 2.0 * l * (s + l), u * (s + u))
    return num, den


def amin_two_point_lus_at(l: float, u: float, s: float, t: float) -> float:
    """Lemma 2's ``CR(Amin; x)`` on the two-point mix ``x_l / x_u = t`` with prompt ``s``.

    ``t = float("inf")`` is the all-short mix (ratio 1). At ``s = 0`` this is Theorem 6's
    :func:`amin_two_point_at` with ``alpha = l / u``.

    Examples
    --------
    >>> amin_two_point_lus_at(1, 2, 0.0, 2.0) == amin_two_point_at(0.5, 2.0)
    True
    """
    (n0, n1, n2), (d0, d1, d2) = _two_point_forms(l, u, s)
    if math.isinf(t):
        return n0 / d0
    return (n0 * t * t + n1 * t + n2) / (d0 * t * t + d1 * t + d2)


def amin_two_point_lus(l: float, u: float, s: float = 0.0) -> tuple[float, float]:
    """``sup_t`` of Lemma 2 over two-point mixes on ``{l, u}`` with prompt ``s``, and the ``t``.

    Theorem 6's ``(3 - alpha)/2`` (at ``t = 1/alpha``) is this supremum for ``s = 0`` only;
    with ``s > 0`` Lemma 2 gives more (``(1, 4, 3)``: 1.4702 at ``t = sqrt 7`` vs 1.375).
    The supremum of a ratio of two quadratics over ``t in [0, oo]`` is at a root of
    ``N' D - N D' = 0`` or at an end (``t = 0``: all long; ``t = oo``: all short, ratio 1).

    Returns
    -------
    (sup, t)
        The supremum and the mix ``t = x_l / x_u`` where it is reached.

    Examples
    --------
    >>> v, t = amin_two_point_lus(1, 4, 3)
    >>> round(v, 4), round(t * t, 6)
    (1.4702, 7.0)
    >>> round(amin_two_point_lus(5, 40, 10)[0], 4), amin_two_point_lus(1, 4, 0)[0]
    (1.6246, 1.375)
    """
    if not (1 <= l <= u) or s < 0:
        raise UsageError("l, u, s", f"need 1 <= l <= u and s >= 0, got l={l}, u={u}, s={s}")
    if l == u:  # one length: nothing is ever evicted
        return 1.0, math.inf
    (n0, n1, n2), (d0, d1, d2) = _two_point_forms(l, u, s)
    # d/dt (N/D) = 0  <=>  (n0 d1 - n1 d0) t^2 + 2 (n0 d2 - n2 d0) t + (n1 d2 - n2 d1) = 0
    qa, qb, qc = n0 * d1 - n1 * d0, 2.0 * (n0 * d2 - n2 * d0), n1 * d2 - n2 * d1
    cands = [0.0, math.inf]
    if qa == 0.0:
        if qb != 0.0:
            cands.append(-qc / qb)
    else:
        disc = qb * qb - 4.0 * qa * qc
        if disc >= 0.0:
            r = math.sqrt(disc)
            cands += [(-qb + r) / (2.0 * qa), (-qb - r) / (2.0 * qa)]
    best = max((c for c in cands if c >= 0.0), key=lambda c: amin_two_point_lus_at(l, u, s, c))
    return amin_two_point_lus_at(l, u, s, best), best


def al_two_point_at(alpha: float, t: float) -> float:
    """Theorem 7: ``CR(A_l; t) = 1 + (alpha^2 t + 2 alpha^2) / (alpha^2 t^2 + 2 alpha^2 t + 1)``.

    For ``alpha = 1`` nothing is ever evicted and the ratio is 1 (the formula's 3 does not
    apply; digest erratum).

    Examples
    --------
    >>> round(al_two_point_at(0.25, 2.0), 6)
    1.166667
    """
    a = _alpha(alpha)
    if a == 1.0:
        return 1.0
    return 1.0 + (a * a * t + 2.0 * a * a) / (a * a * t * t + 2.0 * a * a * t + 1.0)


def al_two_point(alpha: float) -> float:
    """Theorem 7's supremum over two-point mixes.

    ``1 + alpha / (2 (1 - alpha))`` for ``alpha <= 1/2``, else ``1 + 2 alpha^2``.

    (``alpha = 1`` gives 1, see :func:`al_two_point_at`.)

    Examples
    --------
    >>> round(al_two_point(0.1), 6), al_two_point(0.75)
    (1.055556, 2.125)
    """
    a = _alpha(alpha)
    if a == 1.0:
        return 1.0
    return 1.0 + a / (2.0 * (1.0 - a)) if a <= 0.5 else 1.0 + 2.0 * a * a


def min_two_point(alpha: float) -> float:
    """``min(CR(Amin), CR(A_l))`` on two-point instances (Figure 2; switch at alpha*).

    Examples
    --------
    >>> round(min_two_point(ALPHA_STAR), 6)
    1.309017
    """
    return min(amin_two_point(alpha), al_two_point(alpha))


def _lemma2_dist(weights: NDArray[np.float64]) -> float:
    return amin_ratio_lemma2(weights, l=1, s=0.0)


def amin_geometric(q: float, u: int | None = None) -> float:
    """``CR(Amin; G(p))`` with ``P(o = k) ~ q^(k-1)`` on ``[1, u]`` (Lemma 2, ``s = 0``).

    ``u = None`` means ``u = oo`` (truncated at ``u >= 60/(1-q)``, tail below ``e^-60``);
    a finite ``u`` gives the non-monotone truncated curve (-> 11/8 as ``q -> 1``).

    Examples
    --------
    >>> round(amin_geometric(0.5), 5)
    1.55606
    """
    if not (0.0 <= q < 1.0):
        raise UsageError("q", f"must be in [0, 1), got {q}")
    if u is None:
        u = max(8, math.ceil(60.0 / (1.0 - q)) + 8)
    k = np.arange(1, u + 1, dtype=np.float64)
    w = np.exp((k - 1.0) * math.log(q)) if q > 0 else (k == 1).astype(np.float64)
    return _lemma2_dist(w)


def amin_lg(q: float) -> float:
    """Theorem 8 closed form for ``LG(p)`` (``P(o = k) = k p^2 q^(k-1)``, ``u = oo``).

    ``(1+q)^2 (1 + 3q + 6q^2 + 3q^3 + q^4) / (1 + 2q + 11q^2 + 8q^3 + 11q^4 + 2q^5 + q^6)``.

    Examples
    --------
    >>> round(amin_lg(0.5), 6)
    1.532374
    """
    if not (0.0 <= q < 1.0):
        raise UsageError("q", f"must be in [0, 1), got {q}")
    num = (1 + q) ** 2 * (1 + 3 * q + 6 * q**2 + 3 * q**3 + q**4)
    den = 1 + 2 * q + 11 * q**2 + 8 * q**3 + 11 * q**4 + 2 * q**5 + q**6
    return num / den


def amin_lg_numeric(q: float, u: int | None = None) -> float:
    """``CR(Amin; LG(p))`` by Lemma 2 on ``[1, u]`` (the check of :func:`amin_lg`).

    Examples
    --------
    >>> abs(amin_lg_numeric(0.5) - amin_lg(0.5)) < 1e-12
    True
    """
    if u is None:
        u = max(16, math.ceil(80.0 / (1.0 - q)) + 16)
    k = np.arange(1, u + 1, dtype=np.float64)
    w = k * np.exp((k - 1.0) * math.log(q)) if q > 0 else (k == 1).astype(np.float64)
    return _lemma2_dist(w)


def lg_denominator_sum(q: float, *, printed: bool = False, terms: int = 4000) -> float:
    """Theorem 8's denominator sum ``sum_k k^3 q^(k-1) (...)`` (``p^4`` factored out).

    Corrected summand (what Lemma 2 gives): ``k q^(k-1) + 2 sum_{i>k} i q^(i-1)``; the
    printed one (``printed=True``): ``2 k q^(k-1) + sum_{i>k} i q^(i-1)``. Only the corrected
    sum equals the printed closed form ``(1+2q+11q^2+8q^3+11q^4+2q^5+q^6) / ((1-q)^6
    (1+q)^4)`` (seed 000 erratum; :func:`kvopt.theory.symbolic.lg_denominator_sums`).

    Examples
    --------
    >>> q = 0.6
    >>> closed = (1 + 2*q + 11*q**2 + 8*q**3 + 11*q**4 + 2*q**5 + q**6) / ((1-q)**6 * (1+q)**4)
    >>> round(lg_denominator_sum(q) / closed, 9), round(lg_denominator_sum(q, printed=True)
    ...                                                 / closed, 4)
    (1.0, 0.7535)
    """
    if not (0.0 < q < 1.0):
        raise UsageError("q", f"must be in (0, 1), got {q}")
    k = np.arange(1, terms + 1, dtype=np.float64)
    g = k * q ** (k - 1)
    tail = np.cumsum(g[::-1])[::-1] - g  # sum_{i>k} i q^(i-1)
    inner = 2.0 * g + tail if printed else g + 2.0 * tail
    return float(np.sum(k**3 * q ** (k - 1) * inner))


def amin_uniform(u: int) -> float:
    """``CR(Amin; uniform on [1, u])`` (Lemma 2, ``s = 0``); tends to 11/8.

    Examples
    --------
    >>> round(amin_uniform(10), 5)
    1.36486
    """
    return _lemma2_dist(np.ones(int(u)))


# ----------------------------------------------------------------------------------- seed 001
def jaillet_thm41_lower(memory: float) -> float:
    """Theorem 4.1: every deterministic online algorithm has ``TEL / OPT >= sqrt(M) / 28``.

    Examples
    --------
    >>> jaillet_thm41_lower(784)
    1.0
    """
    return math.sqrt(memory) / 28.0


def jaillet_thm41_opt_upper(memory: float) -> float:
    """Theorem 4.1 proof, eq. (13): ``OPT <= 3.5 M`` on the adversary's instance.

    Examples
    --------
    >>> jaillet_thm41_opt_upper(16)
    56.0
    """
    return 3.5 * memory


def vol(o: ArrayLike, s: float) -> NDArray[np.float64]:
    """Memory-time volume of a request: ``s o + o (o + 1) / 2`` (seed 001 §4;
    :func:`kvopt.core.stability.lifetime_token_steps` in floating point).

    Examples
    --------
    >>> vol([1, 2], 1).tolist()
    [2.0, 5.0]
    """
    from kvopt.core.stability import lifetime_token_steps

    return lifetime_token_steps(s, o, dtype=np.float64)


def _double_sum(output: ArrayLike, s: float) -> tuple[float, float]:
    o = np.sort(np.asarray(output, dtype=np.float64))
    v = vol(o, s)
    # sum_o n_o sum_{o' <= o} n_o' vol_o' = sum over requests i of sum_{j: o_j <= o_i} vol_j
    cum = np.cumsum(v)
    # ties: every request of length o counts all requests of length <= o
    last = np.searchsorted(o, o, side="right") - 1
    return float(cum[last].sum()), float(o.sum())


def jaillet_lemma44_bound(output: ArrayLike, s: float, memory: float) -> float:
    """Lemma 4.4: ``TEL(MC-SF) <= 1536/M sum_o n_o sum_{o'<=o} n_o' vol_o' + 24 sum_o n_o o``.

    Valid for all-at-0 instances with one prompt size ``s`` and ``M >= 2 max(s + o)``.

    Examples
    --------
    >>> jaillet_lemma44_bound([1, 1], 1, 4)
    3120.0
    """
    dsum, osum = _double_sum(output, s)
    return THM43_MCSF_C1 / memory * dsum + THM43_MCSF_C2 * osum


def jaillet_lemma47_bound(output: ArrayLike, s: float, memory: float) -> float:
    """Lemma 4.7: ``OPT >= (1/(6M)) sum_o n_o sum_{o'<=o} n_o' vol_o' + (1/6) sum_o n_o o``.

    Examples
    --------
    >>> round(jaillet_lemma47_bound([1, 1], 1, 4), 6)
    0.666667
    """
    dsum, osum = _double_sum(output, s)
    return dsum / (THM43_OPT_C * memory) + osum / THM43_OPT_C
