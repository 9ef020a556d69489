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
    """Pollaczek-Khinchine mean response time ``E[S] + lam E[S^2] / (2 (1 - lam E[S]))``."""
    return es + lam_ * es2 / (2 * (1 - lam_ * es))


def srpt_exp_rho() -> sp.Expr:
    """``rho(x) = lam int_0^x t e^-t dt`` for Exp(1) sizes (derived by SymPy)."""
    return sp.simplify(lam * sp.integrate(t * sp.exp(-t), (t, 0, x)))


def srpt_exp_waiting() -> sp.Expr:
    """SRPT waiting term ``lam (m2(x) + x^2 e^-x) / (2 (1 - rho(x))^2)`` for Exp(1) sizes."""
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
    """``rho'_r = lam (1 - 2 r K_2(2 sqrt r))`` for Exp(1) sizes and exponential predictions."""
    return lam * (1 - 2 * r * sp.besselk(2, 2 * sp.sqrt(r)))


def exp_pred_m2() -> sp.Expr:
    """``E[X^2; Y <= r] = 2 - 2 r^(3/2) K_3(2 sqrt r)`` (exp sizes, exp predictions)."""
    return 2 - 2 * r ** sp.Rational(3, 2) * sp.besselk(3, 2 * sp.sqrt(r))


def exp_pred_marginal() -> sp.Expr:
    """Density of the prediction ``f_p(y) = 2 K_0(2 sqrt y)`` (exp sizes, exp predictions)."""
    return 2 * sp.besselk(0, 2 * sp.sqrt(r))
