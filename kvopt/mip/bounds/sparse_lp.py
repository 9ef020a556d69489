"""Sparse exact reformulations of the time-indexed LP relaxation (same value, same duals).

Every row family of :mod:`kvopt.mip.model.builder` and :mod:`kvopt.mip.bounds.intervals` is a
*window
sum over start slots*: per group ``g`` and row ``r`` the coefficients ``a[r, g, k]`` of the
start counts ``y[g, k]`` are a 0/1 window (clique, core and lag-interval rows, the
assignment row), a linear ramp over a window (memory rows ``s + tau - k`` over
``k in [tau - o, tau - 1]``) or piecewise constant with a few steps (DFF rows
``floor((q + 1) (s + tau - k) / (M + 1))``). Such a row costs ``O(o)`` non-zeros per group
(3.84 M on the paper-scale interval LP of ``model1-seed1``) although consecutive rows, and
consecutive columns, differ in ``O(1)`` places. Two exact reformulations exploit this; both
compute the new matrix by sparse products with integer coefficients (exact in floating
point) and keep, per row, the sparsest of the candidate forms, so no row family needs its
own code.

**Row differences** (:func:`differenced_lp`, the default of :func:`solve_lp_duals`). Each
``<=`` row gets a slack, ``A[r] y + s[r] = b[r]``, ``s[r] >= 0``, and is replaced by
``D[r] (A y + s) = D[r] b`` with ``D[r]`` one of ``e_r``, ``e_r - e_p``,
``e_r - 2 e_p + e_pp`` (``p``, ``pp``: the previous rows of the same family, i.e. the
previous slots). ``D`` is unit lower-triangular, hence invertible, so the new equality
system has the same solutions ``(y, s)``; ``y -> (y, b - A y)`` is a bijection between the
feasible sets with the same objective. Rows and the basis size stay the same (9650 on
``model1-seed1``); non-zeros fall to 0.61 M.

**Cumulative columns** (:func:`cumulative_lp`). Per group, ordered by start slot,
``C1[j] = sum_{j' <= j} y[j']`` and ``C2[j] = sum_{j' <= j} C1[j']``, i.e. ``y = U C1``,
``C1 = U C2`` with ``(U z)[j] = z[j] - z[prev(j)]``; summation by parts writes a row as
``(U^T a) . C1`` or ``(U^T U^T a) . C2``; the bounds of ``y`` become rows
``col_lower <= U C1 <= col_upper`` and ``U C2 - C1 = 0`` defines ``C2``. Also a bijection
(``U`` is unit triangular). It needs one row per column (89 k rows on ``model1-seed1``) and
is slower there (``benchmarks/mip_lp_forms.py``); it is kept for comparison.

**Same value.** Both maps are linear bijections of the feasible sets that preserve the
objective, so the LP optima are equal and map onto each other
(:meth:`CumulativeLP.original_solution`; the differenced LP keeps ``y``).

**Same duals of the original rows.** Write the original LP as ``min c.y`` subject to
``A y <= b`` (the relaxed rows) and ``y in Q`` (assignment rows and bounds), and
``L(mu) = min_{y in Q} c.y + mu.(A y - b)`` (``mu >= 0``) its Lagrangian, the value that
:func:`kvopt.mip.bounds.fixing.lagrangian_reduced_costs` computes. Let ``(z*, pi*)`` be an optimal
primal-dual pair of a reformulated LP and ``mu*`` the multipliers it induces on the
original rows (differenced: ``mu* = -D^T pi*`` in HiGHS' sign convention, since the reduced
costs of ``y`` are ``c - A^T D^T pi*`` and those of the slacks ``-(D^T pi*)`` must be
``>= 0``; cumulative: the duals of the original rows, which are rows of that LP). By partial
Lagrangian duality, dualising exactly those rows with ``mu*`` and minimising over the
remaining constraints (the image ``Q'`` of ``Q``) gives ``L'(mu*) = LP*``: the remaining
duals are feasible for the inner LP (so ``L'(mu*) >= LP*``) and ``z*`` with complementary
slackness attains ``LP*``. The bijection maps ``Q'`` onto ``Q`` with the same objective and
the same values ``A y - b`` of the dualised rows, so ``L(mu*) = L'(mu*) = LP*``. Hence the
multipliers read off a sparse LP give the dense LP's value when the Lagrangian is evaluated
on the *original* rows, and any other multipliers (an inexact solve) still give a valid
bound ``L(mu) <= OPT``. :func:`kvopt.mip.bounds.intervals.interval_bound` and
:func:`kvopt.mip.bounds.fixing.reduced_cost_domains` report exactly this ``L(mu)``, so the bound
rests neither on the solver nor on this module.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from kvopt.core.limits import Deadline, as_deadline
from kvopt.mip.model.data import MILPData

#: Variable sets of :func:`cumulative_lp`.
VARIABLES = ("c1c2", "y")
#: LP algorithms of :func:`solve_lp_duals` (HiGHS ``solver`` option values).
LP_METHODS = ("simplex", "ipm", "pdlp")
#: Model forms of :func:`solve_lp_duals`: the two reformulations or the original model.
LP_FORMS = ("differenced", "cumulative", "dense")


@dataclass(frozen=True)
class CumulativeLP:
    """The cumulative LP of a time-indexed model (module docstring).

    Attributes
    ----------
    lp
        The continuous model; its first ``n_rows`` rows are the original rows in order.
    n_rows, n_cols
        Rows and columns of the original model.
    prev
        ``prev[j]``: the previous column of ``j``'s group by start slot (``-1``: none).
    variables
        ``"c1c2"`` (columns ``C1`` then ``C2``) or ``"y"`` (``y``, ``C1``, ``C2``).

    Examples
    --------
    One row per original row, per ``y`` bound and per ``C2`` definition; far fewer
    non-zeros in the original rows:

    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> inst = Instance(memory=40, arrival=[0] * 4, prompt=[3, 5, 2, 4],
    ...                 output=[20, 12, 25, 18])
    >>> d = build_milp(inst, "tight+cores")
    >>> cum = cumulative_lp(d)
    >>> cum.variables, cum.n_rows, cum.n_cols, cum.lp.n_rows, cum.lp.n_cols
    ('c1c2', 345, 229, 803, 458)
    >>> d.nnz, cum.lp.A[: d.n_rows].nnz
    (11460, 2710)
    """

    lp: MILPData
    n_rows: int
    n_cols: int
    prev: NDArray[np.int64]
    variables: str

    def original_solution(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        """``y = U C1`` of a solution ``z`` of :attr:`lp`.

        Examples
        --------
        >>> from kvopt.core.instance import Instance
        >>> from kvopt.mip.model.builder import build_milp
        >>> d = build_milp(Instance(memory=10, arrival=[0, 0], prompt=[1, 1],
        ...                         output=[4, 8]), "tight")
        >>> cum = cumulative_lp(d)
        >>> y = np.zeros(d.n_cols); y[[0, -1]] = 1.0
        >>> bool(np.allclose(cum.original_solution(cum.embed(y)), y))
        True
        """
        m = self.n_cols
        off = m if self.variables == "y" else 0
        c1 = np.asarray(z, dtype=np.float64)[off: off + m]
        return c1 - np.where(self.prev >= 0, c1[np.maximum(self.prev, 0)], 0.0)

    def embed(self, y: NDArray[np.float64]) -> NDArray[np.float64]:
        """The cumulative-LP point ``(C1, C2)`` (or ``(y, C1, C2)``) of an original ``y``."""
        c1 = _running_sum(np.asarray(y, dtype=np.float64), self.prev)
        c2 = _running_sum(c1, self.prev)
        return np.concatenate([y, c1, c2] if self.variables == "y" else [c1, c2])


def _running_sum(x: NDArray[np.float64], prev: NDArray[np.int64]) -> NDArray[np.float64]:
    """``z[j] = x[j] + z[prev[j]]`` along each group's chain."""
    z = np.asarray(x, dtype=np.float64).copy()
    order = _chain_order(prev)
    for j in order:
        if prev[j] >= 0:
            z[j] += z[prev[j]]
    return z


