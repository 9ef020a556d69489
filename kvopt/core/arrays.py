"""Array idioms that several layers share (vectorised, no per-element Python loops).

Examples
--------
>>> ragged_arange([2, 0, 3]).tolist()
[0, 1, 0, 1, 2]
>>> lex_smallest([np.array([2, 1, 1, 0]), np.array([0, 5, 4, 9])], 2).tolist()
[3, 2]
>>> [a.tolist() for a in unique_offsets(np.array([7, 3, 7, 5]))]
[[3, 5, 7], [2, 0, 2, 1]]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvopt.core.errors import UsageError

__all__ = ["lex_smallest", "ragged_arange", "unique_offsets"]


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


def unique_offsets(values: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``np.unique(values, return_inverse=True)`` for non-negative integers, by counting.

    The sorted distinct values and, for every entry, the index of its value among them. A
    count over ``0 .. max(values)`` replaces the sort: O(m + max) for ``m`` entries instead of
    O(m log m), for values of a bounded range such as slots (the rows of a time-indexed model,
    millions of entries over a few thousand slots).

    Parameters
    ----------
    values
        Non-negative integers.

    Returns
    -------
    tuple of numpy.ndarray
        ``(present, inverse)``, both ``int64``: ``present[inverse] == values``.

    Examples
    --------
    >>> present, inverse = unique_offsets([4, 0, 4, 2])
    >>> present.tolist(), inverse.tolist()
    ([0, 2, 4], [2, 0, 2, 1])
    >>> [a.tolist() for a in unique_offsets([])]
    [[], []]
    """
    v = np.asarray(values, dtype=np.int64).reshape(-1)
    if v.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if int(v.min()) < 0:
        raise UsageError("values", "must be non-negative integers")
    seen = np.bincount(v) > 0
    rank = np.cumsum(seen, dtype=np.int64) - 1
    return np.flatnonzero(seen).astype(np.int64), rank[v]


def lex_smallest(keys: list[NDArray[np.generic]], k: int) -> NDArray[np.int64]:
    """The positions of the ``k`` smallest entries in the lexicographic order of ``keys``.

    ``keys[0]`` is the primary key, ``keys[1]`` breaks its ties, and so on; the last key must
    make the order strict (no two positions equal on every key), for instance an arrival
    rank. The result is the same set as ``np.lexsort(keys[::-1])[:k]``, in no particular
    order, found with one ``np.partition`` per key on the positions still tied instead of a
    full sort: O(m) for ``m`` positions rather than O(m log m), which matters when a policy
    takes a few requests from a long queue at every step.

    Parameters
    ----------
    keys
        Equally long 1-d arrays, primary key first; not NaN.
    k
        How many positions; ``k >= m`` returns all of them.

    Returns
    -------
    numpy.ndarray
        ``int64`` positions into the keys, ``min(k, m)`` of them.

    Raises
    ------
    UsageError
        Naming ``keys``, when ties on every key make the ``k`` smallest ambiguous.

    Examples
    --------
    >>> prio = np.array([0.0, 0.0, -1.0, 0.0, 0.0])
    >>> tie = np.array([3, 1, 7, 1, 1])
    >>> rank = np.array([0, 4, 1, 3, 2])
    >>> sorted(lex_smallest([prio, tie, rank], 3).tolist())     # -1.0 first, then tie 1
    [2, 3, 4]
    >>> np.lexsort((rank, tie, prio))[:3].tolist()
    [2, 4, 3]
    """
    m = keys[0].size
    rest = np.arange(m, dtype=np.int64)
    if k >= m:
        return rest
    taken: list[NDArray[np.int64]] = []
    need = max(int(k), 0)
    for key in keys:
        if need == 0 or rest.size == need:
            break
        v = key[rest]
        thr = np.partition(v, need - 1)[need - 1]
        below = rest[v < thr]
        taken.append(below)
        need -= below.size
        rest = rest[v == thr]
    if need != rest.size:
        if need:
            raise UsageError("keys", "the last key leaves ties, so the order is not strict")
        rest = rest[:0]
    taken.append(rest)
    return np.concatenate(taken)
