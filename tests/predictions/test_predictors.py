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


def _splitmix_reference(x):
    """SplitMix64's finaliser of ``x + golden``, one Python int at a time."""
    m = (1 << 64) - 1
    z = (x + 0x9E3779B97F4A7C15) & m
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
    return z ^ (z >> 31)


def test_hash_normal_matches_a_scalar_reference():
    from scipy import special

    rng = np.random.default_rng(5)
    m = (1 << 64) - 1
    for seed in (0, 7, 2**33 + 5):
        i = rng.integers(0, 10**6, 40)
        j = rng.integers(-1, 3000, 40)
        want = []
        for a, b in zip(i.tolist(), j.tolist(), strict=True):
            h = _splitmix_reference(((seed & 0xFFFFFFFF) * 0x100000001B3
                                     + _splitmix_reference(a)) & m)
            h = _splitmix_reference(h ^ (((b + 2) * 0xD6E8FEB86659FD93) & m))
            want.append(special.ndtri(((h >> 11) + 0.5) / float(1 << 53)))
        assert np.array_equal(hash_normal(seed, i, j), np.array(want))
    # broadcasting and a scalar pair
    assert hash_normal(3, np.arange(6).reshape(2, 3), np.arange(3)).shape == (2, 3)
    assert hash_normal(3, 4, 5) == hash_normal(3, [4], [5])[0]


@pytest.mark.parametrize("every,ahead,sigma0,bins", [
    (1, None, 0.5, 10), (8, None, 0.8, 10), (3, 1, 0.5, 0), (5, 4, 0.0, 10), (2, 7, 1.0, 0)])
def test_refresh_cache_equals_remaining(every, ahead, sigma0, bins):
    """The table of precomputed refreshes gives predictor.remaining's values bit for bit,
    whatever the order of the calls, with ages that restart and jump."""
    from kvopt.predictions import RefreshCache

    rng = np.random.default_rng(every * 10 + (ahead or 0))
    n = 60
    o = rng.integers(1, 300, n)
    p = RefinedPredictor(sigma0=sigma0, rho=0.4, every=every, bins=bins, max_len=256.0,
                         seed=11)
    c = RefreshCache(p, o, ahead=ahead)
    age = np.zeros(n, dtype=np.int64)
    for _ in range(300):
        ids = np.sort(rng.choice(n, size=int(rng.integers(0, 15)), replace=False))
        age[ids] += rng.integers(0, 4, ids.shape[0])  # decisions every few tokens
        back = ids[rng.random(ids.shape[0]) < 0.05]
        age[back] = 0  # a restart
        jump = ids[rng.random(ids.shape[0]) < 0.05]
        age[jump] += rng.integers(0, 200, jump.shape[0])
        got = c.remaining(ids, age[ids])
        assert np.array_equal(got, p.remaining(ids, o[ids], age[ids]))
    with pytest.raises(UsageError):
        RefreshCache(p, o, ahead=0)


def test_noise_values_are_pinned():
    """The values of the noise hash and of a refined prediction (as computed before the hash
    and the refresh table were made faster): a change to either changes every TRAIL run."""
    from kvopt.predictions import RefreshCache

    assert hash_normal(7, [0, 1, 12345], [-1, 0, 40]).tolist() == [
        -0.3946397100617845, -1.2269315460130077, -1.785419229162374]
    p = RefinedPredictor(sigma0=0.8, rho=0.5, every=8, bins=0, seed=7)
    want = [41.20488828804178, 319.47258494984976, 1.710043677864988]
    assert p.remaining([3, 4, 5], [100, 250, 40], [0, 17, 39]).tolist() == want
    o = np.zeros(6, dtype=np.int64)
    o[[3, 4, 5]] = [100, 250, 40]
    got = RefreshCache(p, o).remaining(np.array([3, 4, 5]), np.array([0, 17, 39]))
    assert got.tolist() == want
