"""Time-indexed formulations of the hindsight-optimal IP of seed 001 (Sec. 3), as MILPData.

Variables ``y[g, k]`` count the requests of group ``g`` starting at slot ``k``; groups are
single requests (``aggregate=False``) or classes of identical ``(a, s, o)`` requests
(``aggregate=True``: integer counts replace interchangeable binaries, removing symmetry).

Rows (timing convention of notes §1: a start at ``k`` holds ``s + tau - k`` at
``tau = k+1 .. k+o`` and completes at ``k + o``):

- assignment ``sum_k y[g, k] = |g|``;
- memory ``sum_{g,k} (s_g + tau - k) y[g, k] <= M`` for every slot ``tau`` of the horizon;
- optional *DFF cuts* (this package): for ``q = 1, 2, ...`` the Chvatal-Gomory rounding
  ``sum floor((q+1) w / (M+1)) y <= q`` of every memory row with item sizes ``w``. For ``q=1``
  it says that at most one running request may hold more than ``M/2`` tokens at ``tau`` (a
  clique cut the knapsack row misses in the LP); ``q=2``: at most two above ``M/3``.

Objective: ``sum (k + o_g - a_g) y[g, k]`` = total end-to-end latency.

Formulations (see :data:`FORMULATIONS`):

``naive``
    The paper's IP with its horizon ``T = sum (a_i + o_i)`` and the horizon fix of notes §2
    (starts restricted to ``[a_i, T - o_i]``); one binary per request and slot. The in-run
    reference.
``tight``
    Exact horizon ``T = max a + sum o`` (notes §2 (a)); per-request start windows
    ``k_i <= a_i + UB - LB(I minus i) - o_i`` from an incumbent TEL ``UB`` (MC-SF by default)
    and the leave-one-out fluid bound; aggregation of identical requests; memory rows only
    where some request can be running.
``tight+cuts``
    ``tight`` plus DFF cuts ``q = 1, 2`` and disjunctive clique rows: for a set ``B`` of
    pairwise conflicting requests (:func:`conflict_cliques`), at most one runs at any slot,
    ``sum_{i in B} sum_{k = tau-o_i}^{tau-1} y[i, k] <= 1``.
``tight+cores``
    ``tight+cuts`` plus the level-1 and level-2 core rows
    (:func:`~kvopt.mip.bounds.combinatorial.core_lengths`):
    ``sum y[i, k] <= q`` over the starts whose core contains slot ``t``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from kvopt.core.arrays import ragged_arange, unique_offsets
from kvopt.core.instance import Instance
from kvopt.mip.bounds.combinatorial import core_lengths, leave_one_out_bounds
from kvopt.mip.model.data import MILPData

#: Names of the MILP formulations built by :func:`build_milp`.
FORMULATIONS = ("naive", "tight", "tight+cuts", "tight+cores")


def group_requests(instance: Instance, aggregate: bool) -> list[NDArray[np.int64]]:
    """Groups of identical ``(arrival, prompt, output)`` requests (or singletons).

    Examples
    --------
    >>> inst = Instance(memory=9, arrival=[0, 0, 0], prompt=[1, 2, 1], output=[3, 3, 3])
    >>> [g.tolist() for g in group_requests(inst, True)]
    [[0, 2], [1]]
    """
    n = instance.n
    if not aggregate:
        return [np.array([i], dtype=np.int64) for i in range(n)]
    key = np.stack([instance.arrival, instance.prompt, instance.output], axis=1)
    _, first, inv = np.unique(key, axis=0, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    # members of each group in index order, the groups in order of their first request
    # (vectorized: one pass per group was O(n x groups), 0.5 s on the whole Azure trace)
    members = np.split(np.argsort(inv, kind="stable").astype(np.int64),
                       np.cumsum(np.bincount(inv, minlength=first.size))[:-1])
    return [members[u] for u in np.argsort(first, kind="stable").tolist()]


def request_groups(groups: list[NDArray[np.int64]]) -> NDArray[np.int64]:
    """The group of every request: the inverse of :func:`group_requests`' partition.

    Examples
    --------
    >>> inst = Instance(memory=9, arrival=[0, 0, 0], prompt=[1, 2, 1], output=[3, 3, 3])
    >>> request_groups(group_requests(inst, True)).tolist()
    [0, 1, 0]
    """
    out = np.empty(sum(g.size for g in groups), dtype=np.int64)
    for g, members in enumerate(groups):
        out[members] = g
    return out


def start_windows(
    instance: Instance,
    *,
    horizon: int,
    upper: float | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Per-request start windows ``[lo_i, hi_i]`` that keep every optimal schedule.

    ``hi_i = min(T - o_i, a_i + UB - LB(I minus i) - o_i)`` where ``UB`` is a feasible TEL
    and ``LB(I minus i)`` a lower bound on the other requests' TEL (an optimal schedule has
    ``c_i - a_i = OPT - sum_{j != i} (c_j - a_j) <= UB - LB(I minus i)``).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> start_windows(inst, horizon=12, upper=12)
    (array([0, 0]), array([0, 0]))
    """
    a = instance.arrival.astype(np.int64)
    o = instance.output.astype(np.int64)
    hi = horizon - o
    if upper is not None:
        loo = np.ceil(leave_one_out_bounds(instance) - 1e-9).astype(np.int64)
        hi = np.minimum(hi, a + int(np.floor(upper + 1e-9)) - loo - o)
    hi = np.maximum(hi, a)  # never empty (an incumbent exists, so its start fits)
    return a.copy(), hi