def _chain_order(prev: NDArray[np.int64]) -> list[int]:
    """Columns ordered so that ``prev[j]`` comes before ``j``."""
    nxt = np.full(prev.size, -1, dtype=np.int64)
    has = prev >= 0
    nxt[prev[has]] = np.flatnonzero(has)
    out: list[int] = []
    for j in np.flatnonzero(~has):
        k = int(j)
        while k >= 0:
            out.append(k)
            k = int(nxt[k])
    return out


def _prev_next(data: MILPData) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    assert data.col_group is not None and data.col_start is not None
    cg, cs = data.col_group, data.col_start
    order = np.lexsort((cs, cg))
    same = cg[order][1:] == cg[order][:-1]
    prev = np.full(cg.size, -1, dtype=np.int64)
    nxt = np.full(cg.size, -1, dtype=np.int64)
    prev[order[1:][same]] = order[:-1][same]
    nxt[order[:-1][same]] = order[1:][same]
    return prev, nxt


def _shift_matrix(prev: NDArray[np.int64]) -> sp.csc_matrix:
    """``U`` with ``(U z)[j] = z[j] - z[prev[j]]``."""
    m = prev.size
    has = np.flatnonzero(prev >= 0)
    rows = np.concatenate([np.arange(m), has])
    cols = np.concatenate([np.arange(m), prev[has]])
    vals = np.concatenate([np.ones(m), -np.ones(has.size)])
    return sp.csc_matrix((vals, (rows, cols)), shape=(m, m))


