import pytest

from kvopt import Instance, check_schedule
from kvopt.sim import simulate


def test_amin_redraw_ties_is_a_valid_option_and_deterministic():
    # two-point mix: many equal lower bounds, so eviction ties matter
    inst = Instance(memory=40, arrival=[0] * 30, prompt=[1] * 30,
                    output=[1] * 20 + [12] * 10, pred_lower=[1] * 30, pred_upper=[12] * 30)
    a = simulate(inst, "amin", seed=3, ties="redraw")
    b = simulate(inst, "amin", seed=3, ties="redraw")
    assert check_schedule(inst, a.schedule).ok
    assert a.schedule.same_runs(b.schedule)
    assert a.schedule.num_evictions > 0


def test_unknown_ties_rejected():
    inst = Instance(memory=10, arrival=[0], prompt=[1], output=[2])
    with pytest.raises(ValueError, match="ties: must be"):
        simulate(inst, "amin", ties="sometimes")