def conflict_cliques(
    instance: Instance,
    groups: list[NDArray[np.int64]] | None = None,
    *,
    max_cliques: int = 4,
) -> list[NDArray[np.int64]]:
    """Sets of groups whose requests can never run at the same time (disjunctive cliques).

    Requests ``i`` and ``j`` conflict when ``s_i + o_i + s_j + 1 > M`` and
    ``s_j + o_j + s_i + 1 > M``: if they overlapped, at the first completion (say ``c_i``)
    ``i`` holds its peak ``s_i + o_i`` and ``j`` holds at least ``s_j + 1``. A group of several
    identical requests can join only if it conflicts with itself. Cliques are grown greedily
    by decreasing peak; only cliques of size >= 2 are returned (group indices).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 1], output=[8, 8, 2])
    >>> [c.tolist() for c in conflict_cliques(inst)]
    [[0, 1]]
    """
    if groups is None:
        groups = group_requests(instance, aggregate=False)
    M = int(instance.memory)
    rep = np.array([int(g[0]) for g in groups], dtype=np.int64)
    s = instance.prompt[rep].astype(np.int64)
    peak = s + instance.output[rep].astype(np.int64)
    size = np.array([g.size for g in groups])
    conf = (peak[:, None] + s[None, :] + 1 > M) & (peak[None, :] + s[:, None] + 1 > M)
    eligible = (size == 1) | np.diag(conf)
    np.fill_diagonal(conf, False)
    free = eligible.copy()
    cliques: list[NDArray[np.int64]] = []
    order = np.argsort(-peak, kind="stable")
    while len(cliques) < max_cliques:
        members: list[int] = []
        for g in order:
            if free[g] and all(conf[g, h] for h in members):
                members.append(int(g))
        if len(members) < 2:
            break
        cliques.append(np.array(members, dtype=np.int64))
        free[members] = False
    return cliques