def _implied_bounds(data: MILPData, prev: NDArray[np.int64]
                    ) -> tuple[NDArray[np.float64], ...]:
    """Bounds on ``C1``, ``C2`` implied by the bounds of ``y`` (running sums of them) and,
    for a group with ``y >= 0`` and an assignment row ``sum y <= u``, ``C1 <= u``.

    They cut nothing off (every ``y`` within its bounds and the assignment rows satisfies
    them) but keep dual simplex away from free columns."""
    assert data.col_group is not None
    lo1 = _running_sum(data.col_lower, prev)
    hi1 = _running_sum(data.col_upper, prev)
    kinds = np.asarray(data.row_kind)
    assign = np.flatnonzero(kinds == "assign")
    if assign.size:
        A = data.A[assign].tocsr()
        total = np.full(len(data.groups), np.inf)
        for r in range(assign.size):
            cols = A.indices[A.indptr[r]: A.indptr[r + 1]]
            vals = A.data[A.indptr[r]: A.indptr[r + 1]]
            gs = np.unique(data.col_group[cols])
            if gs.size == 1 and np.all(vals == 1.0) and cols.size == int(
                    (data.col_group == gs[0]).sum()):
                total[gs[0]] = min(total[gs[0]], float(data.row_upper[assign[r]]))
        nonneg = data.col_lower >= 0
        ok = np.ones(len(data.groups), dtype=bool)
        np.logical_and.at(ok, data.col_group, nonneg)
        cap = np.where(ok, total, np.inf)[data.col_group]
        hi1 = np.minimum(hi1, cap)
    return lo1, hi1, _running_sum(lo1, prev), _running_sum(hi1, prev)


