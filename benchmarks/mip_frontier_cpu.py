"""Issue 22: the optimality frontier in CPU seconds, per exact method, on the frontier instances.

The frontier of ``benchmarks/mip_synthetic.py --frontier`` (``M ~ U{n..n+10}``, Model 1
otherwise, K seeds per n) counts proofs within a wall-clock limit, which on the shared 2-core
machine measures the neighbours' load as much as the method. Here every method gets the same
**CPU-second** budget, measured on its own process (``resource`` usage of a forked child; the
wall cap is only a safety net), one method and instance at a time, so the figures are ratios
of one run on one machine:

- ``statespace``: :func:`kvopt.mip.search.statespace.state_search` below ``UB + 1`` (``UB``: the
  best schedule of a short improvement search, ``--ub-cpu`` CPU-s, not counted): it finds and
  proves the optimum;
- ``cp+pairs``: :func:`kvopt.mip.paths.solve_model` (``cpsat``, ``cp+pairs``, warm-started from
  the same schedule), the best exact combination before issue 22.

A proof is counted when it came within ``--cpu`` CPU seconds; the frontier of a method is the
largest n at which every one of the K instances (and of every smaller n) was proven.

Example (the run of reports/mip/frontier_cpu.txt)::

    nice -n 10 python benchmarks/mip_frontier_cpu.py --n 12,14,16 --K 5 --cpu 60 \\
        --wall-factor 15 --out reports/mip/frontier_cpu.json > reports/mip/frontier_cpu.txt
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mip_synthetic import make_instance


def proven_optima(path: str | Path) -> dict[tuple[int, int], float]:
    """``(n, seed) -> OPT`` of the frontier instances whose optimum the state search proved,
    from the records this script writes (``reports/mip/frontier_cpu_v2.json``): the
    ``statespace`` records of status ``optimal`` (their objective, or the incumbent ``ub``
    where nothing better exists). Raises ``OSError``, ``ValueError``, ``KeyError`` or
    ``TypeError`` on a file that is not such records."""
    records = json.loads(Path(path).read_text())["records"]
    return {(r["n"], r["seed"]): float(r["objective"] if r["objective"] is not None
                                       else r["ub"])
            for r in records if r["method"] == "statespace" and r.get("status") == "optimal"}


def read_proven_optima(parser: argparse.ArgumentParser, path: str | Path, flag: str,
                       sizes: Sequence[int] | None = None, seeds: Sequence[int] | None = None
                       ) -> list[tuple[int, int, float]]:
    """``[(n, seed, OPT), ...]`` of :func:`proven_optima`, sorted, only the ``sizes`` and
    ``seeds`` given (``None``: all); a file that is not such records ends in
    ``parser.error`` naming ``flag`` (exit 2)."""
    try:
        opt = proven_optima(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        parser.error(f"{flag}: cannot read the records of {path}: {exc}")
    return [(n, s, o) for (n, s), o in sorted(opt.items())
            if (sizes is None or n in sizes) and (seeds is None or s in seeds)]


def _child_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_method(method: str, inst: Any, starts: Any, cpu: float, wall: float) -> dict[str, Any]:
    """One method in a child process capped at ``cpu`` CPU seconds (RLIMIT_CPU) and ``wall``."""
    from kvopt.core.isolate import run_isolated
    from kvopt.core.limits import Deadline

    ub = inst.tel_of_starts(starts)

    def job() -> dict[str, Any]:
        resource.setrlimit(resource.RLIMIT_CPU, (int(cpu) + 1, int(cpu) + 2))
        dl = Deadline.cpu(cpu)
        if method == "statespace":
            from kvopt.mip.search.statespace import state_search

            r = state_search(inst, upper=ub + 1, deadline=dl)
            return {"status": r.status, "objective": r.objective, "bound": r.bound,
                    "expanded": r.expanded}
        from kvopt.mip.paths import solve_model

        res = solve_model(inst, solver="cpsat", formulation="cp+pairs", deadline=Deadline(wall),
                          isolate=False, initial=starts, cp_lp_bound=True)
        return {"status": str(res.status), "objective": res.objective, "bound": res.bound}

    c0, t0 = _child_cpu(), time.perf_counter()
    out = run_isolated(job, deadline=Deadline(wall), grace=1.0)
    used, took = _child_cpu() - c0, time.perf_counter() - t0
    rec: dict[str, Any] = {"method": method, "cpu_s": round(used, 2), "wall_s": round(took, 2),
                           "load": round(os.getloadavg()[0], 2)}
    rec.update(out.value if out.ok else {"status": "killed" if out.killed else "error",
                                         "error": out.error[-300:]})
    rec["proven"] = rec.get("status") == "optimal" and used <= cpu + 1.0
    return rec


def main(argv: list[str] | None = None) -> int:
    from kvopt.core.limits import Deadline
    from kvopt.mip.search.improve import improve

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", default="12,14,16,18")
    p.add_argument("--K", type=int, default=5)
    p.add_argument("--cpu", type=float, default=60.0, help="CPU seconds per method and instance")
    p.add_argument("--ub-cpu", type=float, default=5.0, help="CPU seconds of the search for UB")
    p.add_argument("--methods", default="statespace,cp+pairs")
    p.add_argument("--wall-factor", type=float, default=6.0,
                   help="safety wall cap per run: factor * --cpu + 60 s (raise it on a loaded "
                        "machine, where a process gets a small share of a core)")
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    ns = [int(x) for x in args.n.split(",")]
    methods = args.methods.split(",")
    print(f"benchmarks/mip_frontier_cpu.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    print(f"cpus {os.cpu_count()}; load {os.getloadavg()[0]:.2f}", flush=True)
    t0 = time.perf_counter()
    records = []
    for n in ns:
        for seed in range(args.K):
            inst = make_instance(f"frontier-n{n}", seed, {})
            imp = improve(inst, deadline=Deadline.cpu(args.ub_cpu), seed=0)
            assert imp.schedule is not None
            starts = imp.schedule.run_start
            for m in methods:
                rec = {"n": n, "seed": seed, "memory": int(inst.memory), "ub": imp.objective,
                       **run_method(m, inst, starts, args.cpu,
                                    wall=args.wall_factor * args.cpu + 60)}
                records.append(rec)
                print(f"n={n} seed={seed} {m}: {rec.get('status')} obj {rec.get('objective')} "
                      f"bound {rec.get('bound')} ub {imp.objective} cpu {rec['cpu_s']} s wall "
                      f"{rec['wall_s']} s load {rec['load']}", flush=True)
    print(f"\nfrontier in {args.cpu:g} CPU-s per method and instance (K = {args.K} per n, "
          "M ~ U{n..n+10}; proven / K, median CPU-s of the proofs):")
    print("| method | frontier n | " + " | ".join(f"n={n}" for n in ns) + " |")
    print("|---|---|" + "---|" * len(ns))
    summary: dict[str, Any] = {}
    for m in [*methods, "either"]:
        reach, cells, ok = None, [], True
        for n in ns:
            rs = [r for r in records if r["n"] == n and (m == "either" or r["method"] == m)]
            seeds = {r["seed"] for r in rs if r["proven"]}
            cpu = sorted(min(r["cpu_s"] for r in rs if r["seed"] == s and r["proven"])
                         for s in seeds)
            med = cpu[len(cpu) // 2] if cpu else None
            cells.append(f"{len(seeds)}/{args.K}" + (f" ({med:.1f} s)" if med is not None
                                                     else ""))
            ok = ok and len(seeds) == args.K
            reach = n if ok else reach
        summary[m] = {"frontier_n": reach, "cells": cells}
        print(f"| {m} | {reach if reach is not None else '-'} | " + " | ".join(cells) + " |")
    wall = round(time.perf_counter() - t0, 1)
    print(f"wall time {wall} s; load {os.getloadavg()[0]:.2f}")
    if args.out:
        Path(args.out).write_text(json.dumps({"argv": sys.argv, "records": records,
                                              "summary": summary, "wall_s": wall},
                                             indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
