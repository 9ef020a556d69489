"""The competitive ratios as sympy expressions, derived from the papers' own ingredients.

Each ``*_expr`` function returns a sympy expression; the ``derive_*`` functions rebuild a
printed closed form from the model it is claimed to follow from (Lemma 2's sums, the
printed latencies of Theorem 2, the continuum limit of Lemma 2) so that the tests can check
the printed formula against its derivation, and :mod:`kvopt.theory.ratios` against both.

Symbols: ``alpha`` (= l/u), ``t`` (= N_l / N_u), ``r`` (= a/b in Theorem 2), ``q`` (= 1 - p).

Examples
--------
>>> from sympy import nsimplify
>>> derive_amin_two_point()["sup"]
3/2 - alpha/2
>>> geometric_limit_expr()
10 - 12*log(2)
"""

from __future__ import annotations

from functools import cache
from typing import Any

import sympy as sp

__all__ = [
    "ALPHA",
    "M",
    "Q",
    "R",
    "T",
    "al_two_point_expr",
    "amax_construction_best_expr",
    "amax_construction_expr",
    "amax_lower_claimed_expr",
    "amax_printed_theorem2_expr",
    "amax_upper_expr",
    "arandom_upper_expr",
    "derive_al_two_point",
    "derive_amax_construction",
    "derive_amin_two_point",
    "derive_amin_two_point_s",
    "derive_arandom",
    "derive_thm41",
    "geometric_limit_expr",
    "lg_denominator_sums",
    "lg_expr",
    "numeric",
    "trace_exact",
    "uniform_limit_expr",
]

ALPHA = sp.Symbol("alpha", positive=True)
T = sp.Symbol("t", nonnegative=True)
R = sp.Symbol("r", positive=True)
Q = sp.Symbol("q", positive=True)
M = sp.Symbol("M", positive=True)


def amax_upper_expr() -> sp.Expr:
    """Theorem 1: ``alpha^-1 (1 + alpha^-1) / 2``.

    Examples
    --------
    >>> amax_upper_expr().subs(ALPHA, sp.Rational(1, 2))
    3
    """
    return (1 + 1 / ALPHA) / (2 * ALPHA)


def amax_lower_claimed_expr() -> sp.Expr:
    """Theorem 2 as printed: ``alpha^-1 (1 + alpha^-1/2) / 2``.

    Examples
    --------
    >>> amax_lower_claimed_expr().subs(ALPHA, sp.Rational(1, 4))
    6
    """
    return (1 + ALPHA ** sp.Rational(-1, 2)) / (2 * ALPHA)


@cache
def derive_amax_construction() -> dict[str, sp.Expr]:
    """Theorem 2's instance from its printed latencies (``s = 0``, ``M = l u``).

    ``N_l = a u`` jobs of length ``l`` and ``N_u = b l`` of length ``u``;
    ``E[TEL(Amax)] = (a u + b l) u (a + b) / 2`` and
    ``TEL(H-SF) = u l a^2/2 + a b l^2 + u l b^2/2`` (large ``a, b``). Returns the ratio in
    ``(alpha, r = a/b)``, its maximiser and maximum.

    Examples
    --------
    >>> d = derive_amax_construction()
    >>> sp.simplify(d["ratio"] - amax_construction_expr()) == 0
    True
    """
    a, b, l, u = sp.symbols("a b l u", positive=True)
    tel_amax = (a * u + b * l) * u * (a + b) / 2
    tel_hsf = u * l * a**2 / 2 + a * b * l**2 + u * l * b**2 / 2
    ratio = sp.simplify((tel_amax / tel_hsf).subs({a: R * b, l: ALPHA * u}))
    dr = sp.together(sp.diff(ratio, R))
    crit = [c for c in sp.solve(sp.numer(dr), R) if c.is_positive is not False]
    r_star = next(c for c in crit if sp.simplify(c - (1 + sp.sqrt(2 + 2 * ALPHA))) == 0)
    best = sp.simplify(ratio.subs(R, r_star))
    at_sqrt = sp.simplify(ratio.subs(R, sp.sqrt(ALPHA)))
    return {"ratio": ratio, "argmax": r_star, "max": best, "at_sqrt_alpha": at_sqrt}


def amax_construction_expr() -> sp.Expr:
    """``alpha^-1 (r + alpha)(r + 1) / (r^2 + 2 alpha r + 1)`` (digest erratum form).

    Examples
    --------
    >>> amax_construction_expr().subs({ALPHA: sp.Rational(1, 4), R: sp.Rational(1, 2)})
    3
    """
    return (R + ALPHA) * (R + 1) / (ALPHA * (R**2 + 2 * ALPHA * R + 1))


