"""Where the interval LP and the best schedule disagree, request by request (issue 13).

For one committed paper-scale instance and its certificate
(``reports/mip/paper_scale/NAME.json`` / ``NAME.best.json``, re-validated), solve the interval
LP of :func:`kvopt.mip.bounds.intervals.interval_bound` (``tight+cores`` plus lag-interval rows,
windows from the certificate's TEL; row-differenced form, interior point) and compare each
request's LP completion time ``E[C] = sum_k x[g, k] (k + o) / |g|`` with its completion ``C``
in the certificate. The sum of ``C - E[C]`` over all requests is ``TEL - LP``; the table
splits it by peak class (``s + o`` against ``M``), printing, per class, the number of
requests, the share of ``TEL - LP``, the mean shift and the range of the completions in
the certificate and in the LP. The LP optimum is not unique: another optimal solution can
split the same ``TEL - LP`` differently. Deterministic except the LP's running time.

Example (reports/mip/gap_where.txt)::

    nice -n 10 python benchmarks/mip_gap_where.py model1-seed1 model2-seed2 \\
        > reports/mip/gap_where.txt
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CERTS = ROOT / "reports" / "mip" / "paper_scale"
#: Peak classes as fractions of M: [0, 1/2], (1/2, 3/4], (3/4, 1].
CLASSES = ((0.0, 0.5), (0.5, 0.75), (0.75, 1.0))


def where(name: str) -> list[list[str]]:
    """Rows of the table for one instance."""
    from kvopt.core.instance import load_instance
    from kvopt.core.schedule import load_schedule
    from kvopt.core.validate import check_schedule
    from kvopt.mip.bounds.intervals import interval_model
    from kvopt.mip.bounds.sparse_lp import solve_lp_duals

    inst = load_instance(CERTS / f"{name}.json")
    sch = load_schedule(CERTS / f"{name}.best.json")
    rep = check_schedule(inst, sch)
    if not rep.ok:
        raise SystemExit(f"{name}: certificate invalid: {rep}")
    assert rep.objective is not None
    tel = float(rep.objective)
    data = interval_model(inst, upper=tel)
    t0 = time.perf_counter()
    lp = solve_lp_duals(data)
    if lp.status != "optimal" or lp.x is None or lp.value is None:
        raise SystemExit(f"{name}: LP not solved ({lp.status})")
    seconds = time.perf_counter() - t0
    a = inst.arrival.astype(np.int64)
    s = inst.prompt.astype(np.int64)
    o = inst.output.astype(np.int64)
    c = sch.final_start(inst).astype(np.int64) + o
    assert data.col_group is not None and data.col_start is not None
    ec = np.zeros(inst.n)
    for g, members in enumerate(data.groups):
        sel = data.col_group == g
        ec[members] = float(lp.x[sel] @ (data.col_start[sel] + o[members[0]])) / members.size
    shift = (c - a) - (ec - a)                     # the arrival cancels; kept for clarity
    gap = tel - lp.value
    peak = (s + o) / inst.memory
    rows = []
    for lo, hi in CLASSES:
        m = (peak > lo) & (peak <= hi) if lo > 0 else peak <= hi
        rows.append([name, f"({lo:g}, {hi:g}] M", str(int(m.sum())),
                     f"{shift[m].sum():.1f}", f"{shift[m].sum() / gap:.0%}",
                     f"{shift[m].mean():.1f}" if m.any() else "-",
                     f"{c[m].min()}-{c[m].max()}" if m.any() else "-",
                     f"{ec[m].min():.0f}-{ec[m].max():.0f}" if m.any() else "-"])
    rows.append([name, "all", str(inst.n), f"{shift.sum():.1f}", "100%",
                 f"TEL {tel:.0f}, LP {lp.value:.1f}", f"LP solved in {seconds:.0f} s", ""])
    return rows


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    from kvopt.core.tables import table

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("names", nargs="+", help="instances, e.g. model1-seed1")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    rows = [r for name in args.names for r in where(name)]
    print(table(["instance", "peak class", "requests", "sum C - E[C]", "share of TEL - LP",
                 "mean shift", "C (certificate)", "E[C] (LP)"], rows))
    print(f"wall time {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
