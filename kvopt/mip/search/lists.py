"""The list search's decoder: the serial schedule-generation scheme of
:func:`kvopt.mip.search.starts.sgs_decode`, re-run incrementally on tables of free memory.

:class:`_IncrementalSGS` keeps, for the current list and for one candidate, the free-memory
profile after list prefixes, so that a candidate re-decodes only from near its first changed
position; :func:`list_table_slots` and :func:`list_table_bytes` size those tables from a
starting schedule (the makespan, not the serial horizon: 1000 Azure requests in 0.05 s slots
needed 8 GB before, ~65 MB now; ``reports/mip/README.md`` section 10.17). The search itself
is :func:`kvopt.mip.search.improve.list_search`.

Examples
--------
>>> from kvopt import Instance
>>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
>>> dec = _IncrementalSGS(inst, np.array([0, 1, 2]), slots=12)
>>> dec.value, dec.evaluate(np.array([2, 0, 1]), 0)     # re-decoded from position 0
(9.0, 10.0)
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance, horizon_field
from kvopt.core.limits import check_allocation
from kvopt.mip.search.starts import sgs_earliest_fit

#: The list search's tables cover this many times the makespan of its starting schedule (plus
#: the longest output); a list whose decode would run past them is rejected (TEL ``inf``).
#: Sized by the serial horizon instead, the tables of 1000 Azure requests in 0.05 s slots
#: took 8 GB and the list search was skipped (``reports/mip/README.md`` section 10.17).
SPAN_FACTOR = 1.5


def _serial_slots(instance: Instance) -> int:
    """Row length where every decode fits: ``T + sum o + max o + 2``."""
    o = instance.output
    return instance.horizon + int(o.sum()) + int(o.max()) + 2


def list_table_slots(instance: Instance, starts: NDArray[np.int64]) -> int:
    """Slots per row of the list search's tables, from a starting schedule's ``starts``:
    :data:`SPAN_FACTOR` times its makespan plus the longest output, at most the serial bound
    (``T + sum o + max o + 2``).

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    >>> list_table_slots(inst, np.array([0, 0, 3]))     # makespan 5: 7 + 3 + 2
    12
    """
    span = instance.makespan_of_starts(starts)
    return min(_serial_slots(instance), int(SPAN_FACTOR * span) + int(instance.output.max()) + 2)


#: The list search keeps the free-memory profile after every :data:`CHECKPOINT`-th list
#: prefix (and re-decodes up to ``CHECKPOINT - 1`` entries before the first changed one) when
#: its rows are longer than :data:`SHORT_ROWS` slots, else after every prefix. Measured with
#: 300 / 150 decodes from the same start: the same schedules, 1.8x / 3.6x faster on 1000 /
#: 2000 Azure requests (rows of 31,123 / 67,998 slots); on the paper-scale instances (rows of
#: ~1000 slots, where copying a row is cheaper than a fit) every 8th was 7-12 % slower.
CHECKPOINT = 8
SHORT_ROWS = 8192


def checkpoint_every(slots: int) -> int:
    """List prefixes between two stored profiles, for rows of ``slots`` slots.

    Examples
    --------
    >>> checkpoint_every(1000), checkpoint_every(68000)
    (1, 8)
    """
    return 1 if slots <= SHORT_ROWS else CHECKPOINT


def list_table_bytes(instance: Instance, starts: NDArray[np.int64]) -> int:
    """Bytes of the list search's tables from a starting schedule's ``starts``: two buffers of
    ``n // checkpoint_every(H) + 1`` rows and two more rows of ``H =``
    :func:`list_table_slots` int64 each.

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    >>> list_table_bytes(inst, np.array([0, 0, 3]))     # 8 * (2 * 4 + 2) * 12
    960
    """
    H = list_table_slots(instance, starts)
    return 8 * (2 * (instance.n // checkpoint_every(H) + 1) + 2) * H


class _TableOverflow(Exception):
    """A decode would run past the end of the list search's tables."""


