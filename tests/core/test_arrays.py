"""``kvopt.core.arrays``: the shared ragged-arange idiom against a plain Python loop."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvopt.core.arrays import ragged_arange


@given(st.lists(st.integers(0, 6), max_size=12))
def test_ragged_arange_counts_inside_each_segment(counts: list[int]) -> None:
    got = ragged_arange(np.array(counts, dtype=np.int64))
    assert got.dtype == np.int64
    assert got.tolist() == [j for c in counts for j in range(c)]


def test_ragged_arange_refuses_negative_counts() -> None:
    with pytest.raises(ValueError):
        ragged_arange([2, -1])
