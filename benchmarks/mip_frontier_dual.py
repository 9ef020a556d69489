"""Issue 22: the interval LP's dual gap on the frontier instances the state search proved.

With every frontier instance (``M ~ U{n..n+10}``, Model 1 otherwise, K seeds per n; see
``benchmarks/mip_synthetic.py``) up to n = 16 proven, the gap between the lag-interval LP
(:func:`kvopt.mip.bounds.intervals.interval_bound`, windows from OPT) and OPT is measured on
all of them, not only on the easy ones. The optima come from the records of
``benchmarks/mip_frontier_cpu.py`` (its ``statespace`` method, status ``optimal``): the
value the state search proved (its schedule's TEL, or the incumbent it proved optimal).

Example (the run of reports/mip/frontier_dual.txt)::

    PYTHONPATH=. python benchmarks/mip_frontier_dual.py reports/mip/frontier_cpu_v2.json \\
        > reports/mip/frontier_dual.txt
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mip_synthetic import make_instance


def main(argv: list[str] | None = None) -> int:
    from kvopt.mip.bounds.intervals import interval_bound

    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: mip_frontier_dual.py RECORDS.json (of benchmarks/mip_frontier_cpu.py)",
              file=sys.stderr)
        return 2
    records = json.loads(Path(args[0]).read_text())["records"]
    opt: dict[tuple[int, int], float] = {}
    for r in records:
        if r["method"] == "statespace" and r.get("status") == "optimal":
            opt[r["n"], r["seed"]] = r["objective"] if r["objective"] is not None else r["ub"]
    print(f"benchmarks/mip_frontier_dual.py {args[0]}")
    print("| n | seed | OPT | interval LP | dual gap |")
    print("|---|---|---|---|---|")
    by_n: dict[int, list[float]] = {}
    for (n, seed), o in sorted(opt.items()):
        inst = make_instance(f"frontier-n{n}", seed, {})
        b = interval_bound(inst, upper=o, time_limit=60).bound
        gap = (o - b) / o
        by_n.setdefault(n, []).append(gap)
        print(f"| {n} | {seed} | {o:.0f} | {b:.1f} | {100 * gap:.1f} % |", flush=True)
    for n, gaps in sorted(by_n.items()):
        gaps.sort()
        print(f"n={n}: {len(gaps)} proven, dual gap median {100 * gaps[len(gaps) // 2]:.1f} %, "
              f"range {100 * gaps[0]:.1f}-{100 * gaps[-1]:.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