@dataclass(frozen=True)
class Layout:
    """The columns of a time-indexed formulation, before any row is built.

    One column per group of requests (:func:`group_requests`) and start slot of its window
    ``[lo, max hi]`` (:func:`start_windows`; ``naive``: ``[a, T - o]`` with ``T = sum (a + o)``).
    :func:`build_milp` builds the rows on it; :func:`kvopt.mip.model.sizing.milp_shape`
    counts them with the size formula beside each row family, in ``O(n)`` after the windows.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 4, 3])
    >>> lay = layout(inst, "tight", upper=20)
    >>> len(lay.groups), lay.n_cols, lay.horizon
    (2, 17, 11)
    """

    instance: Instance
    formulation: str
    horizon: int
    lo: NDArray[np.int64]
    hi: NDArray[np.int64]
    groups: list[NDArray[np.int64]]
    upper: float | None

    @cached_property
    def rep(self) -> NDArray[np.int64]:
        """A representative request of every group."""
        return np.array([int(g[0]) for g in self.groups], dtype=np.int64)

    @cached_property
    def size(self) -> NDArray[np.int64]:
        """Requests per group."""
        return np.array([g.size for g in self.groups], dtype=np.int64)

    @cached_property
    def group_hi(self) -> NDArray[np.int64]:
        """Last start slot of every group's window."""
        return np.array([int(self.hi[g].max()) for g in self.groups], dtype=np.int64)

    @cached_property
    def cols_per_group(self) -> NDArray[np.int64]:
        return self.group_hi - self.lo[self.rep] + 1

    @property
    def n_cols(self) -> int:
        return int(self.cols_per_group.sum())

    @cached_property
    def col_group(self) -> NDArray[np.int64]:
        """Group of every column."""
        return np.repeat(np.arange(len(self.groups), dtype=np.int64), self.cols_per_group)

    @cached_property
    def col_start(self) -> NDArray[np.int64]:
        """Start slot of every column."""
        return self.lo[self.rep][self.col_group] + ragged_arange(self.cols_per_group)

    def of_group(self, values: NDArray[np.int64]) -> NDArray[np.int64]:
        """A per-request array read at every group's representative."""
        return values[self.rep].astype(np.int64)

    @property
    def slots(self) -> int:
        """An upper bound on the slots where a column may hold memory (rows per slot family)."""
        go = self.of_group(self.instance.output)
        return int(min((self.group_hi + go).max() - self.lo[self.rep].min(), self.horizon + 1))


def layout(instance: Instance, formulation: str, *, upper: float | None = None) -> Layout:
    """The :class:`Layout` of ``formulation`` (windows from the incumbent TEL ``upper``).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 4, 3])
    >>> lay = layout(inst, "tight", upper=20)    # identical requests 0 and 1 share a group
    >>> [g.tolist() for g in lay.groups], lay.lo.tolist(), lay.hi.tolist()
    ([[0, 1], [2]], [0, 0, 0], [7, 7, 8])
    >>> layout(inst, "naive").n_cols, lay.n_cols  # naive: a binary per request and slot
    (25, 17)
    """
    instance.require_slotted()
    if formulation not in FORMULATIONS:
        raise ValueError(f"unknown formulation {formulation!r}; valid: {', '.join(FORMULATIONS)}")
    a = instance.arrival.astype(np.int64)
    o = instance.output.astype(np.int64)
    naive = formulation == "naive"
    if naive:
        T = int((a + o).sum())
        lo, hi = a.copy(), np.maximum(T - o, a)
    else:
        T = instance.horizon
        lo, hi = start_windows(instance, horizon=T, upper=upper)
    return Layout(instance, formulation, T, lo, hi, group_requests(instance, not naive), upper)


@dataclass
class RowBlock:
    """Rows of one family: entries ``(rows, cols, vals)`` with rows numbered from 0 in the
    block, and per row its bounds and kind.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 4, 3])
    >>> lay = layout(inst, "tight", upper=20)
    >>> blk = assignment_rows(lay)               # one row per group, one entry per column
    >>> blk.rows.tolist()
    [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    >>> blk.kinds, blk.lower.tolist(), blk.upper.tolist()
    (['assign', 'assign'], [2.0, 1.0], [2.0, 1.0])
    """

    rows: NDArray[np.int64]
    cols: NDArray[np.int64]
    vals: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    kinds: list[str]


@dataclass(frozen=True)
class _Ramps:
    """The memory entries of every column: column ``jj`` holds ``w = s + d`` at slot ``tau``
    (``d = 1 .. o``), and the memory row of every slot that some column reaches."""

    jj: NDArray[np.int64]
    tau: NDArray[np.int64]
    w: NDArray[np.int64]
    used: NDArray[np.int64]
    row_of_tau: NDArray[np.int64]


def _ramps(lay: Layout) -> _Ramps:
    go = lay.of_group(lay.instance.output)[lay.col_group]
    gs = lay.of_group(lay.instance.prompt)[lay.col_group]
    jj = np.repeat(np.arange(lay.n_cols), go)
    dd = ragged_arange(go) + 1
    tau = lay.col_start[jj] + dd
    used, _ = unique_offsets(tau)
    row_of_tau = np.full(int(tau.max()) + 1, -1, dtype=np.int64)
    row_of_tau[used] = np.arange(used.size)
    return _Ramps(jj, tau, gs[jj] + dd, used, row_of_tau)


