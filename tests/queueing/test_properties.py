"""Sample-path properties of the simulator on random small job sets (hypothesis)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kvopt.queueing.simulator import simulate_jobs

jobs = st.lists(st.tuples(st.floats(0.0, 5.0), st.floats(0.01, 3.0), st.floats(0.05, 4.0)),
                min_size=1, max_size=25)


def _arrays(js):
    js = sorted(js, key=lambda j: j[0])
    a, x, z = (np.array(v, dtype=float) for v in zip(*js, strict=True))
    return a, x, x * z


@settings(max_examples=60, deadline=None)
@given(jobs)
def test_srpt_minimises_total_response_and_all_policies_conserve_work(js):
    a, x, y = _arrays(js)
    total = {}
    last = {}
    for pol, C, pred in (("srpt", None, x), ("fcfs", None, x), ("sjf", None, x),
                         ("psjf", None, x), ("trail", 0.5, x), ("sprpt", None, y),
                         ("trail", 0.3, y), ("spjf", None, y)):
        r, mean_mem, peak = simulate_jobs(pol, a, x, pred, C)
        assert np.all(r >= x - 1e-9)  # nobody finishes faster than its size
        dep = a + r
        total[(pol, C, id(pred))] = r.sum()
        last[(pol, C, id(pred))] = dep.max()
        assert peak >= x.max() - 1e-9 and mean_mem >= 0
    # work-conserving: the last departure is the same for every policy
    assert np.ptp(list(last.values())) < 1e-7
    # SRPT (exact sizes) is optimal for total flow time on one machine with preemption
    best = total[("srpt", None, id(x))]
    assert all(v >= best - 1e-7 for v in total.values())


@settings(max_examples=40, deadline=None)
@given(jobs)
def test_trail_interpolates_between_spjf_and_sprpt_extremes(js):
    a, x, y = _arrays(js)
    r_big, _, _ = simulate_jobs("trail", a, x, y, 1.0)
    r_sprpt, _, _ = simulate_jobs("sprpt", a, x, y)
    np.testing.assert_allclose(r_big, r_sprpt, atol=1e-9)  # C = 1 is SPRPT on every path
