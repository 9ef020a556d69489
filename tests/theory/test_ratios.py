"""Closed forms: sympy vs fast numeric functions; printed formulas vs their derivations."""

import math

import numpy as np
import pytest
import sympy as sp

from kvopt.theory import ratios as rt
from kvopt.theory import symbolic as sy
from kvopt.theory.rayleigh import amin_ratio_lemma2, lambda_max

ALPHAS = [1.0, 0.9, 0.75, 0.5, 0.4, 1 / 3, 0.25, 0.2, 0.1, 0.05, 0.02, 0.01, 0.001]
QS = [0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.95]


def test_amax_sympy_vs_numeric():
    up = sy.numeric(sy.amax_upper_expr(), sy.ALPHA)
    lo = sy.numeric(sy.amax_lower_claimed_expr(), sy.ALPHA)
    best = sy.numeric(sy.amax_construction_best_expr(), sy.ALPHA)
    at = sy.numeric(sy.amax_construction_expr(), sy.ALPHA, sy.R)
    derived_best = sy.numeric(sy.derive_amax_construction()["max"], sy.ALPHA)
    for a in ALPHAS:
        assert rt.amax_upper(a) == pytest.approx(float(up(a)), rel=1e-13)
        assert rt.amax_lower_claimed(a) == pytest.approx(float(lo(a)), rel=1e-13)
        assert rt.amax_construction(a) == pytest.approx(float(best(a)), rel=1e-12)
        assert rt.amax_construction(a) == pytest.approx(float(derived_best(a)), rel=1e-12)
        for r in (0.1, math.sqrt(a), 1.0, 3.0):
            assert rt.amax_construction_at(a, r) == pytest.approx(float(at(a, r)), rel=1e-13)


def test_amax_construction_from_printed_latencies():
    d = sy.derive_amax_construction()
    assert sp.simplify(d["ratio"] - sy.amax_construction_expr()) == 0
    assert sp.simplify(d["argmax"] - (1 + sp.sqrt(2 + 2 * sy.ALPHA))) == 0
    # the construction never reaches the claimed bound (erratum), but stays below the UB
    for a in ALPHAS[1:]:
        best = rt.amax_construction(a)
        assert best < rt.amax_lower_claimed(a) < rt.amax_upper(a)
        # numeric max over a fine r grid agrees with the closed-form maximiser
        grid = max(rt.amax_construction_at(a, r) for r in np.linspace(0, 30, 30001))
        assert grid == pytest.approx(best, rel=1e-6)
    # at the paper's r = sqrt(alpha) the construction is ~ alpha^-1/2: Theta(alpha^-1/2)
    assert rt.amax_construction_at(0.01, 0.1) * 0.1 == pytest.approx(1.1957, abs=1e-3)
    # alpha -> 0: best * alpha -> 1 + 1/(sqrt2 (sqrt2 + 2)) = 1.2071
    assert rt.amax_construction(1e-8) * 1e-8 == pytest.approx(1 + 1 / (2 + 2 * math.sqrt(2)),
                                                            rel=1e-6)


def test_amax_digest_table():
    # digest seed-000 §3.1 table (independent computation)
    rows = {0.5: (2.4142, 1.8673, 2.1547, 3), 0.25: (6.0, 3.0, 4.5298, 10),
            0.1: (20.811, 4.7097, 11.742, 55), 0.01: (550.0, 11.957, 120.36, 5050)}
    for a, (claimed, at_sqrt, best, ub) in rows.items():
        assert rt.amax_lower_claimed(a) == pytest.approx(claimed, abs=1e-3)
        assert rt.amax_construction_at(a, math.sqrt(a)) == pytest.approx(at_sqrt, abs=1e-3)
        assert rt.amax_construction(a) == pytest.approx(best, abs=1e-2)
        assert rt.amax_upper(a) == pytest.approx(ub)