def _block(rows: NDArray[np.int64], cols: NDArray[np.int64], vals: NDArray[Any],
           n_rows: int, upper: float, kind: str) -> RowBlock:
    """A block of ``<=`` rows with one right-hand side."""
    return RowBlock(rows, cols, np.asarray(vals, dtype=np.float64), np.full(n_rows, -np.inf),
                    np.full(n_rows, float(upper)), [kind] * n_rows)


def _on_present(rows: NDArray[np.int64]) -> tuple[NDArray[np.int64], int]:
    """``rows`` (non-negative indices) renumbered onto the rows present, and their count."""
    present, inverse = unique_offsets(rows)
    return inverse, int(present.size)


def assignment_rows(lay: Layout) -> RowBlock:
    """``sum_k y[g, k] = |g|`` for every group ``g``.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 4, 3])
    >>> lay = layout(inst, "tight", upper=20)
    >>> blk = assignment_rows(lay)               # the group of two starts twice
    >>> len(blk.kinds), blk.vals.size, blk.upper.tolist()
    (2, 17, [2.0, 1.0])
    """
    size = lay.size.astype(np.float64)
    return RowBlock(lay.col_group, np.arange(lay.n_cols), np.ones(lay.n_cols), size, size,
                    ["assign"] * len(lay.groups))


def assignment_size(lay: Layout) -> tuple[int, int]:
    """Rows and non-zeros of :func:`assignment_rows` (exact): one row per group, one entry per
    column.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 4, 3])
    >>> lay = layout(inst, "tight", upper=20)
    >>> assignment_size(lay)
    (2, 17)
    """
    return len(lay.groups), lay.n_cols


def memory_rows(lay: Layout, ramps: _Ramps) -> RowBlock:
    """``sum_{g,k} (s_g + tau - k) y[g, k] <= M`` at every slot ``tau`` some column reaches.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 4, 3])
    >>> lay = layout(inst, "tight", upper=20)
    >>> blk = memory_rows(lay, _ramps(lay))
    >>> len(blk.kinds), float(blk.upper[0])
    (11, 10.0)
    >>> blk.vals[blk.cols == 0].tolist()   # group 0 started at 0 holds 2..5 at slots 1..4
    [2.0, 3.0, 4.0, 5.0]
    """
    return _block(ramps.row_of_tau[ramps.tau], ramps.jj, ramps.w, ramps.used.size,
                  lay.instance.memory, "memory")


def memory_size(lay: Layout) -> tuple[int, int]:
    """Rows (at most one per slot) and non-zeros (exact: ``o`` per column) of
    :func:`memory_rows`.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 4, 3])
    >>> lay = layout(inst, "tight", upper=20)
    >>> memory_size(lay)                   # 8 columns x 4 + 9 columns x 3 entries
    (11, 59)
    """
    return lay.slots, int((lay.cols_per_group * lay.of_group(lay.instance.output)).sum())


def dff_rows(lay: Layout, ramps: _Ramps, q: int) -> RowBlock | None:
    """DFF cut ``q`` of every memory row: ``sum floor((q+1) w / (M+1)) y <= q`` (``None`` if no
    coefficient is positive).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 4, 3])
    >>> lay = layout(inst, "tight", upper=20)
    >>> dff_rows(lay, _ramps(lay), 1) is None     # no request ever holds more than M / 2
    True
    >>> blk = dff_rows(lay, _ramps(lay), 2)       # at most two above M / 3 (w >= 4)
    >>> len(blk.kinds), blk.vals.size, blk.kinds[0], float(blk.upper[0])
    (10, 34, 'dff2', 2.0)
    """
    coef = ((q + 1) * ramps.w) // (int(lay.instance.memory) + 1)
    keep = coef > 0
    if not keep.any():
        return None
    rows, count = _on_present(ramps.row_of_tau[ramps.tau[keep]])
    return _block(rows, ramps.jj[keep], coef[keep], count, q, f"dff{q}")


