"""A branch-and-bound whose nodes are bounded by the interval LP: a bound above the LP's.

**The model** is the interval model of :func:`kvopt.mip.bounds.intervals.interval_model`
(``tight+cores`` plus the level-1 lag-interval rows; start windows from a schedule's TEL
``upper``, which keep every schedule of TEL ``<= upper``). A **node** is a set of start
columns; its **value** is the LP over those columns, solved in the row-differenced form of
:func:`kvopt.mip.bounds.sparse_lp.differenced_lp`, and reported as
:func:`kvopt.mip.bounds.lagrangian.lagrangian_value` of the model restricted to the node's
columns at the LP's duals, lowered by ``1e-9`` relative.

**Every node's value is a lower bound on every schedule of the node** (a schedule of TEL
``<= upper`` whose columns all lie in the node's set): the Lagrangian of the restricted model
is ``<=`` the TEL of every integral point of it for *any* multipliers ``>= 0``
(:mod:`kvopt.mip.bounds.lagrangian`), so the value rests on that arithmetic and not on the
LP solver's accuracy.

**The search** is best-first: the open node of smallest value is split on the *singleton*
group (one request; identical requests share a group, and a dichotomy of the group's columns
would not cover a schedule that starts its copies on both sides) of peak ``s + o > frac * M``
whose LP start has the largest standard deviation, at its weighted median ``m``: starts
``<= m`` in one child, ``> m`` in the other. Every schedule of the node starts that request
in exactly one of the two, so the open nodes always cover every schedule of TEL ``<=
upper``, and

    **OPT >= min(smallest open value, upper)** at every moment

(either an optimal schedule lies in an open node, or ``OPT >= upper``; a node of value
``> upper - 1`` holds no schedule of TEL ``< upper``, TEL being an integer, and is closed).
A child not solved in time keeps its parent's value (a bound on it: the child is a subset);
a child whose LP is infeasible holds no schedule and is closed. A node whose LP starts every
eligible request integrally is not split: the search ends there (``status="no split"``)
with its value; with ``frac = 0`` and no identical requests that LP solution is a schedule,
so the bound is then OPT (``"optimal"``).

**Node LPs** (:class:`WarmNodes`): one HiGHS instance holds the whole model; a node's columns
outside its set get upper bound 0 (the same LP as dropping them); the root is solved by
interior point with crossover, each child by dual simplex from its parent's optimal basis,
which stays dual feasible when columns are fixed at 0. A child whose simplex stops short of
an optimum or stalls (:attr:`WarmNodes.CAP`) is solved again from scratch. With
``warm=False`` every node is solved from scratch by
:func:`kvopt.mip.bounds.sparse_lp.solve_lp_duals` (the runs of ``reports/mip/README.md``
section 10.26).

**Measured** (``reports/mip/README.md`` sections 10.26, 10.28, 10.29): where OPT is proven it
closes a median 37 % / 31 % of the interval LP's distance to OPT at n = 14 / 16 in 60 s; past
the frontier rule (n = 22-30) a median 3.1 % of the default's certified gap in 60 s; at paper
scale (n ~ 50) 0.2-0.3 % of the LP's distance in 180 s. ``kvopt solve``'s portfolio runs it
on the bound child's core for ``n <=`` :data:`kvopt.mip.portfolio.BRANCH_MAX_N`.

Examples
--------
>>> from kvopt import Instance
>>> inst = Instance(memory=10, arrival=[0] * 5, prompt=[0, 2, 3, 3, 1],
...                 output=[6, 3, 6, 5, 4])              # OPT 43 (brute force)
>>> r = branch_bound(inst, upper=43.0, time_limit=60.0, frac=0.0)
>>> round(r.root, 2), r.bound, r.status
(39.41, 43.0, 'optimal')
>>> r = branch_bound(inst, upper=43.0, time_limit=60.0)     # only peaks > M / 2
>>> round(r.bound, 2), r.status
(41.8, 'no split')
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import time
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance
from kvopt.core.limits import Deadline, as_deadline
from kvopt.mip.model.data import MILPData

__all__ = ["BranchBound", "WarmNodes", "branch_bound"]

#: A simplex basis stored with an open node: the column and row statuses as small integers.
Basis = tuple[NDArray[np.int8], NDArray[np.int8]]
#: An open node whose LP was not solved (it holds its parent's value).
UNSOLVED = "unsolved"
#: What an open node does when popped: split a group at a start (``(group, m)``), stop
#: (``None``: every eligible start integral) or nothing (:data:`UNSOLVED`). Stored instead of
#: the node's LP solution ``x``, which took 8 of the ~11 bytes per column an open node held.
Plan = tuple[int, int] | None | str


@dataclass(frozen=True)
class BranchBound:
    """What :func:`branch_bound` found.

    Attributes
    ----------
    root
        The root LP's value (``-inf`` if it was not solved in time).
    bound
        ``min(smallest open value, upper)``: a lower bound on OPT (``-inf`` with no root).
    status
        ``"optimal"`` (the bound is OPT: every node closed at ``upper``, or a node's LP
        solution is a schedule); ``"no split"`` (the smallest open node starts every eligible
        request integrally); ``"node LP failed"`` (the smallest open node's LP was not solved
        with time left, so it can be neither split nor closed); ``"memory"`` (a
        ``MemoryError``, e.g. a child process's memory cap: the bound so far, the node being
        split counted as open); ``"time"``.
    nodes
        LPs solved, the root included.
    depth
        The deepest solved node.
    open
        Open nodes at the end.
    root_s
        Seconds from the call to the root LP's value (the model's build included).

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> r = branch_bound(inst, upper=12.0)
    >>> r.status, r.bound, r.nodes           # every node closed at upper: 12 is OPT
    ('optimal', 12.0, 1)
    """

    root: float
    bound: float
    status: str
    nodes: int
    depth: int
    open: int
    root_s: float


def _at_duals(sub: MILPData, row_dual: NDArray[np.float64]) -> float:
    """The Lagrangian value of a node's model ``sub`` (the model restricted to the node's
    columns) at an LP's ``row_dual`` (HiGHS' sign convention, the original rows), lowered by
    ``1e-9`` relative: a lower bound on every schedule of the node whatever the LP's
    accuracy."""
    from kvopt.mip.bounds.lagrangian import lagrangian_at_duals

    return lagrangian_at_duals(sub, row_dual, margin=1e-9)[0]


def cold_node(data: MILPData, keep: NDArray[np.bool_], deadline: Deadline | None
              ) -> tuple[float, NDArray[np.float64] | None]:
    """``(value, x)`` of the node ``keep`` of ``data`` solved from scratch by
    :func:`kvopt.mip.bounds.sparse_lp.solve_lp_duals`: the value as in the module docstring
    (``+inf`` if the LP is infeasible, ``-inf`` with ``x = None`` if it was not solved in
    time), and the LP's solution over all of ``data``'s columns.

    Examples
    --------
    >>> from kvopt import Instance
    >>> from kvopt.mip.bounds.intervals import interval_model
    >>> inst = Instance(memory=10, arrival=[0] * 3, prompt=[0, 2, 3], output=[6, 3, 6])
    >>> data = interval_model(inst, upper=30.0)
    >>> value, x = cold_node(data, np.ones(data.n_cols, dtype=bool), None)
    >>> round(value, 3), x.shape == (data.n_cols,)
    (20.0, True)
    """
    from kvopt.mip.bounds.columns import restrict_columns
    from kvopt.mip.bounds.sparse_lp import solve_lp_duals

    sub = restrict_columns(data, keep)
    res = solve_lp_duals(sub, deadline=deadline)
    if res.status == "infeasible":
        return np.inf, None
    if res.row_dual is None or res.x is None:
        return -np.inf, None
    x = np.zeros(data.n_cols)
    x[keep] = res.x
    return _at_duals(sub, res.row_dual), x


class WarmNodes:
    """The node LPs of one search in one HiGHS instance, each child warm-started from its
    parent's basis (module docstring).

    Values are those of :func:`cold_node` up to the LP's tolerances (the two may pick
    different optimal ``x`` where the LP has several, and so split differently).

    Examples
    --------
    >>> from kvopt import Instance
    >>> from kvopt.mip.bounds.intervals import interval_model
    >>> inst = Instance(memory=10, arrival=[0] * 5, prompt=[0, 2, 3, 3, 1],
    ...                 output=[6, 3, 6, 5, 4])
    >>> data = interval_model(inst, upper=43.0)
    >>> w = WarmNodes(data, Deadline(60.0))
    >>> v, x, basis = w.solve(np.ones(data.n_cols, dtype=bool), None)
    >>> keep = np.ones(data.n_cols, dtype=bool)
    >>> keep[(data.col_group == 0) & (data.col_start > 0)] = False      # request 0 at 0
    >>> warm, cold = w.solve(keep, basis)[0], cold_node(data, keep, None)[0]
    >>> round(v, 2), round(warm, 6) == round(cold, 6), warm >= v - 1e-6
    (39.41, True, True)
    """

    #: A warm node's simplex gets at most ``CAP`` times the root LP's seconds, and at least
    #: ``CAP_FLOOR`` seconds, before the node is solved from scratch instead.
    CAP = 2.0
    CAP_FLOOR = 0.5

    def __init__(self, data: MILPData, deadline: Deadline) -> None:
        import highspy

        from kvopt.mip.backends.highs import highs_lp
        from kvopt.mip.bounds.sparse_lp import differenced_lp

        relaxed = dataclasses.replace(data, integrality=np.zeros(data.n_cols, dtype=np.int8),
                                      x0=None)
        self.dif = differenced_lp(relaxed)
        self.data, self.deadline = data, deadline
        self.h = highspy.Highs()
        self.h.setOptionValue("output_flag", False)
        self.h.setOptionValue("threads", 1)
        self.h.passModel(highs_lp(self.dif.lp, relax=True))
        self.cols = np.arange(data.n_cols, dtype=np.int32)
        self.root_s: float | None = None
        self.statuses = [highspy.HighsBasisStatus(i) for i in range(5)]

    def solve(self, keep: NDArray[np.bool_], basis: Basis | None
              ) -> tuple[float, NDArray[np.float64] | None, Basis | None]:
        """``(value, x, basis)`` of the node ``keep`` from its parent's ``basis`` (``None``:
        the root, by interior point): ``value`` as :func:`cold_node`'s (``+inf``: infeasible;
        ``-inf`` with ``x = None``: not solved in time), ``x`` the LP's solution over all of
        ``data``'s columns, ``basis`` the node's optimal basis for its children. Where dual
        simplex stops short of an optimum (HiGHS' ``Unknown`` status, seen once in the first
        1190 nodes of frontier n = 14 seed 0 with ``frac = 0``) or stalls (past :attr:`CAP`
        times the root's seconds, at least :attr:`CAP_FLOOR`: one node of ``paper-M``
        n = 22 seed 1 took 24.5 s for 1168 iterations where its siblings took 0.15 s), the node
        is solved again from scratch by interior point."""
        import highspy

        from kvopt.mip.bounds.columns import restrict_columns

        h, data = self.h, self.data
        if self.deadline.expired():
            return -np.inf, None, None
        upper = np.where(keep, data.col_upper, 0.0)
        h.changeColsBounds(self.cols.size, self.cols, data.col_lower.astype(np.float64), upper)
        h.setOptionValue("solver", "ipx" if basis is None else "simplex")
        if basis is not None:
            b = highspy.HighsBasis()
            b.col_status = [self.statuses[v] for v in basis[0].tolist()]
            b.row_status = [self.statuses[v] for v in basis[1].tolist()]
            b.valid = True
            h.setBasis(b)
        left = self.deadline.remaining(floor=1e-3)
        left = np.inf if left is None else left
        if basis is not None and self.root_s is not None:
            left = min(left, max(self.CAP * self.root_s, self.CAP_FLOOR))
        # HiGHS compares its time limit with the run time summed over the instance's runs
        h.setOptionValue("time_limit", h.getRunTime() + left)
        t0 = time.perf_counter()
        h.run()
        if self.root_s is None:
            self.root_s = time.perf_counter() - t0
        S = highspy.HighsModelStatus
        ms = h.getModelStatus()
        if ms in (S.kInfeasible, S.kUnboundedOrInfeasible):   # c >= 0, y >= 0: not unbounded
            return np.inf, None, None
        if ms != S.kOptimal or h.getInfo().dual_solution_status != 2:
            if basis is not None and not self.deadline.expired():
                h.clearSolver()             # simplex gave up or stalled: from scratch, as cold
                return self.solve(keep, None)
            return -np.inf, None, None
        sol = h.getSolution()
        x = np.asarray(sol.col_value, dtype=np.float64)[: data.n_cols]
        mu = self.dif.original_duals(np.asarray(sol.row_dual, dtype=np.float64))
        got = h.getBasis()
        new: Basis = (np.fromiter(map(int, got.col_status), dtype=np.int8),
                      np.fromiter(map(int, got.row_status), dtype=np.int8))
        return _at_duals(restrict_columns(data, keep), mu), x, new


def split_point(data: MILPData, x: NDArray[np.float64], eligible: NDArray[np.bool_]
                ) -> tuple[int, int] | None:
    """``(group, m)`` to split on: the eligible group whose LP start (``x``) has the largest
    standard deviation, and its weighted median start ``m`` (moved down one support point when
    no weight lies above it, so both children keep a support point); ``None`` when every
    eligible group's start is integral.

    Examples
    --------
    >>> d = dataclasses.replace(MILPData.example(), col_group=np.array([0, 0]),
    ...                         col_start=np.array([0, 1]))     # one group, starts 0 and 1
    >>> split_point(d, np.array([0.5, 0.5]), np.array([True]))
    (0, 0)
    >>> split_point(d, np.array([0.0, 1.0]), np.array([True])) is None
    True
    """
    cg, cs = data.col_group, data.col_start
    assert cg is not None and cs is not None
    best: tuple[float, int, int] | None = None
    for g in np.flatnonzero(eligible):
        sel = (cg == g) & (x > 1e-9)
        k, w = cs[sel], x[sel]
        if k.size < 2:
            continue
        order = np.argsort(k)
        k, w = k[order], w[order]
        mean = float(w @ k / w.sum())
        sd = float(np.sqrt(w @ (k - mean) ** 2 / w.sum()))
        m = int(k[np.searchsorted(np.cumsum(w) / w.sum(), 0.5 - 1e-12)])
        if m >= k[-1]:
            m = int(k[-2])
        if best is None or sd > best[0]:
            best = (sd, int(g), m)
    return None if best is None else (best[1], best[2])


def branch_bound(instance: Instance, *, upper: float, time_limit: float | None = 60.0,
                 deadline: Deadline | None = None, frac: float = 0.5,
                 warm: bool = True) -> BranchBound:
    """Best-first branch-and-bound with interval-LP nodes (module docstring).

    Parameters
    ----------
    instance
        A slotted instance.
    upper
        TEL of a feasible schedule: it sets the start windows and closes nodes of value
        ``> upper - 1``.
    time_limit, deadline
        Wall-clock seconds for the whole call (the model's build and the root LP included),
        or a caller's :class:`~kvopt.core.limits.Deadline` to share.
    frac
        Split only requests of peak ``s + o > frac * M`` (``0``: every request).
    warm
        Node LPs by :class:`WarmNodes` (default) or from scratch by :func:`cold_node`.

    Returns
    -------
    BranchBound
        ``bound <= OPT`` (``-inf`` when the root LP was not solved in time).

    Examples
    --------
    Warm and cold nodes have the same values up to the LP's tolerances, but where a node's LP
    has several optimal solutions the two may split differently:

    >>> from kvopt import Instance
    >>> inst = Instance(memory=10, arrival=[0] * 5, prompt=[0, 2, 3, 3, 1],
    ...                 output=[6, 3, 6, 5, 4])              # OPT 43 (brute force)
    >>> for warm in (True, False):
    ...     r = branch_bound(inst, upper=43.0, frac=0.0, warm=warm)
    ...     print(round(r.root, 2), r.bound, r.status, r.nodes)
    39.41 43.0 optimal 23
    39.41 43.0 optimal 31
    """
    from kvopt.mip.bounds.intervals import interval_model

    instance.require_slotted()
    if not 0.0 <= frac <= 1.0:
        from kvopt.core.errors import UsageError

        raise UsageError("frac", f"must be in [0, 1], got {frac!r}")
    dl = as_deadline(time_limit, deadline)
    data = interval_model(instance, upper=upper)
    s, o, M = instance.prompt, instance.output, instance.memory
    eligible = np.array([g.size == 1 and s[g[0]] + o[g[0]] > frac * M for g in data.groups])
    assert data.col_group is not None and data.col_start is not None
    cg, cs = data.col_group, data.col_start
    nodes_lp = WarmNodes(data, dl) if warm else None

    def node(keep: NDArray[np.bool_], basis: Basis | None
             ) -> tuple[float, NDArray[np.float64] | None, Basis | None]:
        if nodes_lp is not None:
            return nodes_lp.solve(keep, basis)
        return (*cold_node(data, keep, dl), None)

    def plan(x: NDArray[np.float64] | None) -> Plan:
        """What an open node does when popped, decided now so that it keeps no ``x``: split
        there, stop (``None``: every eligible start integral) or :data:`UNSOLVED`."""
        return UNSOLVED if x is None else split_point(data, x, eligible)

    keep = np.ones(data.n_cols, dtype=bool)
    root, x, basis = node(keep, None)
    root_s = dl.elapsed()
    if x is None and root == -np.inf:
        return BranchBound(-np.inf, -np.inf, "time" if dl.expired() else "node LP failed",
                           0, 0, 0, root_s)
    tick = itertools.count()
    heap: list[tuple[float, int, int, NDArray[np.bool_], Plan, Basis | None]] = [
        (root, next(tick), 0, keep, plan(x), basis)]
    nodes, depth, status = 1, 0, "time"
    expanding = np.inf          # the value of a node popped and not yet replaced by its children
    try:
        while heap:
            value, _, d, keep, todo, basis = heap[0]
            if value > upper - 1 + 1e-6:
                heap = []
                break
            if isinstance(todo, str) or dl.expired():      # str: UNSOLVED
                if isinstance(todo, str) and not dl.expired():
                    status = "node LP failed"               # its value is its parent's
                break
            if todo is None:
                exact = frac <= 0 and all(g.size == 1 for g in data.groups)
                status = "optimal" if exact else "no split"
                break
            heapq.heappop(heap)
            expanding = value
            g, m = todo
            col = cg == g
            for side in (cs <= m, cs > m):
                child: NDArray[np.bool_] = keep & ~(col & ~side)
                cv, cx, cb = node(child, basis)
                if cx is None and cv == -np.inf:       # not solved in time: the parent's value
                    cv = value
                else:
                    nodes += 1
                    depth = max(depth, d + 1)
                if cv <= upper - 1 + 1e-6:
                    heapq.heappush(heap, (max(cv, value), next(tick), d + 1, child, plan(cx),
                                          cb))
            expanding = np.inf
    except MemoryError:         # the caller's memory cap: stop with the bound so far
        status = "memory"
    if not heap and status != "memory":                # every node closed at upper
        status = "optimal"
    bound = min(heap[0][0] if heap else upper, expanding, upper)
    return BranchBound(root, bound, status, nodes, depth, len(heap), root_s)
