"""Issue 22, figure 2: a branch-and-bound whose nodes are bounded by the interval LP.

**Question.** The issue lists, among the ideas not tried, "a branch-and-bound whose nodes are
bounded by the interval LP (the sparse form) and branch on the start of the serial tail of
big requests". Partial integrality solved by HiGHS (``reports/mip/README.md`` section 10.8)
is that search with HiGHS's own rules on the dense rows, and at paper scale it never got past
its root. This script measures the search itself with the toolkit's LP: how far the bound
rises within a call's time at n ~ 50, and, where OPT is proven, what share of the LP's gap
it closes.

**The search.** The model is the interval model of
:func:`kvopt.mip.bounds.intervals.interval_bound` (``tight+cores`` plus the level-1
lag-interval rows; start windows from the reference schedule's TEL, which keep every optimal
schedule). A node is a set of start columns; its value is the LP over those columns, solved
in the row-differenced form of :func:`kvopt.mip.bounds.sparse_lp.solve_lp_duals`: by
:class:`WarmNodes`, one HiGHS instance whose root is solved by interior point with crossover
and each child by dual simplex from its parent's basis (section 10.28), or with ``--cold`` by
``solve_lp_duals`` itself, from scratch per node (section 10.26's runs). The value is
:func:`kvopt.mip.bounds.lagrangian.lagrangian_value` at the LP's duals over the node's
columns (valid for any multipliers, lowered by ``1e-9`` relative). Best-first: the open
node of smallest value is split on the **singleton** group (one request; identical requests
share a group and a dichotomy of their columns would not cover every schedule) of peak
``s + o > frac * M`` whose LP start has the largest standard deviation, at its weighted
median ``m``: starts ``<= m`` in one child, ``> m`` in the other. Every schedule of the node
starts that request in exactly one child, so **the smallest value over the open nodes is a
lower bound on OPT** at every moment (a child not solved in time keeps its parent's value, as
does a cold child whose LP is infeasible: interior point on the differenced form reports an
error there, not infeasibility; a warm child found infeasible is closed). A node whose LP
starts every eligible request integrally is not split: it stays open with its value (with
``frac = 0`` and no identical requests its LP solution is then a schedule, so when it is the
smallest open node the search has proven OPT). Nodes of value ``> UB - 1`` are closed
(objective values are integers).

Prints per instance the reference (the committed certificate at paper scale, or the proven
OPT on the frontier records), the root LP, the bound when stopped, the share of the root's
gap to the reference it closed, the nodes solved, the deepest node, the mean seconds per node
after the root and the wall seconds.

Runs of ``reports/mip/README.md`` section 10.26 (cold nodes; they were made before the
seconds-per-node column, which ``--cold`` now adds)::

    PYTHONPATH=. python benchmarks/mip_branch.py reports/mip/frontier_cpu_v2.json \\
        --n 14 16 --seconds 60 --cold > reports/mip/branch_frontier.txt
    PYTHONPATH=. python benchmarks/mip_branch.py reports/mip/paper_scale \\
        --only model1-seed1 model2-seed2 --seconds 180 --cold > reports/mip/branch_paper.txt

and of section 10.28 (warm nodes), the same without ``--cold``, into
``reports/mip/branch_frontier_warm.txt`` and ``branch_paper_warm.txt``, and with ``--frac 0``
(split every request) into ``branch_frontier_warm_frac0.txt``.

**Past the frontier rule** (``RECORDS.json`` a family of ``benchmarks/mip_dual_small.py``,
``paper-M`` or ``paper-M2``, sizes ``--n``, seeds ``--seeds``, default 0): would the default's
bound child gain from branching once its interval LP is solved? Per instance, the default
``kvopt solve X --time-limit D`` (``--default-seconds``) gives the reference schedule and the
default's own bound and certified gap; then the search runs ``--seconds`` with that schedule's
TEL as ``upper``, and its bound (rounded up: TEL is an integer) gives the certified gap the
default would print with it::

    PYTHONPATH=. python benchmarks/mip_branch.py paper-M --n 22 26 30 --seeds 0 1 \\
        --default-seconds 60 --seconds 60 --cold > reports/mip/branch_past_frontier_M.txt
    # the same with paper-M2 > reports/mip/branch_past_frontier_M2.txt

(section 10.26's runs, cold; section 10.28's, warm, without ``--cold`` into
``branch_past_frontier_M_warm.txt`` and ``branch_past_frontier_M2_warm.txt``).
"""

from __future__ import annotations