def cumulative_lp(data: MILPData, *, variables: str = "c1c2") -> CumulativeLP:
    """The cumulative LP of a time-indexed model (module docstring: same value, same duals).

    Parameters
    ----------
    data
        A model of :func:`kvopt.mip.model.builder.build_milp` (possibly with the rows of
        :func:`kvopt.mip.bounds.intervals.add_interval_rows`): columns carry ``col_group`` and
        ``col_start``. Its integrality is dropped (this is the LP relaxation).
    variables
        One of :data:`VARIABLES`.

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> inst = Instance(memory=40, arrival=[0] * 4, prompt=[3, 5, 2, 4],
    ...                 output=[20, 12, 25, 18])
    >>> d = build_milp(inst, "tight+cores")
    >>> cum = cumulative_lp(d)
    >>> cum.lp.A[: d.n_rows].nnz < d.nnz
    True
    """
    if variables not in VARIABLES:
        raise ValueError(f"variables must be one of {VARIABLES}, got {variables!r}")
    if data.col_group is None or data.col_start is None:
        raise ValueError("cumulative_lp needs a time-indexed model (col_group / col_start)")
    m = data.n_cols
    prev, _ = _prev_next(data)
    U = _shift_matrix(prev)
    A = data.A.tocsr()
    B1 = (A @ U).tocsr()
    B1.eliminate_zeros()
    B2 = (B1 @ U).tocsr()
    B2.eliminate_zeros()
    use2 = np.diff(B2.indptr) < np.diff(B1.indptr)
    keep1 = sp.diags((~use2).astype(np.float64))
    keep2 = sp.diags(use2.astype(np.float64))
    top = sp.hstack([keep1 @ B1, keep2 @ B2]).tocsr()          # columns C1 | C2
    top.eliminate_zeros()
    eye = sp.identity(m, format="csr")
    # C2 - shift(C2) - C1 = 0, i.e. U C2 - C1 = 0
    link2 = sp.hstack([-eye, U.tocsr()])
    if variables == "c1c2":
        bound_rows = sp.hstack([U.tocsr(), sp.csr_matrix((m, m))])
        A2 = sp.vstack([top, bound_rows, link2]).tocsr()
        rl = np.concatenate([data.row_lower, data.col_lower, np.zeros(m)])
        ru = np.concatenate([data.row_upper, data.col_upper, np.zeros(m)])
        c = np.asarray(U.T @ data.c, dtype=np.float64)
        c = np.concatenate([c, np.zeros(m)])
        kinds = list(data.row_kind) + ["ybound"] * m + ["c2def"] * m
    else:
        zero = sp.csr_matrix((data.n_rows, m))
        link1 = sp.hstack([-eye, U.tocsr(), sp.csr_matrix((m, m))])
        A2 = sp.vstack([sp.hstack([zero, top]), link1,
                        sp.hstack([sp.csr_matrix((m, m)), link2])]).tocsr()
        rl = np.concatenate([data.row_lower, np.zeros(2 * m)])
        ru = np.concatenate([data.row_upper, np.zeros(2 * m)])
        c = np.concatenate([data.c, np.zeros(2 * m)])
        kinds = list(data.row_kind) + ["c1def"] * m + ["c2def"] * m
    lo1, hi1, lo2, hi2 = _implied_bounds(data, prev)
    if variables == "c1c2":
        cl, cu = np.concatenate([lo1, lo2]), np.concatenate([hi1, hi2])
    else:
        cl = np.concatenate([data.col_lower, lo1, lo2])
        cu = np.concatenate([data.col_upper, hi1, hi2])
    ncol = A2.shape[1]
    meta = dict(data.meta)
    meta.update({"cumulative": variables, "rows_in_c2": int(use2.sum()),
                 "original_nnz": int(data.nnz)})
    lp = MILPData(c=c, A=A2, row_lower=rl, row_upper=ru, col_lower=cl, col_upper=cu,
                  integrality=np.zeros(ncol, dtype=np.int8), obj_offset=data.obj_offset,
                  row_kind=kinds, objective_is_integer=False, meta=meta)
    return CumulativeLP(lp=lp, n_rows=data.n_rows, n_cols=m, prev=prev, variables=variables)


