"""How much of the LP -> OPT gap each stronger relaxation closes, on instances with a proven OPT.

Per instance (seeded, deterministic): OPT by ``solve(cpsat, cp+pairs)`` (only proven ones
count), the LP of ``tight`` and of ``tight+cores`` (HiGHS), the configuration LP
(:func:`kvopt.mip.bounds.colgen.colgen_bound`, column generation) and the lag-interval LP
(:func:`kvopt.mip.bounds.intervals.interval_bound`). "closed" = (bound - LP tight+cores) /
(OPT - LP tight+cores).

Families:

- ``small-M``: the frontier instances of ``benchmarks/mip_synthetic.py`` (n requests, M ~
  U{n..n+10}, model 1 otherwise): prompts ``s ~ U{1..5}`` are large against ``M``;
- ``paper-M``: ``model1(1000 + seed, n=n)`` (M ~ U{30..50} as at paper scale);
- ``paper-M2``: the first ``n`` arrivals of ``model2(2000 + seed)`` (Model 2 at paper scale:
  M ~ U{30..50}, Poisson(lambda ~ U[0.5, 1.5]) arrivals per slot; ``model2`` has no ``n``
  parameter, and ``horizon``/``rate`` fix only the *expected* count, so the paper's instance
  is cut after its ``n``-th arrival: same memory, arrival process and length distribution).

``--split`` (issue 13: what the paper-scale gap between the best schedule and the best bound
is made of) measures instead, per instance: OPT (``cp+pairs``, ``--opt-time`` s wall; its CPU
seconds recorded; only proven ones count), MC-SF, the primal search
:func:`kvopt.mip.search.improve.improve` with ``clock="cpu"`` and a budget that scales like the
paper-scale one (``--improve-rate`` CPU-s per request, 0.6 = 30 CPU-s per 50 requests) times
each ``--improve-mult``, and the lag-interval LP bound
(:func:`kvopt.mip.bounds.intervals.interval_bound`,
the best LP bound at paper scale). Printed per (family, n): median / max of the primal gap
``improve / OPT - 1``, the dual gap ``1 - LP / OPT`` and MC-SF / OPT over the proven instances.
``improve`` gets ``lower=OPT`` when OPT is proven: it then stops once it reaches OPT (its search
up to that point is the same), so its CPU seconds to OPT are measured too.

Examples (the runs of reports/mip/dual_small.txt and reports/mip/gap_split*.txt; README
section 9)::

    nice -n 10 python benchmarks/mip_dual_small.py --n 8,10,12 --K 4 --family small-M \\
        --family paper-M --out reports/mip/dual_small.json > reports/mip/dual_small.txt
    nice -n 10 python benchmarks/mip_dual_small.py --split --n 8,10,12,14,16 --K 4 \\
        --family paper-M --family paper-M2 --opt-time 90 --bound-time 60 --workers 2 \\
        --out reports/mip/gap_split_before.json > reports/mip/gap_split_before.txt
    nice -n 10 python benchmarks/mip_dual_small.py --split --n 8,10,12,14,16 --K 4 \\
        --family paper-M --family paper-M2 --reuse reports/mip/gap_split_before.json \\
        --resolve-max-n 14 --opt-time 240 --workers 2 \\
        --out reports/mip/gap_split.json > reports/mip/gap_split.txt
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
    from kvopt.core.generators import model1, model2

    if family == "small-M":
        rng = np.random.default_rng([seed, n])
        return model1(rng, n=n, memory=int(rng.integers(n, n + 11)))
    if family == "paper-M2":
        full = model2(2000 + seed)
        if full.n < n:
            raise ValueError(f"model2({2000 + seed}) has only {full.n} requests (< {n})")
        order = np.argsort(full.arrival, kind="stable")[:n]
        return full.take(order, name=f"model2-seed{2000 + seed}-first{n}-M{full.memory}")
    return model1(1000 + seed, n=n)


def cpu_seconds() -> float:
    """CPU seconds of this process and its waited-for children (the isolated solver)."""
    import resource

    a = resource.getrusage(resource.RUSAGE_SELF)
    b = resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime


def run_split(family: str, n: int, seed: int, opt_time: float, bound_time: float,
              rate: float, mults: list[float], prev: dict[str, Any] | None = None,
              improve_kw: dict[str, Any] | None = None, resolve: bool = False
              ) -> dict[str, Any]:
    """OPT, MC-SF, ``improve`` at each budget and the interval LP of one instance (--split);
    with ``prev`` (an earlier record of the same instance) OPT and the LP are taken from it
    and only ``improve`` runs (and, with ``resolve``, ``cp+pairs`` again for ``opt_time`` s
    if ``prev`` has no proven OPT)."""
    import os

    from kvopt.core.mcsf import mcsf_starts
    from kvopt.mip import solve
    from kvopt.mip.bounds.intervals import interval_bound
    from kvopt.mip.search.improve import improve

    inst = make(family, n, seed)
    mcsf = inst.tel_of_starts(mcsf_starts(inst))
    opt_keys = ("opt", "opt_status", "opt_incumbent", "opt_bound", "opt_s", "opt_cpu_s")
    if prev is not None:
        if (prev["family"], prev["n"], prev["seed"], prev["mcsf"]) != (family, n, seed, mcsf):
            raise ValueError(f"--reuse record {prev['family'], prev['n'], prev['seed']} "
                             "is not this instance")
        rec: dict[str, Any] = {k: prev[k] for k in ("family", "n", "seed", "memory", "mcsf",
                                                    *opt_keys)}
        rec["improve"] = {}
    if prev is not None and resolve and prev["opt"] is None:
        c, t = cpu_seconds(), time.perf_counter()
        r = solve(inst, solver="cpsat", formulation="cp+pairs", time_limit=opt_time)
        if str(r.status) == "optimal":
            rec.update(opt=r.objective, opt_status=str(r.status), opt_incumbent=r.objective,
                       opt_bound=r.bound)
        else:
            rec.update(opt_incumbent=min(r.objective, prev["opt_incumbent"]),
                       opt_bound=max(r.bound, prev["opt_bound"]))
        rec.update(opt_s=prev["opt_s"] + time.perf_counter() - t,
                   opt_cpu_s=prev["opt_cpu_s"] + cpu_seconds() - c, opt_resolved=True)
    elif prev is None:
        c, t = cpu_seconds(), time.perf_counter()
        r = solve(inst, solver="cpsat", formulation="cp+pairs", time_limit=opt_time)
        proven = str(r.status) == "optimal"
        rec = {"family": family, "n": n, "seed": seed, "memory": inst.memory,
               "mcsf": mcsf, "opt": r.objective if proven else None,
               "opt_status": str(r.status), "opt_incumbent": r.objective,
               "opt_bound": r.bound, "opt_s": time.perf_counter() - t,
               "opt_cpu_s": cpu_seconds() - c, "improve": {}}
    for mult in mults:
        budget = rate * n * mult
        c, t = cpu_seconds(), time.perf_counter()
        imp = improve(inst, time_limit=budget, seed=seed, clock="cpu",
                      lower=rec["opt"], **(improve_kw or {}))
        hist = imp.model["history"]
        rec["improve"][f"{mult:g}"] = {
            "budget_cpu_s": budget, "objective": imp.objective,
            "cpu_s": cpu_seconds() - c, "wall_s": time.perf_counter() - t,
            "last_improvement_cpu_s": hist[-1][0], "source": imp.incumbent_source,
            "steps": imp.solver_status}
    best = min([x["objective"] for x in rec["improve"].values()] + [rec["opt_incumbent"]])
    if prev is not None:  # the LP bound does not depend on the schedule (windows aside)
        rec.update({k: prev[k] for k in ("intervals", "intervals_status", "intervals_s")})
        rec.update(best=best, load_avg_1min=os.getloadavg()[0])
    else:
        t = time.perf_counter()
        iv = interval_bound(inst, time_limit=bound_time, upper=best)
        rec.update(best=best, intervals=iv.bound, intervals_status=iv.status,
                   intervals_s=time.perf_counter() - t, load_avg_1min=os.getloadavg()[0])
    proven = rec["opt"] is not None
    if proven:
        assert rec["intervals"] <= rec["opt"] + 1e-6, rec
        assert all(x["objective"] >= rec["opt"] for x in rec["improve"].values()), rec
    assert rec["opt_incumbent"] <= mcsf + 1e-9 and best <= mcsf + 1e-9, rec
    return rec


def _q(xs: list[float], fn: Any) -> str:
    return "-" if not xs else f"{100 * fn(xs):.1f}%"


def print_split(recs: list[dict[str, Any]], mults: list[str]) -> None:
    """Per-instance table and per-(family, n) summary of a --split run."""
    head = ["family", "n", "seed", "M", "OPT (CPU s)", "MC-SF"] + [
        f"improve x{m}" for m in mults] + ["interval LP", "MC-SF/OPT"] + [
        f"primal x{m}" for m in mults] + ["dual", "best vs LP"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in recs:
        opt = r["opt"]
        imps = [r["improve"][m]["objective"] for m in mults]
        cells = [r["family"], str(r["n"]), str(r["seed"]), str(r["memory"]),
                 (f"{opt:.0f} ({r['opt_cpu_s']:.0f})" if opt is not None else
                  f"not proven ({r['opt_incumbent']:.0f} / {r['opt_bound']:.0f})"),
                 f"{r['mcsf']:.0f}"]
        cells += [f"{v:.0f} ({r['improve'][m]['last_improvement_cpu_s']:.1f} s)"
                  for v, m in zip(imps, mults, strict=True)]
        cells += [f"{r['intervals']:.1f}",
                  f"{r['mcsf'] / opt:.4f}" if opt is not None else "-"]
        cells += [f"{100 * (v / opt - 1):.1f}%" if opt is not None else "-" for v in imps]
        cells += [f"{100 * (1 - r['intervals'] / opt):.1f}%" if opt is not None else "-",
                  f"{100 * (1 - r['intervals'] / r['best']):.1f}%"]
        print("| " + " | ".join(cells) + " |")
    print()
    print("Per (family, n), over the instances with a proven OPT (primal = improve / OPT - 1 at "
          "each budget multiple; dual = 1 - interval LP / OPT; total = 1 - LP / best found, "
          "over all instances):")
    head = ["family", "n", "proven", "OPT CPU s (median)", "MC-SF/OPT median", "max"] + [
        f"primal x{m} median / max / at OPT" for m in mults] + [
        "dual median / max", "total (all) median"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    keys = list(dict.fromkeys((r["family"], r["n"]) for r in recs))
    for fam, n in sorted(keys):
        rs = [r for r in recs if (r["family"], r["n"]) == (fam, n)]
        pr = [r for r in rs if r["opt"] is not None]
        cells = [fam, str(n), f"{len(pr)} / {len(rs)}",
                 f"{statistics.median([r['opt_cpu_s'] for r in pr]):.1f}" if pr else "-"]
        ms = [r["mcsf"] / r["opt"] - 1 for r in pr]
        cells += [f"{1 + statistics.median(ms):.4f}" if ms else "-",
                  f"{1 + max(ms):.4f}" if ms else "-"]
        for m in mults:
            g = [r["improve"][m]["objective"] / r["opt"] - 1 for r in pr]
            at = sum(x <= 1e-12 for x in g)
            cells.append(f"{_q(g, statistics.median)} / {_q(g, max)} / {at}")
        d = [1 - r["intervals"] / r["opt"] for r in pr]
        cells.append(f"{_q(d, statistics.median)} / {_q(d, max)}")
        cells.append(_q([1 - r["intervals"] / r["best"] for r in rs], statistics.median))
        print("| " + " | ".join(cells) + " |")


def main_split(args: argparse.Namespace, argv: list[str] | None) -> int:
    """``--split``: run (or re-print with ``--summarise``) the gap-split measurement."""
    import json
    from pathlib import Path

    t0 = time.perf_counter()
    if args.summarise:
        prev = json.loads(Path(args.summarise).read_text())
        print(f"(re-printed from {args.summarise}: {' '.join(prev['argv'])}; wall time "
              f"{prev['wall_s']:.0f} s)")
        print_split(prev["records"], list(prev["records"][0]["improve"]))
        return 0
    fams = args.family or ["paper-M", "paper-M2"]
    ns = [int(x) for x in args.n.split(",")]
    mults = [float(x) for x in args.improve_mult.split(",")]
    todo = [(fam, n, seed) for n in sorted(ns, reverse=True) for fam in fams
            for seed in range(args.K)]  # largest first: the slow ones start early
    fn_args = (args.opt_time, args.bound_time, args.improve_rate, mults)
    reuse: dict[tuple[str, int, int], Any] = {}
    if args.reuse:
        prev_doc = json.loads(Path(args.reuse).read_text())
        reuse = {(r["family"], r["n"], r["seed"]): r for r in prev_doc["records"]}
        todo = [x for x in todo if x in reuse]
    kw = {k: json.loads(v) for k, v in (x.split("=", 1) for x in args.improve_kw or [])}
    recs: list[dict[str, Any]] = []
    if args.workers <= 1:
        for task in todo:
            family, n, seed = task
            recs.append(run_split(family, n, seed, *fn_args, reuse.get(task), kw,
                                  n <= args.resolve_max_n))
            print(f"[{len(recs)}/{len(todo)}] {task} done", file=sys.stderr, flush=True)
    else:
        from dask.distributed import Client, LocalCluster, as_completed

        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            futs = [client.submit(run_split, *task, *fn_args, reuse.get(task), kw,
                                  task[1] <= args.resolve_max_n, pure=False) for task in todo]
            for fut in as_completed(futs):
                recs.append(fut.result())
                r = recs[-1]
                print(f"[{len(recs)}/{len(todo)}] {r['family']} n={r['n']} seed {r['seed']}: "
                      f"OPT {r['opt']} ({r['opt_status']}, {r['opt_cpu_s']:.0f} CPU s) "
                      f"MC-SF {r['mcsf']:.0f} improve "
                      f"{[x['objective'] for x in r['improve'].values()]} "
                      f"LP {r['intervals']:.1f}", file=sys.stderr, flush=True)
    recs.sort(key=lambda r: (r["family"], r["n"], r["seed"]))
    loads = [r["load_avg_1min"] for r in recs]
    wall = time.perf_counter() - t0
    print_split(recs, [f"{m:g}" for m in mults])
    opt_how = (f"OPT and interval LP reused from {args.reuse}" if args.reuse else
               f"OPT: cp+pairs, {args.opt_time:g} s wall each")
    if args.reuse and args.resolve_max_n:
        opt_how += (f" (unproven ones with n <= {args.resolve_max_n} re-solved, "
                    f"{args.opt_time:g} s wall more)")
    print(f"\nwall time {wall:.0f} s, {args.workers} worker(s); {opt_how}; "
          f"improve{kw or ''}: {args.improve_rate:g} CPU-s per request x "
          f"{args.improve_mult} (clock='cpu'); interval LP {args.bound_time:g} s; load average "
          f"(1 min) at the end of each instance {min(loads):.1f}-{max(loads):.1f}")
    if args.out:
        from kvopt.core.io import write_json

        write_json(args.out, {"argv": sys.argv[1:] if argv is None else argv, "wall_s": wall,
                              "records": recs})
    return 0


def run_one(family: str, n: int, seed: int, opt_time: float, bound_time: float
            ) -> dict[str, Any]:
    """All bounds of one instance."""
    from kvopt.mip import solve
    from kvopt.mip.bounds.colgen import colgen_bound
    from kvopt.mip.bounds.intervals import interval_bound
    from kvopt.mip.bounds.relaxations import lp_bound

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
    assert r.schedule is not None
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
    p.add_argument("--family", action="append", choices=("small-M", "paper-M", "paper-M2"))
    p.add_argument("--opt-time", type=float, default=60.0)
    p.add_argument("--bound-time", type=float, default=60.0)
    p.add_argument("--out", default=None)
    p.add_argument("--summarise", default=None, metavar="JSON",
                   help="only re-print the table and summary of an earlier run's --out")
    p.add_argument("--split", action="store_true",
                   help="primal / dual split of the gap (module docstring)")
    p.add_argument("--improve-rate", type=float, default=0.6,
                   help="--split: improve's CPU seconds per request (x each multiple)")
    p.add_argument("--improve-mult", default="1,4",
                   help="--split: comma-separated budget multiples")
    p.add_argument("--workers", type=int, default=1, help="--split: dask workers")
    p.add_argument("--improve-kw", action="append", metavar="KEY=JSON",
                   help="--split: extra keyword argument of improve (e.g. list_share=0.5)")
    p.add_argument("--resolve-max-n", type=int, default=0,
                   help="--split --reuse: re-solve the unproven instances with n <= this "
                   "(--opt-time s more; CPU seconds add up)")
    p.add_argument("--reuse", default=None, metavar="JSON",
                   help="--split: take OPT and the LP bound of each instance from an earlier "
                   "run's --out (same instances) and run only improve")
    args = p.parse_args(argv)
    if args.summarise and not args.split:
        import json
        from pathlib import Path

        args.split = "improve" in json.loads(Path(args.summarise).read_text())["records"][0]
    if args.split:
        return main_split(args, argv)
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
