"""Worst ratio to OPT per policy and instance size (issue 24): the counterexample search
(``kvopt report search``, :mod:`kvopt.report.search`) against every policy.

Each (policy, size range) is one search task (deterministic given ``--seed``); tasks run in
parallel processes and each writes ``RAW/<policy>-n<a>-<b>.json`` as it finishes, so a run
cut short keeps what it finished. ``--render RAW`` builds the report from those files:
``table.md`` (worst ratio per policy and size, the proven ratio where one exists),
``instances/`` (each worst instance, the policy's schedule and an optimal schedule, so
``kvopt validate instances/X.json instances/X.<policy>.json`` replays a row) and
``README.md`` with the commands and wall times.

Usage::

    python benchmarks/worst_case_table.py --raw RAW [--workers 16] [--restarts 6]
        [--steps 30] [--sizes 2:3,4:5,6:7] [--solver highs] [--seed 0]
    python benchmarks/worst_case_table.py --render RAW --out reports/worstcase
    python benchmarks/worst_case_table.py --at-scale reports/mip/dual_paper_all.json \
        --out reports/worstcase

``--at-scale`` simulates every policy on the 40 paper-scale instances (model1 / model2
seeds 1-20, n = 34-75) whose certified interval-LP bound and best known schedule are
committed in that file, and writes ``at_scale.md``: TEL / bound (mean, max) and TEL / best
known per policy.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from kvopt.core.instance import Instance
from kvopt.report.worstcase import (
    PROVEN_RATIOS,
    WORST_CASE_POLICIES,
    at_scale_rows,
    replay_files,
    worst_case_rows,
)


def _task(args: tuple[str, tuple[int, int], int, int, int, str, str]) -> str:
    policy, n, restarts, steps, seed, solver, raw = args
    row = worst_case_rows([policy], [n], restarts=restarts, steps=steps, rng_seed=seed,
                          solver=solver)[0]
    inst = row.pop("instance")
    row["instance"] = None if inst is None else inst.to_dict()
    row.update(restarts=restarts, steps=steps, seed=seed, solver=solver)
    path = Path(raw) / f"{policy}-n{n[0]}-{n[1]}.json"
    path.write_text(json.dumps(row, indent=1) + "\n")
    return f"{path.name}: ratio {row['ratio']:.4f} ({row['wall_s']:.0f} s)"


def run(args: argparse.Namespace) -> None:
    sizes = [(int(a), int(b)) for a, b in (s.split(":") for s in args.sizes.split(","))]
    policies = args.policies.split(",") if args.policies else list(WORST_CASE_POLICIES)
    Path(args.raw).mkdir(parents=True, exist_ok=True)
    tasks = [(p, n, args.restarts, args.steps, args.seed, args.solver, args.raw)
             for n in sorted(sizes, reverse=True) for p in policies]   # longest first
    t0 = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as ex:
        for fut in as_completed([ex.submit(_task, t) for t in tasks]):
            print(fut.result(), flush=True)
    print(f"all {len(tasks)} tasks in {time.perf_counter() - t0:.0f} s", flush=True)


def render(args: argparse.Namespace) -> None:
    from kvopt.report.writers import table

    rows = [json.loads(p.read_text()) for p in sorted(Path(args.render).glob("*.json"))]
    out = Path(args.out)
    sizes = sorted({tuple(r["n"]) for r in rows})
    pols = [p for p in WORST_CASE_POLICIES if any(r["policy"] == p for r in rows)]
    cells, files = [], []
    for p in pols:
        line: list[Any] = [p]
        for n in sizes:
            r = next((r for r in rows if r["policy"] == p and tuple(r["n"]) == n), None)
            line.append(None if r is None else r["ratio"])
            if r is not None and r["instance"] is not None:
                r["instance"] = Instance.from_dict(r["instance"])
                names = replay_files(r, out / "instances")
                files.append((p, n, names, r))
        line.append(PROVEN_RATIOS.get(p))
        cells.append(line)
    head = ["policy", *[f"n {a}-{b}" for a, b in sizes], "proven ratio"]
    md = table(head, cells)
    (out / "table.md").write_text(md)
    detail = table(["policy", "n", "worst ratio", "TEL", "OPT", "evaluations", "wall s",
                    "replay"],
                   [[p, f"{n[0]}-{n[1]}", r["ratio"], r["tel"], r["opt"], r["evaluations"],
                     round(r["wall_s"], 1),
                     f"`kvopt validate instances/{nm['instance']} "
                     f"instances/{nm['policy_schedule']}`"] for p, n, nm, r in files])
    (out / "detail.md").write_text(detail)
    print(md)


def at_scale(args: argparse.Namespace) -> None:
    from kvopt.report.writers import table

    recs = json.loads(Path(args.at_scale).read_text())["records"]
    policies = args.policies.split(",") if args.policies else [  # (no intervals: no Amin/Amax)
        "mcsf", "mc-benchmark", "hsf", "fcfs", *WORST_CASE_POLICIES[3:]]
    t0 = time.perf_counter()
    rows = at_scale_rows(recs, [p for p in dict.fromkeys(policies)], seed=args.seed)
    wall = time.perf_counter() - t0
    cells = []
    for kind in ("model1", "model2"):
        for p in dict.fromkeys(r["policy"] for r in rows):
            rs = [r for r in rows if r["policy"] == p and r["instance"].startswith(kind)]
            if rs:
                rb = [r["ratio_bound"] for r in rs]
                cells.append([kind, p, len(rs), sum(rb) / len(rb), max(rb),
                              sum(r["ratio_best"] for r in rs) / len(rs)])
    md = table(["family", "policy", "instances", "TEL/bound mean", "TEL/bound max",
                "TEL/best known mean"], cells)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "at_scale.md").write_text(md)
    print(md)
    print(f"{len(rows)} simulations in {wall:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--raw", help="directory for the per-task results (search mode)")
    ap.add_argument("--render", help="build the report from this raw directory")
    ap.add_argument("--out", default="reports/worstcase")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--restarts", type=int, default=6)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--sizes", default="2:3,4:5,6:7")
    ap.add_argument("--policies", default=None, help="comma list (default: all ten)")
    ap.add_argument("--solver", default="highs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--at-scale", help="committed bound records (reports/mip/dual_paper_all"
                    ".json): TEL / bound of every policy at paper scale")
    args = ap.parse_args()
    if args.at_scale:
        at_scale(args)
    elif args.render:
        render(args)
    elif args.raw:
        run(args)
    else:
        sys.exit("give --raw DIR (search) or --render DIR (report)")


if __name__ == "__main__":
    main()
