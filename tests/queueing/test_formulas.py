"""Formula tests: known closed forms, limits (to 1e-6) and the errata."""

import mpmath
import numpy as np
import pytest
import sympy as sp

from kvopt.core.errors import UsageError
from kvopt.queueing import closed_forms as cf
from kvopt.queueing.classical import classical_given_size, classical_mean
from kvopt.queueing.distributions import parse_sizes
from kvopt.queueing.predictions import ExpPredictions, LogNormalNoise, Perfect, parse_predictions
from kvopt.queueing.soap import SoapModel

DISTS = ["exp:1", "uniform:0,2", "hyperexp:0.5,0.5,0.5,1.5", "det:1", "bpareto:1.5,1,100"]


@pytest.mark.parametrize("lam", [0.3, 0.6, 0.9])
def test_mm1_fcfs(lam):
    d = parse_sizes("exp:1")
    exact = 1 / (1 - lam)
    assert classical_mean("fcfs", lam, d) == pytest.approx(exact, rel=1e-12)
    assert SoapModel(d, Perfect(), lam).mean_response("fcfs") == pytest.approx(exact, rel=1e-12)
    lam_s, mu = sp.symbols("lam mu", positive=True)
    pk = cf.pk_mean(lam_s, 1 / mu, 2 / mu**2)
    assert float(pk.subs({lam_s: lam, mu: 1})) == pytest.approx(exact, rel=1e-14)


@pytest.mark.parametrize("rho", [0.3, 0.6, 0.9])
def test_md1_all_policies_equal_pk(rho):
    # all sizes equal: SJF, PSJF and SRPT never reorder, so all equal P-K
    d = parse_sizes("det:2")
    lam = rho / 2
    pk = 2 + lam * 4 / (2 * (1 - rho))
    m = SoapModel(d, Perfect(), lam)
    for p in ("sjf", "psjf", "srpt"):
        assert classical_mean(p, lam, d) == pytest.approx(pk, rel=1e-12)
        assert m.mean_response(p) == pytest.approx(pk, rel=1e-10)
    assert m.mean_response("trail", C=0.5) == pytest.approx(pk, rel=1e-10)


@pytest.mark.parametrize("spec", DISTS)
@pytest.mark.parametrize("rho", [0.3, 0.7, 0.9])
def test_perfect_predictions_reduce_to_size_policies(spec, rho):
    d = parse_sizes(spec)
    lam = rho / d.mean
    m = SoapModel(d, Perfect(), lam)
    for pred_pol, size_pol in (("spjf", "sjf"), ("pspjf", "psjf"), ("sprpt", "srpt")):
        assert m.mean_response(pred_pol) == pytest.approx(
            classical_mean(size_pol, lam, d), rel=1e-6), (pred_pol, spec)


@pytest.mark.parametrize("spec", ["exp:1", "uniform:0,2", "hyperexp:0.5,0.5,0.5,1.5"])
def test_perfect_per_size(spec):
    d = parse_sizes(spec)
    lam = 0.8 / d.mean
    m = SoapModel(d, Perfect(), lam)
    x = np.array([0.1, 0.7, 1.9])
    for a, b in (("spjf", "sjf"), ("pspjf", "psjf"), ("sprpt", "srpt")):
        np.testing.assert_allclose(m.response_given_size(x, a),
                                   classical_given_size(b, lam, d, x), rtol=1e-6)
        np.testing.assert_allclose(m.response_given(x, x, a),
                                   classical_given_size(b, lam, d, x), rtol=1e-8)


@pytest.mark.parametrize("lam", [0.5, 0.9])
def test_srpt_exponential_closed_form(lam):
    w = sp.lambdify(cf.x, cf.srpt_exp_waiting().subs(cf.lam, lam), "mpmath")
    rho = sp.lambdify(cf.t, cf.srpt_exp_rho().subs({cf.lam: lam, cf.x: cf.t}), "mpmath")
    m = SoapModel(parse_sizes("exp:1"), Perfect(), lam)
    for x in (0.2, 1.0, 3.0):
        ref = float(w(x) + mpmath.quad(lambda t: 1 / (1 - rho(t)), [0, x]))
        assert float(m.response_given(x, x, "srpt")[0]) == pytest.approx(ref, rel=1e-9)
        assert float(m.response_given_size(x, "srpt")[0]) == pytest.approx(ref, rel=1e-7)


@pytest.mark.parametrize("C", [0.3, 0.7])
def test_trail_perfect_exponential_closed_form(C):
    lam = 0.7
    w = sp.lambdify(cf.x, cf.trail_perfect_exp_waiting(sp.Rational(str(C))).subs(cf.lam, lam),
                    "mpmath")
    m = SoapModel(parse_sizes("exp:1"), Perfect(), lam)
    for x in (0.2, 1.0, 3.0):
        assert float(m.waiting(x, "trail", C)[0]) == pytest.approx(float(w(x)), rel=1e-10)


