"""Stability sweep (issue 24): simulated queues at lambda = 0.5 mu .. 1.2 mu, mu = M/(b E[g]).

Runs :func:`kvopt.report.stability.stability_sweep` on the heavy-tailed log-t workload and
the Azure conversation trace, writes ``rows.csv`` (one row per workload, policy, load),
``knees.md`` (simulated knee per policy against the formula's ``lambda / mu = 1``),
``latency.png`` (mean latency against ``lambda / mu``) and ``manifest.json`` into ``--out``.

Usage::

    python benchmarks/stability_sweep.py --out reports/stability [--n 2000]
        [--policies mcsf,fcfs,wait,nested-wait,gsa] [--loads 0.5,0.6,...,1.2]
        [--step-time a100-llama2-70b-tp2] [--seed 0]
"""

from __future__ import annotations

import argparse
import csv
import io
import time
from pathlib import Path

from kvopt.report.stability import knees, stability_plot, stability_sweep
from kvopt.report.writers import manifest, save_figure, table, write_files, write_manifest

LOADS = "0.5,0.6,0.7,0.8,0.9,1.0,1.1,1.2"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="reports/stability")
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--policies", default="mcsf,fcfs,wait,nested-wait,gba,gsa")
    ap.add_argument("--workloads", default="heavy-tailed,azure")
    ap.add_argument("--loads", default=LOADS)
    ap.add_argument("--step-time", default="a100-llama2-70b-tp2")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = stability_sweep(args.workloads.split(","), args.policies.split(","),
                           [float(x) for x in args.loads.split(",")], n=args.n,
                           step_time=args.step_time, seed=args.seed, progress=True)
    wall = time.perf_counter() - t0
    ks = knees(rows)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})
    mu = {r["workload"]: (r["mu"], r["b"], r["mean_g"], r["delta"]) for r in rows}
    lo = min(r["load"] for r in rows)   # unstable already at the smallest load: knee below it
    knee_md = table(["workload", "policy", "mu (1/s)", "b (s)", "E[g]", "1 - delta",
                     "simulated knee (lambda/mu)", "first unstable load", "served/mu at max"],
                    [[k["workload"], k["policy"], *mu[k["workload"]][:3],
                      1 - mu[k["workload"]][3],
                      f"< {lo:g}" if k["first_unstable"] == lo else k["knee"],
                      k["first_unstable"], k["served_over_mu"]] for k in ks])
    lat_md = table(["workload", "policy", "lambda/mu", "mean latency (s)", "p99 (s)", "drift",
                    "stable", "served/mu", "evictions", "sim wall s"],
                   [[r["workload"], r["policy"], r["load"], r["mean_latency"],
                     r["p99_latency"], r["drift"], r["stable"], r["served_over_mu"],
                     r["evictions"], r["wall_s"]] for r in rows])
    out = Path(args.out)
    files = {"rows.csv": buf.getvalue(), "knees.md": knee_md, "runs.md": lat_md}
    write_files(out, files)
    png = save_figure(stability_plot(rows, ks), out / "latency.png")
    write_manifest(out / "manifest.json", manifest(
        {**{k: v.encode() for k, v in files.items()}, "latency.png": png},
        command=["python", "benchmarks/stability_sweep.py", *[
            f"--{k.replace('_', '-')}={v}" for k, v in sorted(vars(args).items())]]))
    print(knee_md)
    print(f"{len(rows)} runs in {wall:.0f} s")


if __name__ == "__main__":
    main()