def test_printed_theorem2_display_is_not_the_claim():
    e = sy.amax_printed_theorem2_expr()
    l = sp.Symbol("l", positive=True)
    assert l in e.free_symbols  # the printed display is not even scale-free
    a = sp.Rational(1, 4)
    claimed = sy.amax_lower_claimed_expr().subs(sy.ALPHA, a)
    assert sp.simplify(e.subs({sy.ALPHA: a, l: 1}) - claimed) != 0


def test_arandom():
    d = sy.derive_arandom()
    assert sp.simplify(d["sup"] - sy.arandom_upper_expr()) == 0
    for a in ALPHAS:
        assert rt.arandom_upper(a) == pytest.approx((1 + 1 / a) / 2)
        assert rt.arandom_upper_general(1, 1 / a, 0) == pytest.approx(rt.arandom_upper(a))
    # general s: beta = l(s+l)/(u(s+u)); s > 0 lowers the ratio
    assert rt.arandom_upper_general(1, 10, 5) < rt.arandom_upper(0.1)


def test_amin_two_point_from_lemma2():
    d = sy.derive_amin_two_point()
    assert sp.simplify(d["sup"] - (3 - sy.ALPHA) / 2) == 0
    ratio = sy.numeric(d["ratio"], sy.ALPHA, sy.T)
    for a in ALPHAS[1:]:
        assert rt.amin_two_point(a) == pytest.approx(float(ratio(a, 1 / a)), rel=1e-13)
        for t in (0.0, 0.5, 2.0, 1 / a, 50.0):
            assert rt.amin_two_point_at(a, t) == pytest.approx(float(ratio(a, t)), rel=1e-12)
    # numeric Lemma 2 on an actual two-point vector, several (l, u)
    for l, u in [(1, 4), (4, 16), (3, 30), (2, 20)]:
        a = l / u
        x = np.zeros(u - l + 1)
        x[0], x[-1] = 1 / a, 1.0
        assert amin_ratio_lemma2(x, l=l) == pytest.approx((3 - a) / 2, rel=1e-12)
        # two-point sup never exceeds the Rayleigh sup
        assert (3 - a) / 2 <= lambda_max(u, l=l) + 1e-12


def _two_point_vector(l, u, t):
    x = np.zeros(u - l + 1)
    x[0], x[-1] = t, 1.0
    return x


@pytest.mark.parametrize(("l", "u", "s", "value"),
                         [(1, 4, 3, 1.4702), (5, 40, 10, 1.6246)])
def test_amin_two_point_with_prompt_issue_values(l, u, s, value):
    """Issue 23: with s > 0 the two-point sup is Lemma 2's, not Theorem 6's (3 - alpha)/2."""
    sup, t = rt.amin_two_point_lus(l, u, s)
    assert sup == pytest.approx(value, abs=5e-5)
    assert sup > (3 - l / u) / 2 + 0.09
    # the same Lemma 2 evaluated on the vector (O(u) suffix sums), and a brute grid over t
    assert amin_ratio_lemma2(_two_point_vector(l, u, t), l=l, s=s) == pytest.approx(sup,
                                                                                   rel=1e-12)
    grid = max(amin_ratio_lemma2(_two_point_vector(l, u, tt), l=l, s=s)
               for tt in np.geomspace(1e-3, 1e3, 4001))
    assert grid <= sup + 1e-12 and grid == pytest.approx(sup, abs=1e-5)


