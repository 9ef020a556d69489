"""Array idioms that several layers share (vectorised, no per-element Python loops).

Examples
--------
>>> ragged_arange([2, 0, 3]).tolist()
[0, 1, 0, 1, 2]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["ragged_arange"]


def ragged_arange(counts: ArrayLike) -> NDArray[np.int64]:
    """``0, 1, ..., c - 1`` for every count ``c`` of ``counts``, concatenated.

    The offsets inside the segments of ``np.repeat(x, counts)``: with ``owner =
    np.repeat(np.arange(len(counts)), counts)``, entry ``j`` is the ``ragged_arange(counts)[j]``-th
    of its owner's ``counts[owner[j]]`` entries. Zero counts give empty segments.

    Parameters
    ----------
    counts
        Non-negative integers, one per segment.

    Returns
    -------
    numpy.ndarray
        ``int64`` array of length ``sum(counts)``.

    Examples
    --------
    >>> ragged_arange([3, 1, 2]).tolist()
    [0, 1, 2, 0, 0, 1]
    >>> ragged_arange([]).tolist()
    []
    """
    c = np.asarray(counts, dtype=np.int64).reshape(-1)
    return np.arange(int(c.sum()), dtype=np.int64) - np.repeat(np.cumsum(c) - c, c)
