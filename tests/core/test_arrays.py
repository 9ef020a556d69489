"""``kvopt.core.arrays``: the shared ragged-arange idiom against a plain Python loop, the
lexicographic top-k against a full sort, and the counting unique against ``np.unique``."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kvopt.core.arrays import lex_smallest, ragged_arange, unique_offsets
from kvopt.core.errors import UsageError


@given(st.lists(st.integers(0, 6), max_size=12))
def test_ragged_arange_counts_inside_each_segment(counts: list[int]) -> None:
    got = ragged_arange(np.array(counts, dtype=np.int64))
    assert got.dtype == np.int64
    assert got.tolist() == [j for c in counts for j in range(c)]


def test_ragged_arange_refuses_negative_counts() -> None:
    with pytest.raises(ValueError):
        ragged_arange([2, -1])


@given(st.lists(st.integers(0, 40), max_size=30))
def test_unique_offsets_is_np_unique(values: list[int]) -> None:
    present, inverse = unique_offsets(np.array(values, dtype=np.int64))
    want, want_inv = np.unique(np.array(values, dtype=np.int64), return_inverse=True)
    assert present.dtype == inverse.dtype == np.int64
    assert present.tolist() == want.tolist()
    assert inverse.tolist() == want_inv.reshape(-1).tolist()


def test_unique_offsets_refuses_negative_values() -> None:
    with pytest.raises(ValueError):
        unique_offsets([3, -1])


def test_lex_smallest_is_the_head_of_the_lexicographic_sort() -> None:
    """Same set as ``np.lexsort`` then the first ``k``, on keys with many ties (a float
    primary key, an integer secondary, a strict rank last), for every ``k``."""
    rng = np.random.default_rng(11)
    for _ in range(300):
        m = int(rng.integers(1, 40))
        prio = rng.choice([0.0, -0.5, -1.25], m)
        tie = rng.integers(0, 4, m)
        rank = rng.permutation(m)
        want = np.lexsort((rank, tie, prio))
        for k in range(0, m + 2):
            got = lex_smallest([prio, tie, rank], k)
            assert got.dtype == np.int64
            assert sorted(got.tolist()) == sorted(want[:k].tolist())


def test_lex_smallest_refuses_keys_that_leave_ties() -> None:
    with pytest.raises(UsageError, match=r"invalid keys: .* not strict"):
        lex_smallest([np.zeros(4), np.zeros(4)], 2)
