"""Predictors, noise models and the heavy-tailed workload generator."""

import itertools

import numpy as np
import pytest

from kvopt.core.errors import UsageError
from kvopt.predictions import (
    LogT,
    LogTPredictor,
    RefinedPredictor,
    hash_normal,
    heavy_tailed_workload,
)


def test_hash_normal_is_standard_normal_and_deterministic():
    i = np.repeat(np.arange(200), 50)
    j = np.tile(np.arange(50), 200)
    z = hash_normal(3, i, j)
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03
    assert np.array_equal(z, hash_normal(3, i, j))
    assert not np.array_equal(z, hash_normal(4, i, j))


def test_refined_error_shrinks_with_progress():
    p = RefinedPredictor(sigma0=0.8, rho=0.3, bins=0, seed=1)
    n = 4000
    o = np.full(n, 400)
    ids = np.arange(n)
    err = []
    for age in (0, 100, 200, 300, 390):
        est = p.remaining(ids, o, np.full(n, age))
        err.append(float(np.mean(np.abs(np.log(est / (400 - age))))))
    assert all(a > b for a, b in itertools.pairwise(err))
    # perfect predictor, no bins: the exact remaining length
    exact = RefinedPredictor(sigma0=0.0, bins=0)
    assert exact.remaining([0, 1], [10, 20], [3, 0]).tolist() == [7.0, 20.0]


def test_refined_prediction_between_refreshes_counts_down():
    p = RefinedPredictor(sigma0=0.5, every=8, bins=0, seed=2)
    r8 = p.remaining([5], [100], [8])
    r11 = p.remaining([5], [100], [11])
    assert r11[0] == pytest.approx(max(r8[0] - 3, 0))


def test_bins_are_trail_midpoints():
    p = RefinedPredictor(sigma0=0.0, bins=10, max_len=512)
    got = p.initial(np.arange(4), np.array([1, 60, 500, 5000]))
    assert got.tolist() == [25.6, 76.8, 486.4, 486.4]


def test_logt_predictor_from_lengths_is_calibrated():
    rng = np.random.default_rng(0)
    p = LogTPredictor(trace_scale=0.5)
    o = np.exp(rng.uniform(2, 7, 20000))
    mu, s = p.from_lengths(o, rng)
    # the standardised residual (ln o - mu_hat)/s is t_nu distributed
    r = (np.log(o) - mu) / s
    d = LogT(0.0, 1.0, 3.5)
    assert abs(float(np.mean(d.cdf(np.exp(r)) <= 0.9)) - 0.9) < 0.01


def test_workload_is_seeded_and_prompts_repeat_with_different_lengths():
    a = heavy_tailed_workload(3000, n_prompts=20, catalog_seed=4, seed=1)
    b = heavy_tailed_workload(3000, n_prompts=20, catalog_seed=4, seed=1)
    c = heavy_tailed_workload(3000, n_prompts=20, catalog_seed=4, seed=2)
    assert a.instance.sha256() == b.instance.sha256()
    assert a.instance.sha256() != c.instance.sha256()
    # one prompt, many lengths; same catalog across runs
    o = a.instance.output[a.prompt_id == 0]
    assert np.unique(o).size > 10
    assert np.array_equal(a.instance.prompt[a.prompt_id == 0][:1],
                          c.instance.prompt[c.prompt_id == 0][:1])
    # heavy tail: top 10% of requests carry well over 10% of the tokens
    x = np.sort(a.instance.output)[::-1]
    assert x[: x.size // 10].sum() / x.sum() > 0.3
    with pytest.raises(UsageError, match="rate"):
        heavy_tailed_workload(10, rate=0)
