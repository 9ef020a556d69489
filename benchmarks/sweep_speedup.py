"""Speed-up of a sweep on a Dask ``LocalCluster`` with 2 workers over 1 worker, in one run.

Runs the same spec (default ``instances/sweeps/smoke.toml``) three times into fresh
databases: in-process (``workers=0``, the reference), on a LocalCluster of 1 worker and of 2
workers, and prints the wall times (cluster start-up included: it is part of what a user
waits for), the speed-up ``t(1 worker) / t(2 workers)``, the machine's CPU count and its load
average before and after (the speed-up is only meaningful on an otherwise idle machine), and
checks that the three databases hold the same results.

Examples
--------
::

    nice -n 10 python benchmarks/sweep_speedup.py
    python benchmarks/sweep_speedup.py --spec my.toml --repeat 2
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(spec_path: Path, workers: int, folder: Path) -> tuple[float, list[dict]]:
    from kvopt.sweep import ResultStore, load_spec, run_spec
    from kvopt.sweep.store import VOLATILE

    db = folder / f"w{workers}-{time.monotonic_ns()}.sqlite"
    t0 = time.perf_counter()
    run_spec(load_spec(spec_path), db, workers=workers)
    wall = time.perf_counter() - t0
    with ResultStore(db, readonly=True) as store:
        rows = [{k: v for k, v in r.items() if k not in VOLATILE} for r in store.rows()]
    return wall, rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", default=str(ROOT / "instances" / "sweeps" / "smoke.toml"))
    ap.add_argument("--repeat", type=int, default=1, help="runs per configuration (min kept)")
    args = ap.parse_args(argv)
    spec = Path(args.spec)
    load0 = os.getloadavg()
    times: dict[int, float] = {}
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (0, 1, 2):
            best = float("inf")
            for _ in range(args.repeat):
                wall, rows = _run(spec, workers, Path(tmp))
                best = min(best, wall)
                results[workers] = rows
            times[workers] = best
            print(f"workers={workers}: {best:.1f} s ({len(rows)} tasks)", flush=True)
    load1 = os.getloadavg()
    same = results[0] == results[1] == results[2]
    print(f"spec: {spec.name}; cpus: {os.cpu_count()}; load average before "
          f"{load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, after {load1[0]:.2f} {load1[1]:.2f} "
          f"{load1[2]:.2f}")
    print(f"speed-up 2 workers vs 1: {times[1] / times[2]:.2f}x; 1 worker vs in-process: "
          f"{times[0] / times[1]:.2f}x; identical results: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
