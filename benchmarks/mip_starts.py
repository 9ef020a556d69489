"""Issue 22, the schedule side: the starting points of the default solve, MC-SF against MC-SF
in volume order.

The default ``kvopt solve`` (:mod:`kvopt.mip.portfolio`) and the improvement search start
from the best of :func:`kvopt.mip.search.starts.starting_points`: MC-SF, MC-Benchmark, MC-SF
scanning the waiting requests by memory-time volume ``o s + o (o + 1) / 2``
(``mcsf:volume``, :func:`kvopt.core.mcsf.mcsf_starts` with ``order="volume"``) and serial
decodes of priority rules. On a trace the search can barely move from its start (the list
search does not fit at 2000 requests, ``reports/mip/README.md`` section 10.7), so the start
*is* most of the answer there. This prints, per instance, every starting point's total
latency (TEL) over MC-SF's, and a summary per family: how often MC-SF in volume order beats
MC-SF, its median ratio, and how often each point is the best one.

Instances: the committed paper-scale instances (``reports/mip/paper_scale/model{1,2}-seed*.json``,
all arrivals of Model 1 at 0) and windows of the Azure conversation trace in 0.05 s slots
(``--trace N@FIRST``: requests FIRST .. FIRST + N - 1 in file order). Deterministic.

Run of ``reports/mip/README.md`` section 10.7::

    PYTHONPATH=. python benchmarks/mip_starts.py > reports/mip/starts.txt
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "reports" / "mip" / "paper_scale"
TRACE = ROOT / "instances" / "traces" / "azure_conv_2023.csv"
WINDOWS = ("1000@0", "2000@0", "2000@3000", "4000@0")


def window(spec: str) -> tuple[int, int]:
    """``"N@FIRST"`` as ``(N, FIRST)``.

    Examples
    --------
    >>> window("2000@3000")
    (2000, 3000)
    """
    m = re.fullmatch(r"(\d+)@(\d+)", spec)
    if m is None:
        raise argparse.ArgumentTypeError(f"--trace: expected N@FIRST, got {spec!r}")
    return int(m.group(1)), int(m.group(2))


def main(argv: list[str] | None = None) -> int:
    from kvopt.core.instance import load_instance
    from kvopt.mip.model.discretize import discretize
    from kvopt.mip.search.starts import starting_points

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paper", type=Path, default=PAPER, help="folder of paper-scale instances")
    ap.add_argument("--trace", type=window, nargs="*", default=[window(w) for w in WINDOWS],
                    metavar="N@FIRST", help=f"trace windows (default {' '.join(WINDOWS)})")
    ap.add_argument("--slot-seconds", type=float, default=0.05)
    args = ap.parse_args(argv)

    cases = []
    for f in sorted(args.paper.glob("model*-seed*.json"), key=lambda p: (
            p.name.split("-")[0], int(re.sub(r"\D", "", p.name.split("-seed")[1])))):
        if re.fullmatch(r"model[12]-seed\d+\.json", f.name):
            cases.append((f.name.split("-")[0], f.stem, load_instance(f)))
    if args.trace:
        full = load_instance(TRACE)
        for n, first in args.trace:
            inst = discretize(full.take(np.arange(first, min(first + n, full.n))),
                              args.slot_seconds)
            cases.append(("azure", f"azure {n}@{first}", inst))
    print(f"# {' '.join(sys.argv)}")
    print("# TEL of each starting point over MC-SF's; seconds = all starting points")
    rows: dict[str, list[tuple[float, str]]] = {}
    names: list[str] = []
    for family, label, inst in cases:
        t0 = time.perf_counter()
        pts = starting_points(inst)
        secs = time.perf_counter() - t0
        tel = {k: inst.tel_of_starts(v) for k, v in pts.items()}
        names = names or list(tel)
        best = min(tel, key=tel.__getitem__)  # the first of equal ones, in the names' order
        ratio = tel["mcsf:volume"] / tel["mcsf"]
        rows.setdefault(family, []).append((ratio, best))
        print(f"{label:>18} n={inst.n:5d} MC-SF {tel['mcsf']:>12.0f} "
              + " ".join(f"{k} {tel[k] / tel['mcsf'] - 1:+.3f}" for k in tel if k != "mcsf")
              + f"  best {best}  {secs:.1f} s", flush=True)
    print("\n| family | instances | MC-SF in volume order over MC-SF, median (range) "
          "| better than MC-SF | best starting point (count) |")
    print("|---|---|---|---|---|")
    for family, rs in rows.items():
        r = [x for x, _ in rs]
        counts = {k: sum(b == k for _, b in rs) for k in names}
        best = ", ".join(f"{k} {c}" for k, c in counts.items() if c)
        print(f"| {family} | {len(rs)} | {100 * (statistics.median(r) - 1):+.1f} % "
              f"({100 * (min(r) - 1):+.1f} .. {100 * (max(r) - 1):+.1f} %) "
              f"| {sum(x < 1 for x in r)} of {len(r)} | {best} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