import argparse
import dataclasses
import heapq
import itertools
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _at_duals(sub: Any, row_dual: NDArray[np.float64]) -> float:
    """The Lagrangian value of a node's model ``sub`` (the search's model restricted to the
    node's columns) at an LP's ``row_dual`` (HiGHS' sign convention, the original rows),
    lowered by ``1e-9`` relative: a lower bound on every schedule of the node whatever the
    LP's accuracy."""
    from kvopt.mip.bounds.lagrangian import lagrangian_value, relaxed_rows

    rows = relaxed_rows(sub)
    value = float(lagrangian_value(sub, np.maximum(-row_dual[rows], 0.0), rows)[0])
    return value - 1e-9 * max(1.0, abs(value))


def _node_lp(data: Any, keep: NDArray[np.bool_], deadline: Any
             ) -> tuple[float, NDArray[np.float64] | None]:
    """``(value, x)`` of the LP over the columns ``keep`` of ``data``, solved cold: the
    Lagrangian value at the LP's duals (``+inf`` if no schedule uses only those columns,
    ``-inf`` and ``None`` if the LP was not solved in time), and the LP's solution over all
    of ``data``'s columns."""
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


#: A simplex basis stored with an open node: the column and row statuses as small integers.
Basis = tuple[NDArray[np.int8], NDArray[np.int8]]


class WarmNodes:
    """The node LPs of one search in one HiGHS instance, each child warm-started from its
    parent's basis.

    The model is the row-differenced LP of ``data`` (:func:`kvopt.mip.bounds.sparse_lp.
    differenced_lp`, the form :func:`~kvopt.mip.bounds.sparse_lp.solve_lp_duals` solves). A
    node's columns outside ``keep`` get upper bound 0, the same LP as dropping them. The root
    is solved by interior point with crossover, as cold; a child by dual simplex from its
    parent's optimal basis, which stays dual feasible when columns are fixed at 0. Values are
    :func:`_at_duals` at the solution's duals, so they are valid bounds as cold ones are; they
    equal cold values up to the LP's tolerances (the two may pick different optimal ``x``
    where the LP has several, and so split differently).

    Examples
    --------
    >>> from kvopt import Instance
    >>> from kvopt.core.limits import Deadline
    >>> from kvopt.mip.bounds.intervals import interval_model
    >>> inst = Instance(memory=10, arrival=[0] * 5, prompt=[0, 2, 3, 3, 1],
    ...                 output=[6, 3, 6, 5, 4])
    >>> data = interval_model(inst, upper=43.0)
    >>> w = WarmNodes(data, Deadline(60.0))
    >>> v, x, basis = w.solve(np.ones(data.n_cols, dtype=bool), None)
    >>> keep = np.ones(data.n_cols, dtype=bool)
    >>> keep[(data.col_group == 0) & (data.col_start > 0)] = False      # request 0 at 0
    >>> warm, cold = w.solve(keep, basis)[0], _node_lp(data, keep, None)[0]
    >>> round(v, 2), round(warm, 6) == round(cold, 6), warm >= v - 1e-6
    (39.41, True, True)
    """

    #: A warm node's simplex gets at most ``CAP`` times the root LP's seconds, and at least
    #: ``CAP_FLOOR`` seconds, before the node is solved from scratch instead.
    CAP = 2.0
    CAP_FLOOR = 0.5

    def __init__(self, data: Any, deadline: Any) -> None:
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
        the root, by interior point): ``value`` as :func:`_node_lp`'s (``+inf``: infeasible;
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


def _split(data: Any, x: NDArray[np.float64], eligible: NDArray[np.bool_]
           ) -> tuple[int, int] | None:
    """``(group, m)`` to split on: the eligible group whose LP start has the largest standard
    deviation, and its weighted median start ``m`` (moved down one support point when no
    weight lies above it); ``None`` when every eligible group's start is integral."""
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


