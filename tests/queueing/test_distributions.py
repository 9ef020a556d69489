import itertools

import numpy as np
import pytest
from scipy import integrate

from kvopt.core.errors import UsageError
from kvopt.queueing.distributions import expect_size, parse_sizes
from kvopt.queueing.predictions import parse_predictions

SPECS = ["exp:1", "exp:2.5", "det:1.5", "uniform:0,2", "uniform:1,3",
         "hyperexp:0.5,0.5,0.5,1.5", "hyperexp:0.9,0.2,0.1,8", "bpareto:1.5,1,100",
         "logt:0,0.5,20", "logtt:0,0.5,20"]


@pytest.mark.parametrize("spec", SPECS)
def test_partial_moments_match_quadrature(spec):
    d = parse_sizes(spec)
    for k in (0, 1, 2):
        # independent route: scipy quad of the density plus the atoms
        pts = d.panel_points
        cont = 0.0
        if pts is not None:
            for a, b in itertools.pairwise(pts):
                cont += integrate.quad(lambda t, k=k: t**k * float(d.pdf(t)), a, b,
                                       epsrel=1e-12)[0]
        av, ap = d.atoms
        ref = cont + float((ap * av**k).sum())
        assert float(np.squeeze(d.partial_moment(k, np.inf))) == pytest.approx(ref, rel=1e-8)
        assert expect_size(d, lambda x, k=k: x**k)[0] == pytest.approx(ref, rel=1e-9)


@pytest.mark.parametrize("spec", SPECS)
def test_sampling_matches_moments(spec):
    d = parse_sizes(spec)
    x = d.sample(200_000, np.random.default_rng(7))
    se = x.std() / np.sqrt(x.size)
    assert abs(x.mean() - d.mean) <= 4 * se + 1e-12 * d.mean
    assert np.all(x > 0)


def test_exp_partial_moment_closed_form():
    d = parse_sizes("exp:1")
    x = 1.3
    assert float(d.partial_moment(1, x)) == pytest.approx(1 - np.exp(-x) * (1 + x), rel=1e-14)


def test_atoms_inclusive_exclusive():
    d = parse_sizes("det:2")
    assert float(d.partial_moment(1, 2.0)) == 2.0
    assert float(d.partial_moment(1, 2.0, inclusive=False)) == 0.0


TRACE = "instances/traces/azure_conv_2023.csv"  # shipped with kvopt (tests run from repo root)


def test_empirical_trace():
    d = parse_sizes(f"empirical:{TRACE}")
    assert d.mean > 1 and d.atoms[0].size > 1


@pytest.mark.parametrize("bad", ["exp", "exp:-1", "uniform:2,1", "hyperexp:0.5,1", "foo:1",
                                 "exp:a", "empirical:/nonexistent.csv"])
def test_bad_size_specs_name_the_field(bad):
    with pytest.raises(UsageError, match="invalid sizes"):
        parse_sizes(bad)


@pytest.mark.parametrize("spec", ["exp", "lognormal:0.5", "unifnoise:0.3"])
def test_prediction_partials(spec):
    m = parse_predictions(spec)
    lo, hi = np.array([0.2, 0.0]), np.array([1.7, np.inf])
    z = m.sample_z(400_000, np.random.default_rng(3))
    for k in (0, 1, 2):
        got = m.partial(k, lo, hi)
        assert np.allclose(m.partials(lo, hi)[k], got, rtol=1e-10, atol=1e-14)
        for j in range(2):
            v = z**k * ((z > lo[j]) & (z <= hi[j]))
            assert abs(v.mean() - got[j]) < 5 * v.std() / np.sqrt(z.size) + 1e-12


@pytest.mark.parametrize("bad", ["lognormal:-1", "unifnoise:2", "gauss:1"])
def test_bad_prediction_specs(bad):
    with pytest.raises(UsageError, match="invalid predictions"):
        parse_predictions(bad)
