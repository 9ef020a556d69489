"""``kvopt steptime``: step-time models against real GPU measurements (validate, fit,
profile); also the ``--step-time`` argument type every simulating command shares."""

from __future__ import annotations

import argparse
from typing import Any


def step_time_arg(value: str) -> Any:
    """argparse ``type`` of ``--step-time``: a registry name (returned as is) or a
    fitted-model JSON file (returned loaded, so a bad file is a usage error, exit 2).

    Examples
    --------
    >>> step_time_arg("unit")
    'unit'
    >>> step_time_arg("nope")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: unknown step-time model 'nope'; ...
    """
    from kvopt.core.errors import UsageError
    from kvopt.sim.step_time import STEP_TIME_MODELS, get_step_time

    if value in STEP_TIME_MODELS:
        return value
    try:
        return get_step_time(value)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(exc.reason) from None