def branch_and_bound(instance: Any, upper: float, seconds: float, frac: float = 0.5,
                     warm: bool = True) -> dict[str, Any]:
    """Best-first branch-and-bound with interval-LP nodes (module docstring) for ``seconds``
    of wall time; returns ``root``, ``bound`` (the smallest open value, ``<= OPT``),
    ``status`` (``"optimal"``: the bound is a schedule's TEL, or every node closed at
    ``upper``; ``"no split"``: the smallest open node starts every eligible request
    integrally; ``"node LP failed"``: the smallest open node's LP was not solved with time
    left, so it can be neither split nor closed; ``"time"``), ``nodes`` (LPs solved),
    ``depth`` (the deepest solved node), ``open`` (open nodes) and ``root_s`` (the wall
    seconds to the root LP's value). When the root LP is not solved in time, ``root`` and
    ``bound`` are ``-inf``. Node LPs are solved by
    :class:`WarmNodes` (``warm``) or cold by :func:`_node_lp` (section 10.26's runs).

    Warm and cold nodes have the same values up to the LP's tolerances, but where a node's LP
    has several optimal solutions the two may split differently (below: 23 and 31 nodes).

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=10, arrival=[0] * 5, prompt=[0, 2, 3, 3, 1],
    ...                 output=[6, 3, 6, 5, 4])              # OPT 43 (brute force)
    >>> for warm in (True, False):
    ...     r = branch_and_bound(inst, upper=43.0, seconds=60.0, frac=0.0, warm=warm)
    ...     print(round(r["root"], 2), r["bound"], r["status"], r["nodes"])
    39.41 43.0 optimal 23
    39.41 43.0 optimal 31
    >>> r = branch_and_bound(inst, upper=43.0, seconds=60.0)     # only peaks > M / 2
    >>> round(r["bound"], 2), r["status"]
    (41.8, 'no split')
    """
    from kvopt.core.limits import Deadline
    from kvopt.mip.bounds.intervals import interval_model

    dl = Deadline(seconds)
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
        return (*_node_lp(data, keep, dl), None)

    keep = np.ones(data.n_cols, dtype=bool)
    root, x, basis = node(keep, None)
    root_s = dl.elapsed()
    tick = itertools.count()
    heap: list[tuple[float, int, int, NDArray[np.bool_], Any, Basis | None]] = [
        (root, next(tick), 0, keep, x, basis)]
    nodes, depth, status = 1, 0, "time"
    while heap:
        value, _, d, keep, x, basis = heap[0]
        if value > upper - 1 + 1e-6:
            heap = []
            break
        if x is None or dl.expired():
            if x is None and not dl.expired():
                status = "node LP failed"               # its value is its parent's
            break
        split = _split(data, x, eligible)
        if split is None:
            exact = frac <= 0 and all(g.size == 1 for g in data.groups)
            status = "optimal" if exact else "no split"
            break
        heapq.heappop(heap)
        g, m = split
        col = cg == g
        for side in (cs <= m, cs > m):
            child: NDArray[np.bool_] = keep & ~(col & ~side)
            cv, cx, cb = node(child, basis)
            if cx is None and cv == -np.inf:           # not solved in time: the parent's value
                cv = value
            else:
                nodes += 1
                depth = max(depth, d + 1)
            if cv <= upper - 1 + 1e-6:
                heapq.heappush(heap, (max(cv, value), next(tick), d + 1, child, cx, cb))
    if not heap:                                       # every node closed at upper
        status = "optimal"
    bound = min(heap[0][0], upper) if heap else upper
    return {"root": root, "bound": bound, "status": status, "nodes": nodes, "depth": depth,
            "open": len(heap), "root_s": root_s}


#: Instance families of ``benchmarks/mip_dual_small.py`` that ``RECORDS.json`` may name
#: instead (past the frontier rule, module docstring).
FAMILIES = ("paper-M", "paper-M2")


def _per_node(r: dict[str, Any], wall: float) -> str:
    """Mean wall seconds per node after the root, as printed (``-`` with no child solved)."""
    return "-" if r["nodes"] < 2 else f"{(wall - r['root_s']) / (r['nodes'] - 1):.2f}"


