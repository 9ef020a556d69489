"""Property tests (hypothesis): OPT <= MC-SF, every bound <= OPT, aggregation is exact."""

import numpy as np
from hypothesis import given, settings

from kvopt import Instance, check_schedule
from kvopt.core.limits import Deadline
from kvopt.core.mcsf import mcsf_starts
from kvopt.mip import solve
from kvopt.mip.bounds.blocks import block_lagrangian_bound
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
    block = block_lagrangian_bound(inst, mcsf_starts(inst), deadline=Deadline(5.0), iterations=20)
    assert block.value <= opt + 1e-6


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


def test_groups_partition_the_requests_in_order_of_first_appearance():
    """``group_requests`` (vectorized: it had looped over the requests once per group):
    identical requests together, each group in index order, groups by their first request."""
    rng = np.random.default_rng(5)
    for _ in range(500):
        n, r = int(rng.integers(1, 40)), int(rng.integers(1, 4))
        inst = Instance(memory=100, arrival=rng.integers(0, r, n),
                        prompt=rng.integers(1, r + 1, n), output=rng.integers(1, r + 1, n))
        key = [(int(a), int(s), int(o))
               for a, s, o in zip(inst.arrival, inst.prompt, inst.output, strict=True)]
        want: dict[tuple[int, int, int], list[int]] = {}
        for i, k in enumerate(key):
            want.setdefault(k, []).append(i)
        got = group_requests(inst, True)
        assert [g.tolist() for g in got] == list(want.values())
        assert all(g.dtype == np.int64 for g in got)
        assert [g.tolist() for g in group_requests(inst, False)] == [[i] for i in range(n)]
