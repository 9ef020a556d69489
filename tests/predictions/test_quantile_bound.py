"""The conditional-quantile length bound used by GMAX (kvopt.predictions.quantile)."""

import numpy as np
from scipy import stats

from kvopt.predictions.quantile import conditional_upper


def test_bound_is_the_lognormal_conditional_quantile():
    m, sigma, q = 120.0, 0.6, 0.95
    dist = stats.lognorm(s=sigma, scale=m)
    for g in (0, 10, 100, 400):
        # P(L <= ub | L > g) = q, computed by scipy independently
        target = dist.cdf(g) + q * dist.sf(g)
        assert conditional_upper(np.array([m]), sigma, q, np.array([g]))[0] == int(
            np.ceil(dist.ppf(target) - 1e-9))


def test_bound_never_below_progress_and_grows_with_it():
    g = np.arange(0, 2000, 7)
    ub = conditional_upper(np.full(g.size, 50.0), 0.5, 0.95, g)
    assert (ub >= g + 1).all()
    assert (np.diff(ub) >= 0).all()
    # the relative excess over the progress shrinks once g is past the bulk
    big = g > 200
    rel = ub[big] / g[big]
    assert (np.diff(rel) <= 1.0 / g[big][1:]).all()  # up to the rounding of the ceiling
    assert rel[-1] < rel[0]


def test_sigma_zero_is_exact():
    assert conditional_upper(np.array([7.0, 7.0]), 0.0, 0.95, np.array([3, 9])).tolist() == [7, 10]
