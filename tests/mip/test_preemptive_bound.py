"""The preemptive relaxation (kvopt.mip.bounds.preemptive) equals an independent dynamic
program over token counts on small instances, and sits below the non-preemptive optimum."""

import pytest
from hypothesis import HealthCheck, given, settings

from kvopt import Instance
from kvopt.core.errors import MemoryBudgetError
from kvopt.mip.bounds.preemptive import preemptive_bound, preemptive_model, solve_preemptive
from tests.bruteforce import brute_force_opt, brute_force_preemptive_opt
from tests.strategies import small_instances


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(inst=small_instances(max_n=4, max_memory=9, max_arrival=3, max_output=4))
def test_preemptive_optimum_equals_the_dynamic_program(inst):
    args = (int(inst.memory), inst.arrival.tolist(), inst.prompt.tolist(), inst.output.tolist())
    pre = brute_force_preemptive_opt(*args)
    res = solve_preemptive(inst, time_limit=60)
    assert res.status == "optimal"
    assert res.objective == pre
    assert preemptive_bound(inst) <= pre
    lp = solve_preemptive(inst, relax=True)
    assert lp.bound <= pre + 1e-6
    opt, _ = brute_force_opt(*args)
    assert pre <= opt


def test_preemption_beats_the_non_preemptive_optimum():
    # two requests of 3 tokens, M = 6: together they hold 2+2, 3+3, then one must wait
    inst = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    assert brute_force_preemptive_opt(6, [0, 0], [1, 1], [3, 3]) == 7
    assert brute_force_opt(6, [0, 0], [1, 1], [3, 3])[0] == 8
    assert solve_preemptive(inst).objective == 7.0


def test_large_models_are_refused_before_building():
    inst = Instance(memory=4000, arrival=[0] * 50, prompt=[10] * 50, output=[300] * 50)
    with pytest.raises(MemoryBudgetError, match="preemptive_bound"):
        preemptive_model(inst)
    assert preemptive_bound(inst) > 0
