"""Issue 22, figure 2: a branch-and-bound whose nodes are bounded by the interval LP.

**Question.** The issue lists, among the ideas not tried, "a branch-and-bound whose nodes are
bounded by the interval LP (the sparse form) and branch on the start of the serial tail of
big requests". Partial integrality solved by HiGHS (``reports/mip/README.md`` section 10.8)
is that search with HiGHS's own rules on the dense rows, and at paper scale it never got past
its root. This script measures the search itself with the toolkit's LP: how far the bound
rises within a call's time at n ~ 50, and, where OPT is proven, what share of the LP's gap
it closes.

**The search** is :func:`kvopt.mip.bounds.branch.branch_bound` (its module docstring gives
the model, the split rule and why the smallest open value is a lower bound on OPT): node LPs
warm-started by :class:`~kvopt.mip.bounds.branch.WarmNodes` (section 10.28), or with
``--cold`` solved from scratch (section 10.26's runs). It lived in this script until section
10.29 moved it into ``kvopt``, whose ``kvopt solve`` portfolio now runs it at n <= 30.

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

``--default-only`` prints only the default's row (schedule, bound, gap, the bound that won,
what ran on the bound child's core), from the ``kvopt`` beside this script: run from a scratch
copy of an older tree it measures that tree's default (section 10.29, before and after the
branch-and-bound joined the default)::

    PYTHONPATH=. python benchmarks/mip_branch.py paper-M --n 22 26 30 --seeds 0 1 \
        --default-seconds 60 --default-only > reports/mip/branch_default_after_M.txt
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from kvopt.mip.bounds.branch import BranchBound, branch_bound

sys.path.insert(0, str(Path(__file__).resolve().parent))


#: Instance families of ``benchmarks/mip_dual_small.py`` that ``RECORDS.json`` may name
#: instead (past the frontier rule, module docstring).
FAMILIES = ("paper-M", "paper-M2")


def _per_node(r: BranchBound, wall: float) -> str:
    """Mean wall seconds per node after the root, as printed (``-`` with no child solved)."""
    return "-" if r.nodes < 2 else f"{(wall - r.root_s) / (r.nodes - 1):.2f}"


def _default(name: str, inst: Any, default_seconds: float) -> tuple[dict[str, Any],
                                                                      dict[str, Any]]:
    """The default ``kvopt solve X --time-limit default_seconds`` on ``inst`` (the ``kvopt``
    beside this script): its record (:func:`mip_default.run_cli`) and summary (schedule,
    bound rounded up, certified gap, the bound that won); an error if it gave no schedule or
    no bound."""
    import tempfile

    from mip_default import run_cli, summary

    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "x.json")
        inst.save(path)
        rec = run_cli(["solve", path, "--time-limit", f"{default_seconds:g}"],
                      timeout=default_seconds + 120)
    d = summary(rec)
    if d["schedule"] is None or d["gap"] is None:
        raise RuntimeError(f"{name}: kvopt solve gave no schedule or bound: {rec['doc']}")
    return rec, d


def past_frontier(jobs: list[tuple[str, Any]], default_seconds: float, seconds: float,
                  frac: float, warm: bool = True) -> None:
    """Print a row per ``(name, instance)`` of ``jobs``: the default's schedule, bound and
    certified gap at ``default_seconds``, and the search's bound and gap after ``seconds``
    more with that schedule's TEL as ``upper`` (module docstring)."""
    import math

    print("| instance | n | M | default: schedule | bound | gap | root LP | search's bound | "
          "gap | nodes | depth | s per node | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, inst in jobs:
        _, d = _default(name, inst, default_seconds)     # the bound rounded up, the gap
        ub, lb = float(d["schedule"]), float(d["bound"])
        t0 = time.perf_counter()
        r = branch_bound(inst, upper=ub, time_limit=seconds, frac=frac, warm=warm)
        wall = time.perf_counter() - t0
        if not np.isfinite(r.root):
            print(f"| {name} | {inst.n} | {inst.memory} | {ub:.0f} | {lb:.0f} | "
                  f"{100 * d['gap']:.2f} % | - | root LP not solved in {seconds:g} s "
                  f"| - | 0 | 0 | - | {wall:.1f} |", flush=True)
            continue
        if r.bound > ub + 1e-6:
            raise RuntimeError(f"{name}: bound {r.bound} above the schedule's {ub}")
        bb = math.ceil(r.bound - 1e-6)
        print(f"| {name} | {inst.n} | {inst.memory} | {ub:.0f} | {lb:.0f} | "
              f"{100 * d['gap']:.2f} % | {r.root:.2f} | {bb} | "
              f"{100 * (ub - bb) / ub:.2f} % | {r.nodes} | {r.depth} | "
              f"{_per_node(r, wall)} | {wall:.1f} |", flush=True)


def default_rows(jobs: list[tuple[str, Any]], default_seconds: float) -> None:
    """Print a row per ``(name, instance)`` of ``jobs``: the default ``kvopt solve X
    --time-limit default_seconds`` alone (the ``kvopt`` beside this script, so that a
    scratch copy of an older tree measures that tree's default): its schedule, bound (rounded
    up), certified gap, which bound won, and what ran on the bound child's core once the bound
    had arrived (the branch-and-bound's nodes and status, or the second search's status)."""
    print("| instance | n | M | schedule | bound | gap | bound won | on the freed core | "
          "wall s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, inst in jobs:
        rec, d = _default(name, inst, default_seconds)
        phase = rec["doc"].get("model", {}).get("phases", [{}])[-1]
        br, second = phase.get("branch"), phase.get("second_search") or {}
        core = (f"branch-and-bound: {br.get('nodes', 0)} nodes, {br.get('solver_status')}"
                if br is not None and br.get("status") == "done"
                else f"second search: {second.get('status', '-')}")
        if br is not None and br.get("status") == "done" and second.get("status") != (
                "not started"):
            core += f"; then second search: {second.get('status')}"
        print(f"| {name} | {inst.n} | {inst.memory} | {d['schedule']:.0f} | {d['bound']:.0f} | "
              f"{100 * d['gap']:.2f} % | {d['bound_name']} | {core} | {rec['wall_s']} |",
              flush=True)


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
    p.add_argument("--default-only", action="store_true",
                   help=f"with RECORDS.json one of {', '.join(FAMILIES)}: only the default's "
                        "row (schedule, bound, gap, the bound that won, what ran on the "
                        "bound child's core), from the kvopt beside this script")
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
        if args.default_only:
            default_rows(fam, args.default_seconds)
            return 0
        past_frontier(fam, args.default_seconds, args.seconds, args.frac, not args.cold)
        return 0
    if args.default_only:
        p.error(f"--default-only: needs RECORDS.json one of {', '.join(FAMILIES)}")
    paper, jobs = frontier_or_paper_jobs(p, args.records, args.only, args.n, args.seeds,
                                         "frontier n = {n} seed {seed}")
    print(f"# benchmarks/mip_branch.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    ref = "certificate" if paper else "OPT"
    print(f"| instance | n | {ref} | root LP | bound | closed | status | nodes | depth | "
          f"s per node | wall s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, inst, o in jobs:
        t0 = time.perf_counter()
        r = branch_bound(inst, upper=float(o), time_limit=args.seconds, frac=args.frac,
                         warm=not args.cold)
        wall = time.perf_counter() - t0
        if not np.isfinite(r.root):
            print(f"| {name} | {inst.n} | {o:.0f} | - | - | - | root LP not solved in "
                  f"{args.seconds:g} s | 0 | 0 | - | {wall:.1f} |", flush=True)
            continue
        if r.bound > o + 1e-6:
            raise RuntimeError(f"{name}: bound {r.bound} above the reference {o}")
        closed = (r.bound - r.root) / (o - r.root) if o > r.root else 1.0
        print(f"| {name} | {inst.n} | {o:.0f} | {r.root:.2f} | {r.bound:.2f} | "
              f"{100 * closed:.1f} % | {r.status} | {r.nodes} | {r.depth} | "
              f"{_per_node(r, wall)} | {wall:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