@dataclass(frozen=True)
class DifferencedLP:
    """The row-differenced LP of a time-indexed model (see :func:`differenced_lp`).

    Attributes
    ----------
    lp
        The continuous model: columns ``y`` then one slack per ``<=`` row; rows in the
        original order.
    D
        The unit lower-triangular row transformation (``n_rows x n_rows``): row ``r`` of
        :attr:`lp` is ``D[r] (A y + s) = D[r] b`` (identity on rows that are not ``<=``).
    n_cols
        Columns of the original model.

    Examples
    --------
    Same rows, one slack column per ``<=`` row, far fewer non-zeros on the ``y`` columns:

    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> inst = Instance(memory=40, arrival=[0] * 4, prompt=[3, 5, 2, 4],
    ...                 output=[20, 12, 25, 18])
    >>> d = build_milp(inst, "tight+cores")
    >>> dl = differenced_lp(d)
    >>> (d.n_rows, d.n_cols), (dl.lp.n_rows, dl.lp.n_cols), dl.D.shape
    ((345, 229), (345, 570), (345, 345))
    >>> d.nnz, dl.lp.A[:, : dl.n_cols].nnz
    (11460, 2696)
    """

    lp: MILPData
    D: sp.csr_matrix
    n_cols: int

    def original_duals(self, pi: NDArray[np.float64]) -> NDArray[np.float64]:
        """Duals of the original rows, ``D^T pi``, from the duals ``pi`` of :attr:`lp`."""
        return np.asarray(self.D.T @ np.asarray(pi, dtype=np.float64), dtype=np.float64)


