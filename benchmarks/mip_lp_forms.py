"""Dense vs sparse forms of the paper-scale interval LP: non-zeros, solve time, same value.

For each committed instance (``reports/mip/paper_scale/{name}.json``, upper bound = the TEL
of its committed ``*.best.json``, re-validated), builds the LP of
:func:`kvopt.mip.bounds.intervals.interval_bound` (``tight+cores`` plus the lag-interval rows) once
and solves it with :func:`kvopt.mip.bounds.sparse_lp.solve_lp_duals` in every requested
``form:method`` (forms: ``dense`` = the model as built, ``differenced``, ``cumulative``;
methods: HiGHS ``simplex`` = dual simplex, ``ipm`` = IPX with crossover, ``pdlp``), one
process each, single-threaded, each with ``--cap`` seconds. Prints per run the model size,
CPU and wall seconds, the LP value and the Lagrangian bound of the original rows at the
duals returned (the value ``interval_bound`` reports), and the CPU-time ratio against the
first combination (the reference, measured in the same run).

Example (reports/mip/lp_forms.txt)::

    nice -n 10 python benchmarks/mip_lp_forms.py --instances model1-seed1,model2-seed2 \\
        --combos dense:simplex,differenced:ipm,dense:ipm,differenced:simplex \\
        --cap 1200 > reports/mip/lp_forms.txt

``--fixing-n 12,14,16`` instead times the reduced-cost fixing LP of ``cp+exact``
(:func:`kvopt.mip.bounds.fixing.reduced_cost_domains` with the interval rows, incumbent MC-SF) on
``model1(seed, n)`` for each ``form:method``, in-process (CPU seconds include the build),
with its bound and mean domain size.

The cap is wall-clock (HiGHS' ``time_limit``): on a loaded machine give it several times the
CPU seconds expected (dense dual simplex: ~110 CPU-s on ``model1-seed1``).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CERTS = ROOT / "reports" / "mip" / "paper_scale"


def _interval_lp(name: str, certs: str) -> tuple[Any, float]:
    from kvopt.core.instance import load_instance
    from kvopt.core.schedule import load_schedule
    from kvopt.core.validate import check_schedule
    from kvopt.mip.bounds.intervals import interval_model

    d = Path(certs)
    inst = load_instance(d / f"{name}.json")
    rep = check_schedule(inst, load_schedule(d / f"{name}.best.json"))
    if not rep.ok or rep.objective is None:
        raise RuntimeError(f"{name}: committed schedule rejected: {rep}")
    return interval_model(inst, upper=float(rep.objective)), float(rep.objective)


def _solve(name: str, certs: str, form: str, method: str, cap: float,
           out: Any) -> None:
    from kvopt.mip.bounds.lagrangian import lagrangian_at_duals
    from kvopt.mip.bounds.sparse_lp import solve_lp_duals

    data, _ = _interval_lp(name, certs)
    c0, w0 = time.process_time(), time.perf_counter()
    res = solve_lp_duals(data, time_limit=cap, form=form, method=method)
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    lag = None
    if res.row_dual is not None:
        lag = lagrangian_at_duals(data, res.row_dual)[0]
    out.put({"status": res.status, "value": res.value, "lagrangian": lag, "cpu_s": cpu,
             "wall_s": wall, "rows": res.info["rows"], "cols": res.info["cols"],
             "nnz": res.info["nnz"], "load": os.getloadavg()[0]})


def fixing_table(ns: list[int], seeds: int, combos: list[tuple[str, ...]]) -> None:
    """The ``--fixing-n`` mode (module docstring)."""
    from kvopt.core.generators import model1
    from kvopt.core.mcsf import mcsf_starts
    from kvopt.mip.bounds.fixing import reduced_cost_domains

    print("| n | seed | " + " | ".join(f"{f}:{m} CPU s / bound / domain" for f, m in combos)
          + " |")
    print("|---|---|" + "---|" * len(combos))
    for n in ns:
        for seed in range(seeds):
            inst = model1(seed, n=n)
            starts = mcsf_starts(inst)
            cells = []
            for form, method in combos:
                c0 = time.process_time()
                fx = reduced_cost_domains(inst, starts, intervals=True, lp_form=form,
                                          lp_method=method)
                cpu = time.process_time() - c0
                cells.append("not solved" if fx is None else
                             f"{cpu:.2f} / {fx.bound:.3f} / {fx.domain_mean:.1f}")
            print(f"| {n} | {seed} | " + " | ".join(cells) + " |", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--instances", default="model1-seed1,model2-seed2")
    p.add_argument("--combos", default="dense:simplex,differenced:ipm,dense:ipm,"
                   "differenced:simplex",
                   help="form:method list; the first is the reference")
    p.add_argument("--cap", type=float, default=1200.0, help="wall seconds per solve")
    p.add_argument("--certs", default=str(CERTS))
    p.add_argument("--fixing-n", default=None, help="comma list of n: time the cp+exact "
                   "fixing LP on model1(seed, n) instead")
    p.add_argument("--fixing-seeds", type=int, default=3)
    args = p.parse_args(argv)
    combos = [tuple(c.split(":")) for c in args.combos.split(",") if c]
    t0 = time.perf_counter()
    if args.fixing_n:
        fixing_table([int(x) for x in args.fixing_n.split(",")], args.fixing_seeds, combos)
        print(f"model1(seed, n), seeds 0-{args.fixing_seeds - 1}; incumbent MC-SF; wall time "
              f"{time.perf_counter() - t0:.0f} s")
        return 0
    ctx = mp.get_context("spawn")
    print("| instance | form | method | rows | cols | non-zeros | status | LP value | "
          "Lagrangian bound | CPU s | wall s | CPU ratio vs ref | load |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.instances.split(","):
        ref_cpu = None
        for form, method in combos:
            q = ctx.Queue()
            proc = ctx.Process(target=_solve, args=(name, args.certs, form, method, args.cap,
                                                    q))
            proc.start()
            r = q.get()
            proc.join()
            if ref_cpu is None:
                ref_cpu = r["cpu_s"]
            ratio = ref_cpu / r["cpu_s"] if r["status"] == "optimal" else float("nan")
            val = "-" if r["value"] is None else f"{r['value']:.4f}"
            lag = "-" if r["lagrangian"] is None else f"{r['lagrangian']:.4f}"
            print(f"| {name} | {form} | {method} | {r['rows']} | {r['cols']} | {r['nnz']} | "
                  f"{r['status']} | {val} | {lag} | {r['cpu_s']:.1f} | {r['wall_s']:.1f} | "
                  f"{ratio:.2f} | {r['load']:.1f} |", flush=True)
    print(f"reference: {combos[0][0]}:{combos[0][1]} (ratio = its CPU seconds / these); "
          f"cap {args.cap:g} s per solve; wall time {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
