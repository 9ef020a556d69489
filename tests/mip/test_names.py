"""The ``Literal`` types of the backend and formulation names match the registries."""

from __future__ import annotations

from typing import get_args

import pytest

from kvopt.core.errors import UsageError
from kvopt.mip import ALL_FORMULATIONS, Formulation, SolverName, backend_names, solve


def test_literal_names_match_the_registries():
    assert get_args(Formulation) == tuple(ALL_FORMULATIONS)
    assert get_args(SolverName) == tuple(backend_names())


def test_a_name_outside_the_literal_is_refused_at_run_time():
    from kvopt import Instance

    inst = Instance(memory=4, arrival=[0], prompt=[1], output=[1])
    with pytest.raises(UsageError, match="formulation"):
        solve(inst, solver="highs", formulation="tighter", time_limit=5)  # type: ignore[arg-type]
