"""Issue 22: the interval LP's dual gap on the frontier instances the state search proved.

With every frontier instance (``M ~ U{n..n+10}``, Model 1 otherwise, K seeds per n; see
``benchmarks/mip_synthetic.py``) up to n = 16 proven, the gap between the lag-interval LP
(:func:`kvopt.mip.bounds.intervals.interval_bound`, windows from OPT) and OPT is measured on
all of them, not only on the easy ones. The optima come from the records of
``benchmarks/mip_frontier_cpu.py`` (its ``statespace`` method, status ``optimal``): the
value the state search proved (its schedule's TEL, or the incumbent it proved optimal).

``--root-cuts S`` also gives the same model (``tight+cores`` plus the interval rows, windows
from OPT) to HiGHS as a MIP, stopped after its root node (``mip_max_nodes = 1``, one thread, at
most ``S`` seconds): its dual bound after the root's cut rounds, and the share of the
LP-to-OPT gap those generic cuts (knapsack covers, cliques, MIR, ...) close.
``--root-solver scip`` gives the same model to SCIP instead (``limits/nodes = 1``, one
thread, at most ``S`` seconds), a second solver's generic cuts; it needs PySCIPOpt, which is
not a kvopt dependency (``pip install pyscipopt``; the run of record used 6.3.0).

Examples (the runs of reports/mip/frontier_dual.txt and frontier_dual_root.txt)::

    PYTHONPATH=. python benchmarks/mip_frontier_dual.py reports/mip/frontier_cpu_v2.json \\
        > reports/mip/frontier_dual.txt
    PYTHONPATH=. nice -n 19 python benchmarks/mip_frontier_dual.py \\
        reports/mip/frontier_cpu_v2.json --root-cuts 120 > reports/mip/frontier_dual_root.txt
    PYTHONPATH=. python benchmarks/mip_frontier_dual.py reports/mip/frontier_cpu_v2.json \\
        --root-cuts 120 --root-solver scip > reports/mip/frontier_dual_root_scip.txt
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mip_synthetic import make_instance


def highs_mip_bound(inst: Any, upper: float, seconds: float, *,
                    integral: Any = None, max_nodes: int | None = None
                    ) -> tuple[float, float, int]:
    """HiGHS's dual bound on the interval model (``tight+cores`` plus the level-1 interval
    rows, windows from ``upper``) as a MIP, its CPU seconds and the nodes it counted (one
    thread, at most ``seconds``). ``integral`` (a boolean per group of the model, default all)
    says whose start variables stay integral; the others are relaxed, which leaves a valid
    relaxation of the exact model. ``-inf`` if HiGHS stopped before its root LP."""
    import highspy
    import numpy as np

    from kvopt.mip.bounds.intervals import interval_model

    data = interval_model(inst, upper=upper)
    A = data.A.tocsc()
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = data.n_cols, data.n_rows
    lp.col_cost_, lp.offset_ = data.c, data.obj_offset
    lp.col_lower_, lp.col_upper_ = data.col_lower, data.col_upper
    lp.row_lower_, lp.row_upper_ = data.row_lower, data.row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    keep = (np.asarray(data.integrality, bool) if integral is None
            else np.asarray(integral, bool)[data.col_group])
    lp.integrality_ = [highspy.HighsVarType.kInteger if v else highspy.HighsVarType.kContinuous
                       for v in keep]
    h = highspy.Highs()
    for k, v in (("output_flag", False), ("threads", 1), ("time_limit", float(seconds)),
                 ("random_seed", 0)):
        h.setOptionValue(k, v)
    if max_nodes is not None:
        h.setOptionValue("mip_max_nodes", int(max_nodes))
    h.passModel(lp)
    c0 = time.process_time()
    h.run()
    info = h.getInfo()
    return float(info.mip_dual_bound), time.process_time() - c0, int(info.mip_node_count)


def root_bound(inst: Any, upper: float, seconds: float) -> tuple[float, float, int]:
    """HiGHS's dual bound after the root node of the interval model as a MIP, its CPU
    seconds and the nodes it counted (one thread; ``mip_max_nodes = 1``)."""
    return highs_mip_bound(inst, upper, seconds, max_nodes=1)


def scip_mip_bound(inst: Any, upper: float, seconds: float, *,
                   integral: Any = None, max_nodes: int | None = None
                   ) -> tuple[float, float, int]:
    """SCIP's dual bound on the model of :func:`highs_mip_bound` (the same ``integral`` and
    ``max_nodes``; one thread, at most ``seconds``), its CPU seconds and its node count. Every
    row and column of the model goes to SCIP as it is, so the bound is SCIP's claim about the
    same MIP; the callers check it against OPT. ``-inf`` if SCIP stopped before its root LP.
    Needs PySCIPOpt, which kvopt does not depend on."""
    import numpy as np
    from pyscipopt import Model, quicksum

    from kvopt.mip.bounds.intervals import interval_model

    data = interval_model(inst, upper=upper)
    keep = (np.asarray(data.integrality, bool) if integral is None
            else np.asarray(integral, bool)[data.col_group])
    m = Model()
    m.hideOutput()
    for k, v in (("limits/time", float(seconds)), ("parallel/maxnthreads", 1),
                 ("randomization/randomseedshift", 0)):
        m.setParam(k, v)
    if max_nodes is not None:
        m.setParam("limits/nodes", int(max_nodes))
    x = [m.addVar(lb=float(data.col_lower[j]), ub=float(data.col_upper[j]),
                  vtype="I" if keep[j] else "C", obj=float(data.c[j]))
         for j in range(data.n_cols)]
    A = data.A.tocsr()
    for i in range(data.n_rows):
        lo, hi = float(data.row_lower[i]), float(data.row_upper[i])
        cols = range(A.indptr[i], A.indptr[i + 1])
        expr = quicksum(float(A.data[q]) * x[int(A.indices[q])] for q in cols)
        if np.isfinite(lo):
            m.addCons(expr >= lo)
        if np.isfinite(hi):
            m.addCons(expr <= hi)
    c0 = time.process_time()
    m.optimize()
    bound = float(m.getDualbound())
    bound = bound + data.obj_offset if abs(bound) < 1e20 else -math.inf
    return bound, time.process_time() - c0, int(m.getNNodes())


def scip_root_bound(inst: Any, upper: float, seconds: float) -> tuple[float, float, int]:
    """SCIP's dual bound after the root node of the same model as :func:`root_bound`
    (:func:`scip_mip_bound` with ``limits/nodes = 1``)."""
    return scip_mip_bound(inst, upper, seconds, max_nodes=1)


def _parser() -> argparse.ArgumentParser:
    from kvopt.cli.common import float_in

    p = argparse.ArgumentParser(
        prog="mip_frontier_dual.py",
        description="The interval LP's dual gap (and, with --root-cuts, HiGHS's root-cut bound) "
                    "on the frontier instances the state search proved.")
    p.add_argument("records", metavar="RECORDS.json",
                   help="records of benchmarks/mip_frontier_cpu.py "
                        "(reports/mip/frontier_cpu_v2.json)")
    p.add_argument("--root-cuts", metavar="S", type=float_in(0, lo_open=True), default=None,
                   help="also run the root node of --root-solver (HiGHS by default) on each "
                        "instance, at most S seconds (> 0)")
    p.add_argument("--root-solver", choices=("highs", "scip"), default="highs",
                   help="whose root node --root-cuts runs (scip needs PySCIPOpt, not a kvopt "
                        "dependency)")
    return p


def main(argv: list[str] | None = None) -> int:
    from kvopt.mip.bounds.intervals import interval_bound

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    args = parser.parse_args(argv)
    root_s = args.root_cuts
    solver = {"highs": "HiGHS", "scip": "SCIP"}[args.root_solver]
    if args.root_solver == "scip":
        try:
            import pyscipopt  # noqa: F401
        except ImportError:
            parser.error("--root-solver scip: PySCIPOpt is not installed (pip install pyscipopt)")
    from mip_frontier_cpu import read_proven_optima

    opt = read_proven_optima(parser, args.records, "RECORDS.json")
    print(f"benchmarks/mip_frontier_dual.py {' '.join(argv)}")
    if root_s is None:
        print("| n | seed | OPT | interval LP | dual gap |")
        print("|---|---|---|---|---|")
    else:
        print(f"| n | seed | OPT | interval LP | dual gap | after {solver} root cuts | dual gap | "
              "share of the LP gap closed | root CPU s |")
        print("|---|---|---|---|---|---|---|---|---|")
    by_n: dict[int, list[float]] = {}
    closed: list[float] = []
    for n, seed, o in opt:
        inst = make_instance(f"frontier-n{n}", seed, {})
        b = interval_bound(inst, upper=o, time_limit=60).bound
        gap = (o - b) / o
        by_n.setdefault(n, []).append(gap)
        row = f"| {n} | {seed} | {o:.0f} | {b:.1f} | {100 * gap:.1f} % |"
        if root_s is not None:
            r, cpu, nodes = (scip_root_bound if args.root_solver == "scip" else root_bound)(
                inst, o, root_s)
            if r > o + 1e-6:
                raise RuntimeError(f"n={n} seed={seed}: root bound {r} above OPT {o}")
            r = max(r, b) if math.isfinite(r) else b      # stopped before its root LP
            closed.append((r - b) / (o - b) if o > b else 1.0)
            row += (f" {r:.1f} | {100 * (o - r) / o:.1f} % | {100 * closed[-1]:.0f} % | "
                    f"{cpu:.1f}{'' if nodes <= 1 else f' ({nodes} nodes)'} |")
        print(row, flush=True)
    for n, gaps in sorted(by_n.items()):
        gaps.sort()
        print(f"n={n}: {len(gaps)} proven, dual gap median {100 * gaps[len(gaps) // 2]:.1f} %, "
              f"range {100 * gaps[0]:.1f}-{100 * gaps[-1]:.1f} %")
    if closed:
        closed.sort()
        print(f"{solver} root cuts close {100 * closed[len(closed) // 2]:.0f} % of the LP-to-OPT "
              f"gap (median; range {100 * closed[0]:.0f}-{100 * closed[-1]:.0f} %, "
              f"{len(closed)} instances)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
