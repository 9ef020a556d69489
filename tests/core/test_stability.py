"""Stability headroom mu = M / (b E[g]) (issue 24): the formula where E[g] is known in closed
form, and the simulated queue on both sides of mu."""

import math

import numpy as np
import pytest

from kvopt import Instance
from kvopt.core.errors import UsageError
from kvopt.core.stability import (
    Headroom,
    arrival_rate,
    backlog_drift,
    lifetime_token_steps,
    mean_token_steps,
    mean_token_steps_from_moments,
    stability_rate,
)
from kvopt.core.validate import memory_profile
from kvopt.sim import simulate
from kvopt.sim.headroom import capacity_batch, instance_headroom, step_at_capacity


def test_g_is_the_area_under_the_memory_profile():
    """g(s, o) = o s + o(o+1)/2 is the sum over slots of the memory the convention charges."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        s, o = int(rng.integers(0, 20)), int(rng.integers(1, 30))
        prof = memory_profile(np.array([s]), np.array([3]), np.array([o]))
        assert int(np.sum(prof)) == int(lifetime_token_steps(s, o)[0])


@pytest.mark.parametrize("p", [0.05, 0.2, 0.6])
def test_geometric_outputs_match_the_closed_form(p):
    """o ~ Geometric(p) on {1, 2, ...}, s ~ U{0..40} independent: E[g] = E[s]E[o] +
    (E[o^2] + E[o]) / 2 with E[o] = 1/p, E[o^2] = (2-p)/p^2; the sample mean converges."""
    rng = np.random.default_rng(1)
    n = 400_000
    o = rng.geometric(p, n)
    s = rng.integers(0, 41, n)
    closed = mean_token_steps_from_moments(20.0, 1 / p, (2 - p) / p**2)
    assert mean_token_steps(s, o) == pytest.approx(closed, rel=0.02)
    assert stability_rate(1000, closed) == pytest.approx(1000 / closed)


def test_uniform_outputs_closed_form_exact():
    """o uniform on 1..K with s = 7: every (s, o) once, so the empirical mean is exact."""
    K = 50
    o = np.arange(1, K + 1)
    eo, eo2 = (K + 1) / 2, (K + 1) * (2 * K + 1) / 6
    assert mean_token_steps(np.full(K, 7), o) == pytest.approx(
        mean_token_steps_from_moments(7, eo, eo2), rel=1e-12)


def test_instance_mu_and_load_slotted_and_timed():
    inst = Instance(memory=60, arrival=np.arange(0, 100), prompt=[0] * 100, output=[3] * 100)
    h = instance_headroom(inst)
    assert (h.mean_g, h.mu, h.step, h.unit) == (6.0, 10.0, 1.0, "step")
    assert h.load == pytest.approx(0.1)
    timed = inst.replace(time_unit="second", arrival=np.arange(100) * 0.5)
    ht = instance_headroom(timed, "a100-llama2-70b-tp2")
    b = step_at_capacity("a100-llama2-70b-tp2", 60, [0] * 100, [3] * 100)
    assert ht.step == b and ht.mu == pytest.approx(60 / (b * 6.0))
    assert ht.load == pytest.approx(2.0 / ht.mu) and ht.reading == "full-memory batch"


def test_capacity_batch_is_littles_law():
    cb = capacity_batch(1000, [10, 30], [5, 15])   # g = 65, 570 -> E[g] 317.5
    lam = 1000 / 317.5
    assert cb["starts"] == pytest.approx(lam)
    assert cb["running"] == pytest.approx(lam * 10)
    assert cb["prefill"] == pytest.approx(lam * 20)


def test_step_at_capacity_grows_with_the_batch():
    """b read at the full-memory batch: a larger M packs more requests into a step."""
    s, o = [200] * 10, [300] * 10
    b1 = step_at_capacity("a100-llama2-70b-tp2", 8000, s, o)
    b2 = step_at_capacity("a100-llama2-70b-tp2", 32000, s, o)
    assert 0 < b1 < b2


def test_offline_batch_has_no_load():
    h = Headroom.of([0, 0], [1, 1], [2, 2], 10)
    assert math.isinf(h.arrival_rate) and h.load is None
    assert h.to_dict()["arrival_rate"] is None
    assert arrival_rate([5.0]) == math.inf


def _deterministic(rate_num, rate_den, slots, o=3, M=60):
    """``rate_num`` arrivals every ``rate_den`` slots, s = 0, o = 3: g = 6, mu = M/6 = 10."""
    k = np.arange(slots // rate_den) * rate_den
    a = np.repeat(k, rate_num)
    return Instance(memory=M, arrival=a, prompt=np.zeros(a.size, dtype=np.int64),
                    output=np.full(a.size, o))


@pytest.mark.parametrize("policy", ["mcsf", "fcfs"])
def test_simulated_knee_is_mu_when_g_is_deterministic(policy):
    """s = 0, o = 3, M = 60: mu = 10 per slot exactly. 9 per slot (load 0.9) keeps the queue
    flat; 11 per slot (load 1.1) grows it by at least 1 - 10/11 of the arrivals (no policy
    serves more than mu). Measured: 0.393 for both, i.e. once a backlog forms they start
    synchronised cohorts of 20 every 3 slots (2/3 of mu): the collapse WAIT avoids."""
    below = _deterministic(9, 1, 300)
    above = _deterministic(11, 1, 300)
    for inst, stable in ((below, True), (above, False)):
        res = simulate(inst, policy)
        assert res.headroom.mu == 10.0
        from kvopt.core.metrics import request_table

        t = request_table(inst, res.schedule)
        b = backlog_drift(t["arrival"], t["completion"])
        assert b.stable is stable, (policy, res.headroom.load, b)
    b = backlog_drift(above.arrival, request_table(above, simulate(above, policy).schedule)
                      ["completion"])
    assert b.drift >= 1 - 10 / 11 - 0.02


def test_bad_arguments_name_the_field():
    with pytest.raises(UsageError, match="memory"):
        stability_rate(0, 1.0)
    with pytest.raises(UsageError, match="windows"):
        backlog_drift([0, 1, 2], [1, 2, 3], windows=2)
    with pytest.raises(UsageError, match="arrival"):
        backlog_drift([0, 0], [1, 2])
    with pytest.raises(UsageError, match="requests"):
        mean_token_steps([], [])


def test_simulate_cli_and_sweep_rows_report_load(capsys):
    import json

    from kvopt.cli.main import main
    from kvopt.sweep.run import SweepSpec, run_sweep

    assert main(["simulate", "instances/tiny/tiny-online.json", "--policy", "mcsf",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    inst = __import__("kvopt").load_instance("instances/tiny/tiny-online.json")
    h = instance_headroom(inst)
    assert doc["load_vs_capacity"] == h.load and doc["headroom"]["mu"] == h.mu
    assert main(["simulate", "instances/tiny/tiny-online.json", "--policy", "mcsf"]) == 0
    assert "load vs capacity lambda/mu" in capsys.readouterr().out
    rows = run_sweep(SweepSpec("model2", seeds=[0], policies=["mcsf"], solver="highs"),
                     workers=0)
    from kvopt.core.generators import model2

    want = instance_headroom(model2(0)).load
    assert [r["metrics"]["load_vs_capacity"] for r in rows] == [want, want]  # opt and mcsf
    rows = run_sweep(SweepSpec("model1", seeds=[0], policies=["mcsf"]), workers=0)
    assert rows[0]["metrics"]["load_vs_capacity"] is None   # offline batch: undefined
