"""The offline goodput program and the knapsack reduction (seed 003, Thm D.1)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kvopt import Instance, check_schedule
from kvopt.core.errors import InvalidInstanceError, UsageError
from kvopt.mip import solve
from kvopt.mip.goodput import build_goodput_milp, serial_edf_starts, solve_goodput
from kvopt.mip.hardness import (
    hardness_check,
    knapsack_dp,
    knapsack_instance,
    solve_knapsack,
)
from tests.bruteforce import brute_force_goodput, brute_force_mkp
from tests.strategies import slo_instances


@st.composite
def knapsacks(draw):
    n = draw(st.integers(1, 5))
    K = draw(st.integers(1, 3))
    w = [draw(st.integers(1, 6)) for _ in range(n)]
    v = [draw(st.integers(1, 9)) for _ in range(n)]
    C = draw(st.integers(1, 8))
    return w, v, C, K


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=knapsacks())
@example(case=([3, 2, 6, 6], [1, 1, 1, 1], 6, 2))  # HiGHS objective read 2.9999999999999996
def test_knapsack_mip_equals_goodput_mip_equals_brute_force_and_dp(case):
    w, v, C, K = case
    brute = brute_force_mkp(w, v, C, K)
    r = hardness_check(w, v, C, K, solver="highs", time_limit=30)
    assert r["knapsack_status"] == "optimal" and r["goodput_status"] == "optimal"
    assert r["knapsack_optimum"] == brute
    assert r["goodput_optimum"] == brute
    if K == 1:
        assert r["dp_optimum"] == brute == knapsack_dp(w, v, C)
    else:
        assert r["dp_optimum"] is None
    assert r["equal"]


def test_mapped_schedule_is_a_packing():
    w, v, C, K = [3, 2, 2, 4, 1], [5, 3, 3, 6, 1], 5, 2
    inst = knapsack_instance(w, v, C, K)
    res = solve_goodput(inst, solver="highs", time_limit=30)
    rep = check_schedule(inst, res.schedule)
    assert rep.ok and rep.goodput.token_goodput == res.objective == brute_force_mkp(w, v, C, K)
    assert solve_knapsack(w, v, C, K)["optimum"] == res.objective


@pytest.mark.parametrize("args, field", [
    (([], [], 3, 1), "weights"), (([0, 2], [1, 1], 3, 1), "weights"),
    (([1, 2], [1], 3, 1), "values"), (([1, 2], [1, -1], 3, 1), "values"),
    (([1, 2], [1, 1], 0, 1), "capacity"), (([1, 2], [1, 1], 3, 0), "knapsacks"),
    (([1.5, 2], [1, 1], 3, 1), "weights"),
])
def test_bad_knapsack_arguments(args, field):
    with pytest.raises(UsageError) as exc:
        knapsack_instance(*args)
    assert exc.value.field == field


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=slo_instances())
def test_goodput_mip_equals_brute_force(inst):
    brute, _ = brute_force_goodput(inst)
    res = solve(inst, objective="goodput", time_limit=30)
    assert res.status == "optimal"
    rep = check_schedule(inst, res.schedule)
    assert rep.ok, str(rep)
    assert rep.goodput.token_goodput == pytest.approx(brute) == pytest.approx(res.objective)
    assert res.bound >= res.objective - 1e-6 and res.gap == 0.0


def test_time_limit_is_honest():
    rng = np.random.default_rng(0)
    n = 14
    inst = Instance(memory=40, arrival=rng.integers(0, 5, n), prompt=rng.integers(0, 3, n),
                    output=rng.integers(2, 8, n), slo_kind=["deadline"] * n,
                    deadline=rng.integers(4, 20, n), max_batch=3)
    res = solve(inst, objective="goodput", time_limit=0.01)
    assert res.status in ("optimal", "time_limit")
    assert check_schedule(inst, res.schedule).ok
    if res.status == "time_limit":
        assert res.gap is not None and res.bound >= res.objective


def test_warm_start_is_feasible_and_objectives_are_checked():
    inst = knapsack_instance([2, 3, 4], [3, 4, 6], 5, 2)
    ws = serial_edf_starts(inst)
    d = build_goodput_milp(inst, ws)
    assert d.max_violation(d.x0) == 0.0
    with pytest.raises(InvalidInstanceError, match="slo_kind"):
        solve(Instance(memory=5, arrival=[0], prompt=[0], output=[2]), objective="goodput")
    with pytest.raises(UsageError, match="objective"):
        solve(inst, objective="makespan")
    with pytest.raises(UsageError, match="batch limit"):
        solve(inst)  # the TEL models have no batch rows
