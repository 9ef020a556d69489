"""Issue 22: the staged interval bound at paper scale, and what a call of L seconds returns.

:func:`kvopt.mip.bounds.intervals.interval_bound` (the bound of ``kvopt solve``'s portfolio
and of ``kvopt bound --intervals``) solves, by default, the ``tight+cores`` LP first and then
the interval LP (the same rows plus the lag-interval rows) in the time left; when the interval
LP is not solved in time, the first LP's bound stands. Unstaged, a call too short for the
interval LP fell back to subgradient ascent from zero, which gets almost nothing in the
seconds left (865 on the issue's instance at ``--time-limit 3``, the trivial bound).

Per instance (``DIR/<name>.json``, windows from the committed certificate
``DIR/<name>.best.json``; one HiGHS thread; no time limit beyond ``--cap``): the model
build, both LPs' solve times and values, and the combinatorial bound (trivial, volume,
fluid, cores: what ``kvopt solve`` reports when no LP arrives). From these times, for each of
``--limits``, which bound each mode would return within ``L`` seconds (unstaged: the interval
LP if ``build + t_interval <= L``; staged: the interval LP if ``build + t_tight+cores +
t_interval <= L``, else the ``tight+cores`` LP if ``build + t_tight+cores <= L``; otherwise
the combinatorial bound), and the certified gap against the certificate. This is a
computation from measured times, not a run at each limit; ``--check L`` also calls
``interval_bound(time_limit=L)`` staged and unstaged on each instance, as a check of it.
Since section 10.20 each LP is solved by column generation over start columns
(:mod:`kvopt.mip.bounds.columns`), so a rerun measures that; the committed outputs
(``reports/mip/staged_lp*``) are of the whole LPs (``7274d00`` and before), and
``benchmarks/mip_column_lp.py`` compares the two.

Examples (the runs of reports/mip/staged_lp*.txt)::

    PYTHONPATH=. python benchmarks/mip_staged_lp.py --family model1 --check 30 \\
        --out /tmp/staged_m1.json > /tmp/staged_m1.txt
    PYTHONPATH=. python benchmarks/mip_staged_lp.py --summarise /tmp/staged_m1.json \\
        /tmp/staged_m2.json > reports/mip/staged_lp.txt
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LIMITS = (5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 180.0)


def certified_models(path: Path) -> tuple[Any, Any, Any, Any, dict[str, Any]]:
    """One paper-scale instance with its committed certificate (``<name>.best.json``,
    re-validated; a rejected one raises): the instance, the certificate's starts, the
    ``tight+cores`` and interval models with windows from it (timed), and the record's
    common fields (shared with ``mip_column_lp.py``)."""
    from kvopt.core.instance import load_instance
    from kvopt.core.schedule import load_schedule
    from kvopt.core.validate import check_schedule
    from kvopt.mip.bounds.combinatorial import combinatorial_bound
    from kvopt.mip.bounds.intervals import _interval_model_parts

    inst = load_instance(path)
    sched = load_schedule(path.with_suffix(".best.json"))
    rep = check_schedule(inst, sched)
    if not rep.ok or rep.objective is None:
        raise RuntimeError(f"{path.stem}: committed schedule rejected: {rep}")
    best = float(rep.objective)
    t = time.perf_counter()
    base, data = _interval_model_parts(inst, upper=best)
    build = time.perf_counter() - t
    return inst, sched.final_start(inst), base, data, {
        "name": path.stem, "n": inst.n, "memory": inst.memory, "best": best,
        "combinatorial": float(combinatorial_bound(inst)), "build_s": round(build, 3)}


def measure(path: Path, cap: float, check: float | None) -> dict[str, Any]:
    """Times and values of one instance (module docstring)."""
    from kvopt.core.limits import Deadline
    from kvopt.mip.bounds.intervals import _lp_bound, interval_bound

    inst, _, base, data, out = certified_models(path)
    best = out["best"]
    out.update({"families": data.meta["interval_families"], "nnz": int(data.A.nnz)})
    for key, model in (("tight_cores", base), ("intervals", data)):
        t = time.perf_counter()
        res = _lp_bound(model, Deadline(cap), "differenced", "ipm")
        secs = time.perf_counter() - t
        out[key] = {"status": res.status, "value": res.value, "bound": res.bound,
                    "seconds": round(secs, 3)}
    if check is not None:
        for staged in (True, False):
            t = time.perf_counter()
            iv = interval_bound(inst, time_limit=check, upper=best, staged=staged)
            out[f"check_{'staged' if staged else 'unstaged'}"] = {
                "limit": check, "bound": iv.bound, "method": iv.method,
                "seconds": round(time.perf_counter() - t, 3)}
    if any(b is not None and b > best + 1e-6 for b in
           (out["tight_cores"]["bound"], out["intervals"]["bound"])):
        raise RuntimeError(f"{path.stem}: an LP bound above the certificate {best}")
    return out


def returned(r: dict[str, Any], limit: float, staged: bool) -> tuple[str, float]:
    """Which bound a call of ``limit`` seconds returns, from the measured times, and its value
    (at least the combinatorial bound, which ``kvopt solve`` reports beside it). A staged call
    does not start the interval LP with less time left than the first LP took; where the
    interval LP takes longer than the first (all 40 paper-scale instances: 1.25-2.11 times),
    it could not have finished then either, so that rule changes nothing here."""
    b, t1, t2 = r["build_s"], r["tight_cores"]["seconds"], r["intervals"]["seconds"]
    comb = r["combinatorial"]
    iv, tc = r["intervals"]["bound"], r["tight_cores"]["bound"]
    if staged:
        if iv is not None and tc is not None and b + t1 + t2 <= limit:
            return "intervals", max(iv, tc, comb)
        if tc is not None and b + t1 <= limit:
            return "tight+cores", max(tc, comb)
    elif iv is not None and b + t2 <= limit:
        return "intervals", max(iv, comb)
    return "combinatorial", comb


def gap(r: dict[str, Any], bound: float) -> float:
    """Certified gap of the certificate against ``ceil(bound)``, in %."""
    return 100.0 * (r["best"] - math.ceil(bound - 1e-9)) / r["best"]


def _value(b: float | None) -> str:
    """An LP's bound for the table (``-``: not solved within ``--cap``)."""
    return "-" if b is None else f"{b:.1f}"


