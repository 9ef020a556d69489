"""Lag-interval rows: single-machine structure hidden in the pairwise start lags.

:func:`kvopt.mip.model.cpmodel.pair_lags` proves that in every feasible schedule, for every pair
``i != j``, ``k_j >= k_i + lag[i, j]`` or ``k_i >= k_j + lag[j, i]``. The time-indexed LP
satisfies such disjunctions cheaply with fractional starts, and the level-1 cores
(:func:`kvopt.mip.bounds.combinatorial.core_lengths`) turn only a uniform weakening of them into LP
rows.
This module turns them, set by set, into the rows of a *single machine*:

**Lag intervals.** Let ``S`` be a set of requests and ``alpha_i < beta_i`` integers with
``beta_i - alpha_j <= lag[i, j]`` for all ``i != j`` in ``S``. Give request ``i`` started
at ``k_i`` the interval ``I_i = [k_i + alpha_i, k_i + beta_i)``. In every feasible schedule
the intervals of ``S`` are pairwise disjoint, so every slot ``t`` lies in at most one::

    sum_{i in S} sum_{k : k + alpha_i <= t < k + beta_i} x[i, k] <= 1      (every t)

Proof: if ``t`` lies in ``I_i`` and ``I_j``, the lag disjunction gives either
``k_j >= k_i + lag[i, j] >= k_i + beta_i - alpha_j``, i.e. ``k_j + alpha_j >= k_i + beta_i
> t``, or symmetrically ``k_i + alpha_i >= k_j + beta_j > t``; both contradict
``t in I_i cap I_j``. Identical requests aggregated into one group (:func:`~kvopt.mip.model.builder.
group_requests`) share one interval and join ``S`` together, which needs the same condition
for the pair of two copies: ``beta_i - alpha_i <= lag[i, i']``.

**Level q.** With the level-``q`` lags ``lag_q[i, j] = o_i - max(floor((M - s_i - o_i) / q)
- s_j, 0)`` (``lag_1`` = the pairwise lags) in the same conditions, no slot lies in more than
``q`` intervals of ``S`` (rows ``<= q``). Proof: let ``t`` lie in the intervals of a set
``Q`` of ``q + 1`` requests and ``i`` be the first of ``Q`` to complete. For ``j`` in
``Q - {i}``, ``k_j <= t - alpha_j < k_i + beta_i - alpha_j <= k_i + lag_q[i, j] <= c_i``
and ``c_j >= c_i``, so ``j`` runs at ``c_i`` and holds ``s_j + c_i - k_j >= s_j + o_i -
lag_q[i, j] + 1 >= floor(D / q) + 1 > D / q`` tokens, ``D = M - s_i - o_i``. With ``i`` at
its peak the memory at ``c_i`` exceeds ``s_i + o_i + D = M``. The level-``q`` cores of
:func:`~kvopt.mip.bounds.combinatorial.core_lengths` are the case ``alpha_j = -s_j`` with one tail.

**Choosing the intervals.** For a fixed ``S`` the conditions are difference constraints;
they have a solution with ``beta_i >= alpha_i`` iff the digraph with arc weights ``lag[i, j]``
on ``S`` has no negative cycle, and the interval lengths ``L_i = beta_i - alpha_i`` are then
bounded (``L_i + L_j <= lag[i, j] + lag[j, i]``). :func:`interval_families` grows ``S``
greedily (largest peak first, only pairs with ``lag[i, j] + lag[j, i] >= 1``) and then
maximises ``sum w_i L_i`` by a small LP (totally unimodular: integral vertices, re-checked
exactly in integers before use). The level-1 cores are the special case ``alpha_i = -s_i``
with a uniform tail; the LP allocation is what makes the rows strong (measured in
``reports/mip/intervals_small.txt``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from kvopt.core.arrays import ragged_arange, unique_offsets
from kvopt.core.instance import Instance
from kvopt.core.limits import Deadline, as_deadline
from kvopt.mip.bounds.columns import FIT, ColumnLP
from kvopt.mip.bounds.lagrangian import lagrangian_value, relaxed_rows, subgradient
from kvopt.mip.model.data import MILPData

#: First step share of the subgradient ascent that starts from an LP round's multipliers
#: when neither LP was solved (:func:`kvopt.mip.bounds.lagrangian.subgradient`): on
#: ``model2-seed13`` (n = 89), from the first round's multipliers (18845), 4 s of ascent gave
#: 19474 with 0.1 and 19355 with the default 2.0 (scratch runs).
SUBGRADIENT_SCALE = 0.1
#: The first round of column generation takes at least this many times the model's build:
#: over the 14 paper-scale instances whose build took at least 0.3 s, the first round of the
#: ``tight+cores`` LP took 0.58-2.54 times the build (10th percentile 0.99, median 1.23;
#: ``reports/mip/column_lp_grid8_model{1,2}.json``). When even that is more than
#: :data:`kvopt.mip.bounds.columns.FIT` of the time left, no LP is started and the time left
#: goes to the block-LP Lagrangian bound (:func:`kvopt.mip.bounds.blocks.block_lagrangian_bound`).
#: With 1.0 (the 10th percentile) the block bound replaced first rounds that would have fitted
#: (``model2-seed13`` at ``--time-limit 5.5``: 17269 twice where the LP's round gave 18840;
#: the build in the bound's child took 0.9-3.1 s from call to call), so the rule takes the
#: minimum.
FIRST_ROUND_PER_BUILD = 0.6


@dataclass(frozen=True)
class IntervalFamily:
    """A set of requests and their lag intervals ``[k + alpha, k + beta)`` (request indices),
    at most ``level`` of which contain any slot.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[8, 6, 7])
    >>> fam = interval_families(inst, n_families=1)[0]
    >>> fam.members.tolist(), fam.alpha.tolist(), fam.beta.tolist(), fam.level
    ([0, 2, 1], [0, -1, 0], [7, 7, 4], 1)
    >>> check_family(inst, fam)         # request 0 started at k holds [k, k + 7), and so on
    True
    """

    members: NDArray[np.int64]
    alpha: NDArray[np.int64]
    beta: NDArray[np.int64]
    level: int = 1


def _lags(instance: Instance, q: int = 1) -> NDArray[np.int64]:
    """Level-``q`` lags ``o_i - max(floor((M - s_i - o_i) / q) - s_j, 0)`` (``q = 1``: those
    of :func:`kvopt.mip.model.cpmodel.pair_lags`); diagonal = the lag between two copies of
    ``i``."""
    s = instance.prompt.astype(np.int64)
    o = instance.output.astype(np.int64)
    room = int(instance.memory) - s - o
    return o[:, None] - np.maximum(room[:, None] // int(q) - s[None, :], 0)


def _no_negative_cycle(w: NDArray[np.float64]) -> bool:
    """Floyd-Warshall: ``True`` iff the complete digraph with arc weights ``w`` (diagonal =
    self-loop weight, ``+inf`` for none) has no negative cycle."""
    d = w.astype(np.float64).copy()
    for k in range(d.shape[0]):
        d = np.minimum(d, d[:, k, None] + d[None, k, :])
        if (np.diag(d) < 0).any():
            return False
    return True


def _allocate(lag: NDArray[np.float64], weights: NDArray[np.float64]
              ) -> tuple[NDArray[np.int64], NDArray[np.int64]] | None:
    """Integers ``alpha, beta`` maximising ``sum w (beta - alpha)`` subject to
    ``beta_i - alpha_j <= lag[i, j]`` (``i != j``; diagonal: ``beta_i - alpha_i <= lag[i, i]``
    where finite) and ``beta >= alpha``; ``None`` if the LP fails or its rounded vertex
    violates a constraint."""
    from scipy.optimize import linprog

    m = lag.shape[0]
    ii, jj = np.nonzero(np.isfinite(lag))
    # rows [0, K): beta_i - alpha_j <= lag[i, j]; rows [K, K + m): alpha - beta <= 0
    # (one coo -> csr build; stacking the two blocks cost more than the tiny LPs themselves)
    K = ii.size
    rows = np.arange(K)
    diag = np.arange(m)
    A = sp.csr_matrix((np.concatenate([np.ones(K), -np.ones(K), -np.ones(m), np.ones(m)]),
                       (np.concatenate([rows, rows, K + diag, K + diag]),
                        np.concatenate([ii, m + jj, diag, m + diag]))),
                      shape=(K + m, 2 * m))
    b = np.concatenate([lag[ii, jj].astype(np.float64), np.zeros(m)])
    c = np.concatenate([-weights, weights])
    bounds: list[tuple[float | None, float | None]] = [(None, None)] * (2 * m)
    bounds[m] = (0.0, 0.0)                                   # translation: alpha_0 = 0
    res = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs")
    if res.status != 0 or res.x is None:
        return None
    x = np.rint(res.x).astype(np.int64)
    beta, alpha = x[:m], x[m:]
    if (beta[ii] - alpha[jj] > lag[ii, jj]).any() or (beta < alpha).any():
        return None
    return alpha, beta


def interval_families(instance: Instance, groups: list[NDArray[np.int64]] | None = None, *,
                      n_families: int = 3, levels: tuple[int, ...] = (1,)
                      ) -> list[IntervalFamily]:
    """Lag-interval families of ``instance`` (see the module docstring for the proof).

    Family 0 grows ``S`` greedily by decreasing peak and maximises the total interval length;
    further families re-use ``S`` with weights favouring short, then long requests.
    Requests whose interval is empty are dropped from a family.

    Parameters
    ----------
    instance
        A slotted instance.
    groups
        Groups of identical requests (:func:`~kvopt.mip.model.builder.group_requests`) that must
        join or leave a family together with one interval; default: singletons.
    n_families
        How many families per level (1 to 3).
    levels
        Levels ``q`` (module docstring): ``q = 1`` uses the pairwise lags, ``q >= 2`` the
        level-``q`` lags.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[8, 6, 7])
    >>> fam = interval_families(inst, n_families=1)[0]
    >>> fam.members.tolist(), (fam.beta - fam.alpha).tolist()
    ([0, 2, 1], [7, 8, 4])
    """
    if groups is None:
        groups = [np.array([i], dtype=np.int64) for i in range(instance.n)]
    out: list[IntervalFamily] = []
    for q in levels:
        out += _families_of_level(instance, groups, int(q), n_families)
    return out


def _families_of_level(instance: Instance, groups: list[NDArray[np.int64]], q: int,
                       n_families: int) -> list[IntervalFamily]:
    lag_all = _lags(instance, q)
    reps = np.array([int(g[0]) for g in groups], dtype=np.int64)
    multi = np.array([g.size > 1 for g in groups])
    peak = (instance.prompt + instance.output)[reps]
    order = np.argsort(-peak, kind="stable")
    chosen: list[int] = []                                  # group indices
    for g in order:
        r = reps[g]
        if multi[g] and lag_all[r, r] < 1:
            continue
        if any(lag_all[r, reps[h]] + lag_all[reps[h], r] < 1 for h in chosen):
            continue
        trial = [*chosen, int(g)]
        if _no_negative_cycle(_group_lag(lag_all, reps, multi, trial)):
            chosen = trial
    if len(chosen) < 2 and not any(multi[g] for g in chosen):
        return []
    lag = _group_lag(lag_all, reps, multi, chosen)
    o = instance.output[reps[chosen]].astype(np.float64)
    weight_sets = [np.ones(len(chosen)), 1.0 / o, o / o.max()][: max(1, int(n_families))]
    out: list[IntervalFamily] = []
    for w in weight_sets:
        alloc = _allocate(lag, w)
        if alloc is None:
            continue
        alpha, beta = alloc
        keep = beta > alpha
        mem, al, be = [], [], []
        for idx in np.flatnonzero(keep):
            for i in groups[chosen[idx]]:
                mem.append(int(i))
                al.append(int(alpha[idx]))
                be.append(int(beta[idx]))
        if mem:
            out.append(IntervalFamily(np.array(mem, dtype=np.int64),
                                      np.array(al, dtype=np.int64),
                                      np.array(be, dtype=np.int64), level=q))
    return out


def _group_lag(lag_all: NDArray[np.int64], reps: NDArray[np.int64], multi: NDArray[np.bool_],
               chosen: list[int]) -> NDArray[np.float64]:
    r = reps[chosen]
    lag = lag_all[np.ix_(r, r)].astype(np.float64)
    diag = np.where(multi[chosen], lag_all[r, r].astype(np.float64), np.inf)
    np.fill_diagonal(lag, diag)
    return lag


def check_family(instance: Instance, fam: IntervalFamily) -> bool:
    """``True`` iff ``fam`` satisfies its defining conditions (exact integer check).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[0, 0], output=[8, 8])
    >>> check_family(inst, IntervalFamily(np.array([0, 1]), np.array([0, 0]), np.array([6, 6])))
    True
    >>> check_family(inst, IntervalFamily(np.array([0, 1]), np.array([0, 0]), np.array([7, 6])))
    False
    """
    lag = _lags(instance, fam.level)
    m = fam.members
    viol = (fam.beta[:, None] - fam.alpha[None, :]) > lag[np.ix_(m, m)]
    same = m[:, None] == m[None, :]
    return bool(not (viol & ~same).any() and (fam.beta > fam.alpha).all())


def add_interval_rows(data: MILPData, families: list[IntervalFamily]) -> MILPData:
    """``data`` (a time-indexed model of :mod:`kvopt.mip.model.builder`) plus one row per family and
    slot: ``sum x[i, k] <= 1`` over the starts whose lag interval contains the slot.

    Columns of an aggregated group count every member, so a group enters a family whole
    (as :func:`interval_families` builds them).

    Examples
    --------
    >>> from kvopt.mip.model.builder import build_milp
    >>> inst = Instance(memory=11, arrival=[0] * 5, prompt=[4, 5, 4, 1, 5],
    ...                 output=[4, 3, 4, 7, 3])
    >>> base = build_milp(inst, "tight+cores", upper=60)
    >>> d = add_interval_rows(base, interval_families(inst, base.groups, n_families=1))
    >>> base.n_rows, d.n_rows, d.row_kind.count("interval0"), d.n_cols == base.n_cols
    (129, 150, 21, True)
    """
    import dataclasses

    from kvopt.mip.model.builder import request_groups

    assert data.col_group is not None and data.col_start is not None
    req_group = request_groups(data.groups)
    # the new rows' entries, starting empty (no family may add a row)
    R: list[NDArray[np.int64]] = [np.zeros(0, dtype=np.int64)]
    C: list[NDArray[np.int64]] = [np.zeros(0, dtype=np.int64)]
    V: list[NDArray[np.float64]] = [np.zeros(0)]
    rl, ru = [data.row_lower], [data.row_upper]
    nrow = 0                                    # new rows so far (they go under data.A)
    kinds = list(data.row_kind)
    for f, fam in enumerate(families):
        g_of = req_group[fam.members]
        # one interval per group (members of a group share it)
        ug, first = np.unique(g_of, return_index=True)
        al = np.zeros(len(data.groups), dtype=np.int64)
        L = np.zeros(len(data.groups), dtype=np.int64)
        al[ug] = fam.alpha[first]
        L[ug] = fam.beta[first] - fam.alpha[first]
        cols = np.flatnonzero(L[data.col_group] > 0)
        if cols.size == 0:
            continue
        lens = L[data.col_group[cols]]
        jc = np.repeat(cols, lens)
        off = ragged_arange(lens)
        t = data.col_start[jc] + al[data.col_group[jc]] + off
        present, rows = unique_offsets(t - int(t.min()))
        R.append(nrow + rows)
        C.append(jc)
        V.append(np.ones(jc.size))
        rl.append(np.full(present.size, -np.inf))
        ru.append(np.full(present.size, float(fam.level)))
        kinds += [f"interval{f}"] * present.size
        nrow += present.size
    # only the new rows go through a COO -> CSR conversion; the model's rows are copied as
    # they are (each (row, column) pair occurs once: a column's interval covers each slot once)
    new = sp.csr_matrix((np.concatenate(V), (np.concatenate(R), np.concatenate(C))),
                        shape=(nrow, data.n_cols))
    A2 = sp.vstack([data.A.tocsr(), new], format="csr")
    meta = dict(data.meta)
    meta["interval_families"] = len(families)
    return dataclasses.replace(data, A=A2, row_lower=np.concatenate(rl),
                               row_upper=np.concatenate(ru), row_kind=kinds, meta=meta)


def interval_model(instance: Instance, *, upper: float, n_families: int = 3,
                   levels: tuple[int, ...] = (1,)) -> MILPData:
    """The model of :func:`interval_bound`: ``tight+cores``
    (:func:`kvopt.mip.model.builder.build_milp`, start windows from ``upper``) plus the
    lag-interval rows of :func:`interval_families` (:func:`add_interval_rows`; their number
    in ``meta["interval_families"]``). It builds without a RAM check: :func:`interval_bound`
    checks before calling it.

    Examples
    --------
    >>> inst = Instance(memory=11, arrival=[0] * 5, prompt=[4, 5, 4, 1, 5],
    ...                 output=[4, 3, 4, 7, 3])
    >>> d = interval_model(inst, upper=60)
    >>> d.meta["interval_families"] >= 1, "interval0" in d.row_kind
    (True, True)
    """
    return _interval_model_parts(instance, upper=upper, n_families=n_families,
                                 levels=levels)[1]


def _interval_model_parts(instance: Instance, *, upper: float, n_families: int = 3,
                          levels: tuple[int, ...] = (1,)) -> tuple[MILPData, MILPData]:
    """``(tight+cores, interval model)``: the model of :func:`interval_model` and the
    ``tight+cores`` model it extends (the same rows without the interval rows)."""
    from kvopt.mip.model.builder import build_milp

    base = build_milp(instance, "tight+cores", upper=upper)
    fams = interval_families(instance, base.groups, n_families=n_families, levels=levels)
    return base, add_interval_rows(base, fams)


@dataclass
class IntervalBound:
    """Outcome of :func:`interval_bound`: ``bound`` is valid in every status.

    ``status`` is ``"optimal"`` when the LP was solved (``bound`` is then the Lagrangian value
    of its duals, i.e. the LP value) and ``"time_limit"`` when it was not. ``method`` says
    where the bound came from: ``"LP"`` (the interval LP), ``"tight+cores LP"`` (the LP
    without the interval rows, solved first, when the interval LP was not solved in time),
    ``"restricted LP"`` (neither LP solved, but a round of column generation was: the best
    Lagrangian value at a restricted LP's duals, :mod:`kvopt.mip.bounds.columns`, then
    ascent from them in the time left), ``"block Lagrangian"`` (no LP started: its first
    round was not expected to fit in the time left after the model's build;
    :func:`kvopt.mip.bounds.blocks.block_lagrangian_bound` instead) or ``"subgradient"``
    (no LP round solved: subgradient ascent on the interval model's rows).

    Examples
    --------
    >>> inst = Instance(memory=11, arrival=[0] * 5, prompt=[4, 5, 4, 1, 5],
    ...                 output=[4, 3, 4, 7, 3])
    >>> res = interval_bound(inst, time_limit=30)
    >>> res.status, round(res.bound, 6), res.families, res.method
    ('optimal', 52.0, 3, 'LP')
    """

    bound: float
    status: str
    lp_value: float | None
    families: int
    seconds: float
    meta: dict[str, Any]
    method: str = "LP"


def _lp_bound(data: MILPData, deadline: Deadline, form: str, method: str, *,
              columns: NDArray[np.bool_] | None = None,
              starts: NDArray[np.int64] | None = None) -> ColumnLP:
    """The LP relaxation of ``data`` by column generation over its start columns
    (:func:`kvopt.mip.bounds.columns.solve_lp_columns`, each restricted LP by
    :func:`kvopt.mip.bounds.sparse_lp.solve_lp_duals`: the row-differenced model by interior
    point with crossover) within ``deadline`` (nothing if it has passed): its status
    (``"optimal"``: the LP solved), value (``None`` unless solved), bound (the best
    :func:`lagrangian_value` of the original rows over the rounds, valid for any multipliers;
    ``None`` when no round was solved), multipliers, rounds and last columns (``columns`` /
    ``starts``: the first round's, as there)."""
    from kvopt.mip.bounds.columns import solve_lp_columns

    if deadline.expired():
        return _unsolved("time")
    return solve_lp_columns(data, deadline=deadline, columns=columns, starts=starts, form=form,
                            method=method)


def _unsolved(status: str) -> ColumnLP:
    """A :class:`~kvopt.mip.bounds.columns.ColumnLP` of an LP not solved nor started."""
    return ColumnLP(status, None, None, np.zeros(0, dtype=bool))


def _record(res: ColumnLP) -> dict[str, Any]:
    """What ``interval_bound``'s ``meta["lp"]`` keeps of an LP: the last round's solver
    record and the rounds."""
    return dict(res.info, rounds=res.rounds)


def _staged_lps(base: MILPData, data: MILPData, dl: Deadline, form: str, method: str,
                staged: bool, meta: dict[str, Any], starts: NDArray[np.int64] | None
                ) -> tuple[ColumnLP | None, ColumnLP]:
    """The LPs of :func:`interval_bound`: the first LP (``None`` when not staged; its
    record in ``meta["first_lp"]``) and the interval model's, which starts from the first
    LP's last columns. That one is not started when the first was stopped by the time limit
    (between rounds or in one), or when less time is left than the first LP took: it holds
    every row of the first and more (0.6-2.5 times its time at paper scale, from the
    first LP's columns; 1.25-2.1 times as whole LPs), so the call ends now instead of after
    the model's transfer to HiGHS."""
    if not (staged and data.n_rows > base.n_rows):
        return None, _lp_bound(data, dl, form, method, starts=starts)
    t1 = dl.elapsed()
    one = _lp_bound(base, dl, form, method, starts=starts)
    meta["first_lp"] = {"status": one.status, "value": one.value, "bound": one.bound,
                        "seconds": round(dl.elapsed() - t1, 3), "rounds": len(one.rounds)}
    if "stopped" in one.info:
        meta["first_lp"]["stopped"] = one.info["stopped"]
    left = dl.remaining()
    if one.bound is not None and one.status != "optimal":
        return one, _unsolved("not started: the first LP was stopped by the time limit")
    if one.bound is not None and left is not None and left < meta["first_lp"]["seconds"]:
        return one, _unsolved("not started: less time left than the first LP took")
    return one, _lp_bound(data, dl, form, method,
                          columns=one.columns if one.columns.size else None, starts=starts)


def _outcome(data: MILPData, dl: Deadline, upper: float, first: ColumnLP | None,
             last: ColumnLP, meta: dict[str, Any]) -> tuple[float, str, str]:
    """The bound, status and method of :func:`interval_bound` from its LPs (the larger of
    the bounds found, each valid). When neither LP was solved because a round would not fit
    (:func:`kvopt.mip.bounds.columns.solve_lp_columns`), the time left goes to subgradient
    ascent on the interval model's rows from the best round's multipliers (the first LP's
    rows are the interval model's first rows; zero on the others); when no round was solved,
    from zero."""
    found = [(float(r.bound), r) for r in (first, last) if r is not None and r.bound is not None]
    bound = max((b for b, _ in found), default=-np.inf)
    if last.status == "optimal":
        return bound, "optimal", "LP"
    if first is not None and first.status == "optimal":
        return bound, "time_limit", "tight+cores LP"
    stopped = any("stopped" in r.info for _, r in found)
    if found and (dl.expired() or not stopped):
        return bound, "time_limit", "restricted LP"
    rows = relaxed_rows(data)
    mu = np.zeros(rows.size)
    if found:
        best = max(found, key=lambda br: br[0])[1]
        assert best.multipliers is not None
        mu[: best.multipliers.size] = best.multipliers
    value, _, its = subgradient(data, upper=upper, deadline=dl, mu=mu, max_iterations=100_000,
                                scale=SUBGRADIENT_SCALE if found else 2.0)
    if not np.isfinite(value):                       # no iteration ran
        value = lagrangian_value(data, mu, rows)[0]
        its = 1
    meta["subgradient_iterations"] = its
    if found:
        meta["subgradient"] = {"from": float(bound), "to": float(max(value, bound))}
        return max(value, bound), "time_limit", "restricted LP"
    return value, "time_limit", "subgradient"


def _blocks_instead(instance: Instance, data: MILPData, dl: Deadline, upper: float,
                    starts: NDArray[np.int64] | None, build: float, left: float,
                    meta: dict[str, Any], t0: float) -> IntervalBound:
    """:func:`interval_bound` when its first LP round is not expected to fit in the time left
    (:data:`FIRST_ROUND_PER_BUILD`): the block-LP Lagrangian bound in that time."""
    from kvopt.core.mcsf import mcsf_starts
    from kvopt.mip.bounds.blocks import block_lagrangian_bound

    if starts is None:
        starts = mcsf_starts(instance)
    meta["lp_status"] = (f"not started: its first round (an estimated "
                         f"{FIRST_ROUND_PER_BUILD * build:.1f} s) would not fit in the "
                         f"{left:.1f} s left")
    bb = block_lagrangian_bound(instance, starts, upper=upper, deadline=dl)
    meta.update({"blocks": bb.levels, "refine_s": bb.refine_s})
    bound = bb.value - 1e-9 * max(1.0, abs(bb.value))
    return IntervalBound(bound=float(bound), status="time_limit", lp_value=None,
                         families=int(data.meta["interval_families"]),
                         seconds=dl.elapsed() - t0, meta=meta, method="block Lagrangian")


def interval_bound(instance: Instance, *, time_limit: float | None = 120.0,
                   upper: float | None = None, n_families: int = 3,
                   levels: tuple[int, ...] = (1,), ram: str | int | float | None = None,
                   lp_form: str = "differenced", lp_method: str = "ipm",
                   deadline: Deadline | None = None,
                   memory_budget: str | int | float | None = None,
                   staged: bool = True,
                   starts: NDArray[np.int64] | None = None) -> IntervalBound:
    """Lower bound from the ``tight+cores`` LP plus the lag-interval rows (module docstring).

    Parameters
    ----------
    instance
        A slotted instance.
    time_limit, deadline
        Wall-clock seconds for the whole call, or a caller's :class:`~kvopt.core.limits.Deadline`
        to share (then ``time_limit`` is ignored). Each LP is solved by column generation
        over its start columns (:func:`kvopt.mip.bounds.columns.solve_lp_columns`): every
        round's Lagrangian value is a valid bound, so a call stopped between rounds keeps the
        best of them (``method="restricted LP"`` when not even the first LP was solved;
        rounds are sized to the time left, and the time a round would not fit goes to
        :func:`subgradient` from the best round's multipliers). When the first round is not
        expected to fit after the model's build (:data:`FIRST_ROUND_PER_BUILD`), no LP is
        started and the block-LP Lagrangian bound takes the time left (``method="block
        Lagrangian"``). When no round is solved in time the remaining time (at least a few
        iterations) goes to subgradient ascent on the Lagrangian of the same rows. Every
        stopped call returns ``status="time_limit"`` and a valid bound.
    upper
        TEL of a feasible schedule (default MC-SF); it sets the start windows
        (:func:`kvopt.mip.model.builder.start_windows`, which keep every optimal schedule).
    starts
        That schedule's starts (default: MC-SF's when ``upper`` is not given): their columns
        join the first restricted LP, which is then feasible.
    n_families, levels
        Lag-interval families per level and their levels (:func:`interval_families`).
    ram
        RAM budget, as in :func:`kvopt.mip.bounds.relaxations.lp_bound` (checked on the
        ``tight+cores`` part; ``memory_budget`` is its deprecated name).
    lp_form, lp_method
        How the LP is solved (:func:`kvopt.mip.bounds.sparse_lp.solve_lp_duals`: one of
        :data:`~kvopt.mip.bounds.sparse_lp.LP_FORMS` and of
        :data:`~kvopt.mip.bounds.sparse_lp.LP_METHODS`).
        Every form is the same LP; the bound is the Lagrangian of the original rows at the
        duals it returns, so the choice changes the running time, not the value.
    staged
        Solve the ``tight+cores`` LP (the same model without the interval rows) first, then
        the interval LP in the time left; when the interval LP is not solved in time, the
        first LP's bound stands (``method="tight+cores LP"``) instead of a subgradient
        ascent that starts from zero (which gets almost nothing in the seconds left). The
        interval LP is not started when less time is left than the first LP took (it has
        the same rows and more). On the 20 + 20 paper-scale instances the interval rows add
        a median 0.08 % (0-0.55 %) to the first LP's value and the interval LP takes a
        median 1.72 times as long (``reports/mip/README.md`` section 10.19), so a call too
        short for the interval LP still gets nearly its value; the cost is the first LP's
        time when both fit.

    Notes
    -----
    **Validity.** Every row of the model holds for every feasible schedule (memory, DFF and
    clique rows: :mod:`kvopt.mip.model.builder`; cores:
    :func:`~kvopt.mip.bounds.combinatorial.core_lengths`;
    lag intervals: module docstring), and the windows keep every optimal schedule, so the
    LP value is ``<= OPT``. The value reported is not the solver's objective but
    :func:`lagrangian_value` of the multipliers read from the LP duals (clipped to ``>= 0``),
    which is ``<= OPT`` for *any* multipliers (proof there) and equals the LP value at an
    optimal dual solution; a restricted LP's duals (column generation) are multipliers of
    the same rows, so their value is a bound too. It is lowered by ``1e-9 * max(1, |L|)``
    against rounding in the sums. Objective values are integers, so ``ceil(bound)`` is
    valid.

    Examples
    --------
    >>> inst = Instance(memory=11, arrival=[0] * 5, prompt=[4, 5, 4, 1, 5],
    ...                 output=[4, 3, 4, 7, 3])
    >>> from kvopt.mip.bounds.relaxations import lp_bound
    >>> res = interval_bound(inst, time_limit=30)
    >>> res.status, round(lp_bound(inst, "tight+cores"), 2), round(res.bound, 2)
    ('optimal', 47.0, 52.0)
    >>> res.meta["first_lp"]["bound"] <= res.bound        # the tight+cores LP, solved first
    True
    """
    from kvopt.core.deprecation import renamed_argument
    from kvopt.core.errors import UsageError
    from kvopt.core.limits import resolve_memory_budget
    from kvopt.core.mcsf import mcsf_starts
    from kvopt.mip.bounds.sparse_lp import LP_FORMS, LP_METHODS
    from kvopt.mip.model.sizing import check_memory

    dl = as_deadline(time_limit, deadline)
    t0 = dl.elapsed()
    instance.require_slotted()
    if lp_form not in LP_FORMS:
        raise UsageError("lp_form", f"must be one of {', '.join(LP_FORMS)}, got {lp_form!r}")
    if lp_method not in LP_METHODS:
        raise UsageError("lp_method", f"must be one of {', '.join(LP_METHODS)}, got "
                         f"{lp_method!r}")
    if upper is None:
        starts = mcsf_starts(instance)
        upper = instance.tel_of_starts(starts)
    budget = resolve_memory_budget(renamed_argument(ram, memory_budget, "memory_budget", "ram"),
                                   "ram")
    check_memory(instance, "tight+cores", "lp-differenced", budget, upper=upper, flag="ram",
                 what="the interval LP (before its interval rows)",
                 hint="the Lagrangian bound (kvopt bound --lp lagrangian) needs O(n T) memory")
    t_build = dl.elapsed()
    base, data = _interval_model_parts(instance, upper=upper, n_families=n_families,
                                       levels=levels)
    build = dl.elapsed() - t_build
    meta: dict[str, Any] = {"rows": data.n_rows, "cols": data.n_cols, "nnz": int(data.A.nnz),
                            "upper": float(upper), "build_s": round(build, 3)}
    left = dl.remaining()
    if left is not None and FIRST_ROUND_PER_BUILD * build > FIT * left:
        return _blocks_instead(instance, data, dl, float(upper), starts, build, left, meta, t0)
    first, last = _staged_lps(base, data, dl, lp_form, lp_method, staged, meta, starts)
    meta.update({"lp_status": last.status, "lp": _record(last)})
    bound, out_status, method = _outcome(data, dl, float(upper), first, last, meta)
    bound -= 1e-9 * max(1.0, abs(bound))
    return IntervalBound(bound=float(bound), status=out_status, lp_value=last.value,
                         families=int(data.meta["interval_families"]),
                         seconds=dl.elapsed() - t0, meta=meta, method=method)

