"""Issue 22, figure 2, primal side: do orders read from the interval LP give better schedules?

Classical rounding of a time-indexed LP (alpha points, as in Phillips, Stein and Wein 1998,
and Goemans et al. 2002) orders the jobs by the slot at which a share ``alpha`` of each
job's LP mass has started and list-schedules them. If the interval LP (the bound of every
paper-scale certificate, ``reports/mip/README.md`` section 7.3) were close to a good
schedule, its orders would be good starting points for the improvement search. For each
committed paper-scale instance (``reports/mip/paper_scale/NAME.json`` and its certificate
``NAME.best.json``, re-validated) this solves the LP of
:func:`kvopt.mip.bounds.intervals.interval_bound` (windows from the certificate's TEL;
row-differenced form, interior point with crossover) and decodes, by
:func:`kvopt.mip.search.starts.sgs_decode`, the requests sorted by

- their alpha point, for alpha in ``--alphas`` (a group of ``m`` identical requests holds
  mass ``m``; its ``j``-th member takes the alpha point of the mass slice ``[j, j + 1]``),
- their mean LP start and their mean LP completion (the same slices),
- their alpha-0.5 point again, as a release date (no start before it),

with ties broken by output length, then index. It prints each order's TEL against MC-SF and
the certificate. Deterministic (the LP's optimal solution is the solver's; only its running
time varies).

Run of ``reports/mip/README.md`` section 10.11::

    PYTHONPATH=. python benchmarks/mip_lp_orders.py > reports/mip/lp_orders.txt
    python benchmarks/mip_lp_orders.py --summarise reports/mip/lp_orders.txt \
        > reports/mip/lp_orders_summary.txt

(``--summarise`` re-reads the first table and compares, per family, the best order of each
instance and MC-SF with the certificate.)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

ROOT = Path(__file__).resolve().parents[1]
CERTS = ROOT / "reports" / "mip" / "paper_scale"
ALPHAS = (0.05, 0.2, 0.35, 0.5, 0.65, 0.8, 0.95)


def lp_points(data: Any, x: NDArray[np.float64], n: int, alphas: tuple[float, ...]
              ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Per request: its alpha points (one row per alpha) and its mean LP start.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> d = SimpleNamespace(groups=[np.array([0, 1])], col_group=np.array([0, 0, 0]),
    ...                     col_start=np.array([0, 2, 5]))
    >>> pts, mean = lp_points(d, np.array([1.0, 0.5, 0.5]), 2, (0.5,))
    >>> pts.tolist(), mean.tolist()
    ([[0.0, 2.0]], [0.0, 3.5])
    """
    pts = np.zeros((len(alphas), n))
    mean = np.zeros(n)
    for g, members in enumerate(data.groups):
        sel = np.flatnonzero(data.col_group == g)
        order = np.argsort(data.col_start[sel], kind="stable")
        k = data.col_start[sel][order].astype(np.float64)
        w = np.clip(x[sel][order], 0.0, None)
        w = w * members.size / w.sum()
        hi = np.cumsum(w)
        lo = hi - w
        for j, r in enumerate(members):
            for ai, alpha in enumerate(alphas):
                pts[ai, r] = k[min(int(np.searchsorted(hi, j + alpha - 1e-9)), k.size - 1)]
            part = np.clip(np.minimum(hi, j + 1) - np.maximum(lo, j), 0.0, None)
            mean[r] = float(part @ k) / float(part.sum())
    return pts, mean


def run(name: str, alphas: tuple[float, ...]) -> dict[str, Any]:
    """One instance: the LP, every order's TEL, MC-SF's and the certificate's."""
    from kvopt.core.instance import load_instance
    from kvopt.core.mcsf import mcsf_starts
    from kvopt.core.schedule import load_schedule
    from kvopt.core.validate import check_schedule
    from kvopt.mip.bounds.intervals import interval_model
    from kvopt.mip.bounds.sparse_lp import solve_lp_duals
    from kvopt.mip.search.starts import sgs_decode

    inst = load_instance(CERTS / f"{name}.json")
    rep = check_schedule(inst, load_schedule(CERTS / f"{name}.best.json"))
    if not rep.ok or rep.objective is None:
        raise SystemExit(f"{name}: certificate invalid: {rep}")
    cert = float(rep.objective)
    data = interval_model(inst, upper=cert)
    t0 = time.perf_counter()
    lp = solve_lp_duals(data)
    if lp.status != "optimal" or lp.x is None or lp.value is None:
        raise SystemExit(f"{name}: LP not solved ({lp.status})")
    seconds = time.perf_counter() - t0
    pts, mean = lp_points(data, lp.x, inst.n, alphas)
    o = inst.output

    def tel(key: NDArray[np.float64], release: NDArray[np.float64] | None = None) -> float:
        order = np.lexsort((np.arange(inst.n), o, key))
        rel = None if release is None else release.astype(np.int64)
        return float(inst.tel_of_starts(sgs_decode(inst, order, release=rel)))

    orders = {f"alpha {a:g}": tel(pts[i]) for i, a in enumerate(alphas)}
    orders["mean start"] = tel(mean)
    orders["mean completion"] = tel(mean + o)
    half = pts[int(np.argmin(np.abs(np.asarray(alphas) - 0.5)))]
    orders["alpha 0.5 as release"] = tel(half, release=half)
    best = min(orders, key=orders.__getitem__)
    return {"name": name, "n": inst.n, "memory": int(inst.memory), "lp": lp.value,
            "lp_s": seconds, "mcsf": float(inst.tel_of_starts(mcsf_starts(inst))),
            "cert": cert, "orders": orders, "best": best}