def _added(r: dict[str, Any]) -> float:
    """What the interval rows add to the tight+cores LP's bound, in % (the two values are
    Lagrangian values recomputed from each LP's duals, equal to ~1e-9 where the rows add
    nothing)."""
    tc, iv = r["tight_cores"]["bound"], r["intervals"]["bound"]
    return 100.0 * (iv - tc) / tc


def summarise(records: list[dict[str, Any]], limits: tuple[float, ...]) -> None:
    """The tables of the module docstring."""
    records = sorted(records, key=lambda r: (r["name"].split("-")[0],
                                             int(r["name"].split("seed")[1])))
    print("| instance | n | M | families | build s | tight+cores LP s | value | interval LP s | "
          "value | interval rows add |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in records:
        tc, iv = r["tight_cores"], r["intervals"]
        add = (f"{abs(_added(r)):.2f} %" if abs(_added(r)) < 0.005 else f"{_added(r):.2f} %"
               ) if iv["bound"] is not None and tc["bound"] is not None else "-"
        print(f"| {r['name']} | {r['n']} | {r['memory']} | {r['families']} | "
              f"{r['build_s']:.1f} | {tc['seconds']:.1f} | {_value(tc['bound'])} | "
              f"{iv['seconds']:.1f} | {_value(iv['bound'])} | {add} |")
    ratio = sorted(r["intervals"]["seconds"] / r["tight_cores"]["seconds"] for r in records)
    adds = sorted(max(_added(r), 0.0) for r in records
                  if r["intervals"]["bound"] is not None and r["tight_cores"]["bound"] is not None)
    print(f"\ninterval LP time / tight+cores LP time: median {statistics.median(ratio):.2f} "
          f"(range {ratio[0]:.2f}-{ratio[-1]:.2f}); the interval rows add a median "
          f"{statistics.median(adds):.2f} % (range {adds[0]:.2f}-{adds[-1]:.2f} %), "
          f"{len(records)} instances")
    print("\nWithin L seconds (from the measured times; gap = certified gap of the certificate):")
    print("| family | L (s) | unstaged: interval LP / none | median gap | staged: interval LP / "
          "tight+cores LP / none | median gap |")
    print("|---|---|---|---|---|---|")
    for fam in ("model1", "model2"):
        rs = [r for r in records if r["name"].startswith(fam)]
        if not rs:
            continue
        for L in limits:
            cells = []
            for staged in (False, True):
                got = [returned(r, L, staged) for r in rs]
                kinds = [k for k, _ in got]
                counts = ((kinds.count("intervals"), kinds.count("combinatorial")) if not staged
                          else (kinds.count("intervals"), kinds.count("tight+cores"),
                                kinds.count("combinatorial")))
                med = statistics.median(gap(r, v) for r, (_, v) in zip(rs, got, strict=True))
                cells += [" / ".join(str(c) for c in counts), f"{med:.1f} %"]
            print(f"| {fam} | {L:g} | " + " | ".join(cells) + " |")
    checks = [r for r in records if "check_staged" in r]
    if checks:
        print("\nDirect calls (interval_bound(time_limit=L), staged and unstaged):")
        print("| instance | L (s) | staged: method, bound, s | unstaged: method, bound, s | "
              "predicted (staged / unstaged) |")
        print("|---|---|---|---|---|")
        for r in checks:
            s_, u_ = r["check_staged"], r["check_unstaged"]
            L = s_["limit"]
            print(f"| {r['name']} | {L:g} | {s_['method']}, {s_['bound']:.1f}, "
                  f"{s_['seconds']:.1f} | {u_['method']}, {u_['bound']:.1f}, {u_['seconds']:.1f} | "
                  f"{returned(r, L, True)[0]} / {returned(r, L, False)[0]} |")


def add_instance_arguments(p: argparse.ArgumentParser) -> None:
    """``--paper`` / ``--family`` / ``--only``: the paper-scale instances
    (:func:`paper_paths`), shared with ``benchmarks/mip_column_lp.py`` and
    ``benchmarks/mip_short_bound.py``."""
    p.add_argument("--paper", default=str(ROOT / "reports/mip/paper_scale"), metavar="DIR",
                   help="instances and certificates (default: reports/mip/paper_scale)")
    p.add_argument("--family", choices=("model1", "model2"), action="append", default=None,
                   help="the 20 instances of this family (repeatable; default both)")
    p.add_argument("--only", nargs="+", default=None, metavar="NAME",
                   help="these instances only (e.g. model2-seed13)")


def add_paper_arguments(p: argparse.ArgumentParser, limits: tuple[float, ...]) -> None:
    """The options shared with ``benchmarks/mip_column_lp.py``: the paper-scale instances
    (:func:`add_instance_arguments`), the LP cap, the limits of the derived table and the
    JSON records."""
    from kvopt.cli.common import float_in

    add_instance_arguments(p)
    p.add_argument("--cap", type=float_in(0, lo_open=True), default=600.0,
                   help="seconds per LP at most (default 600)")
    p.add_argument("--limits", type=float_in(0, lo_open=True), nargs="+",
                   default=list(limits), help="the limits of the derived table")
    p.add_argument("--out", default=None, help="JSON records")
    p.add_argument("--summarise", nargs="+", default=None, metavar="JSON",
                   help="print the tables of earlier --out files")


def read_records(files: list[str], parser: argparse.ArgumentParser) -> list[dict[str, Any]]:
    """The records of earlier ``--out`` files (``--summarise``); an unreadable one is
    refused through ``parser`` (exit 2)."""
    recs: list[dict[str, Any]] = []
    for f in files:
        try:
            recs += json.loads(Path(f).read_text())["records"]
        except (OSError, ValueError, KeyError) as exc:
            parser.error(f"--summarise: cannot read records from {f}: {exc}")
    return recs


def paper_paths(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[Path]:
    """The instances ``--paper`` / ``--family`` / ``--only`` name, each with its committed
    certificate beside it (a missing one is refused through ``parser``, exit 2)."""
    d = Path(args.paper)
    names = args.only or [f"{fam}-seed{k}" for fam in (args.family or ["model1", "model2"])
                          for k in range(1, 21)]
    missing = [nm for nm in names if not (d / f"{nm}.json").is_file()
               or not (d / f"{nm}.best.json").is_file()]
    if missing:
        parser.error(f"--paper/--only: no instance or certificate for {', '.join(missing)} "
                     f"in {d}")
    return [d / f"{nm}.json" for nm in names]


def certified_instances(folder: Path, only: list[str] | None) -> list[tuple[str, Any, float]]:
    """``(name, instance, TEL of its certificate)`` of the paper-scale instances in ``folder``
    (``only`` these names, or every ``model*-seed*.json``) with the committed certificates
    beside them; ``ValueError`` saying which when there is none or one cannot be read."""
    from kvopt.core.errors import KvoptError
    from kvopt.core.instance import load_instance
    from kvopt.core.schedule import load_schedule

    names = only or sorted(f.stem for f in folder.glob("model*-seed*.json")
                           if not f.stem.endswith(".best"))
    if not names:
        raise ValueError(f"no model*-seed*.json instances in {folder}")
    out = []
    for name in names:
        try:
            inst = load_instance(folder / f"{name}.json")
            cert = load_schedule(folder / f"{name}.best.json")
        except (OSError, ValueError, KvoptError) as exc:
            raise ValueError(f"cannot read {name} in {folder}: {exc}") from exc
        out.append((name, inst, float(inst.tel_of_starts(cert.final_start(inst)))))
    return out


def add_record_arguments(parser: argparse.ArgumentParser, default_n: int) -> None:
    """The arguments :func:`frontier_or_paper_jobs` reads: ``RECORDS.json``, ``--only``,
    ``--n`` (default ``default_n``) and ``--seeds``."""
    from kvopt.cli.common import int_at_least

    parser.add_argument("records", metavar="RECORDS.json",
                        help="a folder of paper-scale instances and certificates "
                             "(reports/mip/paper_scale), or records of "
                             "benchmarks/mip_frontier_cpu.py (reports/mip/frontier_cpu_v2.json) "
                             "for the proven optima")
    parser.add_argument("--only", nargs="+", default=None,
                        help="paper scale: instance names (default: all)")
    parser.add_argument("--n", type=int_at_least(1), nargs="+", default=[default_n],
                        help=f"frontier: instance sizes (default {default_n})")
    parser.add_argument("--seeds", type=int_at_least(0), nargs="+", default=None,
                        help="frontier: seeds (default: every proven one)")


def frontier_or_paper_jobs(parser: argparse.ArgumentParser, records: str,
                           only: list[str] | None, sizes: list[int], seeds: list[int] | None,
                           label: str) -> tuple[bool, list[tuple[str, Any, float]]]:
    """``(paper, [(name, instance, reference TEL), ...])`` for a script that takes either a
    folder of paper-scale instances (:func:`certified_instances`, ``only`` these; reference:
    the certificate) or the frontier records of ``benchmarks/mip_frontier_cpu.py`` (the
    instances of ``sizes`` and ``seeds`` whose optimum is proven; reference: OPT; ``label``
    formats their names from ``n`` and ``seed``); bad input ends in ``parser.error`` naming
    ``RECORDS.json``, ``--only`` or ``--n/--seeds`` (exit 2). Its arguments come from
    :func:`add_record_arguments`."""
    from mip_frontier_cpu import read_proven_optima
    from mip_synthetic import make_instance

    if Path(records).is_dir():
        try:
            return True, certified_instances(Path(records), only)
        except ValueError as exc:
            parser.error(f"RECORDS.json/--only: {exc}")
    jobs = [(label.format(n=n, seed=s), make_instance(f"frontier-n{n}", s, {}), o)
            for n, s, o in read_proven_optima(parser, records, "RECORDS.json", sizes, seeds)]
    if not jobs:
        parser.error("--n/--seeds: no proven frontier instance matches")
    return False, jobs


def _parser() -> argparse.ArgumentParser:
    from kvopt.cli.common import float_in

    p = argparse.ArgumentParser(
        prog="mip_staged_lp.py",
        description="The staged interval bound at paper scale: LP times and values, and "
                    "which bound a call of L seconds returns.")
    add_paper_arguments(p, LIMITS)
    p.add_argument("--check", type=float_in(0, lo_open=True), default=None, metavar="L",
                   help="also call interval_bound(time_limit=L) staged and unstaged")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    limits = tuple(args.limits)
    if args.summarise:
        summarise(read_records(args.summarise, _parser()), limits)
        return 0
    return run_records("mip_staged_lp.py", argv, paper_paths(args, _parser()),
                       lambda path: measure(path, args.cap, args.check), args.out,
                       lambda recs: summarise(recs, limits))


def run_records(prog: str, argv: list[str] | None, paths: list[Path],
                one: Callable[[Path], dict[str, Any]], out: str | None,
                report: Callable[[list[dict[str, Any]]], None]) -> int:
    """Measure ``paths`` one after the other (``one``), writing the records to ``out`` after
    each, then ``report`` them and the wall time (shared with ``mip_column_lp.py``)."""
    print(f"benchmarks/{prog} {' '.join(sys.argv[1:] if argv is None else argv)}", flush=True)
    recs: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    for path in paths:
        recs.append(one(path))
        if out:
            Path(out).write_text(json.dumps({"argv": sys.argv, "records": recs}, indent=1))
    report(recs)
    print(f"wall {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
