"""TRAIL (SPRPT with limited preemption), TIE, SSJF and the prediction cost (issue 11)."""

import math

import numpy as np
import pytest

from kvopt import Instance, check_schedule
from kvopt.core.generators import model2
from kvopt.predictions import RefinedPredictor, heavy_tailed_workload
from kvopt.sim import simulate
from kvopt.sim.predicted_lengths import Predictions
from kvopt.sim.prediction_policies import RankPolicy, adaptive_beta, decayed_order


def _instances():
    out = [model2(s, rate=r, horizon=25) for s, r in ((1, 1.0), (2, 1.5))]
    rng = np.random.default_rng(5)
    for _ in range(5):
        n = int(rng.integers(10, 40))
        M = int(rng.integers(20, 60))
        s = rng.integers(0, 6, n)
        o = rng.integers(1, M - s + 1)
        out.append(Instance(memory=M, arrival=rng.integers(0, 25, n), prompt=s, output=o))
    return out


@pytest.mark.parametrize("C", [1.0, 1.3, 4.0])
def test_trail_with_c_at_least_one_is_sprpt(C):
    """notes/seed-004-002 §1.5: C >= 1 is SPRPT (same instance, same predictions) as long as no
    running request is evicted for memory; with overflow evictions C = 1 still is (a locked
    run has r - a < 1 <= every preemptable one's r - a), while for C > 1 the paper's rank
    (-inf once locked, issue 23) keeps a locked run that SPRPT, ranking it by r - a, evicts."""
    differ = 0
    for k, inst in enumerate(_instances()):
        for eps in (0.0, 0.5, 0.9):
            pr = {"kind": "uniform", "eps": eps}
            a = simulate(inst, "trail", seed=k, predictions=pr, refine=False, C=C)
            b = simulate(inst, "sprpt", seed=k, predictions=pr)
            same = a.schedule.same_runs(b.schedule)
            if C == 1.0 or a.stats["overflow_evictions"] == 0:
                assert same, (k, eps)
            differ += not same
    if C == 4.0:
        assert differ > 0  # the distinction is real on these instances


def test_limited_preemption_changes_the_schedule_below_one():
    """The limit matters for C < 1 (else the equality above would be vacuous)."""
    differ = 0
    for k, inst in enumerate(_instances()):
        pr = {"kind": "uniform", "eps": 0.5}
        a = simulate(inst, "trail", seed=k, predictions=pr, refine=False, C=0.3)
        b = simulate(inst, "sprpt", seed=k, predictions=pr)
        differ += not a.schedule.same_runs(b.schedule)
    assert differ > 0


@pytest.mark.parametrize("C", [1.0, 2.0, math.inf])
def test_trail_with_perfect_predictions_is_srpt(C):
    for inst in _instances():
        srpt = simulate(inst, "srpt")
        static = simulate(inst, "trail", predictions="exact", refine=False, C=C)
        refined = simulate(inst, "trail", sigma0=0.0, bins=0, C=C, age="run")  # exact remaining
        assert static.schedule.same_runs(srpt.schedule)
        assert refined.schedule.same_runs(srpt.schedule)


def test_trail_c_zero_is_spjf():
    for k, inst in enumerate(_instances()):
        pr = {"kind": "uniform", "eps": 0.5}
        a = simulate(inst, "trail", seed=k, predictions=pr, refine=False, C=0.0)
        b = simulate(inst, "spjf", seed=k, predictions=pr)
        assert a.schedule.same_runs(b.schedule)


def test_srpt_preempts_only_for_better_requests():
    inst = Instance(memory=8, arrival=[0, 1], prompt=[3, 3], output=[5, 2])
    r = simulate(inst, "srpt")
    assert r.schedule.num_evictions == 1 and r.metrics.total_latency == 10.0
    assert simulate(inst, "spjf", predictions="exact").schedule.num_evictions == 0


