"""The incremental form of MC-SF's rule (FutureProfile, earliest_fit) against brute force."""

import numpy as np
import pytest

from kvopt.core.errors import UsageError
from kvopt.sim.admission import FutureProfile, earliest_fit, predicted_profile, sliding_max


def _brute_fit(fp, t, s, q, M, until, extra=0, rate=0):
    for tp in range(t + 1, until + 1):
        w = fp.window(tp, q).copy() + s + np.arange(1, q + 1)
        if w.max() <= M and w[0] + extra + rate * (tp - t) <= M:
            return tp
    return until


def _random_case(rng):
    """A profile of 1-5 running requests at decision point ``t`` and a candidate ``(s, q)``
    that fits ``M`` alone."""
    fp = FutureProfile(16)
    t = int(rng.integers(0, 5))
    for k in sorted(rng.integers(0, t + 1, size=rng.integers(1, 6))):
        fp.add(int(k), int(rng.integers(0, 4)), int(rng.integers(1, 25)))
    M = int(rng.integers(20, 80))
    s = int(rng.integers(0, 4))
    q = int(rng.integers(1, M - s + 1))
    return fp, t, M, s, q


def test_earliest_fit_matches_brute_force():
    rng = np.random.default_rng(0)
    seen = set()  # which of earliest_fit's paths the cases reach
    for _ in range(1500):
        fp, t, M, s, q = _random_case(rng)
        last = fp.last_nonzero(t)
        until = int(rng.integers(t + 1, last + 3))
        assert earliest_fit(fp, t, s, q, M, until) == _brute_fit(fp, t, s, q, M, until)
        got = earliest_fit(fp, t, s, q, M)
        assert got == _brute_fit(fp, t, s, q, M, max(last, t + 1))
        if last > t + 1:  # the next step at once, a later one, or none before ``last``
            seen.add("next" if got == t + 1 else "none" if got == last else "later")
    assert seen == {"next", "later", "none"}


def test_earliest_fit_with_overrunning_requests_matches_brute_force():
    """``extra`` / ``extra_rate``: memory outside the profile that grows by a fixed count a
    step (MC-SF's requests past their prediction) only ever delays the fit."""
    rng = np.random.default_rng(3)
    seen = set()
    for _ in range(1500):
        fp, t, M, s, q = _random_case(rng)
        until = int(rng.integers(t + 1, fp.last_nonzero(t) + 8))
        extra, rate = int(rng.integers(0, 30)), int(rng.integers(0, 4))
        got = earliest_fit(fp, t, s, q, M, until, extra=extra, extra_rate=rate)
        assert got == _brute_fit(fp, t, s, q, M, until, extra, rate)
        assert got >= earliest_fit(fp, t, s, q, M, until)
        if until > t + 1:
            seen.add("next" if got == t + 1 else "none" if got == until else "later")
    assert seen == {"next", "later", "none"}
    with pytest.raises(UsageError, match="invalid until"):
        earliest_fit(FutureProfile(4), 0, 1, 2, 9, extra=1)


def test_profile_equals_predicted_profile():
    rng = np.random.default_rng(1)
    fp = FutureProfile(8)
    starts, prompts, preds = [], [], []
    for t in range(30):
        for _ in range(int(rng.integers(0, 3))):
            s, q = int(rng.integers(0, 5)), int(rng.integers(1, 20))
            fp.add(t, s, q)
            starts.append(t)
            prompts.append(s)
            preds.append(q)
        ref = predicted_profile(t, np.array(prompts, dtype=np.int64),
                                np.array(starts, dtype=np.int64),
                                np.array(preds, dtype=np.int64), 25)
        assert np.array_equal(fp.window(t, 25), ref)


def test_sliding_max():
    rng = np.random.default_rng(2)
    for _ in range(200):
        x = rng.integers(-50, 50, size=int(rng.integers(1, 40)))
        w = int(rng.integers(1, x.size + 1))
        ref = [x[i:i + w].max() for i in range(x.size - w + 1)]
        assert sliding_max(x, w).tolist() == ref
