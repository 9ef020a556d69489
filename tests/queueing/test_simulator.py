"""Simulator tests: hand-checked sample paths, and formula vs simulation within 3 SE."""


import numpy as np
import pytest

from kvopt.core.errors import UsageError
from kvopt.queueing.distributions import parse_sizes
from kvopt.queueing.predictions import parse_predictions
from kvopt.queueing.simulator import batch_means, simulate_jobs, simulate_queue
from kvopt.queueing.soap import SoapModel


def test_srpt_preempts_on_arrival():
    r, _, _ = simulate_jobs("srpt", np.array([0.0, 0.5]), np.array([2.0, 0.5]),
                            np.array([2.0, 0.5]))
    assert r.tolist() == [2.5, 0.5]


def test_trail_stops_preempting_after_threshold():
    A, X = np.array([0.0, 1.2]), np.array([2.0, 0.1])
    # C = 0.5: job 0 is preemptible only for age < 1.0; job 1 arrives at age 1.2
    r, _, _ = simulate_jobs("trail", A, X, X.copy(), C=0.5)
    assert r.tolist() == pytest.approx([2.0, 0.9])
    # C = 0.7: threshold 1.4 > 1.2, rank 2 - 1.2 = 0.8 > 0.1, so job 1 preempts
    r, _, _ = simulate_jobs("trail", A, X, X.copy(), C=0.7)
    assert r.tolist() == pytest.approx([2.1, 0.1])


def test_sjf_is_non_preemptive_and_orders_queue():
    A = np.array([0.0, 0.1, 0.2])
    X = np.array([1.0, 3.0, 0.5])
    r, _, _ = simulate_jobs("sjf", A, X, X.copy())
    # job0 runs to 1.0, then job2 (shorter) to 1.5, then job1 to 4.5
    assert r.tolist() == pytest.approx([1.0, 4.4, 1.3])


def test_ties_go_to_earlier_arrival():
    A = np.arange(5) * 0.1
    X = np.ones(5)
    r1, _, _ = simulate_jobs("pspjf", A, X, np.ones(5))
    r2, _, _ = simulate_jobs("fcfs", A, X, np.ones(5))
    np.testing.assert_allclose(r1, r2)


def test_event_loop_fcfs_matches_vectorized():
    rng = np.random.default_rng(5)
    A = np.cumsum(rng.exponential(1 / 0.8, 5000))
    X = rng.exponential(1.0, 5000)
    # constant predictions make pspjf exactly FCFS, but through the event loop
    r1, m1, p1 = simulate_jobs("pspjf", A, X, np.ones_like(X))
    r2, m2, p2 = simulate_jobs("fcfs", A, X, np.ones_like(X))
    np.testing.assert_allclose(r1, r2, rtol=1e-9, atol=1e-9)
    assert m1 == pytest.approx(m2, rel=1e-9)
    assert p1 == pytest.approx(p2, rel=1e-12)


def test_memory_hand_example():
    # job0 size 2 preempted at age 0.5 by job1 (size 0.5), memory peaks at 0.5 + 0.5 = 1.0
    _, mean_mem, peak = simulate_jobs("srpt", np.array([0.0, 0.5]), np.array([2.0, 0.5]),
                                      np.array([2.0, 0.5]), t_window=(0.0, 2.5))
    assert peak == pytest.approx(2.0)  # job0 finishes with age 2
    # area: [0,.5] age 0->.5: .125; [.5,1]: .5*.5 + .125 = .375; [1,2.5]: ages .5->2: 1.875
    assert mean_mem == pytest.approx((0.125 + 0.375 + 1.875) / 2.5)


def test_nonpreemptive_memory_matches_oracle():
    # time-average memory of a non-preemptive policy is lam E[S^2] / 2 (H = lam G)
    lam, d = 0.7, parse_sizes("exp:1")
    mems = [simulate_queue("sjf", lam, d, n_jobs=100_000, seed=s).mean_memory for s in range(4)]
    se = np.std(mems, ddof=1) / 2
    assert abs(np.mean(mems) - lam * d.moment(2) / 2) < 4 * se + 0.01


