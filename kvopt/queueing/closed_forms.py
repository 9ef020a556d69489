"""SymPy closed forms used as independent test oracles.

All functions return SymPy expressions (use ``sympy.lambdify`` or ``.evalf``).

Examples
--------
>>> import sympy as sp
>>> lam, mu = sp.symbols("lam mu", positive=True)
>>> sp.simplify(pk_mean(lam, 1 / mu, 2 / mu**2) - 1 / (mu - lam))
0
"""

from __future__ import annotations

import sympy as sp

__all__ = [
    "pk_mean",
    "srpt_exp_waiting",
    "srpt_exp_rho",
    "trail_perfect_exp_waiting",
    "exp_pred_rho",
    "exp_pred_m2",
    "exp_pred_marginal",
]

x, r, t, lam, C = sp.symbols("x r t lam C", positive=True)


def pk_mean(lam_: sp.Expr | float, es: sp.Expr | float, es2: sp.Expr | float) -> sp.Expr:
    """Pollaczek-Khinchine mean response time ``E[S] + lam E[S^2] / (2 (1 - lam E[S]))``.

    Examples
    --------
    >>> pk_mean(0.5, 1.0, 2.0)        # M/M/1 with lam = 1/2, mu = 1: 1 / (mu - lam)
    2.0
    >>> pk_mean(0.5, 1.0, 1.0)        # M/D/1: half the queueing delay
    1.5
    """
    return es + lam_ * es2 / (2 * (1 - lam_ * es))


def srpt_exp_rho() -> sp.Expr:
    """``rho(x) = lam int_0^x t e^-t dt`` for Exp(1) sizes (derived by SymPy).

    Examples
    --------
    >>> import sympy as sp
    >>> lam, x = sp.symbols("lam x", positive=True)
    >>> sp.simplify(srpt_exp_rho() - lam * (1 - (1 + x) * sp.exp(-x)))
    0
    """
    return sp.simplify(lam * sp.integrate(t * sp.exp(-t), (t, 0, x)))


def srpt_exp_waiting() -> sp.Expr:
    """SRPT waiting term ``lam (m2(x) + x^2 e^-x) / (2 (1 - rho(x))^2)`` for Exp(1) sizes.

    Examples
    --------
    >>> import sympy as sp
    >>> lam, x = sp.symbols("lam x", positive=True)
    >>> round(float(srpt_exp_waiting().subs({lam: 0.5, x: 1.0})), 6)   # job of size 1
    0.175409
    """
    m2 = sp.integrate(t**2 * sp.exp(-t), (t, 0, x))
    return lam * (m2 + x**2 * sp.exp(-x)) / (2 * (1 - srpt_exp_rho()) ** 2)


def trail_perfect_exp_waiting(c: sp.Expr | float) -> sp.Expr:
    """Corrected TRAIL waiting term, perfect predictions, Exp(1) sizes, ``0 < c < 1``.

    The old job with size (= prediction) ``t > x`` is recycled at age ``min(t - x, c t)``
    and then has ``max(x, (1 - c) t)`` work left; SymPy integrates the square.  The result
    equals ``[rho(x) + lam (1-c) e^(-x/(1-c)) (x + 1 - c)] / (1 - rho(x))^2``.
    """
    m2 = sp.integrate(t**2 * sp.exp(-t), (t, 0, x))
    knee = x / (1 - c)
    rec = sp.integrate(x**2 * sp.exp(-t), (t, x, knee)) + sp.integrate(
        ((1 - c) * t) ** 2 * sp.exp(-t), (t, knee, sp.oo))
    return lam * (m2 + rec) / (2 * (1 - srpt_exp_rho()) ** 2)


def exp_pred_rho() -> sp.Expr:
    """``rho'_r = lam (1 - 2 r K_2(2 sqrt r))`` for Exp(1) sizes and exponential predictions.

    Examples
    --------
    >>> import sympy as sp
    >>> lam, r = sp.symbols("lam r", positive=True)
    >>> round(float(exp_pred_rho().subs({lam: 0.5, r: 1.0})), 6)
    0.24624
    """
    return lam * (1 - 2 * r * sp.besselk(2, 2 * sp.sqrt(r)))


def exp_pred_m2() -> sp.Expr:
    """``E[X^2; Y <= r] = 2 - 2 r^(3/2) K_3(2 sqrt r)`` (exp sizes, exp predictions).

    Examples
    --------
    >>> import sympy as sp
    >>> r = sp.Symbol("r", positive=True)
    >>> [round(float(exp_pred_m2().subs(r, v)), 6) for v in (1.0, 50.0)]   # -> E[X^2] = 2
    [0.705229, 1.999771]
    """
    return 2 - 2 * r ** sp.Rational(3, 2) * sp.besselk(3, 2 * sp.sqrt(r))


def exp_pred_marginal() -> sp.Expr:
    """Density of the prediction ``f_p(y) = 2 K_0(2 sqrt y)`` (exp sizes, exp predictions).

    Examples
    --------
    >>> import sympy as sp
    >>> r = sp.Symbol("r", positive=True)
    >>> sp.integrate(exp_pred_marginal(), (r, 0, sp.oo))   # a probability density
    1
    """
    return 2 * sp.besselk(0, 2 * sp.sqrt(r))