def amax_construction_best_expr() -> sp.Expr:
    """``max_r``: ``alpha^-1 [1 + (1 - alpha)/(c (c + 2))]``, ``c = sqrt(2 (1 + alpha))``.

    Examples
    --------
    >>> round(float(amax_construction_best_expr().subs(ALPHA, sp.Rational(1, 2))), 4)
    2.1547
    """
    c = sp.sqrt(2 * (1 + ALPHA))
    return (1 + (1 - ALPHA) / (c * (c + 2))) / ALPHA


def amax_printed_theorem2_expr() -> sp.Expr:
    """The last display of Theorem 2's proof, literally: ``(u/l)(au+bl)(a+b)/(ua^2+l^2ab+ub^2)``.

    With ``a/b = sqrt(alpha)`` it depends on ``l`` (not only on alpha); returned in
    ``(alpha, l)`` with ``u = l/alpha``. Used only to document the typo.

    Examples
    --------
    >>> e = amax_printed_theorem2_expr()
    >>> l = sp.Symbol("l", positive=True)
    >>> [e.subs({ALPHA: sp.Rational(1, 4), l: v}) for v in (1, 2)]   # same alpha, two l
    [36/11, 3]
    """
    a, b, l, u = sp.symbols("a b l u", positive=True)
    expr = (u / l) * (a * u + b * l) * (a + b) / (u * a**2 + l**2 * a * b + u * b**2)
    return sp.simplify(expr.subs({a: sp.sqrt(ALPHA) * b}).subs(u, l / ALPHA))


@cache
def derive_arandom() -> dict[str, sp.Expr]:
    """Theorem EC.1(b), ``s = 0``: ratio in ``t = N_l/N_u`` and its supremum ``(1 + 1/alpha)/2``.

    Examples
    --------
    >>> derive_arandom()["sup"]
    1/2 + 1/(2*alpha)
    """
    nl, nu, l, u = sp.symbols("N_l N_u l u", positive=True)
    ratio = (nl + nu) * (nl * l**2 + nu * u**2) / (
        l**2 * nl**2 + 2 * l**2 * nl * nu + u**2 * nu**2)
    rt = sp.simplify(ratio.subs({nl: T * nu, l: ALPHA * u}))
    crit = sp.solve(sp.numer(sp.together(sp.diff(rt, T))), T)
    t_star = next(c for c in crit if sp.simplify(c - 1 / ALPHA) == 0)
    return {"ratio": rt, "argmax": t_star, "sup": sp.expand(sp.simplify(rt.subs(T, t_star)))}


def arandom_upper_expr() -> sp.Expr:
    """``(1 + alpha^-1) / 2``.

    Examples
    --------
    >>> arandom_upper_expr().subs(ALPHA, sp.Rational(1, 2))
    3/2
    >>> arandom_upper_expr() - derive_arandom()["sup"]          # the derived supremum
    0
    """
    return (1 + 1 / ALPHA) / 2


@cache
def derive_amin_two_point() -> dict[str, sp.Expr]:
    """Theorem 6 rebuilt from Lemma 2's sums with support ``{l, u}`` (``s = 0``).

    Lemma 2's sum over ``k = l..u`` is done symbolically (``k`` free), then ``l = alpha u``
    and ``x_l = t x_u``; the ratio is maximised over ``t``.

    Examples
    --------
    >>> d = derive_amin_two_point()
    >>> d["argmax"]
    1/alpha
    """
    l, u, k, xl, xu = sp.symbols("l u k x_l x_u", positive=True)
    # k = l (delta = s + l = l): S1 = l x_l + u x_u;
    # bracket = delta x_l/l + delta x_u/u + 2 (u-l) x_u/u
    term_l = l * (l * xl + u * xu) * (l * xl / l + l * xu / u + 2 * (u - l) * xu / u)
    # l < k <= u (delta = 1): S1 = u x_u; bracket = x_u/u + 2 (u - k) x_u / u
    term_k = sp.summation(u * xu * (xu / u + 2 * (u - k) * xu / u), (k, l + 1, u))
    num = term_l + term_k
    den = l * l * xl * (xl + 2 * xu) + u * u * xu * xu
    ratio = sp.simplify((num / den).subs({xl: T * xu}).subs(l, ALPHA * u))
    crit = sp.solve(sp.numer(sp.together(sp.diff(ratio, T))), T)
    t_star = next(c for c in crit if sp.simplify(c - 1 / ALPHA) == 0)
    return {"ratio": ratio, "argmax": t_star, "sup": sp.expand(sp.simplify(ratio.subs(T, t_star)))}