def test_exp_prediction_bessel_forms():
    lam = 0.5
    m = SoapModel(parse_sizes("exp:1"), ExpPredictions(), lam)
    rr = np.array([0.1, 1.0, 3.0])
    rho = sp.lambdify(cf.r, cf.exp_pred_rho().subs(cf.lam, lam), "scipy")
    m2 = sp.lambdify(cf.r, cf.exp_pred_m2(), "scipy")
    np.testing.assert_allclose(m.rho_r(rr), rho(rr), rtol=1e-7)
    np.testing.assert_allclose(m.m2_r(rr) / lam, m2(rr), rtol=1e-7)


@pytest.mark.parametrize("pred", ["exp", "lognormal:0.5", "perfect"])
@pytest.mark.parametrize("C", [1.0, 1.5, 4.0])
def test_trail_C_at_least_one_is_sprpt(pred, C):
    m = SoapModel(parse_sizes("exp:1"), parse_predictions(pred), 0.7)
    x, r = np.array([0.3, 2.0, 1.0, 5.0]), np.array([1.0, 1.0, 0.5, 0.2])
    np.testing.assert_allclose(m.response_given(x, r, "trail", C), m.response_given(x, r, "sprpt"),
                               rtol=1e-9)
    assert m.mean_response("trail", C) == pytest.approx(m.mean_response("sprpt"), rel=1e-6)


@pytest.mark.parametrize("spec", ["exp:1", "uniform:0,2"])
@pytest.mark.parametrize("pred", ["exp", "perfect"])
def test_trail_C_to_zero_is_spjf(spec, pred):
    d = parse_sizes(spec)
    m = SoapModel(d, parse_predictions(pred), 0.8 / d.mean)
    x, r = np.array([0.3, 2.0, 1.0]), np.array([1.0, 1.0, 0.5])
    np.testing.assert_allclose(m.response_given(x, r, "trail", 1e-9),
                               m.response_given(x, r, "spjf"), rtol=1e-6)
    assert m.mean_response("trail", 1e-9) == pytest.approx(m.mean_response("spjf"), rel=1e-6)


def test_printed_lemma_differs_and_breaks_its_own_limit():
    m = SoapModel(parse_sizes("exp:1"), ExpPredictions(), 0.5)
    sprpt = m.mean_response("sprpt")
    printed_c1 = m.mean_response("trail-printed", 1.0)
    assert abs(printed_c1 / sprpt - 1) > 0.02  # printed Lemma 1 at C=1 is not SPRPT
    corr, prin = m.mean_response("trail", 0.2), m.mean_response("trail-printed", 0.2)
    assert abs(prin / corr - 1) > 0.05  # large error at small C


def test_printed_residence_agrees_when_x_above_threshold():
    m = SoapModel(parse_sizes("exp:1"), ExpPredictions(), 0.5)
    C, r = 0.5, np.array([1.0, 1.0])
    x = np.array([0.9, 0.3])  # first above C r, second below
    a = m.residence(x, r, "trail", C)
    b = m.residence(x, r, "trail-printed", C)
    assert a[0] == pytest.approx(b[0], rel=1e-12)
    # printed integrates 1/(1-rho) past completion and subtracts only (C r - x)
    assert b[1] > a[1] + 0.01


def test_non_monotone_in_C_at_high_load():
    # digest 5.3: at lam = 0.95 with exp predictions, C = 0.5 is worse than C = 0.2
    m = SoapModel(parse_sizes("exp:1"), ExpPredictions(), 0.95)
    assert m.mean_response("trail", 0.5) > m.mean_response("trail", 0.2)


def test_lognormal_noise_small_sigma_approaches_perfect():
    d = parse_sizes("exp:1")
    exact = SoapModel(d, Perfect(), 0.7).mean_response("trail", 0.5)
    noisy = SoapModel(d, LogNormalNoise(0.01), 0.7).mean_response("trail", 0.5)
    assert noisy == pytest.approx(exact, rel=5e-3)


def test_bad_inputs():
    d = parse_sizes("exp:1")
    with pytest.raises(UsageError, match="invalid load"):
        SoapModel(d, Perfect(), 1.2)
    m = SoapModel(d, Perfect(), 0.5)
    with pytest.raises(UsageError, match="invalid C"):
        m.mean_response("trail")
    with pytest.raises(UsageError, match="invalid policy"):
        m.mean_response("lifo")
