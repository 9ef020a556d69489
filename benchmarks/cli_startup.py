"""``kvopt --help`` start-up time (issue 25: 1.2 s because building every sub-command's parser
imported scipy through ``kvopt.sim.policies``; goal < 0.5 s).

Each command runs ``--repeats`` times in a fresh interpreter (this one, ``sys.executable``),
and the minimum wall time is printed next to two references measured in the same run: a bare
interpreter (``python -c pass``) and the old start-up (``build_parser()`` building every
sub-command's parser, what ``kvopt --help`` did before the parsers were built lazily).

Usage::

    python benchmarks/cli_startup.py [--repeats 7]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

CASES = {
    "python -c pass (interpreter)": ["-c", "pass"],
    "import kvopt": ["-c", "import kvopt"],
    "every parser built (the old --help)": [
        "-c", "from kvopt.cli.main import build_parser; build_parser()"],
    "kvopt --help": ["-m", "kvopt", "--help"],
    "kvopt info --help": ["-m", "kvopt", "info", "--help"],
    "kvopt simulate --help": ["-m", "kvopt", "simulate", "--help"],
    "kvopt solve --help": ["-m", "kvopt", "solve", "--help"],
}


def best_of(argv: list[str], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, *argv], capture_output=True, check=True)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    args = ap.parse_args()
    times = {name: best_of(argv, args.repeats) for name, argv in CASES.items()}
    old = times["every parser built (the old --help)"]
    print(f"{sys.executable}, best of {args.repeats}")
    print(f"{'command':<38} {'seconds':>8} {'/ old --help':>12}")
    for name, t in times.items():
        print(f"{name:<38} {t:8.3f} {t / old:12.2f}")


if __name__ == "__main__":
    main()
