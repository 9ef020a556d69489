"""The Lagrangian of a time-indexed model: a lower bound for *any* multipliers.

Every LP-based bound of :mod:`kvopt.mip.bounds` (the interval LP, the fixing LP of
``cp+exact``) reports not the LP solver's objective but the value computed here from the
multipliers it read off the LP duals, so the bound rests on this module's arithmetic and
on the validity of the rows, never on the solver.

Let ``y`` be the integer column vector of a feasible schedule whose starts lie in the start
windows of the model (:func:`kvopt.mip.model.builder.start_windows` keeps every schedule of
TEL ``<= UB``, in particular every optimum), ``c`` the latency costs and ``A y <= u`` the
inequality rows (memory, DFF, core, clique and lag-interval rows; each holds for every
feasible schedule: :mod:`kvopt.mip.model.builder`, :mod:`kvopt.mip.bounds.intervals`). The
assignment rows ``sum_k y[g, k] = |g|`` are kept. For ``mu >= 0``::

    TEL(y) = c.y >= c.y + mu.(A y - u) = sum_{g,k} r[g,k] y[g,k] - mu.u,   r = c + A^T mu.

Group ``g`` (identical requests) has ``sum_k y[g,k] = |g|`` and ``y >= 0``, so with
``m_g = min_k r[g,k]`` and any slot ``k*`` used by one of its requests,
``sum_k r[g,k] y[g,k] >= |g| m_g + (r[g,k*] - m_g)``. Hence

    TEL(y) >= L(mu) + delta[g, k*],   L(mu) = sum_g |g| m_g - mu.u,   delta = r - m_g >= 0.

So ``L(mu) <= OPT`` (weak duality; at the LP optimum's duals it equals the LP value), and
``delta`` are reduced costs: :mod:`kvopt.mip.bounds.fixing` removes a slot ``k`` of group
``g`` when ``L(mu) + delta[g, k] > UB - 1``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from kvopt.core.limits import Deadline
from kvopt.mip.model.data import MILPData

__all__ = ["lagrangian_at_duals", "lagrangian_reduced_costs", "lagrangian_value", "relaxed_rows",
           "subgradient"]


def lagrangian_reduced_costs(data: MILPData, mu: NDArray[np.float64]
                             ) -> tuple[float, NDArray[np.float64]]:
    """``(L(mu), delta)`` of the module docstring for multipliers ``mu`` (one per row).

    Assignment rows (kind ``"assign"``) are kept as constraints; every other row must be an
    upper-bounded inequality and gets ``max(mu, 0)``.

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> d = build_milp(inst, "tight")
    >>> L, delta = lagrangian_reduced_costs(d, np.zeros(d.n_rows))
    >>> L, bool((delta >= 0).all())           # mu = 0: every request alone
    (12.0, True)
    """
    kinds = np.asarray(data.row_kind)
    rel = kinds != "assign"
    if np.isfinite(data.row_lower[rel]).any() or not np.isfinite(data.row_upper[rel]).all():
        raise ValueError("lagrangian_reduced_costs: relaxed rows must be '<=' rows")
    assert data.col_group is not None
    m = np.where(rel, np.maximum(np.asarray(mu, dtype=np.float64), 0.0), 0.0)
    r = data.c + data.A.T @ m
    mins = np.full(len(data.groups), np.inf)
    np.minimum.at(mins, data.col_group, r)
    size = np.array([g.size for g in data.groups], dtype=np.float64)
    value = float(size @ mins) - float(m[rel] @ data.row_upper[rel]) + float(data.obj_offset)
    return value, r - mins[data.col_group]


def relaxed_rows(data: MILPData) -> NDArray[np.int64]:
    """Rows dualised by :func:`lagrangian_value`: every row but the assignment rows (all of
    them ``<=`` rows with ``row_lower = -inf``).

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> d = build_milp(Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8]),
    ...                "tight")
    >>> rows = relaxed_rows(d)                  # the 2 assignment rows stay as constraints
    >>> d.n_rows, rows.size, sorted({d.row_kind[i] for i in rows})
    (14, 12, ['memory'])
    """
    rel = np.array([k != "assign" for k in data.row_kind])
    if not np.isinf(data.row_lower[rel]).all():
        raise ValueError("lagrangian_value needs <= rows (row_lower = -inf) outside 'assign'")
    return np.flatnonzero(rel)


def lagrangian_value(data: MILPData, mu: NDArray[np.float64],
                     rows: NDArray[np.int64] | None = None
                     ) -> tuple[float, NDArray[np.float64]]:
    """Lagrangian bound of a time-indexed model for multipliers ``mu >= 0`` on its ``<=`` rows.

    ``L(mu) = sum_g |g| min_{j in g} (c_j + A_j^T mu) - mu^T b`` (computed by
    :func:`lagrangian_reduced_costs`) where the minimum runs over
    the columns (start slots) of group ``g``. For the optimal counts ``y*`` (integer, within
    the windows, ``A y* <= b``, ``sum_{j in g} y*_j = |g|``)::

        OPT = c^T y* >= c^T y* + mu^T (A y* - b) = sum_j (c_j + A_j^T mu) y*_j - mu^T b >= L(mu)

    so every ``mu >= 0`` gives a valid bound. Returns ``(L, x)`` with ``x`` the minimiser
    (counts on the cheapest column of each group), from which the subgradient ``A x - b``.

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> d = build_milp(Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8]),
    ...                "tight")
    >>> lagrangian_value(d, np.zeros(d.n_rows - 2))[0]    # mu = 0: both start at 0
    12.0
    """
    assert data.col_group is not None
    if rows is None:
        rows = relaxed_rows(data)
    full = np.zeros(data.n_rows)
    full[rows] = np.maximum(np.asarray(mu, dtype=np.float64), 0.0)
    val, delta = lagrangian_reduced_costs(data, full)
    # minimiser: all of a group's count on its first column of reduced cost 0
    cg = data.col_group
    x = np.zeros(data.n_cols)
    order = np.lexsort((delta, cg))
    first = order[np.concatenate([[True], cg[order][1:] != cg[order][:-1]])]
    x[first] = [data.groups[int(g)].size for g in cg[first]]
    return val, x


def lagrangian_at_duals(data: MILPData, row_dual: NDArray[np.float64], *, margin: float = 0.0
                        ) -> tuple[float, NDArray[np.float64]]:
    """``(L(mu), mu)`` at the multipliers read off an LP's row duals: ``row_dual`` has one
    entry per row of ``data`` in HiGHS' sign convention (``<= 0`` on a binding ``<=`` row of
    a minimisation), so ``mu = max(-row_dual, 0)`` on :func:`relaxed_rows`. The value is a
    bound for any duals (:func:`lagrangian_value`); at an LP optimum's duals it is the LP's
    value. ``margin`` lowers it by ``margin * max(1, |L|)``, a safety against the rounding
    of the sum.

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> from kvopt.mip.bounds.sparse_lp import solve_lp_duals
    >>> d = build_milp(Instance(memory=10, arrival=[0] * 3, prompt=[1, 1, 2],
    ...                         output=[4, 8, 6]), "tight")
    >>> lp = solve_lp_duals(d)
    >>> value, mu = lagrangian_at_duals(d, lp.row_dual)
    >>> round(value, 6) == round(lp.value, 6), bool((mu >= 0).all())
    (True, True)
    """
    rows = relaxed_rows(data)
    mu = np.maximum(-np.asarray(row_dual, dtype=np.float64)[rows], 0.0)
    value = float(lagrangian_value(data, mu, rows)[0])
    return value - margin * max(1.0, abs(value)), mu


def subgradient(data: MILPData, *, upper: float, deadline: Deadline,
                mu: NDArray[np.float64] | None = None, max_iterations: int = 100_000,
                scale: float = 2.0) -> tuple[float, NDArray[np.float64], int]:
    """Subgradient ascent on :func:`lagrangian_value` (Polyak steps towards ``upper``) until
    ``deadline``; returns ``(best bound, its multipliers, iterations)``.

    ``mu`` is the start (default zero) and ``scale`` the first step's share of the Polyak
    step, halved after 15 steps without a better bound: from an LP's multipliers a small
    one (0.1) keeps the steps near them.

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> d = build_milp(Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8]),
    ...                "tight")
    >>> best, mu, its = subgradient(d, upper=16.0, deadline=Deadline(5.0), max_iterations=50)
    >>> 12.0 <= best <= 16.0
    True
    """
    rows = relaxed_rows(data)
    Ar = data.A[rows].tocsr()
    b = data.row_upper[rows]
    mu = np.zeros(rows.size) if mu is None else np.maximum(np.asarray(mu, float), 0.0)
    best, best_mu = -np.inf, mu.copy()
    since, it = 0, 0
    while it < max_iterations and not deadline.expired():
        val, x = lagrangian_value(data, mu, rows)
        it += 1
        if val > best + 1e-9:
            best, best_mu, since = val, mu.copy(), 0
        else:
            since += 1
            if since >= 15:
                scale, since = scale / 2.0, 0
                if scale < 1e-6:
                    break
        g = Ar @ x - b
        g[(mu <= 0) & (g < 0)] = 0.0
        norm = float(g @ g)
        if norm < 1e-12:
            break
        gap = max(upper - val, 1e-3 * max(abs(upper), 1.0))
        mu = np.maximum(mu + scale * gap / norm * g, 0.0)
    return best, best_mu, it
