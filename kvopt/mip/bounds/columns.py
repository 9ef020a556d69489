"""The LP bound of a time-indexed model over a growing set of start columns (anytime).

The interval LP of :mod:`kvopt.mip.bounds.intervals` has a column per request group and start
slot in its window; most of them are zero at the optimum. :func:`solve_lp_columns` solves it
by **column generation over those start columns**:

1. a *restricted* LP over a subset ``K`` of the columns: every :data:`GRID`-th start slot of
   each group's window (and its last slot), plus the starts of a feasible schedule when
   given;
2. its duals ``pi`` (HiGHS' sign convention; :func:`kvopt.mip.bounds.sparse_lp.solve_lp_duals`,
   the row-differenced form by default) price *every* column: ``d = c - A^T pi``;
3. the columns outside ``K`` with ``d < MARGIN`` join ``K``, with every start within
   :data:`REACH` slots of the restricted LP's support or of a column with ``d < 0``; back
   to 1, until no column outside ``K`` has ``d < 0`` (up to :data:`TOLERANCE`).

**Every round gives a valid bound.** The rows of the restricted LP are those of the whole
model, so ``mu = -pi`` (clipped to ``>= 0``) are multipliers for the whole model's rows, and
:func:`kvopt.mip.bounds.lagrangian.lagrangian_value` over *all* columns is ``<= OPT`` for any
multipliers (weak duality; proof in :mod:`kvopt.mip.bounds.lagrangian`). The bound reported
is the largest such value over the rounds, never a solver's objective: the restricted LP's
own value is *above* the LP's (it is a restriction), so it is not a bound.

**At the end it is the LP's value.** When no column outside ``K`` prices below zero, ``pi``
is dual feasible for the whole LP and the restricted optimum is feasible for it with the same
objective, so both are optimal (LP duality) and the Lagrangian at ``pi`` equals the LP's
value (partial Lagrangian duality, as in :mod:`kvopt.mip.bounds.sparse_lp`). If the first
restricted LP is infeasible (no feasible schedule among its columns), the whole model is
solved instead.

**Rounds sized to the time left.** Under a deadline, a round is started only if it is
expected to fit: a restricted LP's time grows like its column count to the power
:data:`TIME_POWER` (from the round before), so when the columns that would join are expected
to take more than :data:`FIT` of the time left, only the ones with the lowest reduced costs
join, as many as fit; if fewer than :data:`MIN_GROWTH` of the restricted LP's columns would,
the call stops there (``status="time"``, with the time left to the caller, e.g. for
:func:`kvopt.mip.bounds.lagrangian.subgradient` from :attr:`ColumnLP.multipliers`). A round
with fewer columns is still a restricted LP, so its bound is valid, and the next round prices
every column again; only the path to the LP changes, never its value.

**Why.** The restricted LPs keep an eighth of the columns at first and a quarter to three
eighths at the end; two or three rounds settle the first LP, one or two the interval LP (from
the first LP's columns): on the 20 + 20 paper-scale instances both LPs take a median 0.45
(Model 1) and 0.44 (Model 2) of the time of the whole LPs, never more than 0.66, and 38 s
instead of 113 s on ``model2-seed13`` (n = 89); and a call stopped by its limit keeps the
last round's bound instead of none (``reports/mip/README.md`` sections 10.20, 10.22).

Examples
--------
>>> from kvopt.core.instance import Instance
>>> from kvopt.mip.model.builder import build_milp
>>> from kvopt.mip.bounds.sparse_lp import solve_lp_duals
>>> inst = Instance(memory=40, arrival=[0] * 6, prompt=[3, 5, 2, 4, 6, 1],
...                 output=[20, 12, 25, 18, 9, 30])
>>> d = build_milp(inst, "tight+cores")
>>> res = solve_lp_columns(d)
>>> res.status, round(res.bound, 6) == round(solve_lp_duals(d).value, 6)
('optimal', True)
>>> int(res.columns.sum()) < d.n_cols        # the LP's value without every column
True
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.limits import Deadline, as_deadline
from kvopt.mip.model.data import MILPData

__all__ = ["ColumnLP", "FIT", "GRID", "MARGIN", "MIN_GROWTH", "REACH", "TIME_POWER",
           "grid_columns", "restrict_columns", "schedule_columns", "solve_lp_columns"]

#: Start slots of the first restricted LP: every ``GRID``-th slot of each window (and its
#: last). With 4 (and neighbours within 3 slots) both LPs took a median 0.63 / 0.70 of the
#: whole LPs' time, with 8 (and :data:`REACH`) 0.45 / 0.44 (Model 1 / Model 2 paper scale,
#: ``reports/mip/README.md`` section 10.22): a cheaper first round, and the second more often
#: the last. Its own bound is weaker (a call stopped after it keeps less).
GRID = 8
#: Columns that join a round: reduced cost below ``MARGIN`` (slots of latency), not only the
#: negative ones; with 0 the last rounds added one or two columns each (``model1-seed1``, a
#: scratch run: 5 rounds for the interval LP instead of 2).
MARGIN = 2.0
#: Columns that join a round also: every start within ``REACH`` slots (same group) of the
#: restricted LP's support or of a column that prices out (with ``grid > 1``). In scratch runs
#: on four paper-scale instances, 15 with a grid of 8 left the second round the last on three
#: of them, 7 on none of the three it ran on; with a grid of 4, 3, 8 and 15 all took three.
REACH = 15
#: A column prices out when its reduced cost is below ``-TOLERANCE``.
TOLERANCE = 1e-9
#: A restricted LP's time grows like its column count to this power: over the 49 pairs of
#: consecutive rounds of the ``tight+cores`` LPs on the 20 + 20 paper-scale instances (the
#: first at least 0.3 s; ``reports/mip/column_lp_grid8_model{1,2}.json``) the exponent had
#: median 1.38 and upper quartile 1.53.
TIME_POWER = 1.5
#: A round is expected to take at most this share of the time left ...
FIT = 0.8
#: ... and is not started when fewer than this share of the restricted LP's columns could
#: join within it.
MIN_GROWTH = 0.05


@dataclass
class ColumnLP:
    """Outcome of :func:`solve_lp_columns`.

    Attributes
    ----------
    status
        ``"optimal"``: no column prices out, ``value`` is the LP's value; ``"time"``: the
        deadline passed, or the next round would not fit in the time left (then
        ``info["stopped"]`` says so); ``"max_rounds"``; otherwise the solver's message of
        the round that was not solved.
    value
        The whole LP's value (``None`` unless optimal).
    bound
        The largest Lagrangian value over the rounds, ``<= OPT`` (module docstring);
        ``None`` when no round was solved.
    columns
        The columns of the last restricted LP (a boolean mask over ``data``'s columns): a
        model with the same columns and more rows starts from them.
    rounds
        Per round: columns, the restricted LP's value, the round's bound, seconds.
    info
        The last round's solver record (:attr:`kvopt.mip.bounds.sparse_lp.LPDuals.info`).
    multipliers
        The multipliers of ``bound``: one per row of
        :func:`kvopt.mip.bounds.lagrangian.relaxed_rows` (``>= 0``), or ``None`` with it.

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> d = build_milp(Instance(memory=11, arrival=[0] * 5, prompt=[4, 5, 4, 1, 5],
    ...                         output=[4, 3, 4, 7, 3]), "tight+cores")
    >>> res = solve_lp_columns(d)
    >>> res.status, round(res.value, 4), len(res.rounds) >= 1
    ('optimal', 47.0, True)
    """

    status: str
    value: float | None
    bound: float | None
    columns: NDArray[np.bool_]
    rounds: list[dict[str, Any]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    multipliers: NDArray[np.float64] | None = None


def _windows(data: MILPData) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """First and last start slot of every group's columns."""
    assert data.col_group is not None and data.col_start is not None
    ng = len(data.groups) if data.groups else int(data.col_group.max()) + 1
    lo = np.full(ng, np.iinfo(np.int64).max, dtype=np.int64)
    hi = np.full(ng, np.iinfo(np.int64).min, dtype=np.int64)
    np.minimum.at(lo, data.col_group, data.col_start)
    np.maximum.at(hi, data.col_group, data.col_start)
    return lo, hi


def grid_columns(data: MILPData, grid: int = GRID) -> NDArray[np.bool_]:
    """Every ``grid``-th start slot of each group's window, counted from its first, and its
    last.

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> d = build_milp(Instance(memory=4, arrival=[0, 0], prompt=[1, 1], output=[2, 3]),
    ...                "tight", upper=9)
    >>> d.col_start[d.col_group == 0].tolist()          # request 0's window
    [0, 1, 2, 3]
    >>> d.col_start[(d.col_group == 0) & grid_columns(d, 2)].tolist()
    [0, 2, 3]
    """
    if grid < 1:
        raise ValueError(f"grid must be >= 1, got {grid}")
    assert data.col_group is not None and data.col_start is not None
    lo, hi = _windows(data)
    g, k = data.col_group, data.col_start
    return ((k - lo[g]) % grid == 0) | (k == hi[g])


def schedule_columns(data: MILPData, starts: NDArray[np.int64]) -> NDArray[np.bool_]:
    """The columns of a schedule's ``starts`` (request ``i`` starting at ``starts[i]``, in
    its group's column of that slot; starts outside the windows have none).

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> d = build_milp(Instance(memory=4, arrival=[0, 0], prompt=[1, 1], output=[2, 3]),
    ...                "tight", upper=9)
    >>> cols = schedule_columns(d, np.array([0, 2]))
    >>> list(zip(d.col_group[cols].tolist(), d.col_start[cols].tolist()))
    [(0, 0), (1, 2)]
    """
    from kvopt.mip.model.builder import start_columns

    assert data.col_group is not None and data.col_start is not None
    cols = start_columns(data.col_group, data.col_start, data.groups, starts)
    keep = np.zeros(data.n_cols, dtype=bool)
    keep[cols[cols >= 0]] = True
    return keep


def restrict_columns(data: MILPData, keep: NDArray[np.bool_]) -> MILPData:
    """``data`` with only the columns ``keep`` (same rows; no warm start).

    Examples
    --------
    >>> d = MILPData.example()
    >>> restrict_columns(d, np.array([False, True])).n_cols
    1
    """
    col = np.asarray(keep, dtype=bool)
    return dataclasses.replace(
        data, c=data.c[col], A=data.A[:, col].tocsr(), col_lower=data.col_lower[col],
        col_upper=data.col_upper[col], integrality=data.integrality[col],
        col_group=None if data.col_group is None else data.col_group[col],
        col_start=None if data.col_start is None else data.col_start[col], x0=None)


def _near(data: MILPData, cols: NDArray[np.int64], reach: int) -> NDArray[np.bool_]:
    """Columns of the same group as a column in ``cols``, at most ``reach`` slots away."""
    assert data.col_group is not None and data.col_start is not None
    width = int(data.col_start.max()) + 2 * reach + 2
    key = data.col_group.astype(np.int64) * width + data.col_start
    base = key[cols]
    want = (base[:, None] + np.arange(-reach, reach + 1)[None, :]).ravel()
    return np.isin(key, want)


def _expected_seconds(seconds: float, n_keep: int, n_add: int) -> float:
    """A round's expected time with ``n_add`` more columns than the last one's ``n_keep``,
    which took ``seconds`` (:data:`TIME_POWER`)."""
    return seconds * ((n_keep + n_add) / n_keep) ** TIME_POWER


def _fitting(add: NDArray[np.bool_], d: NDArray[np.float64], n_keep: int, seconds: float,
             left: float | None) -> NDArray[np.bool_] | None:
    """The columns of ``add`` that join the next round within ``left`` seconds (module
    docstring: the lowest reduced costs ``d`` first), given that the last round had
    ``n_keep`` columns and took ``seconds``; ``None`` when too few would."""
    n_add = int(add.sum())
    if left is None or seconds <= 0 or n_add == 0:
        return add
    if _expected_seconds(seconds, n_keep, n_add) <= FIT * left:
        return add
    cap = int(n_keep * ((FIT * left / seconds) ** (1.0 / TIME_POWER) - 1.0))
    if cap < MIN_GROWTH * n_keep:
        return None
    idx = np.flatnonzero(add)
    take = idx[np.argsort(d[idx], kind="stable")[:cap]]
    out = np.zeros_like(add)
    out[take] = True
    return out


def solve_lp_columns(data: MILPData, *, deadline: Deadline | None = None,
                     time_limit: float | None = None, columns: NDArray[np.bool_] | None = None,
                     starts: NDArray[np.int64] | None = None, grid: int = GRID,
                     margin: float = MARGIN, max_rounds: int | None = None,
                     form: str = "differenced", method: str = "ipm") -> ColumnLP:
    """The LP relaxation of a time-indexed model by column generation over its start columns,
    and the best Lagrangian bound of its rounds (module docstring).

    Parameters
    ----------
    data
        A time-indexed model (:func:`kvopt.mip.model.builder.build_milp`, possibly with the
        rows of :func:`kvopt.mip.bounds.intervals.add_interval_rows`).
    deadline, time_limit
        A caller's :class:`~kvopt.core.limits.Deadline` to share, or seconds for the call
        (``None``: none). A round not solved in time ends the call with the bound so far;
        the rounds are sized to the time left (module docstring).
    columns
        The first restricted LP's columns (a mask), e.g. the last ones of a model with the
        same columns and fewer rows; default :func:`grid_columns` (``grid``).
    starts
        A feasible schedule's starts whose columns join the first restricted LP (then it is
        feasible).
    margin
        Columns with reduced cost below it join each round (:data:`MARGIN`).
    max_rounds
        Stop after this many restricted LPs (``None``: until the LP is solved).
    form, method
        How each restricted LP is solved (:func:`kvopt.mip.bounds.sparse_lp.solve_lp_duals`).

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> from kvopt.core.generators import model1
    >>> d = build_milp(model1(1, n=12, memory=20), "tight+cores")
    >>> one = solve_lp_columns(d, max_rounds=1)          # stopped: a bound, not the LP
    >>> full = solve_lp_columns(d)
    >>> one.status, full.status, one.bound <= full.bound, abs(full.bound - full.value) < 1e-6
    ('max_rounds', 'optimal', True, True)
    """
    from kvopt.mip.bounds.lagrangian import lagrangian_at_duals
    from kvopt.mip.bounds.sparse_lp import solve_lp_duals

    dl = as_deadline(time_limit, deadline)
    keep = grid_columns(data, grid) if columns is None else np.asarray(columns, dtype=bool).copy()
    if starts is not None:
        keep |= schedule_columns(data, starts)
    best: float | None = None
    mult: NDArray[np.float64] | None = None
    rounds: list[dict[str, Any]] = []
    info: dict[str, Any] = {}

    def out(status: str, value: float | None = None) -> ColumnLP:
        return ColumnLP(status, value, best, keep, rounds, info, mult)

    while True:
        if max_rounds is not None and len(rounds) >= max_rounds:
            return out("max_rounds")
        if dl.expired():
            return out("time")
        t0 = time.perf_counter()
        res = solve_lp_duals(restrict_columns(data, keep), deadline=dl, form=form,
                             method=method)
        info = res.info
        if res.status == "infeasible" and not rounds and not keep.all():
            keep[:] = True                      # no schedule among these columns: all of them
            continue
        if res.row_dual is None or res.x is None or res.value is None:
            return out(str(info.get("message", res.status)))
        value, mu = lagrangian_at_duals(data, res.row_dual)
        if best is None or value > best:
            best, mult = value, mu
        seconds = time.perf_counter() - t0
        rounds.append({"columns": int(keep.sum()), "restricted_lp": float(res.value),
                       "bound": value, "seconds": round(seconds, 3)})
        d = data.c - data.A.T @ res.row_dual
        if not (d[~keep] < -TOLERANCE).any():
            return out("optimal", float(res.value))
        add = ~keep & (d < margin)
        if grid > 1:        # and the starts near the support and near the columns that price out
            seeds = np.concatenate([np.flatnonzero(keep)[res.x > 1e-9],
                                    np.flatnonzero(~keep & (d < -TOLERANCE))])
            add |= _near(data, seeds, REACH)
        n_keep, left = int(keep.sum()), dl.remaining()
        fit = _fitting(add, d, n_keep, seconds, left)
        if fit is None:
            info = dict(info, stopped=f"the next round (an estimated "
                        f"{_expected_seconds(seconds, n_keep, int(add.sum())):.1f} s) "
                        f"would not fit in the {left or 0.0:.1f} s left")
            return out("time")
        if int(fit.sum()) < int(add.sum()):
            rounds[-1]["next_capped"] = int(fit.sum())
        keep |= fit