def test_amin_two_point_with_prompt_general():
    d = sy.derive_amin_two_point_s()
    l_, u_, s_ = d["symbols"]
    for l, u, s in [(1, 4, 3), (5, 40, 10), (2, 7, 1.5), (1, 10, 0), (4, 16, 0), (3, 9, 50)]:
        sup, t = rt.amin_two_point_lus(l, u, s)
        if s == 0:
            assert sup == pytest.approx((3 - l / u) / 2, rel=1e-12)
            assert t == pytest.approx(u / l, rel=1e-9)
        # sympy's Lemma 2 sum: the larger generalized eigenvalue of the two 2x2 forms
        roots = [float(r.subs({l_: l, u_: u, s_: s})) for r in d["roots"]]
        assert sup == pytest.approx(max(roots), rel=1e-10)
        ratio = float(d["ratio"].subs({l_: l, u_: u, s_: s, sy.T: t}))
        assert ratio == pytest.approx(sup, rel=1e-10)
        for tt in (0.0, 0.3, 1.0, 7.0):
            assert rt.amin_two_point_lus_at(l, u, s, tt) == pytest.approx(
                amin_ratio_lemma2(_two_point_vector(l, u, tt), l=l, s=s), rel=1e-12)
        # a two-point mix is one distribution: never above the sup over all of them
        assert sup <= lambda_max(u, l=l, s=s) + 1e-12
    assert rt.amin_two_point_lus(3, 3, 2.0) == (1.0, math.inf)
    assert rt.amin_two_point_lus_at(1, 4, 3, math.inf) == 1.0
    with pytest.raises(ValueError):
        rt.amin_two_point_lus(4, 3, 0)
    with pytest.raises(ValueError):
        rt.amin_two_point_lus(1, 3, -1)


def test_al_two_point():
    d = sy.derive_al_two_point()
    assert sp.simplify(d["sup_interior"] - (1 + sy.ALPHA / (2 * (1 - sy.ALPHA)))) == 0
    assert sp.simplify(d["at_t0"] - (1 + 2 * sy.ALPHA**2)) == 0
    expr = sy.numeric(sy.al_two_point_expr(), sy.ALPHA)
    ratio = sy.numeric(d["ratio"], sy.ALPHA, sy.T)
    for a in ALPHAS[1:]:
        assert rt.al_two_point(a) == pytest.approx(float(expr(a)), rel=1e-13)
        grid = float(np.max(ratio(a, np.linspace(0, 2 / a + 10, 400001))))
        assert rt.al_two_point(a) == pytest.approx(grid, rel=1e-5)
    # digest R6 values; alpha = 1 means no eviction at all
    assert rt.al_two_point(0.25) == pytest.approx(1.166667, abs=1e-6)
    assert rt.al_two_point(0.1) == pytest.approx(1.055556, abs=1e-6)
    assert rt.al_two_point(0.75) == pytest.approx(2.125)
    assert rt.al_two_point(1.0) == 1.0 and rt.al_two_point_at(1.0, 3.0) == 1.0
    assert pytest.approx(0.381966, abs=1e-6) == rt.ALPHA_STAR
    assert rt.amin_two_point(rt.ALPHA_STAR) == pytest.approx(rt.al_two_point(rt.ALPHA_STAR))
    assert rt.min_two_point(rt.ALPHA_STAR) == pytest.approx(1.309017, abs=1e-6)


def test_lg_closed_form_vs_lemma2_and_limit():
    f = sy.numeric(sy.lg_expr(), sy.Q)
    for q in QS:
        assert rt.amin_lg(q) == pytest.approx(float(f(q)), rel=1e-13)
        assert rt.amin_lg_numeric(q) == pytest.approx(rt.amin_lg(q), rel=1e-10)
    assert sp.limit(sy.lg_expr(), sy.Q, 1) == sp.Rational(14, 9)
    assert pytest.approx(14 / 9) == rt.LG_LIMIT
    vals = [rt.amin_lg(q) for q in np.linspace(0, 0.999, 200)]
    assert np.all(np.diff(vals) > 0) and max(vals) < 14 / 9
    # digest sample values
    for q, v in [(0.1, 1.250341), (0.3, 1.473505), (0.5, 1.532374), (0.9, 1.555075)]:
        assert rt.amin_lg(q) == pytest.approx(v, abs=1e-6)


def test_lg_denominator_erratum():
    sums = sy.lg_denominator_sums()
    for q in (0.3, 0.6, 0.9):
        K = 4000
        k = np.arange(1, K + 1, dtype=float)
        g = k * q ** (k - 1)                          # k q^(k-1)
        tail = np.cumsum(g[::-1])[::-1] - g           # sum_{i>k} i q^(i-1)
        corrected = np.sum(k**3 * q ** (k - 1) * (g + 2 * tail))
        printed = np.sum(k**3 * q ** (k - 1) * (2 * g + tail))
        exact = float(sums["den"].subs(sy.Q, q))
        assert corrected == pytest.approx(exact, rel=1e-9)
        assert abs(printed - exact) > 1e-3 * exact


