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


def test_every_policy_option_is_checked_before_the_run():
    """For every registered policy and each option it declares, a nonsense value is a
    UsageError from check_policy (what the CLI calls before simulating), never another
    exception; the defaults pass. New policies join automatically."""
    from kvopt.core.errors import UsageError
    from kvopt.sim import POLICIES, check_policy, policy_options

    inst = Instance(memory=20, arrival=[0, 0, 1], prompt=[1, 2, 1], output=[3, 2, 4],
                    pred_lower=[2, 1, 3], pred_upper=[5, 4, 6], pred_point=[3, 2, 4])
    for name in sorted(POLICIES):
        if name == "replay":
            continue
        opts = policy_options(name)
        assert opts is not None, f"{name}: declare where its **options go"
        check_policy(inst, name)
        for key in opts:
            with pytest.raises(UsageError):
                check_policy(inst, name, **{key: "zz"})
        with pytest.raises(UsageError):
            check_policy(inst, name, no_such_option=1)