def test_a_waiting_request_that_does_not_fit_blocks_the_later_ones():
    """SPRPT's merge of the running and the waiting requests, worked by hand (M = 12, exact
    ranks = remaining lengths, restart). A (s 1, o 3) and R (s 1, o 10) start at 0.
    At 1, W1 (s 9, o 2, rank 2) and W2 (s 1, o 4, rank 4) arrive: A (rank 2, running first
    on the tie) keeps 3 tokens, W1 needs 10 and does not fit, so W2 waits too although it
    would fit (no backfill; with backfill W2 would start at 1); R (rank 9) keeps its memory.
    At 3 A is done: W1 and W2 (ranks 2, 4 < R's 7) take 10 + 2 = 12 and R is preempted.
    At 4 W1 (11) and W2 (3) overflow M: W2, the worse rank, goes, and waits behind W1's 11.
    At 5 W1 is done; W2 (rank 4) and R (rank 10 again: restart) start."""
    inst = Instance(memory=12, arrival=[0, 0, 1, 1], prompt=[1, 1, 9, 1], output=[3, 10, 2, 4])
    for policy, kw in (("sprpt", {"predictions": "exact"}), ("srpt", {}),
                       ("trail", {"predictions": "exact", "refine": False, "C": math.inf})):
        s = simulate(inst, policy, **kw).schedule
        assert s.final_start(inst).tolist() == [0, 5, 3, 5], policy
        assert (s.num_evictions, s.run_request.tolist(), s.run_start.tolist()) == (
            2, [1, 3, 0, 2, 3, 1], [0, 3, 0, 3, 5, 5]), policy


def test_preempted_request_waits_with_its_remaining_rank_when_it_keeps_its_tokens():
    """Issue 21: A (o = 10) is preempted at age 7 for B (o = 2); D (o = 5) arrives at 8.
    With restart A lost its run and waits with rank 10, so D starts first; with recompute and
    swap A keeps 7 tokens and waits with its remaining 3, so A resumes first (at 9, when B is
    done) and D waits for it."""
    inst = Instance(memory=12, arrival=[0, 7, 8], prompt=[2, 2, 2], output=[10, 2, 5])
    restart = simulate(inst, "srpt")
    assert restart.schedule.final_start(inst).tolist() == [12, 7, 8]
    for mode in ("recompute", "swap"):
        r = simulate(inst, "srpt", preemption=mode)
        assert check_schedule(inst, r.schedule).ok
        assert r.schedule.final_start(inst).tolist() == [9, 7, 12], mode
        assert r.schedule.num_evictions == 1


def test_refined_trail_declares_predictions_and_pays_their_cost():
    inst = model2(7, rate=1.2)
    free = simulate(inst, "trail", seed=1)
    zero = simulate(inst, "trail", seed=1, prediction_cost=(0.0, 0.0))
    paid = simulate(inst, "trail", seed=1, prediction_cost=(0.5, 0.01))
    assert free.stats["predictions"] > inst.n  # refreshes, not only the initial predictions
    assert zero.schedule.same_runs(free.schedule)
    assert paid.stats["prediction_seconds"] > 0
    assert check_schedule(inst, paid.schedule).ok
    assert paid.metrics.mean_latency_s > free.metrics.mean_latency  # (unit steps: 1 s each)


def test_tie_prediction_cost_on_a_timed_instance():
    w = heavy_tailed_workload(300, rate=2.0, memory=8000, seed=3)
    pr = Predictions(mu=w.mu, sigma=w.sigma, label="truth")
    a = simulate(w.instance, "tie", predictions=pr, step_time="a100-llama2-7b-tp1")
    b = simulate(w.instance, "tie", predictions=pr, step_time="a100-llama2-7b-tp1",
                 prediction_cost=(0.003, 0.0))
    assert a.stats["predictions"] == w.instance.n
    assert b.stats["prediction_seconds"] == pytest.approx(0.003 * b.stats["prediction_batches"])
    assert b.stats["prediction_batches"] > 0 and b.schedule.same_runs(b.schedule)