def test_batch_means_validation():
    with pytest.raises(UsageError, match="invalid n"):
        batch_means(np.ones(5), 10)


def _check(policy, spec, pred, rho, C=None, n=200_000, seed=11):
    d = parse_sizes(spec)
    lam = rho / d.mean
    pm = parse_predictions(pred)
    f = SoapModel(d, pm, lam).mean_response(policy, C)
    s = simulate_queue(policy, lam, d, pm, C, n_jobs=n, seed=seed)
    z = (s.mean_response - f) / s.se
    assert abs(z) < 3, f"{policy} {spec} {pred} rho={rho} C={C}: sim {s.mean_response:.4f} " \
                       f"+- {s.se:.4f} vs formula {f:.4f} (z={z:.2f})"


FAST = [
    ("fcfs", "uniform:0,2", "perfect", 0.8, None),
    ("sjf", "exp:1", "perfect", 0.5, None),
    ("psjf", "hyperexp:0.5,0.5,0.5,1.5", "perfect", 0.5, None),
    ("srpt", "uniform:0,2", "perfect", 0.8, None),
    ("srpt", "det:1", "perfect", 0.8, None),
    ("spjf", "exp:1", "exp", 0.8, None),
    ("sprpt", "hyperexp:0.5,0.5,0.5,1.5", "exp", 0.5, None),
    ("trail", "exp:1", "exp", 0.5, 0.5),
    ("trail", "exp:1", "exp", 0.8, 0.2),
    ("trail", "uniform:0,2", "lognormal:0.5", 0.8, 0.8),
    ("trail", "hyperexp:0.5,0.5,0.5,1.5", "perfect", 0.3, 0.5),
    ("trail", "det:1", "exp", 0.7, 0.5),
]


@pytest.mark.parametrize("policy,spec,pred,rho,C", FAST)
def test_formula_vs_simulation_fast(policy, spec, pred, rho, C):
    _check(policy, spec, pred, rho, C)


SLOW_DISTS = ["exp:1", "uniform:0,2", "hyperexp:0.5,0.5,0.5,1.5", "det:1"]
SLOW_POLICIES = [("fcfs", None), ("spjf", None), ("pspjf", None), ("sprpt", None),
                 ("trail", 0.2), ("trail", 0.5), ("trail", 0.8)]


@pytest.mark.slow
@pytest.mark.parametrize("rho", [0.3, 0.5, 0.7, 0.9])
@pytest.mark.parametrize("spec", SLOW_DISTS)
@pytest.mark.parametrize("pred", ["perfect", "exp"])
@pytest.mark.parametrize("policy,C", SLOW_POLICIES)
def test_formula_vs_simulation_grid(policy, C, pred, spec, rho):
    n = 1_000_000 if rho >= 0.9 else 400_000
    _check(policy, spec, pred, rho, C, n=n, seed=int(rho * 100) + 7)


@pytest.mark.slow
def test_printed_formula_rejected_by_simulation():
    d, pm = parse_sizes("exp:1"), parse_predictions("exp")
    m = SoapModel(d, pm, 0.5)
    s = simulate_queue("trail", 0.5, d, pm, 0.2, n_jobs=2_000_000, seed=3)
    assert abs(s.mean_response - m.mean_response("trail", 0.2)) < 3 * s.se
    assert abs(s.mean_response - m.mean_response("trail-printed", 0.2)) > 10 * s.se


HEAVY = [
    ("srpt", "bpareto:1.5,1,100", "perfect", 0.5, None),
    ("trail", "bpareto:1.5,1,100", "exp", 0.5, 0.5),
    ("trail", "logt:0,0.5,20", "exp", 0.7, 0.8),
    ("sjf", "logt:0,0.5,20", "perfect", 0.7, None),
    ("trail", "logtt:0,1.0,50", "lognormal:0.5", 0.6, 0.2),
]
_TRACE = "instances/traces/azure_conv_2023.csv"  # shipped Azure trace (repo-root relative)
HEAVY += [("trail", f"empirical:{_TRACE}", "exp", 0.7, 0.5),
          ("srpt", f"empirical:{_TRACE}", "perfect", 0.7, None)]


