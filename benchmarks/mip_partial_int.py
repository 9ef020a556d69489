"""Issue 22: partial integrality as a bound, from the frontier to paper scale.

The relaxation: the interval model (``tight+cores`` plus the level-1 lag-interval rows,
windows from a known schedule) with the start variables of the *big* requests integral
(peak ``s + o > frac * M``) and all others relaxed. Every feasible schedule is feasible for
it (the exact model with some integrality dropped), so its optimum, and HiGHS's dual bound at
any time limit, is a lower bound on OPT. Section 9.4 of ``reports/mip/README.md`` located
most of the paper-scale LP gap in the big requests, whose fractional copies the LP mixes with
the small ones; this measures what making them integral buys and what it costs.

Three sets of instances (one HiGHS thread each, or SCIP's with ``--solver scip``;
``--seconds`` per instance):

- ``--frontier RECORDS``: the frontier instances the state search proved
  (``benchmarks/mip_frontier_cpu.py`` records, windows from OPT); the share of the
  LP-to-OPT gap closed;
- ``--split RECORDS``: the n = 24 / 36 paper-like instances of section 9
  (``benchmarks/mip_dual_small.py --split`` records, windows from their best schedule);
- ``--paper DIR --only NAMES``: paper-scale instances and their committed certificates.

Examples (the runs of reports/mip/partial_int*.txt)::

    PYTHONPATH=. python benchmarks/mip_partial_int.py --frontier \\
        reports/mip/frontier_cpu_v2.json --frac 0.75 0.5 --seconds 60
    PYTHONPATH=. python benchmarks/mip_partial_int.py --split \\
        reports/mip/gap_split_large.json --frac 0.5 --seconds 120
    PYTHONPATH=. python benchmarks/mip_partial_int.py --paper reports/mip/paper_scale \\
        --only model1-seed1 model2-seed2 --frac 0.75 --seconds 200

``--solver scip`` runs SCIP instead of HiGHS on the same model (one thread; PySCIPOpt, not a
kvopt dependency: ``pip install pyscipopt``)::

    PYTHONPATH=. python benchmarks/mip_partial_int.py --split \\
        reports/mip/gap_split_large.json --frac 0.5 --seconds 120 --solver scip
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mip_frontier_dual import highs_mip_bound, scip_mip_bound


def big_groups(inst: Any, upper: float, frac: float) -> Any:
    """Per group of the interval model, whether its requests' peak exceeds ``frac * M``."""
    from kvopt.mip.model.builder import build_milp

    groups = build_milp(inst, "tight+cores", upper=upper).groups
    peak = inst.prompt + inst.output
    return np.array([peak[int(g[0])] > frac * inst.memory for g in groups])


def instances(args: argparse.Namespace) -> list[tuple[str, Any, float, str]]:
    """``(name, instance, reference value, what the reference is)`` per instance."""
    from kvopt.core.instance import load_instance
    from kvopt.core.schedule import load_schedule

    out = []
    if args.frontier:
        from mip_frontier_cpu import proven_optima
        from mip_synthetic import make_instance

        for (n, seed), o in proven_optima(args.frontier).items():
            out.append((f"frontier n={n} seed={seed}",
                        make_instance(f"frontier-n{n}", seed, {}), o, "OPT"))
        out.sort(key=lambda t: (t[1].n, t[0]))
    elif args.split:
        from mip_dual_small import make

        d = json.loads(Path(args.split).read_text())
        for r in d["records"] if isinstance(d, dict) else d:
            out.append((f"{r['family']} n={r['n']} seed={r['seed']}",
                        make(r["family"], r["n"], r["seed"]), float(r["best"]), "best"))
    else:
        for name in args.only:
            inst = load_instance(Path(args.paper) / f"{name}.json")
            sch = load_schedule(Path(args.paper) / f"{name}.best.json")
            tel = float(inst.tel_of_starts(np.asarray(sch.first_start(inst))))
            out.append((name, inst, tel, "certificate"))
    return out


def main(argv: list[str] | None = None) -> int:
    from kvopt.cli.common import float_in
    from kvopt.mip.bounds.intervals import interval_bound

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--frontier", metavar="RECORDS",
                     help="records of benchmarks/mip_frontier_cpu.py (the proven optima)")
    src.add_argument("--split", metavar="RECORDS",
                     help="records of benchmarks/mip_dual_small.py --split (best schedules)")
    src.add_argument("--paper", metavar="DIR",
                     help="a folder of paper-scale instances and certificates")
    p.add_argument("--only", nargs="+", default=["model1-seed1"],
                   help="with --paper: instance names (default model1-seed1)")
    p.add_argument("--frac", type=float_in(0, 1, hi_open=True), nargs="+", default=[0.5],
                   help="integral requests: peak > frac * M, 0 <= frac < 1 (default 0.5)")
    p.add_argument("--seconds", type=float_in(0, lo_open=True), default=60.0,
                   help="the MIP solver's seconds per instance and frac (default 60)")
    p.add_argument("--solver", choices=("highs", "scip"), default="highs",
                   help="the MIP solver whose dual bound is read (scip needs PySCIPOpt, not a "
                        "kvopt dependency)")
    args = p.parse_args(argv)
    if args.solver == "scip":
        try:
            import pyscipopt  # noqa: F401
        except ImportError:
            p.error("--solver scip: PySCIPOpt is not installed (pip install pyscipopt)")
    try:
        jobs = instances(args)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        flag = "--frontier" if args.frontier else "--split" if args.split else "--paper/--only"
        p.error(f"{flag}: cannot read the instances: {exc}")
    mip_bound = scip_mip_bound if args.solver == "scip" else highs_mip_bound
    solver = {"highs": "HiGHS", "scip": "SCIP"}[args.solver]
    print(f"benchmarks/mip_partial_int.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print("| instance | n | M | reference | interval LP | gap | big = peak > | integral "
          "groups | partial-integrality bound | gap | share of the LP gap closed | CPU s | "
          "nodes |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    closed: dict[float, list[float]] = {f: [] for f in args.frac}
    t_all = time.perf_counter()
    for name, inst, ref, what in jobs:
        b = interval_bound(inst, upper=ref, time_limit=600).bound
        for frac in args.frac:
            big = big_groups(inst, ref, frac)
            r, cpu, nodes = mip_bound(inst, ref, args.seconds, integral=big)
            if r > ref + 1e-6 and what == "OPT":
                raise RuntimeError(f"{name}: partial-integrality bound {r} above OPT {ref}")
            shown = (f"{r:.1f}" if math.isfinite(r)
                     else f"none ({solver} stopped before its root LP)")
            r = max(r, b)
            share = (r - b) / (ref - b) if ref > b else 1.0
            closed[frac].append(share)
            print(f"| {name} | {inst.n} | {inst.memory} | {ref:.0f} ({what}) | {b:.1f} | "
                  f"{100 * (ref - b) / ref:.1f} % | {frac:g} M | {int(big.sum())} | {shown} | "
                  f"{100 * (ref - r) / ref:.1f} % | {100 * share:.0f} % | {cpu:.1f} | {nodes} |",
                  flush=True)
    for frac, c in closed.items():
        c.sort()
        print(f"peak > {frac:g} M integral: closes {100 * c[len(c) // 2]:.0f} % of the gap between "
              f"the interval LP and the reference (median; range {100 * c[0]:.0f}-"
              f"{100 * c[-1]:.0f} %, {len(c)} instances)")
    print(f"wall {time.perf_counter() - t_all:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