def dff_size(lay: Layout, q: int) -> tuple[int, int]:
    """Rows (at most one per slot) and non-zeros (exact: the ages ``d >= ceil((M+1)/(q+1)) - s``
    of every column) of :func:`dff_rows`.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 4, 3])
    >>> lay = layout(inst, "tight", upper=20)
    >>> dff_size(lay, 1), dff_size(lay, 2)     # dff_rows(lay, ..., 2) has 10 rows, 34 entries
    ((11, 0), (11, 34))
    """
    M = int(lay.instance.memory)
    gs, go = lay.of_group(lay.instance.prompt), lay.of_group(lay.instance.output)
    dmin = np.maximum(-(-(M + 1) // (q + 1)) - gs, 1)
    return lay.slots, int((lay.cols_per_group * np.maximum(go - dmin + 1, 0)).sum())


def core_rows(lay: Layout, q: int) -> RowBlock | None:
    """``sum y[g, k] <= q`` over the starts whose level-``q`` core
    (:func:`~kvopt.mip.bounds.combinatorial.core_lengths`) contains slot ``t``.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 4, 3])
    >>> lay = layout(inst, "tight", upper=20)
    >>> core_rows(lay, 1) is None                 # level-1 cores are empty here
    True
    >>> blk = core_rows(lay, 2)                   # level-2 cores of length 3 per start
    >>> len(blk.kinds), blk.vals.size, blk.kinds[0], float(blk.upper[0])
    (11, 51, 'core2', 2.0)
    """
    L, _ = core_lengths(lay.instance, q)
    gL = L[lay.rep][lay.col_group]
    keep = np.flatnonzero(gL > 0)
    if keep.size == 0:
        return None
    lens = gL[keep]
    jc = np.repeat(keep, lens)
    off = ragged_arange(lens)
    tc = lay.col_start[jc] - lay.of_group(lay.instance.prompt)[lay.col_group[jc]] + off
    present, rows = unique_offsets(tc - int(tc.min()))
    return _block(rows, jc, np.ones(jc.size), present.size, q, f"core{q}")


def core_size(lay: Layout, q: int) -> tuple[int, int]:
    """Rows (at most one per slot from ``-max s``) and non-zeros (exact: ``L`` per column) of
    :func:`core_rows`.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 4, 3])
    >>> lay = layout(inst, "tight", upper=20)
    >>> core_size(lay, 1), core_size(lay, 2)    # core_rows(lay, 2) has 11 rows, 51 entries
    ((14, 0), (14, 51))
    """
    L, _ = core_lengths(lay.instance, q)
    return (lay.slots + int(lay.instance.prompt.max()) + 1,
            int((lay.cols_per_group * np.maximum(L[lay.rep], 0)).sum()))


def clique_rows(lay: Layout, ramps: _Ramps) -> list[RowBlock]:
    """Per disjunctive clique ``B`` (:func:`conflict_cliques`), at most one member runs at any
    slot: ``sum_{i in B} sum_{k = tau - o_i}^{tau - 1} y[i, k] <= 1``.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 2, 1], output=[8, 7, 2])
    >>> lay = layout(inst, "tight+cuts", upper=40)   # requests 0 and 1 never overlap
    >>> [(len(b.kinds), b.vals.size, b.kinds[0]) for b in clique_rows(lay, _ramps(lay))]
    [(17, 157, 'clique0')]
    """
    out = []
    for n, members in enumerate(conflict_cliques(lay.instance, lay.groups)):
        inside = np.isin(lay.col_group[ramps.jj], members)
        rows, count = _on_present(ramps.row_of_tau[ramps.tau[inside]])
        out.append(_block(rows, ramps.jj[inside], np.ones(rows.size), count, 1, f"clique{n}"))
    return out


def clique_size(lay: Layout) -> tuple[int, int]:
    """Rows (at most one per slot and clique, at most 4 cliques) and non-zeros (the cliques
    are disjoint: at most one per memory entry) of :func:`clique_rows`.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 2, 1], output=[8, 7, 2])
    >>> clique_size(layout(inst, "tight+cuts", upper=40))  # built: 17 rows, 157 entries
    (68, 189)
    """
    return 4 * lay.slots, memory_size(lay)[1]


def _stack(blocks: list[RowBlock], n_cols: int) -> tuple[sp.csr_matrix, NDArray[np.float64],
                                                          NDArray[np.float64], list[str]]:
    """The blocks one under the other: matrix, row bounds, row kinds."""
    offs = np.cumsum([0] + [len(b.kinds) for b in blocks])
    A = sp.csr_matrix((np.concatenate([b.vals for b in blocks]),
                       (np.concatenate([b.rows + o for b, o in zip(blocks, offs, strict=False)]),
                        np.concatenate([b.cols for b in blocks]))),
                      shape=(int(offs[-1]), n_cols))
    A.sum_duplicates()
    return (A, np.concatenate([b.lower for b in blocks]),
            np.concatenate([b.upper for b in blocks]), [k for b in blocks for k in b.kinds])


def build_milp(
    instance: Instance,
    formulation: str = "tight+cuts",
    *,
    upper: float | None = None,
    warm_starts: NDArray[np.int64] | None = None,
    dff: tuple[int, ...] | None = None,
    use_cliques: bool | None = None,
    cores: tuple[int, ...] | None = None,
) -> MILPData:
    """Build the time-indexed MILP of ``instance`` in canonical form.

    Parameters
    ----------
    instance
        A slotted instance (``time_unit="step"``).
    formulation
        One of :data:`FORMULATIONS`.
    upper
        Feasible TEL used by the start windows of ``tight``; default: the TEL of
        ``warm_starts``.
    warm_starts
        Start slots of a feasible schedule (e.g. MC-SF); stored as ``x0``.
    dff
        Override the DFF cut levels (``()`` for none).
    use_cliques
        Override the disjunctive clique rows (see :func:`conflict_cliques`).
    cores
        Override the core levels (default ``(1, 2)`` for ``tight+cores``, else none).

    Returns
    -------
    MILPData

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> d = build_milp(inst, "naive")
    >>> d.n_cols, int(d.meta["horizon"])
    (14, 12)
    """
    if warm_starts is not None and upper is None:
        upper = instance.tel_of_starts(warm_starts)
    lay = layout(instance, formulation, upper=upper)
    cut = formulation in ("tight+cuts", "tight+cores")
    levels = ((1, 2) if cut else ()) if dff is None else tuple(dff)
    core_levels = ((1, 2) if formulation == "tight+cores" else ()) if cores is None \
        else tuple(cores)
    ramps = _ramps(lay)
    blocks = [assignment_rows(lay), memory_rows(lay, ramps)]
    blocks += [b for q in levels if (b := dff_rows(lay, ramps, q)) is not None]
    blocks += [b for q in core_levels if (b := core_rows(lay, q)) is not None]
    cliques = clique_rows(lay, ramps) if (cut if use_cliques is None else use_cliques) else []
    A, row_lower, row_upper, kinds = _stack(blocks + cliques, lay.n_cols)
    col_group, col_start = lay.col_group, lay.col_start
    c = (col_start + lay.of_group(instance.output)[col_group]
         - lay.of_group(instance.arrival)[col_group]).astype(np.float64)
    x0 = None
    if warm_starts is not None:
        x0 = encode_starts(col_group, col_start, lay.groups, np.asarray(warm_starts, np.int64))
    meta: dict[str, Any] = {
        "formulation": formulation, "horizon": lay.horizon,
        "first_row_slot": int(ramps.tau.min()), "groups": len(lay.groups),
        "dff_levels": list(levels), "cliques": len(cliques),
        "window_mean": float((lay.hi - lay.lo + 1).mean()), "upper_used": upper,
    }
    return MILPData(
        c=c, A=A, row_lower=row_lower, row_upper=row_upper,
        col_lower=np.zeros(lay.n_cols), col_upper=lay.size[col_group].astype(np.float64),
        integrality=np.ones(lay.n_cols, dtype=np.int8), obj_offset=0.0,
        col_group=col_group, col_start=col_start, groups=lay.groups, row_kind=kinds, x0=x0,
        objective_is_integer=True, meta=meta,
    )


def family_sizes(lay: Layout) -> list[tuple[str, int, int]]:
    """``(family, rows, non-zeros)`` of every row family :func:`build_milp` builds for
    ``lay.formulation`` with its default levels (rows and non-zeros are upper bounds).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 1], prompt=[1, 2, 1], output=[4, 8, 3])
    >>> [f for f, _, _ in family_sizes(layout(inst, "tight+cores", upper=30))]
    ['assign', 'memory', 'dff1', 'dff2', 'cliques', 'core1', 'core2']
    """
    out = [("assign", *assignment_size(lay)), ("memory", *memory_size(lay))]
    if lay.formulation in ("tight+cuts", "tight+cores"):
        out += [(f"dff{q}", *dff_size(lay, q)) for q in (1, 2)]
        out.append(("cliques", *clique_size(lay)))
    if lay.formulation == "tight+cores":
        out += [(f"core{q}", *core_size(lay, q)) for q in (1, 2)]
    return out


def start_columns(
    col_group: NDArray[np.int64],
    col_start: NDArray[np.int64],
    groups: list[NDArray[np.int64]],
    starts: NDArray[np.int64],
) -> NDArray[np.int64]:
    """The column of every request's start slot: request ``i`` of group ``g`` starting at
    ``starts[i]`` is column ``j`` with ``(col_group[j], col_start[j]) == (g, starts[i])``;
    ``-1`` where that start lies outside the group's window (no such column).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 1], output=[8, 8, 2])
    >>> d = build_milp(inst, "tight", upper=30)      # requests 0 and 1 form group 0
    >>> j = start_columns(d.col_group, d.col_start, d.groups, np.array([0, 8, 30]))
    >>> [(int(d.col_group[c]), int(d.col_start[c])) for c in j[:2]], int(j[2])
    ([(0, 0), (0, 8)], -1)
    """
    if col_start.size == 0:
        return np.full(len(starts), -1, dtype=np.int64)
    width = int(col_start.max()) + 2                # keys g * width + k never collide
    key = np.asarray(col_group, dtype=np.int64) * width + col_start
    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    want = (request_groups(groups) * width
            + np.clip(np.asarray(starts, dtype=np.int64), -1, width - 1))  # outside: no key
    pos = np.minimum(np.searchsorted(sorted_key, want), key.size - 1)
    return np.where(sorted_key[pos] == want, order[pos], -1).astype(np.int64)


def encode_starts(
    col_group: NDArray[np.int64],
    col_start: NDArray[np.int64],
    groups: list[NDArray[np.int64]],
    starts: NDArray[np.int64],
) -> NDArray[np.float64] | None:
    """The column vector of a schedule's start slots (``None`` if a start is outside a window).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 1], output=[8, 8, 2])
    >>> d = build_milp(inst, "tight", upper=30)      # requests 0 and 1 form group 0
    >>> x = encode_starts(d.col_group, d.col_start, d.groups, np.array([0, 8, 0]))
    >>> [(int(d.col_group[j]), int(d.col_start[j])) for j in np.flatnonzero(x)]
    [(0, 0), (0, 8), (1, 0)]
    >>> float(d.c @ x)                               # the schedule's TEL
    26.0
    >>> encode_starts(d.col_group, d.col_start, d.groups, np.array([0, 30, 0])) is None
    True
    """
    cols = start_columns(col_group, col_start, groups, starts)
    if (cols < 0).any():
        return None
    return np.bincount(cols, minlength=col_group.size).astype(np.float64)


def decode_starts(data: MILPData, x: NDArray[np.float64], n: int) -> NDArray[np.int64]:
    """Start slot of every request from a (near-)integral solution ``x``.

    Requests of one group receive the group's starts in increasing order of index.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 1], output=[8, 8, 2])
    >>> d = build_milp(inst, "tight", upper=30)
    >>> x = encode_starts(d.col_group, d.col_start, d.groups, np.array([8, 0, 0]))
    >>> decode_starts(d, x, inst.n).tolist()      # identical requests: starts in index order
    [0, 8, 0]
    """
    assert data.col_group is not None and data.col_start is not None
    counts = np.rint(x).astype(np.int64)
    starts = np.full(n, -1, dtype=np.int64)
    for g, members in enumerate(data.groups):
        sel = np.flatnonzero((data.col_group == g) & (counts > 0))
        ks = np.repeat(data.col_start[sel], counts[sel])
        if ks.size != members.size:
            raise ValueError(f"group {g}: {ks.size} starts decoded for {members.size} requests")
        starts[np.sort(members)] = np.sort(ks)
    return starts
