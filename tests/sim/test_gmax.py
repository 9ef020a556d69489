"""GMAX and EDF (seed 003): the constructions' values, selection, options, preemption."""

import json
import subprocess
import sys

import numpy as np
import pytest

from kvopt import Instance, check_schedule, load_instance
from kvopt.core.errors import UsageError
from kvopt.mip import solve
from kvopt.sim import simulate
from kvopt.sim.gmax import gmax_select
from kvopt.theory.jitserve import (
    density_counterexample,
    edf_sjf_instance,
    eq43_lp,
    eq43_optimum,
    eq43_ratio,
    eq43_symbolic,
)

COUNTER = "instances/adversarial/gmax-density-counterexample.json"
EDF_SJF = "instances/adversarial/edf-sjf-N9-M20.json"


def _slo_fields(kinds):
    """Instance fields of mixed SLOs: a stream, deadline or compound SLO (or none) per kind."""
    return dict(
        slo_kind=kinds.tolist(),
        ttft_slo=[5 if k == "stream" else None for k in kinds],
        tbt_slo=[1.5 if k == "stream" else None for k in kinds],
        deadline=[60 if k in ("deadline", "compound") else None for k in kinds],
        group=[i % 4 if k == "compound" else None for i, k in enumerate(kinds)],
        stage=[i // 4 if k == "compound" else None for i, k in enumerate(kinds)])


def _goodput(inst, policy, **kw):
    res = simulate(inst, policy, **kw)
    rep = check_schedule(inst, res.schedule)
    assert rep.ok
    assert rep.goodput.token_goodput == res.metrics.token_goodput
    return rep.goodput.token_goodput


@pytest.mark.parametrize("lengths", ["exact", "quantile"])
def test_shipped_counterexample(lengths):
    inst = load_instance(COUNTER)
    assert _goodput(inst, "gmax", lengths=lengths) == inst.expected["gmax_goodput"] == 2
    opt = solve(inst, objective="goodput", time_limit=30)
    assert opt.status == "optimal" and opt.objective == inst.expected["opt_goodput"] == 20
    assert 2 / 20 < 1 / 8.56


@pytest.mark.parametrize("W", [5, 10, 18, 40])
def test_counterexample_family_ratio_is_2_over_w(W):
    inst = density_counterexample(W)
    g = _goodput(inst, "gmax", lengths="exact")
    opt = solve(inst, objective="goodput", time_limit=30).objective
    assert (g, opt) == (2, W)
    assert (g / opt < 1 / 8.56) == (W > 17.12)


def test_shipped_edf_sjf_construction():
    inst = load_instance(EDF_SJF)
    exp = inst.expected
    assert _goodput(inst, "edf") == exp["edf_goodput"] == 9
    assert _goodput(inst, "sjf") == exp["sjf_goodput"] == 9
    assert _goodput(inst, "gmax", lengths="exact") == exp["gmax_goodput"] == 20
    assert solve(inst, objective="goodput", time_limit=30).objective == exp["opt_goodput"] == 20


@pytest.mark.parametrize("N, M, d", [(2, 5, 1), (4, 30, 3), (12, 14, 2), (6, 100, 5)])
def test_edf_sjf_family(N, M, d):
    inst = edf_sjf_instance(N, M, d)
    assert _goodput(inst, "edf") == _goodput(inst, "sjf") == N
    assert _goodput(inst, "gmax", lengths="exact") == M  # M > N + 1
    assert solve(inst, objective="goodput", time_limit=30).objective == M


def test_conservative_bound_makes_the_long_request_look_infeasible():
    # with the 0.95-quantile bound (sigma 0.5) A's bound exceeds its deadline: GMAX = EDF
    inst = load_instance(EDF_SJF)
    assert _goodput(inst, "gmax") == 9
    assert _goodput(inst, "gmax", sigma=0.0) == 20


def test_simulate_cli_reports_goodput():
    r = subprocess.run([sys.executable, "-m", "kvopt", "simulate", COUNTER, "--policy", "gmax",
                        "--json"], capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    metrics = doc.get("metrics", doc)
    assert metrics["token_goodput"] == 2.0 and metrics["request_goodput"] == 1


def _best_window(prio, key, B, p):
    feas = [i for i in range(len(prio)) if prio[i] > 0]
    if len(feas) <= B:
        return sorted(feas)
    bp = sorted((prio[i] for i in feas), reverse=True)[B - 1]
    cand = sorted((i for i in feas if prio[i] >= p * bp), key=lambda i: (key[i], i))
    if len(cand) <= B:
        return sorted(cand)
    sums = [sum(prio[i] for i in cand[s:s + B]) for s in range(len(cand) - B + 1)]
    s = int(np.argmax(sums))
    return sorted(cand[s:s + B])


def test_gmax_select_matches_a_loop():
    rng = np.random.default_rng(5)
    for _ in range(200):
        n = int(rng.integers(1, 30))
        prio = np.where(rng.random(n) < 0.2, 0.0, rng.random(n))
        key = rng.integers(0, 50, n)
        B = int(rng.integers(1, 8))
        p = float(rng.choice([0.5, 0.9, 1.0]))
        got = sorted(gmax_select(prio, key, B, p).tolist())
        assert got == _best_window(prio.tolist(), key.tolist(), B, p)
        top = gmax_select(prio, key, B, p, topk=2)
        assert top.size == min(B, int((prio > 0).sum()))


def test_preemption_needs_the_goodput_margin():
    # B = 1: a long low-value request runs; a short high-value one arrives at 2 and takes the
    # slot at the next frame (t = 4) only if its goodput beats (1 + delta) x the running one's
    base = dict(memory=40, arrival=[0, 2], prompt=[0, 0], output=[20, 2], max_batch=1,
                slo_kind=["deadline", "deadline"], deadline=[40, 10])
    hi = Instance(**base, value=[10, 30])
    res = simulate(hi, "gmax", lengths="exact", frame=4)
    assert res.schedule.num_evictions == 1 and res.metrics.token_goodput == 40.0
    close = Instance(**base, value=[10, 10.5])   # higher priority, but 10.5 < 1.1 x 10
    res = simulate(close, "gmax", lengths="exact", frame=4)
    assert res.schedule.num_evictions == 0
    res = simulate(close, "gmax", lengths="exact", frame=4, delta=0.0)
    assert res.schedule.num_evictions == 1


def test_code_variants_run_and_validate():
    rng = np.random.default_rng(2)
    n = 40
    kinds = rng.choice(["stream", "deadline", "compound", "none"], n)
    inst = Instance(
        memory=200, arrival=rng.integers(0, 30, n), prompt=rng.integers(1, 20, n),
        output=rng.integers(1, 30, n), max_batch=6, **_slo_fields(kinds))
    for kw in ({}, {"candidates": "topk"}, {"group_key": "context"},
               {"infeasible": "discount"}, {"lengths": "exact", "frame": 1}):
        _goodput(inst, "gmax", **kw)
    _goodput(inst, "edf")
    timed = simulate(inst, "gmax", step_time="a100-llama2-7b-tp1")
    assert check_schedule(inst, timed.schedule).ok


@pytest.mark.parametrize("kw, field", [
    ({"p": 0}, "p"), ({"p": 1.5}, "p"), ({"frame": 0}, "frame"), ({"quantile": 1.0}, "quantile"),
    ({"lengths": "oracle"}, "lengths"), ({"candidates": "all"}, "candidates"),
    ({"sigma": -1}, "sigma"), ({"topk": 0}, "topk"), ({"group_key": "output"}, "group_key"),
    ({"infeasible": "drop"}, "infeasible"), ({"delta": -0.1}, "delta"),
])
def test_bad_gmax_options(kw, field):
    with pytest.raises(UsageError) as exc:
        simulate(load_instance(COUNTER), "gmax", **kw)
    assert exc.value.field == field


def test_eq43_numerics():
    sym = eq43_symbolic()
    num = eq43_optimum()
    assert sym["delta_star"] == pytest.approx(num["delta"], abs=1e-5)
    assert sym["inverse"] == pytest.approx(8.224, abs=5e-4)
    assert 1 / eq43_ratio(0.1) == pytest.approx(32.46, abs=5e-3)
    for d, inv in ((0.2, 17.87), (0.5, 9.89), (1.0, 8.25), (2.0, 9.06)):
        assert 1 / eq43_ratio(d) == pytest.approx(inv, abs=5e-3)
        assert eq43_lp(d) == pytest.approx(eq43_ratio(d), rel=1e-9)
    assert num["inverse"] > 8.13  # the printed 1/8.13 is not attained


def test_the_shortcuts_decide_as_the_plain_computation(monkeypatch):
    """GmaxPolicy computes the bound of waiting requests once (ub0), ranks only the waiting
    requests that fit the free memory when all may start (_could_fit), and of those only a
    head that admission can stop at (_fitting_head); without SLOs it decides between frames
    from a ranking sorted once (_decide_no_slo) and analyses nothing. With the four undone, the
    schedules are the same to the bit, on mixed-SLO instances, on instances without SLOs
    (with and without a batch limit) and on a trace prefix."""
    from kvopt.predictions.quantile import conditional_upper
    from kvopt.sim.gmax import GmaxPolicy

    rng = np.random.default_rng(7)
    cases = []
    for _ in range(3):
        n = 50
        kinds = rng.choice(["stream", "deadline", "compound", "none"], n)
        inst = Instance(
            memory=int(rng.integers(60, 200)), arrival=rng.integers(0, 100, n),
            prompt=rng.integers(1, 20, n), output=rng.integers(1, 40, n), **_slo_fields(kinds))
        for kw in ({}, {"candidates": "topk", "frame": 3}, {"infeasible": "discount"}):
            cases.append((inst, kw))
    for batch in (None, 3):   # no SLOs: every priority 0
        n = 60
        inst = Instance(
            memory=int(rng.integers(60, 200)), arrival=rng.integers(0, 100, n),
            prompt=rng.integers(1, 20, n), output=rng.integers(1, 40, n), max_batch=batch)
        for kw in ({}, {"lengths": "exact", "frame": 4}):
            cases.append((inst, kw))
    trace = load_instance("instances/traces/azure_conv_2023.csv").take(np.arange(1500))
    cases.append((trace, {}))
    could_fit = GmaxPolicy._could_fit
    dropped = []

    def counted(self, ids, pos, room):
        kept = could_fit(self, ids, pos, room)
        dropped.append(pos.size - kept.size)
        return kept

    fitting_head = GmaxPolicy._fitting_head
    cut = []

    def counted_head(self, ids, pos, room, ranked, keys):
        head = fitting_head(self, ids, pos, room, ranked, keys)
        cut.append(pos.size - head.size)
        return head

    decide_no_slo = GmaxPolicy._decide_no_slo
    between = []

    def counted_no_slo(self, st):
        between.append(st.t)
        return decide_no_slo(self, st)

    monkeypatch.setattr(GmaxPolicy, "_could_fit", counted)
    monkeypatch.setattr(GmaxPolicy, "_fitting_head", counted_head)
    monkeypatch.setattr(GmaxPolicy, "_decide_no_slo", counted_no_slo)
    fast = [simulate(inst, "gmax", **kw).schedule.to_dict() for inst, kw in cases]
    assert sum(d > 0 for d in dropped) > 0        # the shortcut did leave requests out
    assert sum(c > 0 for c in cut) > 0            # and admission did stop at a head
    assert between                                # and decisions without SLOs took the fast path

    def plain_bound(self, ids, g):
        if self.lengths == "exact":
            return np.maximum(self.o[ids], g + 1)
        return conditional_upper(self.median[ids], self.sigma, self.q, g)

    monkeypatch.setattr(GmaxPolicy, "_could_fit", lambda self, ids, pos, room: pos)
    monkeypatch.setattr(GmaxPolicy, "_fitting_head",
                        lambda self, ids, pos, room, ranked, keys: ranked(pos))
    monkeypatch.setattr(GmaxPolicy, "_bound", plain_bound)
    reset = GmaxPolicy.reset

    def reset_analysing(self, st):   # every decision through analyze and the full ranking
        reset(self, st)
        self.no_slo = False

    monkeypatch.setattr(GmaxPolicy, "reset", reset_analysing)
    plain = [simulate(inst, "gmax", **kw).schedule.to_dict() for inst, kw in cases]
    for (_, kw), a, b in zip(cases, fast, plain, strict=True):
        assert a == b, kw
