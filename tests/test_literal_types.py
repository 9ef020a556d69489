"""Units and choices are ``Literal`` types (issue 20), and the run-time checks accept exactly
the values of the type (one list, not two)."""

from __future__ import annotations

import typing

import pytest

from kvopt.core.errors import InvalidInstanceError, UsageError
from kvopt.core.instance import TIME_UNITS, Instance, TimeUnit
from kvopt.core.schedule import PREEMPTION_MODES, PreemptionMode, Schedule
from kvopt.predictions.distributions import MODES, TruncationMode
from kvopt.sim.policies.future_memory import (
    FutureMemoryPolicy,
    FutureOverflow,
    Overrun,
    ScanOrder,
    TieBreak,
)
from kvopt.sim.policies.greedy import GreedyOrder, GreedyOverflow, GreedyPolicy
from kvopt.sim.policies.registry import ALL_MODES
from kvopt.sim.prediction_policies import AgeMode, RankPolicy
from kvopt.sim.serving import EngineConfig
from kvopt.sim.steptime.profiled import INTERCONNECTS, Interconnect, ProfiledStepTime


def _hint(obj: object, name: str) -> object:
    return typing.get_type_hints(obj)[name]


@pytest.mark.parametrize("owner, name, alias", [
    (Instance, "time_unit", TimeUnit),
    (ProfiledStepTime, "interconnect", Interconnect),
    (FutureMemoryPolicy.__init__, "order", ScanOrder),
    (FutureMemoryPolicy.__init__, "ties", TieBreak),
    (FutureMemoryPolicy.__init__, "overrun", Overrun),
    (FutureMemoryPolicy.__init__, "overflow", FutureOverflow),
    (GreedyPolicy.__init__, "order", GreedyOrder),
    (GreedyPolicy.__init__, "overflow", GreedyOverflow),
    (RankPolicy.__init__, "age", AgeMode),
    (Schedule, "preemption", PreemptionMode),
    (EngineConfig, "preemption", PreemptionMode),
])
def test_choice_is_typed_with_its_literal(owner: object, name: str, alias: object) -> None:
    assert typing.get_origin(alias) is typing.Literal
    assert _hint(owner, name) == alias


def test_the_tuples_are_the_literals() -> None:
    assert TIME_UNITS == typing.get_args(TimeUnit) == ("step", "second")
    assert typing.get_args(Interconnect) == INTERCONNECTS
    assert typing.get_args(TruncationMode) == MODES
    assert typing.get_args(PreemptionMode) == PREEMPTION_MODES == ALL_MODES


@pytest.mark.parametrize("make, field, alias", [
    (lambda v: GreedyPolicy("x", order=v), "order", GreedyOrder),
    (lambda v: GreedyPolicy("x", overflow=v), "overflow", GreedyOverflow),
    (lambda v: FutureMemoryPolicy("x", [1], ties=v), "ties", TieBreak),
    (lambda v: FutureMemoryPolicy("x", [1], order=v), "order", ScanOrder),
])
def test_runtime_check_accepts_exactly_the_literal(make: typing.Callable[[str], object],
                                                  field: str, alias: object) -> None:
    for value in typing.get_args(alias):
        make(value)
    with pytest.raises(UsageError, match=f"invalid {field}: must be "
                                         + ", ".join(typing.get_args(alias)[:-1])):
        make("nope")


def test_instance_time_unit_is_checked_against_the_literal() -> None:
    with pytest.raises(InvalidInstanceError, match="time_unit"):
        Instance(memory=4, arrival=[0], prompt=[1], output=[1], time_unit="minute")
