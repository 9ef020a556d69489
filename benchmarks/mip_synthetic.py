"""Benchmark of the hindsight-optimal solvers on seed 001's synthetic Model 1 / Model 2.

For every model, K seeded instances are solved by every ``solver:formulation`` combination
(in parallel on a dask ``LocalCluster``). Printed per combination: share proven optimal
within the time limit, median solve time, MC-SF/OPT (mean, max) over the instances this
combination proved (exact ratios), and MC-SF/best over all instances (best = best validated
schedule of any combination; a lower bound on the true ratio where nothing was proven).
A final ``ANY`` row per model pools the proofs of all combinations.

``--frontier`` instead measures the optimality frontier: for each n of ``--frontier-n``,
K Model-1-like instances (n requests, M ~ U{n..n+10}, s ~ U{1..5}, o ~ U{1..M-s}) and the
share proven within the time limit; the frontier of a combination is the largest n at which
at least ``--share`` of the instances are proven (and all smaller n as well).

Examples
--------
Scaled run (see reports/mip/README.md for the exact commands used)::

    python benchmarks/mip_synthetic.py --K 12 --time-limit 20 \\
        --combos highs:naive,highs:tight+cuts,cpsat:cp --n-range 8 12 --horizon-range 8 12
    python benchmarks/mip_synthetic.py --frontier --frontier-n 8,10,12,14 --K 5 \\
        --time-limit 20 --combos highs:naive,highs:tight+cuts,cpsat:cp,cpsat:cp+pairs
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from kvopt.report.writers import fmt, table

ROOT = Path(__file__).resolve().parents[1]


def make_instance(kind: str, seed: int, args: dict[str, Any]):  # type: ignore[no-untyped-def]
    """The benchmark instance ``(kind, seed)`` (deterministic)."""
    from kvopt.core.generators import model1, model2

    if kind == "model1":
        return model1(seed, n_range=tuple(args["n_range"]),
                      memory_range=tuple(args["memory_range"]))
    if kind == "model2":
        return model2(seed, horizon_range=tuple(args["horizon_range"]),
                      memory_range=tuple(args["memory_range"]))
    if kind.startswith("frontier"):
        n = int(kind.split("-n")[1])
        rng = np.random.default_rng([seed, n])
        M = int(rng.integers(n, n + 11))
        return model1(rng, n=n, memory=M)
    raise ValueError(kind)


def run_one(kind: str, seed: int, combo: str, time_limit: float, threads: int,
            gen_args: dict[str, Any], cp_lp_bound: bool = True) -> dict[str, Any]:
    """Solve one instance with one ``solver:formulation``; returns a flat record."""
    from kvopt.core.mcsf import mcsf_schedule
    from kvopt.core.validate import check_schedule
    from kvopt.mip import solve

    inst = make_instance(kind, seed, gen_args)
    # "auto": the default path of kvopt solve (kvopt.mip.portfolio), no solver / formulation
    # names as the user types them; solve() checks them (UsageError)
    solver: Any
    formulation: Any
    solver, formulation = combo.split(":") if combo != "auto" else (None, None)
    mcsf = check_schedule(inst, mcsf_schedule(inst))
    t0 = time.perf_counter()
    res = solve(inst, solver=solver, formulation=formulation, time_limit=time_limit,
                threads=threads, cp_lp_bound=cp_lp_bound)
    wall = time.perf_counter() - t0
    return {"kind": kind, "seed": seed, "combo": combo, "n": inst.n, "memory": inst.memory,
            "status": res.status, "objective": res.objective, "bound": res.bound,
            "gap": res.gap, "runtime_s": wall, "mcsf": mcsf.objective,
            "valid": res.report is not None and res.report.ok,
            "incumbent_source": res.incumbent_source}


def summarise(records: list[dict[str, Any]], combos: list[str], kinds: list[str]) -> list[
        dict[str, Any]]:
    """Per (kind, combo): proven share, median time, MC-SF/OPT (proven) and MC-SF/best."""
    rows = []
    # best known objective per instance over all combos (for MC-SF/best)
    best: dict[tuple[str, int], float] = {}
    proven_opt: dict[tuple[str, int], float] = {}
    for r in records:
        key = (r["kind"], r["seed"])
        if r["objective"] is not None:
            best[key] = min(best.get(key, math.inf), r["objective"])
        if r["status"] == "optimal":
            proven_opt[key] = r["objective"]
    for kind in kinds:
        for combo in combos:
            rs = [r for r in records if r["kind"] == kind and r["combo"] == combo]
            if not rs:
                continue
            proven = [r for r in rs if r["status"] == "optimal"]
            ratios = [r["mcsf"] / r["objective"] for r in proven]
            ratios_best = [r["mcsf"] / best[(kind, r["seed"])] for r in rs
                           if (kind, r["seed"]) in best]
            rows.append({
                "kind": kind, "combo": combo, "instances": len(rs),
                "proven": len(proven), "share_proven": len(proven) / len(rs),
                "median_time_s": statistics.median(r["runtime_s"] for r in rs),
                "median_time_proven_s": statistics.median(r["runtime_s"] for r in proven)
                if proven else None,
                "mcsf_over_opt_mean": statistics.fmean(ratios) if ratios else None,
                "mcsf_over_opt_max": max(ratios) if ratios else None,
                "mcsf_over_best_mean": statistics.fmean(ratios_best) if ratios_best else None,
                "mcsf_over_best_max": max(ratios_best) if ratios_best else None,
                "mcsf_optimal": sum(1 for r in proven if r["mcsf"] == r["objective"]),
                "mean_gap_unproven": statistics.fmean(r["gap"] for r in rs
                                                      if r["status"] != "optimal"
                                                      and r["gap"] is not None)
                if any(r["status"] != "optimal" and r["gap"] is not None for r in rs) else None,
                "all_valid": all(r["valid"] for r in rs),
            })
    all_proven = dict(proven_opt)
    for kind in kinds:
        ratios = [next(r["mcsf"] for r in records if (r["kind"], r["seed"]) == k) / v
                  for k, v in all_proven.items() if k[0] == kind]
        n_inst = len({r["seed"] for r in records if r["kind"] == kind})
        rows.append({"kind": kind, "combo": "ANY", "instances": n_inst,
                     "proven": len(ratios), "share_proven": len(ratios) / max(n_inst, 1),
                     "mcsf_over_opt_mean": statistics.fmean(ratios) if ratios else None,
                     "mcsf_over_opt_max": max(ratios) if ratios else None})
    return rows


def frontier(records: list[dict[str, Any]], combos: list[str], ns: list[int],
             share: float) -> dict[str, Any]:
    """Largest n (with all smaller n also) at which >= share of instances were proven."""
    out: dict[str, Any] = {}
    for combo in combos:
        per_n = {}
        for n in ns:
            rs = [r for r in records if r["combo"] == combo and r["kind"] == f"frontier-n{n}"]
            per_n[n] = sum(r["status"] == "optimal" for r in rs) / max(len(rs), 1)
        reach = None
        for n in ns:
            if per_n[n] >= share:
                reach = n
            else:
                break
        out[combo] = {"frontier_n": reach, "share_by_n": per_n,
                      "median_time_by_n": {n: statistics.median(
                          [r["runtime_s"] for r in records if r["combo"] == combo
                           and r["kind"] == f"frontier-n{n}"] or [float("nan")]) for n in ns}}
    return out


def _fmt(v: Any) -> str:
    return fmt(v, 3, sci_from=None)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--K", type=int, default=200, help="instances per model (or per n)")
    p.add_argument("--time-limit", type=float, default=60.0)
    p.add_argument("--combos", default="highs:naive,highs:tight+cuts,cpsat:cp,cpsat:cp+pairs",
                   help="comma list of solver:formulation")
    p.add_argument("--models", default="model1,model2")
    p.add_argument("--n-range", type=int, nargs=2, default=(40, 60))
    p.add_argument("--memory-range", type=int, nargs=2, default=(30, 50))
    p.add_argument("--horizon-range", type=int, nargs=2, default=(40, 60))
    p.add_argument("--seed0", type=int, default=0)
    p.add_argument("--frontier", action="store_true")
    p.add_argument("--frontier-n", default="8,10,12,14")
    p.add_argument("--share", type=float, default=0.9)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=1, help="solver threads per task")
    p.add_argument("--out", default=None, help="JSON output (default reports/mip/<mode>.json)")
    p.add_argument("--no-dask", action="store_true", help="run serially (debugging)")
    p.add_argument("--no-cp-lp-bound", action="store_true",
                   help="CP formulations: skip the LP pre-bound (solve(cp_lp_bound=False))")
    args = p.parse_args(argv)
    combos = [c.strip() for c in args.combos.split(",") if c.strip()]
    gen_args = {"n_range": args.n_range, "memory_range": args.memory_range,
                "horizon_range": args.horizon_range}
    if args.frontier:
        ns = [int(x) for x in args.frontier_n.split(",")]
        kinds = [f"frontier-n{n}" for n in ns]
    else:
        kinds = [m.strip() for m in args.models.split(",")]
    tasks = [(kind, args.seed0 + k, combo) for kind in kinds for k in range(args.K)
             for combo in combos]
    t0 = time.perf_counter()
    records: list[dict[str, Any]] = []
    if args.no_dask:
        for kind, seed, combo in tasks:
            records.append(run_one(kind, seed, combo, args.time_limit, args.threads, gen_args,
                                   not args.no_cp_lp_bound))
    else:
        from dask.distributed import Client, LocalCluster, as_completed

        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            futs = [client.submit(run_one, kind, seed, combo, args.time_limit, args.threads,
                                  gen_args, not args.no_cp_lp_bound, pure=False)
                    for kind, seed, combo in tasks]
            for i, fut in enumerate(as_completed(futs), 1):
                rec = fut.result()
                records.append(rec)
                print(f"[{i}/{len(tasks)}] {rec['kind']} seed {rec['seed']} {rec['combo']}: "
                      f"{rec['status']} {rec['runtime_s']:.1f}s", file=sys.stderr, flush=True)
    wall = time.perf_counter() - t0
    doc: dict[str, Any] = {"argv": sys.argv[1:] if argv is None else argv,
                           "wall_s": wall, "records": records}
    if args.frontier:
        fr = frontier(records, combos, ns, args.share)
        doc["frontier"] = fr
        print(f"optimality frontier (>= {args.share:.0%} of {args.K} proven in "
              f"{args.time_limit:g} s; M ~ U{{n..n+10}}):")
        print(table(["combo", "frontier n", *(f"n={n} proven" for n in ns)],
                    [[combo, _fmt(v["frontier_n"]),
                      *(f"{v['share_by_n'][n]:.0%} ({v['median_time_by_n'][n]:.1f}s)"
                        for n in ns)] for combo, v in fr.items()]), end="")
    else:
        rows = summarise(records, combos, kinds)
        doc["summary"] = rows
        cols = ["kind", "combo", "instances", "proven", "share_proven", "median_time_s",
                "mcsf_over_opt_mean", "mcsf_over_opt_max", "mcsf_over_best_mean",
                "mcsf_over_best_max", "mcsf_optimal", "mean_gap_unproven", "all_valid"]
        print(table(cols, [[_fmt(r.get(c)) for c in cols] for r in rows]), end="")
    print(f"wall time {wall:.0f} s on {args.workers} dask workers")
    out = Path(args.out) if args.out else ROOT / "reports" / "mip" / (
        "frontier.json" if args.frontier else "synthetic.json")
    from kvopt.core.io import write_json

    write_json(out, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