@pytest.mark.slow
@pytest.mark.parametrize("policy,spec,pred,rho,C", HEAVY)
def test_formula_vs_simulation_heavy_tails(policy, spec, pred, rho, C):
    # heavy tails: 16 independent replications give a more honest standard error than
    # batch means (with 10 replications the SJF/log-t case came out at z = 3.07, with 16
    # other seeds at z = -1.2: the SE estimate itself is noisy under heavy tails)
    d, pm = parse_sizes(spec), parse_predictions(pred)
    lam = rho / d.mean
    f = SoapModel(d, pm, lam).mean_response(policy, C)
    means = [simulate_queue(policy, lam, d, pm, C, n_jobs=250_000, seed=1000 + k).mean_response
             for k in range(16)]
    se = np.std(means, ddof=1) / np.sqrt(len(means))
    assert abs(np.mean(means) - f) < 3 * se, (np.mean(means), se, f)


def test_per_size_and_per_job_means_vs_simulation():
    # jobs binned by size (and prediction): the bin mean should match E[T(x)] / E[T(x, r)]
    d, pm = parse_sizes("exp:1"), parse_predictions("exp")
    s = simulate_queue("trail", 0.5, d, pm, 0.5, n_jobs=400_000, seed=21)
    keep = slice(int(0.1 * s.sizes.size), int(0.95 * s.sizes.size))
    X, Y, T = s.sizes[keep], s.predictions[keep], s.responses[keep]
    m = SoapModel(d, pm, 0.5)
    for x in (0.5, 1.5):
        sel = np.abs(X - x) < 0.02
        f = float(m.response_given_size(x, "trail", 0.5)[0])
        assert abs(T[sel].mean() - f) < 3 * T[sel].std() / np.sqrt(sel.sum())
    for x, r in ((0.3, 1.0), (1.0, 0.5)):
        sel = (np.abs(X - x) < 0.05) & (np.abs(Y - r) < 0.05)
        f = float(m.response_given(x, r, "trail", 0.5)[0])
        assert abs(T[sel].mean() - f) < 3 * T[sel].std() / np.sqrt(sel.sum())


def test_default_quadrature_accuracy():
    # the default 8 nodes per panel against a 32-node run (the 1e-6 target of issue 6)
    for spec, pred, C in (("exp:1", "exp", 0.2), ("uniform:0,2", "lognormal:0.5", 0.5),
                          ("hyperexp:0.5,0.5,0.5,1.5", "perfect", 0.8)):
        d, pm = parse_sizes(spec), parse_predictions(pred)
        a = SoapModel(d, pm, 0.9 / d.mean).mean_response("trail", C)
        b = SoapModel(d, pm, 0.9 / d.mean, n=32).mean_response("trail", C)
        assert abs(a / b - 1) < 1e-6




@pytest.mark.parametrize("policy,C", [("trail", 0.2), ("trail", 1.0), ("sprpt", None),
                                      ("spjf", None), ("pspjf", None)])
def test_event_loop_equals_the_reference_loop(policy, C):
    """The inlined event loop gives the reference loop's responses, memory average and peak
    bit for bit, on random jobs with ties and a memory window inside the run."""
    from tests.queueing.reference import simulate_jobs_reference

    rng = np.random.default_rng(len(policy) + int(10 * (C or 0)))
    for n in (1, 2, 50, 3000):
        a = np.cumsum(rng.exponential(1.0, n))
        a[1::7] = a[0::7][: a[1::7].size]  # simultaneous arrivals
        a = np.sort(a)
        x = rng.exponential(0.8, n)
        y = np.round(x * rng.exponential(1.0, n), 1)  # rounded: tied predictions
        window = (float(a[n // 5]), float(a[-1])) if n > 5 else None
        got = simulate_jobs(policy, a, x, y, C, t_window=window)
        lo, hi = window if window is not None else (float(a[0]), float(a[-1]))
        want = simulate_jobs_reference(policy, a, x, y, C, lo, hi)
        assert np.array_equal(got[0], want[0]) and got[1:] == want[1:]
