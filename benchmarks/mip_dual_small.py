"""How much of the LP -> OPT gap each stronger relaxation closes, on instances with a proven OPT.

Per instance (seeded, deterministic): OPT by ``solve(cpsat, cp+pairs)`` (only proven ones
count), the LP of ``tight`` and of ``tight+cores`` (HiGHS), the configuration LP
(:func:`kvopt.mip.colgen.colgen_bound`, column generation) and the lag-interval LP
(:func:`kvopt.mip.intervals.interval_bound`). "closed" = (bound - LP tight+cores) /
(OPT - LP tight+cores).

Two families:

- ``small-M``: the frontier instances of ``benchmarks/mip_synthetic.py`` (n requests, M ~
  U{n..n+10}, model 1 otherwise): prompts ``s ~ U{1..5}`` are large against ``M``;
- ``paper-M``: ``model1(1000 + seed, n=n)`` (M ~ U{30..50} as at paper scale).

Example (the run of reports/mip/dual_small.txt)::

    nice -n 10 python benchmarks/mip_dual_small.py --n 8,10,12 --K 4 --family small-M \\
        --family paper-M --out reports/mip/dual_small.json > reports/mip/dual_small.txt
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any

import numpy as np


def make(family: str, n: int, seed: int):  # type: ignore[no-untyped-def]
    """The instance ``(family, n, seed)``."""
    from kvopt.core.generators import model1

    if family == "small-M":
        rng = np.random.default_rng([seed, n])
        return model1(rng, n=n, memory=int(rng.integers(n, n + 11)))
    return model1(1000 + seed, n=n)


def run_one(family: str, n: int, seed: int, opt_time: float, bound_time: float
            ) -> dict[str, Any]:
    """All bounds of one instance."""
    from kvopt.mip import solve
    from kvopt.mip.colgen import colgen_bound
    from kvopt.mip.intervals import interval_bound
    from kvopt.mip.relaxations import lp_bound

    inst = make(family, n, seed)
    t = time.perf_counter()
    r = solve(inst, solver="cpsat", formulation="cp+pairs", time_limit=opt_time)
    rec: dict[str, Any] = {"family": family, "n": n, "seed": seed, "memory": inst.memory,
                           "opt": r.objective, "opt_status": str(r.status),
                           "opt_s": time.perf_counter() - t}
    t = time.perf_counter()
    rec["lp_tight"] = lp_bound(inst, "tight")
    rec["lp_cores"] = lp_bound(inst, "tight+cores")
    rec["lp_s"] = time.perf_counter() - t
    cg = colgen_bound(inst, time_limit=bound_time, upper=r.objective,
                      starts=r.schedule.final_start(inst))
    rec.update(config=cg.bound, config_status=cg.status, config_s=cg.seconds,
               config_iterations=cg.iterations)
    iv = interval_bound(inst, time_limit=bound_time, upper=r.objective)
    rec.update(intervals=iv.bound, intervals_status=iv.status, intervals_s=iv.seconds,
               interval_families=iv.families)
    if rec["opt"] is not None and rec["opt_status"] == "optimal":
        for k in ("lp_tight", "lp_cores", "config", "intervals"):
            assert rec[k] <= rec["opt"] + 1e-6, (rec, k)
    return rec


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", default="8,10,12", help="comma-separated request counts")
    p.add_argument("--K", type=int, default=4, help="seeds per (family, n)")
    p.add_argument("--family", action="append", choices=("small-M", "paper-M"))
    p.add_argument("--opt-time", type=float, default=60.0)
    p.add_argument("--bound-time", type=float, default=60.0)
    p.add_argument("--out", default=None)
    p.add_argument("--summarise", default=None, metavar="JSON",
                   help="only re-print the table and summary of an earlier run's --out")
    args = p.parse_args(argv)
    fams = args.family or ["small-M", "paper-M"]
    ns = [int(x) for x in args.n.split(",")]
    t0 = time.perf_counter()
    recs: list[dict[str, Any]] = []
    old: list[dict[str, Any]] = []
    if args.summarise:
        import json
        from pathlib import Path

        prev = json.loads(Path(args.summarise).read_text())
        old = prev["records"]
        fams = list(dict.fromkeys(r["family"] for r in old))
        print(f"(re-printed from {args.summarise}: {' '.join(prev['argv'])}; wall time "
              f"{prev['wall_s']:.0f} s)")
    print("| family | n | seed | M | OPT | LP tight | LP tight+cores | config LP | "
          "lag intervals | closed: config | closed: intervals | gap LP | gap intervals |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    todo = [(r["family"], r["n"], r["seed"]) for r in old] or [
        (fam, n, seed) for fam in fams for n in ns for seed in range(args.K)]
    for i, (fam, n, seed) in enumerate(todo):
        r = old[i] if old else run_one(fam, n, seed, args.opt_time, args.bound_time)
        recs.append(r)
        if r["opt_status"] != "optimal":
            print(f"| {fam} | {n} | {seed} | {r['memory']} | not proven "
                  f"({r['opt']}) | | | | | | | | |", flush=True)
            continue
        opt, lc = r["opt"], r["lp_cores"]
        den = max(opt - lc, 1e-9)
        r["closed_config"] = (r["config"] - lc) / den if opt - lc > 1e-6 else None
        r["closed_intervals"] = (r["intervals"] - lc) / den if opt - lc > 1e-6 else None

        def f(x: float | None) -> str:
            return "-" if x is None else f"{x:.2f}"
        print(f"| {fam} | {n} | {seed} | {r['memory']} | {opt:.0f} | "
              f"{r['lp_tight']:.1f} | {lc:.1f} | {r['config']:.1f} "
              f"({r['config_status']}) | {r['intervals']:.1f} | "
              f"{f(r['closed_config'])} | {f(r['closed_intervals'])} | "
              f"{100 * (opt - lc) / opt:.1f}% | "
              f"{100 * (opt - r['intervals']) / opt:.1f}% |", flush=True)
    print()
    for fam in fams:
        rs = [r for r in recs if r["family"] == fam and r["opt_status"] == "optimal"
              and r.get("closed_intervals") is not None]
        if not rs:
            continue
        conv = [r["closed_config"] for r in rs if r["config_status"] == "optimal"]
        cfg = f"{statistics.median(conv):.2f}" if conv else "-"
        print(f"{fam}: {len(rs)} proven instances with LP < OPT; gap closed over tight+cores, "
              f"median config LP {cfg} (over the {len(conv)} where column generation "
              f"converged), intervals {statistics.median(r['closed_intervals'] for r in rs):.2f}; "
              f"median gap LP {100 * statistics.median((r['opt'] - r['lp_cores']) / r['opt'] for r in rs):.1f}% "  # noqa: E501
              f"-> intervals "
              f"{100 * statistics.median((r['opt'] - r['intervals']) / r['opt'] for r in rs):.1f}%")
    wall = time.perf_counter() - t0
    if old:
        return 0
    print(f"wall time {wall:.0f} s")
    if args.out:
        from kvopt.core.io import write_json

        write_json(args.out, {"argv": sys.argv[1:] if argv is None else argv, "wall_s": wall,
                              "records": recs})
    return 0


if __name__ == "__main__":
    sys.exit(main())