@cache
def derive_amin_two_point_s() -> dict[str, sp.Expr]:
    """Lemma 2 on the support ``{l, u}`` with a prompt ``s >= 0`` (symbols ``l, u, s``).

    The sum over the periods ``k = l..u`` is done symbolically, as in
    :func:`derive_amin_two_point`, but with ``delta(l) = s + l`` and the ``x_i / (s + i)``
    weights kept. Returns ``N`` and ``D`` as polynomials in ``x_l, x_u`` and the ratio in
    ``t = x_l / x_u``; the supremum over ``t`` is the larger root ``lambda`` of
    ``det(A - lambda B) = 0`` for the 2x2 matrices of the two forms (``"sup_root"``), valid
    when its eigenvector is nonnegative (checked numerically by the tests).

    Examples
    --------
    >>> d = derive_amin_two_point_s()
    >>> l, u, s = d["symbols"]
    >>> sp.nsimplify(d["ratio"].subs({l: 1, u: 4, s: 0, T: 4}))
    11/8
    """
    l, u, s, k, xl, xu = sp.symbols("l u s k x_l x_u", positive=True)
    dl = s + l
    term_l = dl * (l * xl + u * xu) * (dl * (xl / (s + l) + xu / (s + u))
                                       + 2 * (u - l) * xu / (s + u))
    term_k = sp.summation(u * xu * (xu / (s + u) + 2 * (u - k) * xu / (s + u)), (k, l + 1, u))
    num = sp.expand(term_l + term_k)
    den = sp.expand(l * (s + l) * xl * (xl + 2 * xu) + u * (s + u) * xu * xu)
    ratio = sp.simplify((num / den).subs(xl, T * xu))

    def form(p: sp.Expr) -> sp.Matrix:
        c = sp.Poly(p, xl, xu)
        off = c.coeff_monomial(xl * xu) / 2
        return sp.Matrix([[c.coeff_monomial(xl**2), off], [off, c.coeff_monomial(xu**2)]])

    lam = sp.Symbol("lambda")
    roots = sp.solve(sp.Eq((form(num) - lam * form(den)).det(), 0), lam)
    return {"symbols": (l, u, s), "num": num, "den": den, "ratio": ratio, "roots": roots}


def al_two_point_expr() -> sp.Expr:
    """Theorem 7's supremum as a piecewise expression (``0 < alpha < 1``).

    Examples
    --------
    >>> al_two_point_expr().subs(ALPHA, sp.Rational(3, 4))
    17/8
    """
    return sp.Piecewise((1 + ALPHA / (2 * (1 - ALPHA)), sp.Rational(1, 2) >= ALPHA),
                        (1 + 2 * ALPHA**2, True))


@cache
def derive_al_two_point() -> dict[str, sp.Expr]:
    """Theorem 7 from its printed latencies; maximiser ``t* = 1/alpha - 2`` (valid if >= 0).

    Examples
    --------
    >>> sp.simplify(derive_al_two_point()["sup_interior"] - (1 + ALPHA / (2 * (1 - ALPHA))))
    0
    """
    xl, xu = sp.symbols("x_l x_u", positive=True)
    tel_al = ALPHA**2 * xl**2 + 3 * ALPHA**2 * xl * xu + (2 * ALPHA**2 + 1) * xu**2
    tel_hsf = ALPHA**2 * xl**2 + 2 * ALPHA**2 * xl * xu + xu**2
    ratio = sp.simplify((tel_al / tel_hsf).subs(xl, T * xu))
    crit = sp.solve(sp.numer(sp.together(sp.diff(ratio, T))), T)
    t_star = next(c for c in crit if sp.simplify(c - (1 / ALPHA - 2)) == 0)
    return {"ratio": ratio, "argmax": t_star,
            "sup_interior": sp.simplify(ratio.subs(T, t_star)),
            "at_t0": sp.simplify(ratio.subs(T, 0))}


def lg_expr() -> sp.Expr:
    """Theorem 8: ``CR(Amin; LG(p))`` in ``q``.

    Examples
    --------
    >>> sp.limit(lg_expr(), Q, 1)
    14/9
    """
    return ((1 + Q) ** 2 * (1 + 3 * Q + 6 * Q**2 + 3 * Q**3 + Q**4)
            / (1 + 2 * Q + 11 * Q**2 + 8 * Q**3 + 11 * Q**4 + 2 * Q**5 + Q**6))


