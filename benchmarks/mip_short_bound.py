"""Bounds of short calls: ``interval_bound`` at a time limit on the 20 + 20 paper-scale
instances, this tree against a baseline revision, in the same run.

Per instance (``reports/mip/paper_scale/NAME.json`` and its committed certificate
``NAME.best.json``, re-validated with :func:`kvopt.check_schedule`) and per side, one fresh
Python process runs ``interval_bound(inst, time_limit=L, upper=TEL, starts=certificate)``
(windows and first columns from the certificate, as the portfolio passes its best schedule)
and reports the bound, how it was reached and the seconds. The two sides alternate per
instance (baseline first on even positions), so slow stretches of the machine fall on both.
The certified gap is ``(TEL - ceil(bound)) / TEL`` against the certificate's TEL; the summary
gives, per family, the median gap of each side, how many instances each side bounds higher,
and the median ratio of the bounds (this tree / baseline).

Usage::

    PYTHONPATH=. python benchmarks/mip_short_bound.py --limit 10 --baseline 364e841 \\
        --out /tmp/short10.json                       # 40 x 2 calls of 10 s, ~15 min
    PYTHONPATH=. python benchmarks/mip_short_bound.py --summarise /tmp/short10.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mip_staged_lp import add_instance_arguments, paper_paths, read_records
from sim_throughput import export_revision

ROOT = Path(__file__).resolve().parents[1]

#: What the child process runs: argv = instance path, limit; prints one JSON line.
CHILD = r"""
import json, sys, time
from pathlib import Path
from kvopt.core.instance import load_instance
from kvopt.core.schedule import load_schedule
from kvopt.core.validate import check_schedule
from kvopt.mip.bounds.intervals import interval_bound
path, limit = Path(sys.argv[1]), float(sys.argv[2])
inst = load_instance(path)
sched = load_schedule(path.with_suffix(".best.json"))
rep = check_schedule(inst, sched)
if not rep.ok or rep.objective is None:
    raise SystemExit(f"{path.stem}: committed schedule rejected: {rep}")
t = time.perf_counter()
iv = interval_bound(inst, time_limit=limit, upper=float(rep.objective),
                    starts=sched.final_start(inst))
print(json.dumps({"best": float(rep.objective), "bound": float(iv.bound),
                  "method": iv.method, "seconds": round(time.perf_counter() - t, 3)}))
"""


def call(path: Path, limit: float, tree: Path) -> dict[str, Any]:
    """One ``interval_bound`` call in a fresh process with the ``kvopt`` of ``tree``."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    r = subprocess.run([sys.executable, "-c", CHILD, str(path), str(limit)],
                       capture_output=True, text=True, env=env, cwd=str(tree))
    if r.returncode != 0:
        raise RuntimeError(f"{path.stem}: interval_bound failed: {r.stderr[-2000:]}")
    out: dict[str, Any] = json.loads(r.stdout.strip().splitlines()[-1])
    if out["bound"] > out["best"] + 1e-6:
        raise RuntimeError(f"{path.stem}: bound {out['bound']} above the certificate "
                           f"{out['best']}")
    return out


def gap(rec: dict[str, Any]) -> float:
    """Certified gap of one call against the certificate (the bound rounded up)."""
    return (rec["best"] - math.ceil(rec["bound"] - 1e-9)) / rec["best"]


def summarise(records: list[dict[str, Any]]) -> None:
    """Per family: median certified gaps, wins, median ratio of the bounds."""
    print("| family | instances | median gap: baseline | this tree | higher bound: baseline "
          "/ this tree / equal | median bound ratio (this / baseline) |")
    print("|---|---|---|---|---|---|")
    for fam in ("model1", "model2"):
        rs = [r for r in records if r["name"].startswith(fam)]
        if not rs:
            continue
        gb = statistics.median(gap(r["baseline"]) for r in rs)
        ga = statistics.median(gap(r["tree"]) for r in rs)
        up = sum(r["tree"]["bound"] > r["baseline"]["bound"] + 0.5 for r in rs)
        down = sum(r["tree"]["bound"] < r["baseline"]["bound"] - 0.5 for r in rs)
        ratio = statistics.median(r["tree"]["bound"] / r["baseline"]["bound"] for r in rs)
        print(f"| {fam} | {len(rs)} | {100 * gb:.1f} % | {100 * ga:.1f} % | {down} / {up} / "
              f"{len(rs) - up - down} | {ratio:.3f} |")


def main(argv: list[str] | None = None) -> int:
    from kvopt.cli.common import float_in

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_instance_arguments(ap)
    ap.add_argument("--limit", type=float_in(0, lo_open=True), default=10.0,
                    help="seconds per interval_bound call (default 10)")
    ap.add_argument("--baseline", default=None, metavar="REV",
                    help="git revision whose kvopt is the other side (required unless "
                         "--summarise)")
    ap.add_argument("--out", default=None, help="JSON records")
    ap.add_argument("--summarise", nargs="+", default=None, metavar="JSON",
                    help="print the table of earlier --out files")
    args = ap.parse_args(argv)
    if args.summarise:
        summarise(read_records(args.summarise, ap))
        return 0
    if args.baseline is None:
        ap.error("--baseline: required (the revision to compare with)")
    paths = paper_paths(args, ap)
    probe = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet",
                            f"{args.baseline}^{{commit}}"], capture_output=True)
    if probe.returncode != 0:
        ap.error(f"--baseline: not a revision of this repository: {args.baseline!r}")
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        old = export_revision(args.baseline, Path(tmp) / "old")
        t0 = time.perf_counter()
        for i, path in enumerate(paths):
            rec: dict[str, Any] = {"name": path.stem}
            sides = [("baseline", old), ("tree", ROOT)]
            for key, tree in (sides if i % 2 == 0 else sides[::-1]):
                rec[key] = call(path, args.limit, tree)
            records.append(rec)
            b, a = rec["baseline"], rec["tree"]
            print(f"{path.stem}: baseline {b['bound']:.1f} ({b['method']}, {b['seconds']:.1f} s)"
                  f", this tree {a['bound']:.1f} ({a['method']}, {a['seconds']:.1f} s)",
                  flush=True)
        print(f"# {len(paths)} instances, --limit {args.limit:g}, baseline {args.baseline}, "
              f"{time.perf_counter() - t0:.0f} s wall")
    summarise(records)
    if args.out:
        Path(args.out).write_text(json.dumps({"argv": sys.argv, "records": records}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