class _IncrementalSGS:
    """:func:`sgs_decode` that re-decodes a list only from near the first changed position.

    Two buffers (current and candidate) keep the free-memory profile and the busy end after
    every ``c``-th list prefix (:func:`checkpoint_every`); a candidate list that shares its
    first ``p`` entries with the current one is decoded from the last stored prefix at or
    before ``p`` (the entries from there to ``p`` decode as before: same list, same releases)
    in one working row, and :meth:`accept` swaps the buffers (copying the shared rows).
    Keeping every prefix of long rows cost a row copy per request decoded and ``n + 1`` rows
    per buffer.
    The starts are identical to :func:`sgs_decode` of the same list. The rows hold ``slots``
    slots (default the serial bound, where every decode fits); a list whose decode could run
    past them evaluates to ``inf`` (rejected by the search), and if the first list does, the
    rows are sized by the serial bound after all.
    """

    def __init__(self, instance: Instance, order: NDArray[np.int64],
                 slots: int | None = None) -> None:
        a, s, o = instance.arrival, instance.prompt, instance.output
        self.n = instance.n
        self.arrival = a.astype(np.int64)
        #: releases are capped here (a start there is always possible: all placed before)
        self.release_cap = instance.horizon
        self.release = self.arrival.copy()
        self.o = [int(x) for x in o]
        self.s = [int(x) for x in s]
        self.need = [int(s[i]) + np.arange(1, int(o[i]) + 1, dtype=np.int64)
                     for i in range(self.n)]
        self.base = float((o - a).sum())
        full = _serial_slots(instance)
        self.order = np.asarray(order, dtype=np.int64).copy()
        M = int(instance.memory)
        for H in dict.fromkeys((min(full, slots or full), full)):  # the serial bound fits all
            self.every = checkpoint_every(H)
            rows = self.n // self.every + 1      # row j: the profile after every * j entries
            check_allocation(8 * ((2 * rows + 2) * H + int(o.sum())),
                             f"the list search's free-memory tables ({2 * rows + 1:,} x {H:,} "
                             "slots)", horizon_field(instance))
            self.slot = np.arange(H, dtype=np.int64)
            self.free = [np.full((rows, H), M, dtype=np.int64) for _ in range(2)]
            self.work = np.empty(H, dtype=np.int64)
            self.busy = [np.zeros(rows, dtype=np.int64) for _ in range(2)]
            self.starts = [np.zeros(self.n, dtype=np.int64) for _ in range(2)]
            self.cur = 0  # buffer 0 holds the empty prefix only; the first decode goes to 1
            try:
                self._decode(1, self.order, 0, self.release)
            except _TableOverflow:
                continue
            break
        self.cur = 1
        self.value = self.base + float(self.starts[1].sum())

    def _decode(self, b: int, order: NDArray[np.int64], p: int,
                release: NDArray[np.int64]) -> None:
        free, busy, starts, every = self.free[b], self.busy[b], self.starts[b], self.every
        j = p // every
        c = self.cur
        free[j] = self.free[c][j]
        busy[j] = self.busy[c][j]
        starts[:] = self.starts[c]
        f = self.work
        f[:] = free[j]
        be = int(busy[j])
        end = self.slot.size
        for q in range(j * every, self.n):
            i = int(order[q])
            oi = self.o[i]
            if max(int(release[i]), be) + oi + 1 > end:   # the fit could lie past the rows
                raise _TableOverflow
            k = sgs_earliest_fit(f, self.slot, int(release[i]), be, self.s[i], oi)
            starts[i] = k
            f[k + 1: k + oi + 1] -= self.need[i]
            be = max(be, k + oi)
            if (q + 1) % every == 0:
                free[(q + 1) // every] = f
                busy[(q + 1) // every] = be

    def evaluate(self, order: NDArray[np.int64], p: int,
                 release: NDArray[np.int64] | None = None) -> float:
        """TEL of the decode of ``order`` with ``release`` (default: the current releases);
        list and releases equal the current ones before position ``p``."""
        rel = self.release if release is None else release
        try:
            self._decode(1 - self.cur, order, p, rel)
        except _TableOverflow:                # never accepted: the current list stays
            return math.inf
        self._cand, self._cand_release, self._p = order, rel, p
        return self.base + float(self.starts[1 - self.cur].sum())

    def accept(self, value: float) -> None:
        """Make the last evaluated list the current one."""
        old, j = self.cur, self._p // self.every
        self.cur = 1 - old
        self.free[self.cur][:j] = self.free[old][:j]  # the shared checkpoint rows
        self.busy[self.cur][:j] = self.busy[old][:j]
        self.order, self.release = self._cand, self._cand_release
        self.value = value

    @property
    def current_starts(self) -> NDArray[np.int64]:
        return self.starts[self.cur].copy()
