"""Time lambda_max(A_u, B_u) (seed 000 Corollary 1) with the structured O(u) solver.

Run: ``python benchmarks/rayleigh_speed.py [--sizes 1000 100000 1000000] [--repeat 3]``.
Prints wall and CPU seconds (best of ``--repeat``) and the dense/structured agreement for
small u. Goal: u = 10^6 in under 2 s on 2 cores.
"""

from __future__ import annotations

import argparse
import time

from kvopt.theory.rayleigh import lambda_max, lambda_max_dense


def main() -> None:
    """Print one timing row per size."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 100_000, 1_000_000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'u':>9} {'lambda_max':>18} {'wall_s':>8} {'cpu_s':>8} {'dense_rel_err':>14}")
    for u in args.sizes:
        walls, cpus = [], []
        for _ in range(args.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            lam = float(lambda_max(u))  # type: ignore[arg-type]
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        err = abs(lam - lambda_max_dense(u)) / lam if u <= 2000 else float("nan")
        print(f"{u:>9} {lam:>18.12f} {min(walls):>8.3f} {min(cpus):>8.3f} {err:>14.2e}")


if __name__ == "__main__":
    main()
