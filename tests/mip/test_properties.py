"""Property tests (hypothesis): OPT <= MC-SF, every bound <= OPT, aggregation is exact."""

import numpy as np
from hypothesis import given, settings

from kvopt import Instance, check_schedule
from kvopt.core.mcsf import mcsf_starts
from kvopt.mip import solve
from kvopt.mip.bounds.combinatorial import combinatorial_bound, fluid_bound, volume_bound
from kvopt.mip.model.builder import build_milp, decode_starts, group_requests
from tests.bruteforce import brute_force_opt
from tests.strategies import small_instances as instances


@settings(max_examples=25, deadline=None)
@given(instances())
def test_opt_between_bounds_and_mcsf(inst):
    opt, _ = brute_force_opt(inst.memory, inst.arrival, inst.prompt, inst.output)
    res = solve(inst, solver="highs", formulation="tight+cuts", time_limit=20)
    assert res.status == "optimal" and res.objective == opt
    assert check_schedule(inst, res.schedule).objective == opt
    mcsf = int((mcsf_starts(inst) + inst.output - inst.arrival).sum())
    assert opt <= mcsf
    assert max(fluid_bound(inst), volume_bound(inst), combinatorial_bound(inst)) <= opt + 1e-9


@settings(max_examples=15, deadline=None)
@given(instances(max_n=6))
def test_duplicated_requests_aggregate_exactly(inst):
    # duplicate every request: the aggregated model must equal the brute-force optimum
    dup = Instance(memory=inst.memory, arrival=np.tile(inst.arrival, 2)[:6],
                   prompt=np.tile(inst.prompt, 2)[:6], output=np.tile(inst.output, 2)[:6])
    opt, _ = brute_force_opt(dup.memory, dup.arrival, dup.prompt, dup.output)
    data = build_milp(dup, "tight")
    assert len(data.groups) == len(group_requests(dup, True)) <= dup.n
    res = solve(dup, solver="scipy", formulation="tight", time_limit=20, warm_start=False)
    assert res.objective == opt
    # decoding a group's counts hands its starts to the members in index order
    data2 = build_milp(dup, "tight", warm_starts=res.schedule.run_start)
    assert data2.x0 is not None and data2.max_violation(data2.x0) == 0
    assert data2.objective(data2.x0) == opt
    assert decode_starts(data2, data2.x0, dup.n).tolist() == res.schedule.run_start.tolist()