def test_adaptive_beta_range():
    assert [adaptive_beta(q, 256) for q in (0, 256, 512, 1280, 10_000)] == [
        0.1, 0.1, 0.2, 0.5, 0.5]


def test_waiting_decay_leaves_queue_order_unchanged():
    """Score * gamma^((t - a)/tau): the order of queued requests is the same at every t and
    equals the order of the static key ln Score + (a / tau) ln(1/gamma) used by TIE."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        n = 30
        score = np.exp(rng.normal(5, 1, n))
        a = np.sort(rng.uniform(0, 300, n))
        static = np.argsort(np.log(score) + a / 30.0 * math.log(1 / 0.9), kind="stable")
        for t in (a.max(), a.max() + 10, a.max() + 1000):
            assert np.array_equal(decayed_order(score, a, t), static)


def test_tie_queue_uses_decayed_order():
    """At any decision, TIE's heap pops in the decayed-score order."""
    w = heavy_tailed_workload(200, rate=50.0, memory=6000, seed=4)  # a long queue builds up
    pr = Predictions(mu=w.mu, sigma=w.sigma, label="truth")
    res = simulate(w.instance, "tie", predictions=pr, beta=0.2, tau=0.5)
    inst = w.instance
    st = res.schedule.final_start(inst)
    # requests waiting together: the one started first has the smaller decayed score
    from kvopt.predictions import LogT
    sc = LogT(w.mu, w.sigma, 3.5).score(0.2, 0.9, np.minimum(2048, inst.memory - inst.prompt))
    key = np.log(sc) + inst.arrival / 0.5 * math.log(1 / 0.9)
    bad = 0
    for i in range(inst.n):
        for j in range(inst.n):
            # both waiting when i started, j started strictly later (and no overflow preemption)
            if inst.arrival[j] <= res.schedule.times[st[i]] - 1e-9 and st[j] > st[i]:
                bad += key[j] < key[i] - 1e-6 and inst.prompt[j] + 1 <= inst.prompt[i] + 1
    assert res.schedule.num_evictions > 0 or bad == 0


def test_rank_policy_rejects_negative_c():
    with pytest.raises(ValueError, match="C"):
        RankPolicy("x", np.ones(3), C=-1)


def test_refined_predictor_label_in_options():
    inst = model2(1)
    r = simulate(inst, "trail", sigma0=0.3, every=4)
    assert "every=4" in r.schedule.meta["options"]["predictor"]
    assert isinstance(RefinedPredictor().label(), str)


class _Watch(RankPolicy):
    """RankPolicy that records, per decision, whether a locked run was evicted while a
    preemptable one kept running (issue 23's violation), and how many locked runs went."""

    def reset(self, st):
        super().reset(st)
        self.violations = 0
        self.locked_evicted = 0

    def decide(self, st):
        run = st.running.copy()
        locked = (st.t - st.start[run]) >= self.limit[run]
        dec = super().decide(st)
        gone = np.zeros(run.shape[0], dtype=bool)
        if dec.evict is not None and dec.evict.size:
            gone = np.isin(run, dec.evict)
        self.locked_evicted += int((gone & locked).sum())
        if (gone & locked).any() and (~gone & ~locked).any():
            self.violations += 1
        return dec


def test_static_trail_overflow_evicts_preemptable_before_locked():
    """Issue 23: TRAIL's rank is -inf once a run is locked (past floor(C r)), so on a memory
    overflow every still-preemptable run goes before a locked one. Static ranks
    (``refine=False``) with noisy point predictions, on random online instances."""
    rng = np.random.default_rng(23)
    locked_evicted = 0
    for k in range(120):
        n = int(rng.integers(6, 14))
        o = rng.integers(1, 12, size=n)
        s = rng.integers(0, 4, size=n)
        inst = Instance(memory=int(rng.integers(14, 30)), arrival=np.sort(rng.integers(0, 8, n)),
                        prompt=s, output=o)
        pred = np.maximum(1.0, o * rng.uniform(0.3, 2.0, size=n))
        pol = _Watch("trail", pred, C=0.5)
        res = simulate(inst, pol, seed=k)
        assert check_schedule(inst, res.schedule).ok
        assert pol.violations == 0, (k, pol.violations)
        locked_evicted += pol.locked_evicted
    assert locked_evicted > 0, "no overflow evicted a locked run: the test is blind"