def differenced_lp(data: MILPData) -> DifferencedLP:
    """The LP relaxation of ``data`` with slacks and differenced rows (same LP, sparser).

    Every ``<=`` row ``A[r] y <= b[r]`` gets a slack, ``A[r] y + s[r] = b[r]``,
    ``s[r] >= 0``; then row ``r`` is replaced by ``D[r] (A y + s) = D[r] b`` where ``D[r]``
    is the unit vector ``e_r``, the first difference ``e_r - e_p`` or the second difference
    ``e_r - 2 e_p + e_pp`` (``p``, ``pp``: the previous rows of the same family), whichever
    row of ``D A`` has the fewest non-zeros. Consecutive rows of a family are windows shifted
    by one slot, so their differences are sparse. ``D`` is unit lower-triangular, hence
    invertible: ``(y, s)`` is feasible for the new rows iff it is for the old ones, and
    ``y -> (y, b - A y)`` is a bijection of the feasible sets with the same objective.

    **Duals.** With HiGHS' convention (reduced costs ``c - A^T pi``), the reduced costs of
    ``y`` in the new LP are ``c - A^T (D^T pi)``, so ``mu = D^T pi`` plays the role of the
    original rows' duals; the slack ``s[r]`` (cost 0, lower bound 0) has reduced cost
    ``-mu[r]``, dual feasible iff ``-mu[r] >= 0``, which is the sign of an original ``<=``
    row's dual. Partial Lagrangian duality on an optimal primal-dual pair (as in the module
    docstring) gives ``L(-mu) = LP*`` for the Lagrangian of the *original* rows.

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> inst = Instance(memory=40, arrival=[0] * 4, prompt=[3, 5, 2, 4],
    ...                 output=[20, 12, 25, 18])
    >>> d = build_milp(inst, "tight+cores")
    >>> dl = differenced_lp(d)
    >>> dl.lp.n_rows == d.n_rows and dl.lp.A[:, : d.n_cols].nnz < d.nnz
    True
    """
    n = data.n_rows
    le = np.isinf(data.row_lower) & np.isfinite(data.row_upper) & (data.row_upper > -np.inf)
    kinds = np.asarray(data.row_kind) if data.row_kind else np.full(n, "", dtype=object)
    prev = np.full(n, -1, dtype=np.int64)
    r = np.arange(1, n)
    link = le[1:] & le[:-1] & (kinds[1:] == kinds[:-1])
    prev[r[link]] = r[link] - 1
    has = np.flatnonzero(prev >= 0)
    P = sp.csr_matrix((np.ones(has.size), (has, prev[has])), shape=(n, n))
    eye = sp.identity(n, format="csr")
    D1 = (eye - P).tocsr()
    D2 = (D1 @ D1).tocsr()
    A = data.A.tocsr()
    cands = [eye, D1, D2]
    prods = [A, (D1 @ A).tocsr(), (D2 @ A).tocsr()]
    for m_ in prods:
        m_.eliminate_zeros()
    counts = np.stack([np.diff(m_.indptr) for m_ in prods])
    choice = np.argmin(counts, axis=0)
    choice[~le] = 0
    D = sp.csr_matrix((n, n))
    DA = sp.csr_matrix(A.shape)
    for q in range(3):
        sel = sp.diags((choice == q).astype(np.float64))
        D = D + sel @ cands[q]
        DA = DA + sel @ prods[q]
    D = D.tocsr()
    D.eliminate_zeros()
    DA = DA.tocsr()
    DA.eliminate_zeros()
    slack_rows = np.flatnonzero(le)
    S = sp.csr_matrix((np.ones(slack_rows.size), (slack_rows, np.arange(slack_rows.size))),
                      shape=(n, slack_rows.size))
    A2 = sp.hstack([DA, D @ S]).tocsr()
    b = np.where(le, data.row_upper, 0.0)
    Db = np.asarray(D @ b, dtype=np.float64)
    rl = np.where(le, Db, data.row_lower)
    ru = np.where(le, Db, data.row_upper)
    ns = slack_rows.size
    meta = dict(data.meta)
    meta.update({"differenced_rows": int((choice > 0).sum()), "original_nnz": int(data.nnz)})
    lp = MILPData(c=np.concatenate([data.c, np.zeros(ns)]), A=A2, row_lower=rl, row_upper=ru,
                  col_lower=np.concatenate([data.col_lower, np.zeros(ns)]),
                  col_upper=np.concatenate([data.col_upper, np.full(ns, np.inf)]),
                  integrality=np.zeros(data.n_cols + ns, dtype=np.int8),
                  obj_offset=data.obj_offset, row_kind=list(data.row_kind),
                  objective_is_integer=False, meta=meta)
    return DifferencedLP(lp=lp, D=D, n_cols=data.n_cols)


@dataclass
class LPDuals:
    """Outcome of :func:`solve_lp_duals`.

    ``row_dual`` (HiGHS' sign convention, one per row of the *original* model) and
    ``value`` are set when ``status == "optimal"``; ``info`` has the model size and timings.

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> inst = Instance(memory=40, arrival=[0] * 4, prompt=[3, 5, 2, 4],
    ...                 output=[20, 12, 25, 18])
    >>> d = build_milp(inst, "tight+cores")
    >>> res = solve_lp_duals(d)             # row-differenced LP, interior point
    >>> res.status, round(res.value, 4), res.row_dual.shape, res.x.shape, res.info["form"]
    ('optimal', 96.4173, (345,), (229,), 'differenced')
    """

    status: str
    value: float | None
    row_dual: NDArray[np.float64] | None
    x: NDArray[np.float64] | None
    info: dict[str, Any]


