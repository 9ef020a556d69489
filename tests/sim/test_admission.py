"""The incremental form of MC-SF's rule (FutureProfile, earliest_fit) against brute force."""

import numpy as np

from kvopt.sim.admission import FutureProfile, earliest_fit, predicted_profile, sliding_max


def _brute_fit(fp, t, s, q, M, until):
    for tp in range(t + 1, until + 1):
        w = fp.window(tp, q).copy()
        if (w + s + np.arange(1, q + 1)).max() <= M:
            return tp
    return until


def test_earliest_fit_matches_brute_force():
    rng = np.random.default_rng(0)
    seen = set()  # which of earliest_fit's paths the cases reach
    for _ in range(1500):
        fp = FutureProfile(16)
        t = int(rng.integers(0, 5))
        for k in sorted(rng.integers(0, t + 1, size=rng.integers(1, 6))):
            fp.add(int(k), int(rng.integers(0, 4)), int(rng.integers(1, 25)))
        M = int(rng.integers(20, 80))
        s = int(rng.integers(0, 4))
        q = int(rng.integers(1, M - s + 1))
        last = fp.last_nonzero(t)
        until = int(rng.integers(t + 1, last + 3))
        assert earliest_fit(fp, t, s, q, M, until) == _brute_fit(fp, t, s, q, M, until)
        got = earliest_fit(fp, t, s, q, M)
        assert got == _brute_fit(fp, t, s, q, M, max(last, t + 1))
        if last > t + 1:  # the next step at once, a later one, or none before ``last``
            seen.add("next" if got == t + 1 else "none" if got == last else "later")
    assert seen == {"next", "later", "none"}


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