def summarise(path: Path) -> str:
    """Per family, from the first table of an output of this script: the best order of each
    instance and MC-SF against the certificate (median, range), and how often the best order
    beats MC-SF.

    Examples
    --------
    >>> import tempfile
    >>> row = "| model1-seed1 | 50 | 7488.7 | 20 | 8504 | 9017 | 9387 | mean start | x | x |"
    >>> with tempfile.TemporaryDirectory() as d:
    ...     f = Path(d) / "out.txt"; _ = f.write_text(row + "\\n")
    ...     print(summarise(f).splitlines()[-1])
    | model1 | 1 | +10.4% (+10.4% .. +10.4%) | +6.0% (+6.0% .. +6.0%) | 0 |
    """
    from kvopt.core.tables import table

    rows = [[c.strip() for c in line.split("|")[1:-1]] for line in path.read_text().splitlines()
            if line.startswith("| model") and line.count("|") == 11]
    out = []
    for fam in ("model1", "model2"):
        fr = [r for r in rows if r[0].startswith(fam + "-")]
        if not fr:
            continue
        best = [float(r[6]) / float(r[4]) - 1 for r in fr]
        mcsf = [float(r[5]) / float(r[4]) - 1 for r in fr]
        out.append([fam, str(len(fr)),
                    f"{statistics.median(best):+.1%} ({min(best):+.1%} .. {max(best):+.1%})",
                    f"{statistics.median(mcsf):+.1%} ({min(mcsf):+.1%} .. {max(mcsf):+.1%})",
                    str(sum(float(r[6]) < float(r[5]) for r in fr))])
    return table(["family", "instances", "best LP order / certificate - 1: median (range)",
                  "MC-SF / certificate - 1", "best LP order better than MC-SF"], out)


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    from kvopt.core.tables import table

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--summarise", type=Path, metavar="TXT",
                   help="re-read an output of this script and print the per-family summary")
    p.add_argument("--only", nargs="+", metavar="NAME",
                   help="instances (default: every model{1,2}-seed{1..20})")
    p.add_argument("--alphas", nargs="+", type=float, default=list(ALPHAS), metavar="A",
                   help="alpha points to order by (default: %(default)s)")
    args = p.parse_args(argv)
    if args.summarise is not None:
        try:
            text = summarise(args.summarise)
        except OSError as exc:
            p.error(f"--summarise: cannot read {args.summarise}: {exc.strerror}")
        print(f"# python benchmarks/mip_lp_orders.py --summarise {args.summarise}")
        print(text)
        return 0
    if any(not 0 < a < 1 for a in args.alphas):
        p.error("--alphas: every alpha must lie in (0, 1)")
    names = args.only or [f"model{m}-seed{s}" for s in range(1, 21) for m in (1, 2)]
    missing = [nm for nm in names if not (CERTS / f"{nm}.json").exists()]
    if missing:
        p.error(f"--only: no instance {missing[0]} under {CERTS}")
    t0 = time.perf_counter()
    print("# " + " ".join(["python", "benchmarks/mip_lp_orders.py", *(argv or sys.argv[1:])]))
    recs, rows = [], []
    for nm in names:
        r = run(nm, tuple(args.alphas))
        recs.append(r)
        b = r["orders"][r["best"]]
        rows.append([nm, str(r["n"]), f"{r['lp']:.1f}", f"{r['lp_s']:.0f}", f"{r['cert']:.0f}",
                     f"{r['mcsf']:.0f}", f"{b:.0f}", r["best"],
                     f"{b / r['cert'] - 1:+.1%}", f"{b / r['mcsf'] - 1:+.1%}"])
        print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    print(table(["instance", "n", "interval LP", "LP s", "certificate", "MC-SF",
                 "best LP order", "which", "vs certificate", "vs MC-SF"], rows))
    print()
    heads = list(recs[0]["orders"])
    summary = []
    for fam in ("model1", "model2"):
        fr = [r for r in recs if r["name"].startswith(fam + "-")]
        if not fr:
            continue
        for h in heads:
            rel = [r["orders"][h] / r["cert"] - 1 for r in fr]
            summary.append([fam, h, f"{statistics.median(rel):+.1%}",
                            f"{min(rel):+.1%}",
                            str(sum(r["orders"][h] < r["mcsf"] for r in fr)),
                            str(sum(r["orders"][h] < r["cert"] for r in fr)), str(len(fr))])
    print(table(["family", "order", "TEL / certificate - 1, median", "best",
                 "better than MC-SF", "better than the certificate", "instances"], summary))
    print(f"\nwall time {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