def lg_denominator_sums() -> dict[str, sp.Expr]:
    """Theorem 8's intermediate closed forms of the numerator and denominator sums.

    ``num = (1+3q+6q^2+3q^3+q^4)/((1-q)^6 (1+q)^2)`` and
    ``den = (1+2q+11q^2+8q^3+11q^4+2q^5+q^6)/((1-q)^6 (1+q)^4)`` (up to ``p^4``); the
    tests compare ``den`` with the corrected and the printed summands.

    Examples
    --------
    >>> s = lg_denominator_sums()
    >>> sp.cancel(s["num"] / s["den"] - lg_expr())            # their ratio is Theorem 8
    0
    """
    num = (1 + 3 * Q + 6 * Q**2 + 3 * Q**3 + Q**4) / ((1 - Q) ** 6 * (1 + Q) ** 2)
    den = (1 + 2 * Q + 11 * Q**2 + 8 * Q**3 + 11 * Q**4 + 2 * Q**5 + Q**6) / (
        (1 - Q) ** 6 * (1 + Q) ** 4)
    return {"num": num, "den": den}


@cache
def geometric_limit_expr() -> sp.Expr:
    """``lim_{q -> 1} CR(Amin; G(p))`` from the continuum limit of Lemma 2 (``f = e^-z``).

    ``N = 2 int (k+1) e^-k (e^-k - k E1(k)) dk``, ``D = 2 int k^2 e^-2k dk``; the moments
    ``int k^n e^-k E1(k) dk = int_1^oo n! / (t (1+t)^(n+1)) dt`` are rational integrals.
    """
    tt = sp.Symbol("tau", positive=True)

    def moment(n: int) -> sp.Expr:  # int_0^oo k^n e^-k E1(k) dk
        antider = sp.integrate(sp.apart(sp.factorial(n) / (tt * (1 + tt) ** (n + 1)), tt), tt)
        return sp.limit(antider, tt, sp.oo) - antider.subs(tt, 1)

    k = sp.Symbol("k", positive=True)
    n_val = 2 * (sp.integrate((k + 1) * sp.exp(-2 * k), (k, 0, sp.oo)) - moment(2) - moment(1))
    d_val = 2 * sp.integrate(k**2 * sp.exp(-2 * k), (k, 0, sp.oo))
    return sp.expand(sp.expand_log(n_val / d_val, force=True))


@cache
def uniform_limit_expr() -> sp.Expr:
    """``lim_{u -> oo} CR(Amin; uniform on [1, u])`` from the continuum of Lemma 2 (= 11/8).

    Examples
    --------
    >>> uniform_limit_expr()
    11/8
    """
    k, i = sp.symbols("k i", positive=True)
    n_val = 2 * sp.integrate(sp.integrate(i, (i, k, 1)) * sp.integrate(1 - k / i, (i, k, 1)),
                             (k, 0, 1))
    d_val = 2 * sp.integrate(k**2 * (1 - k), (k, 0, 1))
    return sp.nsimplify(sp.simplify(n_val / d_val))


def trace_exact(u: int) -> sp.Rational:
    """``tr(B_u^-1 A_u)`` in exact rational arithmetic (small ``u``); equals ``H_u``.

    Examples
    --------
    >>> trace_exact(3)
    11/6
    """
    A = sp.Matrix(u, u, lambda i, j: sp.Rational(min(i + 1, j + 1) ** 2, (i + 1) * (j + 1))
                  * (sp.Rational((i + j + 2) ** 2, 2) - min(i + 1, j + 1) ** 2))
    B = sp.Matrix(u, u, lambda i, j: min(i + 1, j + 1) ** 2)
    return sp.Rational((B.inv() * A).trace())


@cache
def derive_thm41() -> dict[str, sp.Expr]:
    """Seed 001 Theorem 4.1's arithmetic: ``TEL(A) >= (M/4)(sqrt(M)/2)``, ``OPT <= 3.5 M``.

    Examples
    --------
    >>> derive_thm41()["ratio_lower"]
    sqrt(M)/28
    """
    tel = (M / 4) * (sp.sqrt(M) / 2)
    opt = sp.Rational(7, 2) * M
    return {"tel_lower": tel, "opt_upper": opt, "ratio_lower": sp.simplify(tel / opt)}


def numeric(expr: sp.Expr, *symbols: sp.Symbol) -> Any:
    """``sympy.lambdify`` with numpy (for the grid comparisons).

    Examples
    --------
    >>> f = numeric(amax_upper_expr(), ALPHA)
    >>> float(f(0.5))
    3.0
    """
    return sp.lambdify(symbols, expr, modules="numpy")
