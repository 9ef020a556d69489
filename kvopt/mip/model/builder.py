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

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

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
    _, inv = np.unique(key, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    first: dict[int, int] = {}
    for i in range(n):
        first.setdefault(int(inv[i]), i)
    order = sorted(first, key=first.__getitem__)
    return [np.flatnonzero(inv == u).astype(np.int64) for u in order]


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


def _dff_coeff(w: NDArray[np.int64], q: int, M: int) -> NDArray[np.int64]:
    return ((q + 1) * w) // (M + 1)


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
    instance.require_slotted()
    if formulation not in FORMULATIONS:
        raise ValueError(f"unknown formulation {formulation!r}; valid: {', '.join(FORMULATIONS)}")
    a = instance.arrival.astype(np.int64)
    s = instance.prompt.astype(np.int64)
    o = instance.output.astype(np.int64)
    M = int(instance.memory)
    naive = formulation == "naive"
    if warm_starts is not None and upper is None:
        upper = instance.tel_of_starts(warm_starts)
    if naive:
        T = int((a + o).sum())
        lo, hi = a.copy(), np.maximum(T - o, a)
    else:
        T = instance.horizon
        lo, hi = start_windows(instance, horizon=T, upper=upper)
    cut = formulation in ("tight+cuts", "tight+cores")
    levels = (() if not cut else (1, 2)) if dff is None else tuple(dff)
    cliques = cut if use_cliques is None else use_cliques
    groups = group_requests(instance, aggregate=not naive)

    cols_g, cols_k = [], []
    for g, members in enumerate(groups):
        i = int(members[0])
        ks = np.arange(lo[i], int(hi[members].max()) + 1, dtype=np.int64)
        cols_g.append(np.full(ks.size, g, dtype=np.int64))
        cols_k.append(ks)
    col_group = np.concatenate(cols_g)
    col_start = np.concatenate(cols_k)
    ncol = col_group.size
    rep = np.array([int(m[0]) for m in groups], dtype=np.int64)
    size = np.array([m.size for m in groups], dtype=np.int64)
    gs, go, ga = s[rep][col_group], o[rep][col_group], a[rep][col_group]

    c = (col_start + go - ga).astype(np.float64)
    # memory entries: column j contributes gs + d at tau = k + d, d = 1..o
    nnz_per = go
    jj = np.repeat(np.arange(ncol), nnz_per)
    offs = np.arange(jj.size) - np.repeat(np.cumsum(nnz_per) - nnz_per, nnz_per)
    dd = offs + 1
    tau = col_start[jj] + dd
    w = gs[jj] + dd
    tau0 = int(tau.min())
    used = np.unique(tau)
    row_of_tau = np.full(int(tau.max()) + 1, -1, dtype=np.int64)
    row_of_tau[used] = np.arange(used.size)
    n_assign = len(groups)
    blocks_r = [col_group, n_assign + row_of_tau[tau]]
    blocks_c = [np.arange(ncol), jj]
    blocks_v = [np.ones(ncol), w.astype(np.float64)]
    rl = [size.astype(np.float64), np.full(used.size, -np.inf)]
    ru = [size.astype(np.float64), np.full(used.size, float(M))]
    kinds = ["assign"] * n_assign + ["memory"] * used.size
    nrow = n_assign + used.size
    for q in levels:
        coef = _dff_coeff(w, q, M)
        keep = coef > 0
        if not keep.any():
            continue
        rows_q = row_of_tau[tau[keep]]
        present = np.unique(rows_q)
        remap = np.full(used.size, -1, dtype=np.int64)
        remap[present] = np.arange(present.size)
        blocks_r.append(nrow + remap[rows_q])
        blocks_c.append(jj[keep])
        blocks_v.append(coef[keep].astype(np.float64))
        rl.append(np.full(present.size, -np.inf))
        ru.append(np.full(present.size, float(q)))
        kinds += [f"dff{q}"] * present.size
        nrow += present.size
    core_levels = (() if formulation != "tight+cores" else (1, 2)) if cores is None \
        else tuple(cores)
    for q in core_levels:
        L, _ = core_lengths(instance, q)
        gL = L[rep][col_group]
        keep_c = np.flatnonzero(gL > 0)
        if keep_c.size == 0:
            continue
        lens = gL[keep_c]
        jc = np.repeat(keep_c, lens)
        offc = np.arange(jc.size) - np.repeat(np.cumsum(lens) - lens, lens)
        tc = col_start[jc] - s[rep][col_group[jc]] + offc
        tmin = int(tc.min())
        present, rows_c = np.unique(tc - tmin, return_inverse=True)
        blocks_r.append(nrow + rows_c.reshape(-1))
        blocks_c.append(jc)
        blocks_v.append(np.ones(jc.size))
        rl.append(np.full(present.size, -np.inf))
        ru.append(np.full(present.size, float(q)))
        kinds += [f"core{q}"] * present.size
        nrow += present.size
    n_cliques = 0
    if cliques:
        for members in conflict_cliques(instance, groups):
            in_clique = np.isin(col_group[jj], members)
            rows_c = row_of_tau[tau[in_clique]]
            present = np.unique(rows_c)
            remap = np.full(used.size, -1, dtype=np.int64)
            remap[present] = np.arange(present.size)
            blocks_r.append(nrow + remap[rows_c])
            blocks_c.append(jj[in_clique])
            blocks_v.append(np.ones(rows_c.size))
            rl.append(np.full(present.size, -np.inf))
            ru.append(np.ones(present.size))
            kinds += [f"clique{n_cliques}"] * present.size
            nrow += present.size
            n_cliques += 1
    A = sp.csr_matrix((np.concatenate(blocks_v), (np.concatenate(blocks_r),
                                                  np.concatenate(blocks_c))),
                      shape=(nrow, ncol))
    A.sum_duplicates()
    col_upper = size[col_group].astype(np.float64)
    x0 = None
    if warm_starts is not None:
        x0 = encode_starts(col_group, col_start, groups, np.asarray(warm_starts, np.int64))
    meta: dict[str, Any] = {
        "formulation": formulation, "horizon": T, "first_row_slot": tau0,
        "groups": len(groups), "dff_levels": list(levels), "cliques": n_cliques,
        "window_mean": float((hi - lo + 1).mean()), "upper_used": upper,
    }
    return MILPData(
        c=c, A=A, row_lower=np.concatenate(rl), row_upper=np.concatenate(ru),
        col_lower=np.zeros(ncol), col_upper=col_upper,
        integrality=np.ones(ncol, dtype=np.int8), obj_offset=0.0,
        col_group=col_group, col_start=col_start, groups=groups, row_kind=kinds, x0=x0,
        objective_is_integer=True, meta=meta,
    )


def encode_starts(
    col_group: NDArray[np.int64],
    col_start: NDArray[np.int64],
    groups: list[NDArray[np.int64]],
    starts: NDArray[np.int64],
) -> NDArray[np.float64] | None:
    """The column vector of a schedule's start slots (``None`` if a start is outside a window)."""
    x = np.zeros(col_group.size)
    index = {(int(g), int(k)): j for j, (g, k) in enumerate(zip(col_group, col_start,
                                                                  strict=True))}
    for g, members in enumerate(groups):
        for i in members:
            j = index.get((g, int(starts[i])))
            if j is None:
                return None
            x[j] += 1.0
    return x


def decode_starts(data: MILPData, x: NDArray[np.float64], n: int) -> NDArray[np.int64]:
    """Start slot of every request from a (near-)integral solution ``x``.

    Requests of one group receive the group's starts in increasing order of index.
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
