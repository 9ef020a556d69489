"""Issue 22: the interval bound's LPs by column generation over start columns, against the
whole LPs, at paper scale (``reports/mip/README.md`` section 10.20).

:func:`kvopt.mip.bounds.intervals.interval_bound` (the bound of ``kvopt solve``'s portfolio
and of ``kvopt bound --intervals``) solves the ``tight+cores`` LP, then the interval LP. It
used to pass each whole LP to HiGHS; it now solves each by column generation
(:func:`kvopt.mip.bounds.columns.solve_lp_columns`): a restricted LP over every 4th start
slot, then the columns that price out, until none does; the interval LP starts from the
first LP's last columns. Every round's Lagrangian value is a valid bound.

Per instance (``DIR/<name>.json``, windows and the first columns from the committed
certificate ``DIR/<name>.best.json``; one HiGHS thread), in one process, one after the
other: the model build; both **whole** LPs (``columns`` = all: one LP each, as before); both
LPs **by columns** (each round's seconds and bound). Both give the same LP values (checked
to 1e-6 relative). From the measured times, for each of ``--limits``, the bound a call of
``L`` seconds would return (whole: the interval LP if ``build + t1 + t2 <= L``, else the
tight+cores LP if ``build + t1 <= L``; by columns: the best round finished by ``L``; else
the combinatorial bound), and the certified gap against the certificate. This is a
computation from measured times, not a run at each limit.

Examples (the runs of reports/mip/column_lp*.txt)::

    PYTHONPATH=. python benchmarks/mip_column_lp.py --family model1 \\
        --out /tmp/column_m1.json > /tmp/column_m1.txt
    PYTHONPATH=. python benchmarks/mip_column_lp.py --summarise /tmp/column_m1.json \\
        /tmp/column_m2.json > reports/mip/column_lp.txt
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mip_staged_lp import (
    add_paper_arguments,
    certified_models,
    gap,
    paper_paths,
    read_records,
    run_records,
)

ROOT = Path(__file__).resolve().parents[1]
LIMITS = (10.0, 20.0, 30.0, 60.0, 120.0, 180.0)


def measure(path: Path, cap: float) -> dict[str, Any]:
    """Times and values of one instance (module docstring)."""
    import numpy as np

    from kvopt.core.limits import Deadline
    from kvopt.mip.bounds.columns import solve_lp_columns

    _, starts, base, data, out = certified_models(path)
    best = out["best"]
    out["cols"] = base.n_cols
    every = np.ones(base.n_cols, dtype=bool)
    for key, model in (("whole_tc", base), ("whole_iv", data)):
        t = time.perf_counter()
        res = solve_lp_columns(model, deadline=Deadline(cap), columns=every)
        out[key] = {"status": res.status, "bound": res.bound,
                    "seconds": round(time.perf_counter() - t, 3)}
    cols = None
    for key, model in (("cols_tc", base), ("cols_iv", data)):
        t = time.perf_counter()
        res = solve_lp_columns(model, deadline=Deadline(cap), columns=cols, starts=starts)
        cols = res.columns
        out[key] = {"status": res.status, "bound": res.bound,
                    "seconds": round(time.perf_counter() - t, 3), "rounds": res.rounds,
                    "columns": int(res.columns.sum())}
    for a, b in (("whole_tc", "cols_tc"), ("whole_iv", "cols_iv")):
        x, y = out[a]["bound"], out[b]["bound"]
        if out[a]["status"] == out[b]["status"] == "optimal" and abs(x - y) > 1e-6 * abs(x):
            raise RuntimeError(f"{path.stem}: {a} {x} and {b} {y} differ")
    if any(out[k]["bound"] is not None and out[k]["bound"] > best + 1e-6
           for k in ("whole_tc", "whole_iv", "cols_tc", "cols_iv")):
        raise RuntimeError(f"{path.stem}: an LP bound above the certificate {best}")
    return out


def returned(r: dict[str, Any], limit: float, columns: bool) -> tuple[str, float]:
    """Which bound a call of ``limit`` seconds returns, from the measured times, and its
    value (at least the combinatorial bound, which ``kvopt solve`` reports beside it)."""
    comb, left = r["combinatorial"], limit - r["build_s"]
    if not columns:
        t1, t2 = r["whole_tc"]["seconds"], r["whole_iv"]["seconds"]
        if r["whole_iv"]["bound"] is not None and t1 + t2 <= left:
            return "interval LP", max(r["whole_iv"]["bound"], r["whole_tc"]["bound"], comb)
        if r["whole_tc"]["bound"] is not None and t1 <= left:
            return "tight+cores LP", max(r["whole_tc"]["bound"], comb)
        return "combinatorial", comb
    got, elapsed, kind = comb, 0.0, "combinatorial"
    for key, name in (("cols_tc", "tight+cores LP"), ("cols_iv", "interval LP")):
        rounds = r[key]["rounds"]
        for i, rd in enumerate(rounds):
            elapsed += rd["seconds"]
            if elapsed > left:
                return kind, got
            got = max(got, rd["bound"])
            if i == len(rounds) - 1 and r[key]["status"] == "optimal":
                kind = name
            elif kind == "combinatorial":
                kind = "restricted LP"
    return kind, got


def summarise(records: list[dict[str, Any]], limits: tuple[float, ...]) -> None:
    """The tables of the module docstring."""
    records = sorted(records, key=lambda r: (r["name"].split("-")[0],
                                             int(r["name"].split("seed")[1])))
    print("| instance | n | columns | build s | whole: tight+cores + interval LP s | by columns: "
          "rounds, s | columns kept | interval LP bound | time ratio |")
    print("|---|---|---|---|---|---|---|---|---|")
    ratios = []
    for r in records:
        w = r["whole_tc"]["seconds"] + r["whole_iv"]["seconds"]
        c = r["cols_tc"]["seconds"] + r["cols_iv"]["seconds"]
        ratios.append(c / w)
        print(f"| {r['name']} | {r['n']} | {r['cols']} | {r['build_s']:.1f} | "
              f"{r['whole_tc']['seconds']:.1f} + {r['whole_iv']['seconds']:.1f} | "
              f"{len(r['cols_tc']['rounds'])} + {len(r['cols_iv']['rounds'])}, "
              f"{r['cols_tc']['seconds']:.1f} + {r['cols_iv']['seconds']:.1f} | "
              f"{r['cols_iv']['columns']} | {r['cols_iv']['bound']:.2f} | {c / w:.2f} |")
    ratios.sort()
    print(f"\nby columns / whole, both LPs: median {statistics.median(ratios):.2f} "
          f"(range {ratios[0]:.2f}-{ratios[-1]:.2f}), {len(records)} instances; the same LP "
          "values (to 1e-6) on every instance")
    print("\nWithin L seconds (from the measured times; gap = certified gap of the certificate):")
    print("| family | L (s) | whole: interval / tight+cores / none | median gap | by columns: "
          "interval / tight+cores / restricted / none | median gap |")
    print("|---|---|---|---|---|---|")
    for fam in ("model1", "model2"):
        rs = [r for r in records if r["name"].startswith(fam)]
        for L in limits if rs else ():
            cells = []
            for columns in (False, True):
                got = [returned(r, L, columns) for r in rs]
                kinds = [k for k, _ in got]
                names = ["interval LP", "tight+cores LP"] + (["restricted LP"] if columns
                                                               else []) + ["combinatorial"]
                med = statistics.median(gap(r, v) for r, (_, v) in zip(rs, got, strict=True))
                cells += [" / ".join(str(kinds.count(k)) for k in names), f"{med:.1f} %"]
            print(f"| {fam} | {L:g} | " + " | ".join(cells) + " |")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="mip_column_lp.py",
        description="The interval bound's LPs by column generation against the whole LPs, "
                    "at paper scale.")
    add_paper_arguments(p, LIMITS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    limits = tuple(args.limits)
    if args.summarise:
        summarise(read_records(args.summarise, _parser()), limits)
        return 0
    return run_records("mip_column_lp.py", argv, paper_paths(args, _parser()),
                       lambda path: measure(path, args.cap), args.out,
                       lambda recs: summarise(recs, limits))


if __name__ == "__main__":
    raise SystemExit(main())
