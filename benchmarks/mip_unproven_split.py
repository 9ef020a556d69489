"""Issue 22: prove the instances of ``reports/mip/gap_split.txt`` that were not proven, with
the state search, and measure the interval LP's dual gap on them (section 9.1's selection
bias: proofs used to fail exactly where the LP is far from the best schedule).

For each row of ``--records`` (default ``reports/mip/gap_split.json``) whose optimum was not
proven (8 rows), the state search runs below ``UB + 1`` (``UB``: the best schedule that
record holds: the exact run's incumbent or the improvement searches') for ``--cpu`` CPU
seconds on one core; its optimum (or bound when stopped) is printed beside the interval LP
(:func:`kvopt.mip.bounds.intervals.interval_bound`, windows from ``UB``).

Example (the run of reports/mip/unproven_split.txt)::

    PYTHONPATH=. nice -n 5 python benchmarks/mip_unproven_split.py --cpu 150 \\
        > reports/mip/unproven_split.txt
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mip_dual_small import make

ROOT = Path(__file__).resolve().parents[1]


def unproven(path: Path) -> list[tuple[str, int, int, int]]:
    """``(family, n, seed, best schedule)`` of the records of ``benchmarks/mip_dual_small.py``
    whose optimum was not proven."""
    out = []
    for r in json.loads(path.read_text())["records"]:
        if r["opt_status"] != "optimal":
            found = [r["opt_incumbent"], *(v["objective"] for v in r["improve"].values())]
            out.append((r["family"], r["n"], r["seed"],
                        int(min(x for x in found if x is not None))))
    return out


def main(argv: list[str] | None = None) -> int:
    from kvopt.core.limits import Deadline
    from kvopt.mip.bounds.intervals import interval_bound
    from kvopt.mip.search.statespace import state_search

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cpu", type=float, default=150.0, help="CPU seconds per search")
    p.add_argument("--records", type=Path, default=ROOT / "reports/mip/gap_split.json")
    args = p.parse_args(argv)
    print(f"benchmarks/mip_unproven_split.py --cpu {args.cpu:g} --records {args.records}; "
          f"cpus {os.cpu_count()}; load {os.getloadavg()[0]:.2f}")
    print("| family | n | seed | best before | state search | CPU s | OPT or bound | "
          "interval LP | dual gap |")
    print("|---|---|---|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    for family, n, seed, ub in unproven(args.records):
        inst = make(family, n, seed)
        c0 = time.process_time()
        res = state_search(inst, upper=ub + 1, deadline=Deadline.cpu(args.cpu))
        cpu = time.process_time() - c0
        proven = res.status == "optimal"
        value = (res.objective if res.objective is not None else float(ub)) if proven \
            else res.bound
        lp = interval_bound(inst, upper=ub, time_limit=120).bound
        gap = f"{100 * (value - lp) / value:.1f} %" if proven else "-"
        print(f"| {family} | {n} | {seed} | {ub} | {res.status} | {cpu:.1f} | "
              f"{value:.0f} | {lp:.1f} | {gap} |", flush=True)
    print(f"wall time {time.perf_counter() - t0:.0f} s; load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
