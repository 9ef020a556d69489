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

``--grid`` measures the same beyond the instances of that file: for each ``--family`` x
``--n`` x ``--seeds`` instance of ``benchmarks/mip_dual_small.py`` the upper bound ``UB`` is
the improvement search's schedule (``--improve-mult`` x 0.6 CPU-s per request, the budget of
section 9), then the state search and the interval LP run as above. It answers how the
interval LP's distance from OPT grows with n past the frontier (issue 22's figure 2). The
runs of ``reports/mip/README.md`` section 10.9 (one of four, then their combined summary)::

    PYTHONPATH=. python benchmarks/mip_unproven_split.py --grid --family paper-M \\
        --n 18 20 22 --seeds 0 1 2 --cpu 240 --improve-mult 4 \\
        > reports/mip/dual_grid_paper-M.txt
    PYTHONPATH=. python benchmarks/mip_unproven_split.py --summarise \\
        reports/mip/dual_grid_paper-M.txt reports/mip/dual_grid_paper-M_b.txt \\
        reports/mip/dual_grid_paper-M2.txt reports/mip/dual_grid_paper-M2_b.txt \\
        > reports/mip/dual_grid.txt
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

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


def grid(families: list[str], ns: list[int], seeds: list[int], mult: float
         ) -> Iterator[tuple[str, int, int, int, Any]]:
    """``(family, n, seed, UB, instance)`` for each instance of the grid, ``UB`` from
    :func:`kvopt.mip.search.improve.improve` with ``mult`` x 0.6 CPU-s per request (seed 1)."""
    from kvopt.mip.search.improve import improve

    for family in families:
        for n in ns:
            for seed in seeds:
                inst = make(family, n, seed)
                res = improve(inst, time_limit=0.6 * n * mult, clock="cpu", seed=1)
                assert res.objective is not None
                yield family, n, seed, round(res.objective), inst


class Row(NamedTuple):
    """One instance: its best schedule before the search ``ub``, whether the state search
    proved OPT, OPT (proven) or the search's bound, and the interval LP."""

    family: str
    n: int
    seed: int
    ub: int
    proven: bool
    value: float
    lp: float


def read_rows(path: Path) -> list[Row]:
    """The instance rows of a table this script printed (for ``--summarise``)."""
    out = []
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 9 and cells[1].isdigit():
            out.append(Row(cells[0], int(cells[1]), int(cells[2]), int(cells[3]),
                           cells[4] == "optimal", float(cells[6]), float(cells[7])))
    return out


def summary(rows: list[Row]) -> None:
    """Per (family, n): how many proven; over those, the dual gap ``1 - LP / OPT`` (median,
    range) and the primal gap ``UB / OPT - 1`` (median, max); over all, the certified gap
    ``1 - LP / best schedule`` (median, range), the figure of issue 22 at paper scale, and
    the same with the better of the LP and the state search's bound (``0`` where proven: what
    the default's exact path reports with that budget)."""
    print("\nPer (family, n): proven; over the proven instances the dual gap 1 - LP / OPT "
          "median (range) and the primal gap UB / OPT - 1 median (max); over all instances the "
          "certified gap 1 - LP / best schedule, median (range), and the same with the better of "
          "the LP and the state search's bound (0 where proven)")
    print("| family | n | proven | dual gap | primal gap | certified gap (all), LP | "
          "same, best of LP and state-search bound (0 if proven) |")
    print("|---|---|---|---|---|---|---|")
    groups: dict[tuple[str, int], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.family, r.n), []).append(r)
    for (family, n), got in groups.items():
        dual = sorted(100 * (1 - r.lp / r.value) for r in got if r.proven)
        primal = sorted(100 * (r.ub / r.value - 1) for r in got if r.proven)
        cert = sorted(100 * (1 - r.lp / (min(r.ub, r.value) if r.proven else r.ub))
                      for r in got)
        both = sorted(0.0 if r.proven else 100 * (1 - max(r.lp, r.value) / r.ub) for r in got)
        proven = (f"{statistics.median(dual):.1f} % ({dual[0]:.1f}-{dual[-1]:.1f} %) | "
                  f"{statistics.median(primal):.2f} % ({primal[-1]:.2f} %)") if dual else "- | -"
        print(f"| {family} | {n} | {len(dual)} / {len(got)} | {proven} | "
              f"{statistics.median(cert):.1f} % ({cert[0]:.1f}-{cert[-1]:.1f} %) | "
              f"{statistics.median(both):.1f} % ({both[0]:.1f}-{both[-1]:.1f} %) |")


def main(argv: list[str] | None = None) -> int:
    from kvopt.core.limits import Deadline
    from kvopt.mip.bounds.intervals import interval_bound
    from kvopt.mip.search.statespace import state_search

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cpu", type=float, default=150.0, help="CPU seconds per search")
    p.add_argument("--records", type=Path, default=ROOT / "reports/mip/gap_split.json")
    p.add_argument("--grid", action="store_true",
                   help="the instances --family x --n x --seeds, UB from the improvement search")
    p.add_argument("--family", nargs="+", default=["paper-M", "paper-M2"],
                   choices=["paper-M", "paper-M2", "small-M"])
    p.add_argument("--n", nargs="+", type=int, default=[18, 20, 22])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--improve-mult", type=float, default=4.0,
                   help="--grid: improvement budget, in units of 0.6 CPU-s per request")
    p.add_argument("--summarise", type=Path, nargs="+", metavar="TXT",
                   help="print the summary of earlier outputs of this script, run nothing")
    args = p.parse_args(argv)
    if args.summarise:
        print("benchmarks/mip_unproven_split.py --summarise "
              + " ".join(str(x) for x in args.summarise))
        summary([r for x in args.summarise for r in read_rows(x)])
        return 0
    if args.grid:
        print(f"benchmarks/mip_unproven_split.py --grid --family {' '.join(args.family)} "
              f"--n {' '.join(map(str, args.n))} --seeds {' '.join(map(str, args.seeds))} "
              f"--cpu {args.cpu:g} --improve-mult {args.improve_mult:g}; "
              f"cpus {os.cpu_count()}; load {os.getloadavg()[0]:.2f}")
    else:
        print(f"benchmarks/mip_unproven_split.py --cpu {args.cpu:g} --records {args.records}; "
              f"cpus {os.cpu_count()}; load {os.getloadavg()[0]:.2f}")
    print("| family | n | seed | best before | state search | CPU s | OPT or bound | "
          "interval LP | dual gap |")
    print("|---|---|---|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    done: list[Row] = []
    rows = grid(args.family, args.n, args.seeds, args.improve_mult) if args.grid \
        else ((f, n, s, ub, None) for f, n, s, ub in unproven(args.records))
    for family, n, seed, ub, inst in rows:
        inst = make(family, n, seed) if inst is None else inst
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
        done.append(Row(family, n, seed, ub, proven, value, lp))
    summary(done)
    print(f"wall time {time.perf_counter() - t0:.0f} s; load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
