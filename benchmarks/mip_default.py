"""Issue 22: what ``kvopt solve`` gives by default, against the toolkit's other answers.

Every figure runs the real CLI (``python -m kvopt ... --json``, a fresh process per command, so
the whole call including start-up counts against ``--time-limit``) on fresh seeded instances,
and compares the default (``kvopt solve X --time-limit S``) with the other commands **in the
same run** (same machine, same load: the load average is recorded with every command).

Instances (``--seed`` draws them and is printed; the default 22 is this issue's number, never
used for instances elsewhere in the project): per family ``--K`` instance seeds are drawn
with ``numpy.random.default_rng(seed).integers(10**6, 10**9)``, and

- ``model1``: ``model1(s, n=50)`` (Model 1 at paper scale: M ~ U{30..50}, all arrivals at 0);
- ``model2``: the first 50 arrivals of ``model2(s)`` (Model 2 at paper scale; ``model2`` fixes
  only the expected count, so the instance is cut after its 50th arrival, as the ``paper-M2``
  family of ``benchmarks/mip_dual_small.py``; a seed with fewer than 50 arrivals is skipped
  and the next one drawn).

Modes:

``--table`` (the issue's four-row table): on the first Model-1 instance with ``M = 39``
(drawn as above, with ``memory=39``), the four commands of the issue as they were
(``kvopt solve X --solver cpsat --time-limit S`` is the former default path, ``cpsat`` /
``cp``, unchanged), and the new default ``kvopt solve X --time-limit S``.

``--paper DIR``: the default ``kvopt solve X --time-limit S`` on the 20 + 20 paper-scale
instances of section 6 of ``reports/mip/README.md`` (``DIR/model{1,2}-seed{1..20}.json``,
taken Model 1 and Model 2 alternately so that a partial run covers both), beside the committed
certificate (``DIR/<name>.best.json``) and interval-LP bound (``--paper-bounds``, section 7.3's
``dual_paper_all.json``); the JSON is rewritten after every instance.

``--fresh``: per instance, the default ``kvopt solve X --time-limit S`` against the best
combination the toolkit had (``kvopt bound X --intervals B --improve B``, ``B = 2 S / 3``); the
median certified gap of each and the median difference, per family.

Examples (the runs of reports/mip/default_*.txt)::

    nice -n 10 python benchmarks/mip_default.py --table --time-limit 180 \\
        --out reports/mip/default_table.json > reports/mip/default_table.txt
    nice -n 10 python benchmarks/mip_default.py --fresh --K 3 --seed 20261125 \\
        --time-limit 180 --out reports/mip/default_fresh.json > reports/mip/default_fresh.txt
    nice -n 10 python benchmarks/mip_default.py --fresh --K 5 --skip 3 --seed 20261125 \\
        --time-limit 180 --out reports/mip/default_fresh_2.json \\
        > reports/mip/default_fresh_2.txt
    nice -n 10 python benchmarks/mip_default.py --fresh --K 7 --skip 5 --seed 20261125 \\
        --time-limit 180 --out reports/mip/default_fresh_3.json \\
        > reports/mip/default_fresh_3.txt
    nice -n 10 python benchmarks/mip_default.py --fresh --K 10 --skip 7 --seed 20261125 \\
        --time-limit 180 --out reports/mip/default_fresh_4.json \\
        > reports/mip/default_fresh_4.txt
    python benchmarks/mip_default.py --paper reports/mip/paper_scale \\
        --time-limit 180 --out reports/mip/default_paper.json \\
        > reports/mip/default_paper.txt
    python benchmarks/mip_default.py --summary reports/mip/default_fresh.json \\
        reports/mip/default_fresh_2.json reports/mip/default_fresh_3.json \\
        reports/mip/default_fresh_4.json

    python benchmarks/mip_default.py --paper-compare reports/mip/default_paper.json \\
        reports/mip/default_paper_second.json reports/mip/default_paper_second_3-10.json \\
        reports/mip/default_paper_second_11-20.json > reports/mip/default_paper_compare.txt

``--combination-from JSON...`` reruns only the default side of ``--fresh`` and takes each
best combination from earlier records (section 10.5's, for a recheck of the first figure on
later code)::

    python benchmarks/mip_default.py --fresh --K 10 --seed 20261125 --time-limit 180 \
        --combination-from reports/mip/default_fresh.json reports/mip/default_fresh_2.json \
        reports/mip/default_fresh_3.json reports/mip/default_fresh_4.json \
        --out reports/mip/default_fresh_recheck.json > reports/mip/default_fresh_recheck.txt

(``--skip`` extends an earlier ``--fresh`` run with the next instances of the same draw;
``--summary`` prints the medians over several runs' records. Each record compares the two
commands run back to back on one instance. ``--paper-compare BEFORE AFTER...`` reads ``--paper``
records only: per instance found in both, the default's schedule before and after, the change,
whether the second improvement search's schedule was the one returned, and the certified gap
(the default's own bound) before and after; then per family and over all the medians, the
ranges, and how many schedules got better or worse, how many gaps are at most 8 % and how many
schedules are below the committed certificate.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def instance_seeds(seed: int, k: int) -> np.ndarray:
    """``k`` fresh instance seeds drawn from ``seed``."""
    return np.random.default_rng(seed).integers(10**6, 10**9, size=k)


def make(family: str, s: int, memory: int | None = None):  # type: ignore[no-untyped-def]
    """The instance of ``family`` for seed ``s`` (``None`` if it has fewer than 50 requests)."""
    from kvopt.core.generators import model1, model2

    if family == "model1":
        inst = model1(int(s), n=50, memory=memory)
        return inst.replace(name=f"model1-seed{s}-n50-M{inst.memory}")
    full = model2(int(s))
    if full.n < 50:
        return None
    order = np.argsort(full.arrival, kind="stable")[:50]
    return full.take(order, name=f"model2-seed{s}-first50-M{full.memory}")


def draw(family: str, seed: int, k: int, memory: int | None = None) -> list[Any]:
    """``k`` instances of ``family`` from the seeds drawn from ``seed`` (skipping unfit ones)."""
    out: list[Any] = []
    i = 0
    seeds = instance_seeds(seed, 1000)
    while len(out) < k:
        inst = make(family, int(seeds[i]), memory)
        if inst is not None and (memory is None or inst.memory == memory):
            out.append((int(seeds[i]), inst))
        i += 1
    return out


def run_cli(args: list[str], timeout: float) -> dict[str, Any]:
    """``python -m kvopt ARGS --json``: the document, wall seconds, load before/after."""
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "kvopt", *args, "--json"], cwd=ROOT,
                       capture_output=True, text=True, timeout=timeout, check=False)
    wall = time.perf_counter() - t0
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        doc = {"error": p.stderr[-2000:]}
    return {"cmd": "kvopt " + " ".join(args), "rc": p.returncode, "wall_s": round(wall, 1),
            "load": [round(load0, 2), round(os.getloadavg()[0], 2)], "doc": doc}


def summary(rec: dict[str, Any]) -> dict[str, Any]:
    """Best schedule, best bound (rounded up: TEL is an integer) and certified gap."""
    doc = rec["doc"]
    if "best_bound" in doc:                      # kvopt bound
        obj = doc["best_schedule"]["objective"]
        bound, which = doc["best_bound"], doc["best_bound_name"]
        source = doc["best_schedule"]["source"]
    else:                                        # kvopt solve
        obj, bound = doc.get("objective"), doc.get("bound")
        which = doc.get("model", {}).get("bound_source") or _solve_bound_name(doc)
        source = doc.get("incumbent_source")
        bound = None if bound is None else float(np.ceil(bound - 1e-9))
    gap = None if obj is None or bound is None else max(obj - bound, 0.0) / max(obj, 1.0)
    return {"schedule": obj, "source": source, "bound": bound, "bound_name": which,
            "gap": gap}


def _solve_bound_name(doc: dict[str, Any]) -> str:
    vals = {k: v["value"] for k, v in doc.get("bounds", {}).items()
            if v.get("status") == "computed" and v.get("value") is not None}
    return max(vals, key=vals.__getitem__) if vals else "-"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def table(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    (s, inst), = draw("model1", args.seed, 1, memory=39)
    path = tmp / f"{inst.name}.json"
    inst.save(path)
    S = args.time_limit
    B = round(2 * S / 3)
    cmds = [["solve", str(path), "--solver", "cpsat", "--time-limit", f"{S:g}"],
            ["bound", str(path)],
            ["solve", str(path), "--improve", "--time-limit", f"{S:g}"],
            ["bound", str(path), "--intervals", f"{B:g}", "--improve", f"{B:g}"],
            ["solve", str(path), "--time-limit", f"{S:g}"]]
    labels = ["before: default (= --solver cpsat, the former default)", "kvopt bound (defaults)",
              "kvopt solve --improve", f"kvopt bound --intervals {B} --improve {B}",
              "after: default"]
    rows = []
    for label, cmd in zip(labels, cmds, strict=True):
        rec = run_cli(cmd, timeout=4 * S + 600)
        rows.append({"label": label, **rec, **summary(rec)})
        r = rows[-1]
        print(f"| `{r['cmd'].replace(str(path), 'X')}` | {label} | {r['schedule']} "
              f"({r['source']}) | {r['bound']} ({r['bound_name']}) | {_pct(r['gap'])} | "
              f"{r['wall_s']} s | {r['load'][0]}-{r['load'][1]} |", flush=True)
    return {"instance": inst.name, "instance_seed": s, "n": inst.n, "memory": inst.memory,
            "rows": rows}


def committed_combinations(paths: list[str] | None) -> dict[str, dict[str, Any]]:
    """The best-combination records of earlier ``--fresh`` runs, by instance name (a later
    file's record replaces an earlier one), each marked with the file it came from."""
    out: dict[str, dict[str, Any]] = {}
    for f in paths or []:
        for r in json.loads(Path(f).read_text())["fresh"]["records"]:
            out[r["instance"]] = {**r["best_combination"], "reused_from": f}
    return out


def fresh(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    S = args.time_limit
    B = round(2 * S / 3)
    recs = []
    reuse = committed_combinations(args.combination_from)
    for family in args.family:
        for s, inst in draw(family, args.seed, args.K)[args.skip:]:
            path = tmp / f"{inst.name}.json"
            inst.save(path)
            d = run_cli(["solve", str(path), "--time-limit", f"{S:g}"], timeout=S + 600)
            if inst.name in reuse:
                b = reuse[inst.name]
            else:
                b = run_cli(["bound", str(path), "--intervals", f"{B:g}", "--improve",
                             f"{B:g}"], timeout=4 * B + 600)
                b = {**b, **summary(b)}
            rec = {"family": family, "instance": inst.name, "instance_seed": s, "n": inst.n,
                   "memory": inst.memory, "default": {**d, **summary(d)},
                   "best_combination": b}
            recs.append(rec)
            print(f"| {inst.name} | {rec['default']['schedule']} | {rec['default']['bound']} | "
                  f"{_pct(rec['default']['gap'])} | {rec['best_combination']['schedule']} | "
                  f"{rec['best_combination']['bound']} | {_pct(rec['best_combination']['gap'])}"
                  f" | {d['wall_s']} / {b['wall_s']} s"
                  f"{' (committed)' if 'reused_from' in b else ''} | "
                  f"{d['load'][0]}-{(d if 'reused_from' in b else b)['load'][1]} |", flush=True)
    return {"records": recs, "median": medians(recs, args.family)}


def _median(xs: list[float]) -> float | None:
    return float(np.median(xs)) if xs else None


def paper(args: argparse.Namespace, out: dict[str, Any]) -> dict[str, Any]:
    from kvopt import check_schedule, load_instance, load_schedule

    d = Path(args.paper)
    S = args.time_limit
    prior = {(r["kind"], r["seed"]): r
             for r in json.loads(Path(args.paper_bounds).read_text())["records"]}
    seeds = range(1, 21) if args.paper_seeds is None else args.paper_seeds
    recs: list[dict[str, Any]] = []
    res: dict[str, Any] = {"records": recs}
    out["paper"] = res
    for s in seeds:
        for family in args.family:
            path = d / f"{family}-seed{s}.json"
            inst = load_instance(path)
            rep = check_schedule(inst, load_schedule(d / f"{family}-seed{s}.best.json"))
            if not rep.ok or rep.objective is None:
                raise RuntimeError(f"{path}: the committed certificate is rejected: {rep}")
            cert = float(rep.objective)
            lp = prior.get((family, s), {}).get("intervals")
            r = run_cli(["solve", str(path), "--time-limit", f"{S:g}"], timeout=S + 600)
            sm = summary(r)
            best_obj = min(x for x in (sm["schedule"], cert) if x is not None)
            lp_int = None if lp is None else float(np.ceil(lp - 1e-9))
            best_bound = max(x for x in (sm["bound"], lp_int, 0.0) if x is not None)
            rec = {"family": family, "instance": path.stem, "n": inst.n, "memory": inst.memory,
                   "default": {**r, **sm}, "certificate": cert, "interval_lp": lp,
                   "toolkit_gap": max(best_obj - best_bound, 0.0) / best_obj}
            recs.append(rec)
            print(f"| {path.stem} | {inst.n} | {sm['schedule']} ({sm['source']}) | {sm['bound']} "
                  f"({sm['bound_name']}) | {_pct(sm['gap'])} | {cert:g} | "
                  f"{'-' if lp is None else f'{lp:.1f}'} | {_pct(rec['toolkit_gap'])} | "
                  f"{r['wall_s']} s | {r['load'][0]}-{r['load'][1]} |", flush=True)
            if args.out:
                Path(args.out).write_text(json.dumps(out, indent=1, default=str) + "\n")
    for family in args.family:
        rs = [r for r in recs if r["family"] == family]
        g = [r["default"]["gap"] for r in rs if r["default"]["gap"] is not None]
        t = [r["toolkit_gap"] for r in rs]
        res[family] = {"default": _median(g),
                       "with_committed": _median(t),
                       "instances": len(rs), "gap_known": len(g)}
        print(f"{family}: median certified gap of the default {_pct(res[family]['default'])} "
              f"({len(g)} of {len(rs)} with a bound); with the committed certificate and "
              f"interval LP {_pct(res[family]['with_committed'])}")
    return res


def medians(recs: list[dict[str, Any]], families: list[str]) -> dict[str, Any]:
    """Per family: the median certified gap of the default and of the best combination, and
    the median of their per-instance difference (printed)."""
    out: dict[str, Any] = {}
    for family in families:
        rs = [r for r in recs if r["family"] == family]
        gd = [r["default"]["gap"] for r in rs if r["default"]["gap"] is not None]
        gb = [r["best_combination"]["gap"] for r in rs
              if r["best_combination"]["gap"] is not None]
        diff = [r["default"]["gap"] - r["best_combination"]["gap"] for r in rs
                if r["default"]["gap"] is not None and r["best_combination"]["gap"] is not None]
        out[family] = {"default": _median(gd),
                       "best_combination": _median(gb),
                       "difference": _median(diff)}
        m = out[family]
        print(f"{family}: median certified gap, default {_pct(m['default'])}, best "
              f"combination {_pct(m['best_combination'])}, median difference "
              f"{_pct(m['difference'])} ({len(rs)} instances)")
    return out


def paper_compare(before: str, after: list[str]) -> dict[str, Any]:
    """Compare ``--paper`` records of one run (``before``) with those of later runs
    (``after``, read in order; a later file's record of an instance replaces an earlier one).

    Only instances present on both sides are compared. "second search won" means that the
    schedule returned came from the second improvement search (``model.schedule_source``).
    Returns the per-instance rows and the medians per family and over all (also printed).
    """
    def recs(path: str) -> dict[str, dict[str, Any]]:
        return {r["instance"]: r for r in json.loads(Path(path).read_text())["paper"]["records"]}

    old = recs(before)
    new: dict[str, dict[str, Any]] = {}
    for f in after:
        new.update(recs(f))
    rows: list[dict[str, Any]] = []
    print("| instance | schedule before | schedule after | change | second search won "
          "| gap before | gap after |")
    print("|---|---|---|---|---|---|---|")
    for name, r in new.items():
        if name not in old or r["default"]["schedule"] is None \
                or old[name]["default"]["schedule"] is None:
            continue
        b, a = float(old[name]["default"]["schedule"]), float(r["default"]["schedule"])
        model = r["default"]["doc"].get("model", {})
        won = "second search" in str(model.get("schedule_source", ""))
        row = {"instance": name, "family": r["family"], "before": b, "after": a,
               "change": (a - b) / b, "second_won": won,
               "gap_before": old[name]["default"]["gap"], "gap_after": r["default"]["gap"],
               "after_below_certificate": a < float(r["certificate"])}
        rows.append(row)
        print(f"| {name} | {b:g} | {a:g} | {100 * row['change']:+.2f} % | "
              f"{'yes' if won else 'no'} | {_pct(row['gap_before'])} | {_pct(row['gap_after'])} |")
    out: dict[str, Any] = {"rows": rows}
    for family in [*sorted({r["family"] for r in rows}), "all"]:
        rs = [r for r in rows if family in ("all", r["family"])]
        ga = [r["gap_after"] for r in rs if r["gap_after"] is not None]
        lo, hi = (min(ga), max(ga)) if ga else (None, None)
        m = {"instances": len(rs), "change": _median([r["change"] for r in rs]),
             "second_won": sum(r["second_won"] for r in rs),
             "gap_before": _median([r["gap_before"] for r in rs if r["gap_before"] is not None]),
             "gap_after": _median(ga),
             "better": sum(r["change"] < 0 for r in rs), "worse": sum(r["change"] > 0 for r in rs),
             "gap_after_range": [lo, hi] if ga else None,
             "gap_after_at_most_8": sum(g <= 0.08 for g in ga),
             "after_below_certificate": sum(r["after_below_certificate"] for r in rs)}
        out[family] = m
        ch = "-" if m["change"] is None else f"{100 * m['change']:+.2f} %"
        print(f"{family}: {m['instances']} instances; median change of the schedule {ch}; "
              f"second search won on {m['second_won']}; median certified gap "
              f"{_pct(m['gap_before'])} -> {_pct(m['gap_after'])}")
        if rs:
            print(f"  change {100 * min(r['change'] for r in rs):+.2f} % .. "
                  f"{100 * max(r['change'] for r in rs):+.2f} % (better on {m['better']}, worse "
                  f"on {m['worse']}); certified gap after "
                  f"{_pct(lo)} .. {_pct(hi)}, at most "
                  f"8 % (the issue's target) on {m['gap_after_at_most_8']}; schedule after below "
                  f"the committed certificate on {m['after_below_certificate']}")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--table", action="store_true", help="the issue's four-row table")
    p.add_argument("--fresh", action="store_true", help="default vs best combination")
    p.add_argument("--seed", type=int, default=22, help="draws the instance seeds (printed)")
    p.add_argument("--K", type=int, default=5, help="instances per family (--fresh)")
    p.add_argument("--skip", type=int, default=0,
                   help="--fresh: leave out the first SKIP of the K instances (to extend an "
                        "earlier run with the same --seed)")
    p.add_argument("--combination-from", nargs="+", default=None, metavar="JSON",
                   help="--fresh: take the best combination of an instance from these earlier "
                        "--fresh records where they have it (run only the default)")
    p.add_argument("--paper", default=None, metavar="DIR",
                   help="the default on the paper-scale instances of DIR")
    p.add_argument("--paper-bounds", default=str(ROOT / "reports/mip/dual_paper_all.json"),
                   help="--paper: the committed interval-LP bounds")
    p.add_argument("--paper-seeds", type=int, nargs="+", default=None,
                   help="--paper: these seeds (default 1..20)")
    p.add_argument("--family", action="append", default=None, choices=("model1", "model2"))
    p.add_argument("--time-limit", type=float, default=180.0)
    p.add_argument("--out", default=None, help="JSON records")
    p.add_argument("--summary", nargs="+", default=None, metavar="JSON",
                   help="only print the medians over the --fresh records of these files")
    p.add_argument("--paper-compare", nargs="+", default=None, metavar="JSON",
                   help="only compare the --paper records of the first file with those of the "
                        "others")
    args = p.parse_args(argv)
    args.family = args.family or ["model1", "model2"]
    if args.summary:
        recs = [r for f in args.summary for r in json.loads(Path(f).read_text())["fresh"]
                ["records"]]
        print(f"benchmarks/mip_default.py --summary {' '.join(args.summary)}: "
              f"{len(recs)} instances")
        medians(recs, args.family)
        return 0
    if args.paper_compare:
        if len(args.paper_compare) < 2:
            p.error("--paper-compare: give BEFORE.json and at least one AFTER.json")
        print(f"benchmarks/mip_default.py --paper-compare {' '.join(args.paper_compare)}")
        paper_compare(args.paper_compare[0], args.paper_compare[1:])
        return 0
    print(f"benchmarks/mip_default.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    print(f"seed {args.seed} (instance seeds: numpy default_rng({args.seed}).integers(10**6, "
          f"10**9)); cpus {os.cpu_count()}; load {os.getloadavg()[0]:.2f}", flush=True)
    t0 = time.perf_counter()
    doc: dict[str, Any] = {"argv": sys.argv, "seed": args.seed, "time_limit": args.time_limit}
    with tempfile.TemporaryDirectory() as d:
        if args.table:
            print("| command | row | best schedule | bound | certified gap | wall | load |")
            print("|---|---|---|---|---|---|---|")
            doc["table"] = table(args, Path(d))
        if args.fresh:
            print("| instance | default schedule | default bound | default gap | best-combination"
                  " schedule | bound | gap | wall default / combination | load |")
            print("|---|---|---|---|---|---|---|---|---|")
            doc["fresh"] = fresh(args, Path(d))
        if args.paper:
            print("| instance | n | default schedule | default bound | default gap | committed "
                  "certificate | interval LP | gap with both | wall | load |")
            print("|---|---|---|---|---|---|---|---|---|---|")
            paper(args, doc)
    doc["wall_s"] = round(time.perf_counter() - t0, 1)
    print(f"wall time {doc['wall_s']} s; load {os.getloadavg()[0]:.2f}")
    if args.out:
        Path(args.out).write_text(json.dumps(doc, indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