@pytest.mark.parametrize("mode", ["restart", "recompute", "swap"])
def test_the_quiet_step_shortcut_decides_as_the_full_pass(mode, monkeypatch):
    """RankPolicy._quiet skips the merge by rank on steps where nothing would change; with it
    switched off every step takes the full pass, and the schedules are the same to the bit
    (the unit step time keeps no clock to differ)."""
    runs = [("trail", {}), ("trail", {"age": "attained", "C": 0.5}),
            ("trail", {"refine": False, "predictions": "exact", "C": 0.3}),
            ("sprpt", {"predictions": "exact"}), ("srpt", {}), ("spjf", {"predictions": "exact"})]
    cases = []
    for inst in _instances():
        for name, kw in runs:
            for batch in (None, 3):
                cases.append((inst, name, kw, batch))
    quiet = RankPolicy._quiet
    said = []

    def counted(*args):
        said.append(quiet(*args))
        return said[-1]

    monkeypatch.setattr(RankPolicy, "_quiet", counted)
    fast = [simulate(i, p, seed=2, preemption=mode, max_batch=b, **kw) for i, p, kw, b in cases]
    assert 0 < sum(said) < len(said)            # both kinds of step occur
    monkeypatch.setattr(RankPolicy, "_quiet", lambda *args: False)
    full = [simulate(i, p, seed=2, preemption=mode, max_batch=b, **kw) for i, p, kw, b in cases]
    for (_, name, kw, batch), a, b in zip(cases, fast, full, strict=True):
        assert a.schedule.to_dict() == b.schedule.to_dict(), (name, kw, batch)
        skip = ("wall_seconds", "decisions")  # quiet steps may also sleep (below)
        assert ({k: v for k, v in a.stats.items() if k not in skip}
                == {k: v for k, v in b.stats.items() if k not in skip}), (name, kw, batch)


@pytest.mark.parametrize("mode", ["restart", "recompute", "swap"])
def test_refined_ranks_sleep_through_quiet_steps_with_the_same_schedule(mode, monkeypatch):
    """With free predictions, a quiet refined-rank policy sleeps until the first step that
    may not be quiet (RankPolicy._sleep, reading the refresh table ahead) and the engine
    counts the predictions of the steps it skips: the same schedules and prediction counts
    as deciding at every step, with fewer decisions."""
    runs = [("trail", {}), ("trail", {"age": "attained", "C": 0.5}), ("trail", {"every": 3}),
            ("trail", {"sigma0": 0.0, "bins": 0})]
    cases = [(inst, name, kw, batch, step)
             for inst in _instances() for name, kw in runs for batch in (None, 3)
             for step in ("unit", "a100-llama2-7b-tp1")]

    def run_all():
        return [simulate(i, p, seed=2, preemption=mode, max_batch=b, step_time=st, **kw)
                for i, p, kw, b, st in cases]

    sleeping = run_all()
    monkeypatch.setattr(RankPolicy, "_sleep", lambda self, st, *args: (st.t + 1, np.zeros(0)))
    every = run_all()
    for (_, name, kw, batch, step), a, b in zip(cases, sleeping, every, strict=True):
        da, db = a.schedule.to_dict(), b.schedule.to_dict()
        if step != "unit":  # a skipped stretch sums its step times before adding them
            for d in (da, db):
                d.pop("times"), d.pop("claimed_objective", None)
        assert da == db, (name, kw, batch, step)
        sa, sb = ({k: v for k, v in r.stats.items() if k not in ("wall_seconds", "decisions")}
                  for r in (a, b))
        assert sa == sb, (name, kw, batch, step)
    assert sum(r.stats["decisions"] for r in sleeping) < sum(r.stats["decisions"] for r in every)