def past_frontier(jobs: list[tuple[str, Any]], default_seconds: float, seconds: float,
                  frac: float, warm: bool = True) -> None:
    """Print a row per ``(name, instance)`` of ``jobs``: the default's schedule, bound and
    certified gap at ``default_seconds``, and the search's bound and gap after ``seconds``
    more with that schedule's TEL as ``upper`` (module docstring)."""
    import math
    import tempfile

    from mip_default import run_cli, summary

    print("| instance | n | M | default: schedule | bound | gap | root LP | search's bound | "
          "gap | nodes | depth | s per node | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, inst in jobs:
        with tempfile.TemporaryDirectory() as tmp:
            path = str(Path(tmp) / "x.json")
            inst.save(path)
            rec = run_cli(["solve", path, "--time-limit", f"{default_seconds:g}"],
                          timeout=default_seconds + 120)
        d = summary(rec)                      # the bound rounded up, the certified gap
        if d["schedule"] is None or d["gap"] is None:
            raise RuntimeError(f"{name}: kvopt solve gave no schedule or bound: {rec['doc']}")
        ub, lb = float(d["schedule"]), float(d["bound"])
        t0 = time.perf_counter()
        r = branch_and_bound(inst, ub, seconds, frac, warm)
        wall = time.perf_counter() - t0
        if not np.isfinite(r["root"]):
            print(f"| {name} | {inst.n} | {inst.memory} | {ub:.0f} | {lb:.0f} | "
                  f"{100 * d['gap']:.2f} % | - | root LP not solved in {seconds:g} s "
                  f"| - | 0 | 0 | - | {wall:.1f} |", flush=True)
            continue
        if r["bound"] > ub + 1e-6:
            raise RuntimeError(f"{name}: bound {r['bound']} above the schedule's {ub}")
        bb = math.ceil(r["bound"] - 1e-6)
        print(f"| {name} | {inst.n} | {inst.memory} | {ub:.0f} | {lb:.0f} | "
              f"{100 * d['gap']:.2f} % | {r['root']:.2f} | {bb} | "
              f"{100 * (ub - bb) / ub:.2f} % | {r['nodes']} | {r['depth']} | "
              f"{_per_node(r, wall)} | {wall:.1f} |", flush=True)


def main(argv: list[str] | None = None) -> int:
    from mip_staged_lp import add_record_arguments, frontier_or_paper_jobs

    from kvopt.cli.common import float_in

    p = argparse.ArgumentParser(
        prog="mip_branch.py",
        description="Branch-and-bound with interval-LP nodes (module docstring): the bound "
                    "after a time limit against the root LP and the certificate or proven "
                    "optimum; with RECORDS.json paper-M or paper-M2, against the default's "
                    "schedule and bound on that family's instances of sizes --n.")
    add_record_arguments(p, default_n=14)
    p.add_argument("--seconds", type=float_in(0, lo_open=True), default=60.0,
                   help="wall seconds per instance, the root LP included (default 60)")
    p.add_argument("--frac", type=float_in(0, 1), default=0.5,
                   help="split only requests of peak s + o > FRAC * M (default 0.5)")
    p.add_argument("--default-seconds", type=float_in(0, lo_open=True), default=60.0,
                   help=f"with RECORDS.json one of {', '.join(FAMILIES)}: the default's "
                        "--time-limit (default 60)")
    p.add_argument("--cold", action="store_true",
                   help="solve every node's LP from scratch by interior point, as the runs "
                        "of section 10.26 did (default: dual simplex from the parent's basis)")
    args = p.parse_args(argv)
    if args.records in FAMILIES:
        from mip_dual_small import make

        if args.only is not None:
            p.error(f"--only: names paper-scale instances, not {args.records}'s (use --n/--seeds)")
        try:
            fam = [(f"{args.records} n = {n} seed {seed}", make(args.records, n, seed))
                   for n in args.n for seed in args.seeds or [0]]
        except ValueError as exc:
            p.error(f"--n/--seeds: {exc}")
        print(f"# benchmarks/mip_branch.py {' '.join(sys.argv[1:] if argv is None else argv)}")
        past_frontier(fam, args.default_seconds, args.seconds, args.frac, not args.cold)
        return 0
    paper, jobs = frontier_or_paper_jobs(p, args.records, args.only, args.n, args.seeds,
                                         "frontier n = {n} seed {seed}")
    print(f"# benchmarks/mip_branch.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    ref = "certificate" if paper else "OPT"
    print(f"| instance | n | {ref} | root LP | bound | closed | status | nodes | depth | "
          f"s per node | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, inst, o in jobs:
        t0 = time.perf_counter()
        r = branch_and_bound(inst, float(o), args.seconds, args.frac, not args.cold)
        wall = time.perf_counter() - t0
        if not np.isfinite(r["root"]):
            print(f"| {name} | {inst.n} | {o:.0f} | - | - | - | root LP not solved in "
                  f"{args.seconds:g} s | 0 | 0 | - | {wall:.1f} |", flush=True)
            continue
        if r["bound"] > o + 1e-6:
            raise RuntimeError(f"{name}: bound {r['bound']} above the reference {o}")
        closed = (r["bound"] - r["root"]) / (o - r["root"]) if o > r["root"] else 1.0
        print(f"| {name} | {inst.n} | {o:.0f} | {r['root']:.2f} | {r['bound']:.2f} | "
              f"{100 * closed:.1f} % | {r['status']} | {r['nodes']} | {r['depth']} | "
              f"{_per_node(r, wall)} | {wall:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
