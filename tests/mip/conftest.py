"""Fixtures shared by the MIP tests."""

import pytest

from kvopt import Instance


@pytest.fixture
def interval_proves() -> Instance:
    """Five requests, all at slot 0, in M = 11: the cheap bounds do not prove MC-SF's schedule
    optimal and the plain LP does not either; the lag-interval LP does (so ``kvopt bound``'s
    default needs its LP, and the portfolio closes the gap as soon as that bound arrives)."""
    return Instance(memory=11, arrival=[0] * 5, prompt=[4, 5, 4, 1, 5], output=[4, 3, 4, 7, 3])
