"""Certified gaps at paper scale with the lag-interval LP bound, on the committed certificates.

For each instance ``reports/mip/paper_scale/{model}-seed{k}.json`` and its committed best
schedule ``*.best.json`` (re-validated with :func:`kvopt.check_schedule`), one dask task
computes the combinatorial bound (trivial, volume, fluid, cores) and
:func:`kvopt.mip.bounds.intervals.interval_bound` (``tight+cores`` LP plus lag-interval rows,
windows from the best schedule's TEL) with ``--time`` seconds for the whole call (a run
stopped early still returns a valid Lagrangian bound; its status is recorded). Certified
gap = (best - ceil(best bound)) / best, before (combinatorial bound) and after.

``--lp-form`` / ``--lp-method`` choose how the LP is solved
(:func:`kvopt.mip.bounds.sparse_lp.solve_lp_duals`; default: the row-differenced model by interior
point); the bound is the Lagrangian of the original rows in every case.

Example (the scaled run of reports/mip/dual_paper.txt)::

    nice -n 10 python benchmarks/mip_dual_paper.py --seeds 1-5 --time 600 --workers 2 \\
        --out reports/mip/dual_paper.json > reports/mip/dual_paper.txt
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CERTS = ROOT / "reports" / "mip" / "paper_scale"


def run_one(kind: str, seed: int, time_limit: float, certs: str,
            lp_form: str = "differenced", lp_method: str = "ipm") -> dict[str, Any]:
    """Bounds and certified gaps of one committed instance."""
    from kvopt.core.instance import load_instance
    from kvopt.core.schedule import load_schedule
    from kvopt.core.validate import check_schedule
    from kvopt.mip.bounds.combinatorial import combinatorial_bound
    from kvopt.mip.bounds.intervals import interval_bound

    d = Path(certs)
    inst = load_instance(d / f"{kind}-seed{seed}.json")
    rep = check_schedule(inst, load_schedule(d / f"{kind}-seed{seed}.best.json"))
    if not rep.ok or rep.objective is None:
        raise RuntimeError(f"{kind} seed {seed}: committed schedule rejected: {rep}")
    best = float(rep.objective)
    comb = combinatorial_bound(inst)
    c0 = time.process_time()
    iv = interval_bound(inst, time_limit=time_limit, upper=best, lp_form=lp_form,
                        lp_method=lp_method)
    cpu = time.process_time() - c0
    b0 = float(math.ceil(comb - 1e-9))
    b1 = float(math.ceil(max(comb, iv.bound) - 1e-9))
    if b1 > best + 1e-6:
        raise RuntimeError(f"{kind} seed {seed}: bound {b1} above the schedule's {best}")
    return {"kind": kind, "seed": seed, "n": inst.n, "memory": inst.memory, "best": best,
            "combinatorial_bound": comb, "intervals": iv.bound, "intervals_status": iv.status,
            "intervals_wall_s": iv.seconds, "intervals_cpu_s": cpu, "families": iv.families,
            "model": iv.meta, "gap_before": (best - b0) / best, "gap_after": (best - b1) / best,
            "load_avg_1min": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", default="model1,model2")
    p.add_argument("--seeds", default="1-20", help="A-B inclusive")
    p.add_argument("--time", type=float, default=600.0, help="interval_bound time limit (s)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--certs", default=str(CERTS))
    p.add_argument("--lp-form", default="differenced",
                   help="interval_bound lp_form (differenced, cumulative, dense)")
    p.add_argument("--lp-method", default="ipm", help="interval_bound lp_method (simplex, ipm, "
                   "pdlp)")
    p.add_argument("--out", default=None)
    p.add_argument("--reuse", default=None, metavar="JSON",
                   help="take the records of these instances from an earlier run's --out "
                   "(same --time) instead of recomputing them")
    args = p.parse_args(argv)
    a, b = (int(x) for x in args.seeds.split("-"))
    kinds = [m for m in args.models.split(",") if m]
    tasks = [(k, s) for s in range(a, b + 1) for k in kinds]
    t0 = time.perf_counter()
    from dask.distributed import Client, LocalCluster, as_completed

    recs: list[dict[str, Any]] = []
    reused: dict[str, Any] = {}
    if args.reuse:
        import json

        reused = json.loads(Path(args.reuse).read_text())
        have = {(r["kind"], r["seed"]): r for r in reused["records"]}
        recs = [have[k] for k in tasks if k in have]
        tasks = [k for k in tasks if k not in have]
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        futs = [client.submit(run_one, k, s, args.time, args.certs, args.lp_form,
                              args.lp_method, pure=False)
                for k, s in tasks]
        for i, fut in enumerate(as_completed(futs), 1):
            r = fut.result()
            recs.append(r)
            print(f"[{i}/{len(tasks)}] {r['kind']} seed {r['seed']}: best {r['best']:.0f} "
                  f"comb {r['combinatorial_bound']:.1f} intervals {r['intervals']:.1f} "
                  f"({r['intervals_status']}, {r['intervals_cpu_s']:.0f} CPU-s) gap "
                  f"{100 * r['gap_before']:.1f}% -> {100 * r['gap_after']:.1f}%",
                  file=sys.stderr, flush=True)
    wall = time.perf_counter() - t0
    recs.sort(key=lambda r: (r["kind"], r["seed"]))
    print("| instance | n | M | best | comb. bound | interval LP bound | status | CPU s | "
          "gap before | gap after |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in recs:
        print(f"| {r['kind']}-seed{r['seed']} | {r['n']} | {r['memory']} | {r['best']:.0f} | "
              f"{r['combinatorial_bound']:.1f} | {r['intervals']:.1f} | "
              f"{r['intervals_status']} | {r['intervals_cpu_s']:.0f} | "
              f"{100 * r['gap_before']:.1f}% | {100 * r['gap_after']:.1f}% |")
    for k in kinds:
        rs = [r for r in recs if r["kind"] == k]
        if rs:
            print(f"{k}: {len(rs)} instances; certified gap median "
                  f"{100 * statistics.median(r['gap_before'] for r in rs):.1f}% -> "
                  f"{100 * statistics.median(r['gap_after'] for r in rs):.1f}%, max "
                  f"{100 * max(r['gap_after'] for r in rs):.1f}%; LP solved in time: "
                  f"{sum(r['intervals_status'] == 'optimal' for r in rs)}/{len(rs)}")
    print(f"wall time {wall:.0f} s on {args.workers} dask workers; interval_bound time limit "
          f"{args.time:g} s per instance; LP {args.lp_form} / {args.lp_method}")
    if reused:
        print(f"({len(recs) - len(tasks)} records reused from {args.reuse}: "
              f"{' '.join(reused['argv'])}, wall time {reused['wall_s']:.0f} s)")
    if args.out:
        from kvopt.core.io import write_json

        write_json(args.out, {"argv": sys.argv[1:] if argv is None else argv, "wall_s": wall,
                              "workers": args.workers, "records": recs,
                              "reused_run": {k: reused.get(k) for k in ("argv", "wall_s")}
                              if reused else None})
    return 0


if __name__ == "__main__":
    sys.exit(main())