def test_geometric():
    assert sy.geometric_limit_expr() == 10 - 12 * sp.log(2)
    assert pytest.approx(float(10 - 12 * sp.log(2))) == rt.GEOMETRIC_LIMIT
    for q, v in [(0.1, 1.14546), (0.3, 1.39121), (0.5, 1.55606), (0.9, 1.67884),
                 (0.99, 1.68220)]:
        assert rt.amin_geometric(q) == pytest.approx(v, abs=1e-5)
    assert rt.amin_geometric(0.999) == pytest.approx(rt.GEOMETRIC_LIMIT, abs=1e-6)
    vals = [rt.amin_geometric(q) for q in np.linspace(0.05, 0.99, 40)]
    assert np.all(np.diff(vals) > 0) and max(vals) < rt.GEOMETRIC_LIMIT < 1.7
    # finite-u caveat: the truncated curve is not monotone and falls back toward 11/8
    assert rt.amin_geometric(0.9, u=100) > rt.amin_geometric(0.99, u=100) > rt.amin_geometric(
        0.999, u=100)
    assert rt.amin_geometric(0.999, u=100) == pytest.approx(1.381, abs=2e-3)


def test_uniform_limit():
    assert sy.uniform_limit_expr() == sp.Rational(11, 8)
    assert rt.amin_uniform(10) == pytest.approx(1.36486, abs=1e-5)
    assert rt.amin_uniform(100) == pytest.approx(1.374889, abs=1e-6)
    assert rt.amin_uniform(10_000) == pytest.approx(11 / 8, abs=1e-7)


def test_trace_exact_is_harmonic():
    for u in range(1, 8):
        assert sy.trace_exact(u) == sp.harmonic(u)


def test_log_bound_and_rayleigh():
    for a in ALPHAS:
        l, u = rt.alpha_to_lu(a)
        assert l / u == pytest.approx(a)
        lam = rt.amin_rayleigh(a)
        assert rt.amin_two_point(a) <= lam + 1e-12
        if l == 1:
            assert lam <= rt.amin_log_bound(a) + 1e-12 <= 1 + math.log(u) + 1e-12


def test_jaillet_thm41_and_constants():
    d = sy.derive_thm41()
    assert sp.simplify(d["ratio_lower"] - sp.sqrt(sy.M) / 28) == 0
    for m in (16, 400, 6400):
        assert rt.jaillet_thm41_lower(m) == pytest.approx(float(d["ratio_lower"].subs(sy.M, m)))
        assert rt.jaillet_thm41_opt_upper(m) == pytest.approx(float(d["opt_upper"].subs(sy.M, m)))
    assert rt.THM43_RATIO == 9216.0


def test_jaillet_lemma_bounds_against_bruteforce():
    from kvopt.core.instance import Instance
    from kvopt.core.mcsf import mcsf_starts
    from tests.bruteforce import brute_force_opt

    rng = np.random.default_rng(11)
    checked = 0
    while checked < 25:
        n = int(rng.integers(1, 6))
        s = int(rng.integers(0, 3))
        o = rng.integers(1, 6, size=n)
        M = int(rng.integers(2 * (s + o.max()), 2 * (s + o.max()) + 6))
        opt, _ = brute_force_opt(M, [0] * n, [s] * n, o.tolist())
        inst = Instance(memory=M, arrival=[0] * n, prompt=[s] * n, output=o)
        tel = int((mcsf_starts(inst) + o).sum())
        assert rt.jaillet_lemma47_bound(o, s, M) <= opt + 1e-9
        assert opt <= tel <= rt.jaillet_lemma44_bound(o, s, M)
        checked += 1


def test_bad_alpha():
    for f in (rt.amax_upper, rt.amin_two_point, rt.al_two_point):
        with pytest.raises(ValueError):
            f(0.0)
        with pytest.raises(ValueError):
            f(1.5)