def solve_lp_duals(data: MILPData, *, time_limit: float | None = None,
                   form: str = "differenced", method: str = "ipm",
                   threads: int = 1, deadline: Deadline | None = None) -> LPDuals:
    """Solve the LP relaxation of ``data`` with HiGHS and return its original rows' duals.

    The defaults (row-differenced model, interior point with crossover) were the fastest
    measured on the paper-scale interval LPs (``benchmarks/mip_lp_forms.py``: 14 CPU-s
    against 110 for dual simplex on the original model of ``model1-seed1``).

    Parameters
    ----------
    data
        A time-indexed model (:func:`kvopt.mip.model.builder.build_milp`, possibly with interval
        rows).
    time_limit, deadline
        Seconds for the build and the solve (``None``: none), or a caller's
        :class:`~kvopt.core.limits.Deadline` to share.
    form
        One of :data:`LP_FORMS`: ``"differenced"`` (:func:`differenced_lp`),
        ``"cumulative"`` (:func:`cumulative_lp`) or ``"dense"`` (``data`` as it is). The
        duals returned are those of the original rows in every form (module docstring).
    method
        HiGHS ``solver`` option, one of :data:`LP_METHODS`: ``"simplex"`` (dual simplex),
        ``"ipm"`` (IPX interior point, with crossover to a basic solution) or ``"pdlp"``.
    threads
        HiGHS threads.

    Where interior point ends in a solve error (it does so on some infeasible LPs, where dual
    simplex reports infeasibility), the model is solved again by dual simplex in the time
    left, and ``info["retried"]`` says so: an infeasible LP is reported ``"infeasible"``.

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> inst = Instance(memory=11, arrival=[0] * 5, prompt=[4, 5, 4, 1, 5],
    ...                 output=[4, 3, 4, 7, 3])
    >>> d = build_milp(inst, "tight+cores")
    >>> a = solve_lp_duals(d, form="dense", method="simplex"); b = solve_lp_duals(d)
    >>> a.status, b.status, round(a.value, 6) == round(b.value, 6)
    ('optimal', 'optimal', True)
    """
    from kvopt.core.errors import UsageError
    from kvopt.mip.backends.highs import HighsBackend

    if form not in LP_FORMS:
        raise UsageError("form", f"must be one of {', '.join(LP_FORMS)}, got {form!r}")
    if method not in LP_METHODS:
        raise UsageError("method", f"must be one of {', '.join(LP_METHODS)}, got {method!r}")
    dl = as_deadline(time_limit, deadline)
    t0 = time.perf_counter()
    relaxed = dataclasses.replace(data, integrality=np.zeros(data.n_cols, dtype=np.int8),
                                  x0=None)
    cum = cumulative_lp(relaxed) if form == "cumulative" else None
    dif = differenced_lp(relaxed) if form == "differenced" else None
    model = cum.lp if cum is not None else dif.lp if dif is not None else relaxed
    build_s = time.perf_counter() - t0
    res = HighsBackend().solve(model, deadline=dl, threads=threads, relax=True,
                               options={"solver": "ipx" if method == "ipm" else method})
    info: dict[str, Any] = {"form": form, "method": method, "rows": model.n_rows,
                            "cols": model.n_cols, "nnz": int(model.nnz),
                            "build_s": round(build_s, 3), "lp_s": round(res.runtime_s, 3),
                            "message": res.message}
    if res.status == "error" and method == "ipm" and not dl.expired():
        # IPX ends some infeasible LPs in a solve error (HiGHS' "Solve error", where dual
        # simplex says "Infeasible"): the same model again by dual simplex, in the time left
        first = res.message
        res = HighsBackend().solve(model, deadline=dl, threads=threads, relax=True,
                                   options={"solver": "simplex"})
        info.update(lp_s=round(info["lp_s"] + res.runtime_s, 3), message=res.message,
                    retried=f"dual simplex after interior point's {first!r}")
    dual = res.info.get("row_dual")
    if res.status != "optimal" or dual is None or res.objective is None:
        return LPDuals(res.status if res.status != "optimal" else "error", None, None, None,
                       info)
    dual = np.asarray(dual, dtype=np.float64)
    dual = dif.original_duals(dual) if dif is not None else dual[: data.n_rows]
    x = res.x
    if cum is not None and x is not None:
        x = cum.original_solution(x)
    if dif is not None and x is not None:
        x = x[: data.n_cols]
    return LPDuals("optimal", float(res.objective), dual, x, info)
