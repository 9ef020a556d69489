"""Paper-scale hindsight bracket: MC-SF vs the best schedule found vs the best lower bound.

For ``--K`` seeded instances of seed 001's Model 1 and Model 2 at the paper's scale
(``kvopt.core.generators.model1(seed)`` / ``model2(seed)``: n ~ U{40..60}, M ~ U{30..50}; the
generator of notes/seed-001 §5) every instance gets, in one task of a dask ``LocalCluster``:

- MC-SF (true lengths), validated;
- ``improve`` (:func:`kvopt.mip.search.improve.improve`, list search + CP-SAT LNS) with
  ``--budget`` seconds (whole call);
- the reference: the current best exact combination, ``solve(cpsat, cp+pairs)`` warm-started
  from MC-SF, with ``--ref-budget`` seconds (no LP pre-bound; the LP is computed once below);
- lower bounds: the combinatorial bound (trivial, volume, fluid, cores) and the LP relaxation
  of ``tight+cores`` (HiGHS, ``--lp-time`` limit; skipped if not solved in time).

Printed per model: mean and max of MC-SF / best-found and of MC-SF / reference, how many
instances improve beat MC-SF, the certified gap (best schedule vs best bound) median and max,
and MC-SF's certified distance from optimal (MC-SF / best bound). ``--certs DIR`` writes every
instance and its best schedule (JSON, checkable with ``kvopt validate``); a certificate
already in ``DIR`` for the same instance is kept unless this run found a strictly better
schedule (``best`` then counts it, ``best_source`` = ``previous``).

``--polish-from JSON --only model1-seed1,... --polish S`` re-runs ``improve`` from the
committed certificates of the named instances (``initial=`` the certificate; ``S`` CPU-s each,
by default all of it to CP-SAT LNS) and replaces a certificate only by a strictly better
validated schedule, then re-summarises the earlier run's records and writes ``--out``.

Examples (the scaled run of reports/mip/README.md, and a polish pass on top of it)::

    nice -n 10 python benchmarks/mip_paper_scale.py --K 20 --budget 15 --ref-budget 10 \\
        --lp-time 30 --out reports/mip/paper_scale.json --certs reports/mip/paper_scale
    nice -n 10 python benchmarks/mip_paper_scale.py --polish-from reports/mip/paper_scale.json \\
        --only model1-seed1,model2-seed2 --polish 300 --certs reports/mip/paper_scale \\
        --out reports/mip/paper_scale.json
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def make_instance(kind: str, seed: int):  # type: ignore[no-untyped-def]
    """Seed 001 Model 1 / Model 2 at paper scale (deterministic in ``seed``)."""
    from kvopt.core.generators import model1, model2

    return model1(seed) if kind == "model1" else model2(seed)


def lp_of(kind: str, seed: int, lp_time: float) -> float | None:
    """LP bound of ``tight+cores`` (``None`` if not solved within ``lp_time``)."""
    from kvopt.mip.bounds.relaxations import lp_bound

    if lp_time <= 0:
        return None
    try:
        return lp_bound(make_instance(kind, seed), "tight+cores", time_limit=lp_time)
    except RuntimeError:
        return None


def previous_certificate(inst, certs: str | None, kind: str,  # type: ignore[no-untyped-def]
                         seed: int) -> tuple[float, Any] | None:
    """The committed best schedule of this instance in ``certs`` (objective, schedule), if
    there is one for the same instance and the independent checker accepts it.

    A run replaces a certificate only with a strictly better schedule."""
    from kvopt import load_instance, load_schedule
    from kvopt.core.validate import check_schedule

    if not certs:
        return None
    d = Path(certs)
    ip, sp = d / f"{kind}-seed{seed}.json", d / f"{kind}-seed{seed}.best.json"
    if not (ip.exists() and sp.exists()) or load_instance(ip).sha256() != inst.sha256():
        return None
    sched = load_schedule(sp)
    rep = check_schedule(inst, sched)
    return (float(rep.objective), sched) if rep.ok and rep.objective is not None else None


def finish(r: dict[str, Any]) -> dict[str, Any]:
    """Best bound, certified gaps (in place)."""
    bounds = [r["combinatorial_bound"]] + [b for b in (r["lp_bound"], r["ref_bound"])
                                           if b is not None and math.isfinite(b)]
    bound = float(math.ceil(max(bounds) - 1e-9))
    if bound > r["best"] + 1e-6:
        raise RuntimeError(f"{r['kind']} seed {r['seed']}: bound {bound} above {r['best']}")
    r.update(bound=bound, gap=(r["best"] - bound) / r["best"],
             mcsf_gap=(r["mcsf"] - bound) / r["mcsf"])
    return r


def run_one(kind: str, seed: int, budget: float, ref_budget: float, lp_time: float,
            certs: str | None, clock: str = "wall") -> dict[str, Any]:
    """All measurements of one instance (a flat record)."""
    from kvopt.core.mcsf import mcsf_schedule
    from kvopt.core.validate import check_schedule
    from kvopt.mip import solve
    from kvopt.mip.bounds.combinatorial import combinatorial_bound
    from kvopt.mip.search.improve import improve
    inst = make_instance(kind, seed)
    mcsf = check_schedule(inst, mcsf_schedule(inst))
    c0, t0 = time.process_time(), time.perf_counter()
    imp = improve(inst, time_limit=budget, seed=seed, clock=clock)
    imp_wall, imp_cpu = time.perf_counter() - t0, time.process_time() - c0
    t1 = time.perf_counter()
    ref = solve(inst, solver="cpsat", formulation="cp+pairs", time_limit=ref_budget,
                cp_lp_bound=False)
    ref_wall = time.perf_counter() - t1
    comb = combinatorial_bound(inst)
    t2 = time.perf_counter()
    lp = lp_of(kind, seed, lp_time)
    lp_wall = time.perf_counter() - t2
    cands = [(imp.objective, "improve", imp.schedule), (ref.objective, "ref", ref.schedule)]
    best_obj, best_src, best_sched = min(((o, s, sc) for o, s, sc in cands if o is not None),
                                         key=lambda x: x[0])
    prev = previous_certificate(inst, certs, kind, seed)
    if prev is not None and best_obj >= prev[0]:  # replaced only when strictly better
        best_obj, best_src, best_sched = prev[0], "previous", prev[1]
    assert best_sched is not None
    rep = check_schedule(inst, best_sched)
    if not rep.ok or rep.objective != best_obj:
        raise RuntimeError(f"{kind} seed {seed}: best schedule rejected: {rep}")
    if certs and best_src != "previous":
        d = Path(certs)
        d.mkdir(parents=True, exist_ok=True)
        inst.save(d / f"{kind}-seed{seed}.json")
        best_sched.save(d / f"{kind}-seed{seed}.best.json")
    return finish({"kind": kind, "seed": seed, "n": inst.n, "memory": inst.memory,
            "mcsf": mcsf.objective, "improve": imp.objective, "improve_wall_s": imp_wall,
            "improve_cpu_s": imp_cpu, "improve_source": imp.incumbent_source,
            "improve_steps": imp.solver_status,
            "ref": ref.objective, "ref_status": str(ref.status), "ref_bound": ref.bound,
            "ref_wall_s": ref_wall, "combinatorial_bound": comb, "lp_bound": lp,
            "lp_wall_s": lp_wall, "best": best_obj, "best_source": best_src,
            "previous": None if prev is None else prev[0],
            "clock": clock, "load_avg_1min": os.getloadavg()[0]})


def polish_one(r: dict[str, Any], budget: float, certs: str, list_share: float,
               neighbourhood: int = 8, sub_time: float = 1.0, seed: int | None = None
               ) -> dict[str, Any]:
    """``--polish-from``: run ``improve`` from the committed certificate of the record ``r``
    (``initial=`` its starts; ``list_share`` of the CPU budget to the list search, the rest
    to CP-SAT LNS); a strictly better validated schedule replaces the certificate and
    becomes the record's best (``best_source="polish"``, ``previous`` = the old best)."""
    from kvopt.core.validate import check_schedule
    from kvopt.mip.search.improve import improve

    inst = make_instance(r["kind"], r["seed"])
    prev = previous_certificate(inst, certs, r["kind"], r["seed"])
    if prev is None or prev[0] != r["best"]:
        raise RuntimeError(f"{r['kind']} seed {r['seed']}: no certificate of value {r['best']}")
    c0, t0 = time.process_time(), time.perf_counter()
    imp = improve(inst, time_limit=budget, seed=r["seed"] if seed is None else seed,
                  clock="cpu", initial=prev[1].final_start(inst), list_share=list_share,
                  neighbourhood=neighbourhood, sub_time=sub_time)
    out = dict(r)
    out.update(polish=imp.objective, polish_budget_cpu_s=budget,
               polish_cpu_s=time.process_time() - c0, polish_wall_s=time.perf_counter() - t0,
               polish_steps=imp.solver_status, polish_list_share=list_share,
               polish_neighbourhood=neighbourhood, polish_sub_time=sub_time,
               polish_seed=r["seed"] if seed is None else seed,
               load_avg_1min_polish=os.getloadavg()[0])
    if imp.objective < r["best"]:
        assert imp.schedule is not None
        rep = check_schedule(inst, imp.schedule)
        if not rep.ok or rep.objective != imp.objective:
            raise RuntimeError(f"{r['kind']} seed {r['seed']}: polished schedule rejected")
        d = Path(certs)
        inst.save(d / f"{r['kind']}-seed{r['seed']}.json")
        imp.schedule.save(d / f"{r['kind']}-seed{r['seed']}.best.json")
        out.update(previous=r["best"], best=imp.objective, best_source="polish")
    return finish(out)


def summarise(records: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    """Per-model figures."""
    rs = [r for r in records if r["kind"] == kind]
    if not rs:
        return {"kind": kind, "instances": 0}
    rb = [r["mcsf"] / r["best"] for r in rs]
    rr = [r["mcsf"] / r["ref"] for r in rs]
    ri = [r["mcsf"] / r["improve"] for r in rs]
    rub = [r["mcsf"] / r["bound"] for r in rs]
    return {"kind": kind, "instances": len(rs),
            "mcsf_over_best_mean": statistics.fmean(rb), "mcsf_over_best_max": max(rb),
            "mcsf_over_best_min": min(rb),
            "mcsf_over_improve_mean": statistics.fmean(ri),
            "mcsf_over_ref_mean": statistics.fmean(rr), "mcsf_over_ref_max": max(rr),
            "improve_beats_mcsf": sum(r["improve"] < r["mcsf"] for r in rs),
            "ref_beats_mcsf": sum(r["ref"] < r["mcsf"] for r in rs),
            "improve_over_ref_mean": statistics.fmean(r["improve"] / r["ref"] for r in rs),
            "gap_median": statistics.median(r["gap"] for r in rs),
            "gap_max": max(r["gap"] for r in rs),
            "mcsf_over_bound_mean": statistics.fmean(rub), "mcsf_over_bound_max": max(rub),
            "lp_solved": sum(r["lp_bound"] is not None for r in rs),
            "gap_median_lp_solved": statistics.median(
                [r["gap"] for r in rs if r["lp_bound"] is not None] or [math.nan]),
            "mcsf_over_bound_mean_lp_solved": statistics.fmean(
                [r["mcsf"] / r["bound"] for r in rs if r["lp_bound"] is not None] or [math.nan]),
            "proven_optimal": sum(r["gap"] <= 0 for r in rs),
            "certificates_improved": sum(r.get("previous") is not None
                                         and r["best"] < r["previous"] for r in rs),
            "median_improve_cpu_s": statistics.median(r["improve_cpu_s"] for r in rs)}


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--K", type=int, default=20, help="instances per model")
    p.add_argument("--seed0", type=int, default=1)
    p.add_argument("--models", default="model1,model2")
    p.add_argument("--budget", type=float, default=180.0, help="improve budget (s)")
    p.add_argument("--ref-budget", type=float, default=180.0, help="cp+pairs budget (s)")
    p.add_argument("--lp-time", type=float, default=120.0, help="LP time limit (s)")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="improve's budget in wall-clock or CPU seconds")
    p.add_argument("--lp-from", default=None, metavar="JSON",
                   help="only add LP bounds (--lp-time) to the records of an earlier run's "
                   "JSON (instances without an LP bound yet), re-summarise, write --out")
    p.add_argument("--polish-from", default=None, metavar="JSON",
                   help="only re-run improve from the --certs certificates of the --only "
                   "instances of an earlier run's JSON (--polish CPU-s each), replace a "
                   "certificate by a strictly better schedule, re-summarise, write --out")
    p.add_argument("--only", default=None, help="--polish-from: e.g. model1-seed1,model2-seed2")
    p.add_argument("--polish", type=float, default=300.0, help="--polish-from: CPU-s each")
    p.add_argument("--polish-list-share", type=float, default=0.0,
                   help="--polish-from: share of the budget for the list search (0: LNS only)")
    p.add_argument("--polish-neighbourhood", type=int, default=8,
                   help="--polish-from: initial LNS neighbourhood (requests free per step)")
    p.add_argument("--polish-sub-time", type=float, default=1.0,
                   help="--polish-from: CP-SAT seconds per LNS step")
    p.add_argument("--polish-seed", type=int, default=None,
                   help="--polish-from: improve's seed (default: the instance's seed)")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--certs", default=None, help="write instances and best schedules here")
    p.add_argument("--out", default=None, help="JSON output")
    args = p.parse_args(argv)
    kinds = [m.strip() for m in args.models.split(",") if m.strip()]
    tasks = [(kind, args.seed0 + k) for kind in kinds for k in range(args.K)]
    t0 = time.perf_counter()
    records: list[dict[str, Any]] = []
    previous: dict[str, Any] = {}
    if args.lp_from or args.polish_from:
        import json

        previous = json.loads(Path(args.lp_from or args.polish_from).read_text())
        old = {(r["kind"], r["seed"]): r for r in previous["records"]}
        if args.polish_from:
            if not args.certs:
                raise SystemExit("--polish-from needs --certs")
            only = [x.strip() for x in (args.only or "").split(",") if x.strip()]
            tasks = [k for k in old if f"{k[0]}-seed{k[1]}" in only]
            if len(tasks) != len(only):
                raise SystemExit(f"--only: not all of {only} are in {args.polish_from}")
        else:
            tasks = [k for k in old if old[k]["lp_bound"] is None]
        records = [r for k, r in old.items() if k not in tasks]
        kinds = list(dict.fromkeys(k for k, _ in old))
    from dask.distributed import Client, LocalCluster, as_completed

    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        if args.polish_from:
            futs = [client.submit(polish_one, old[k], args.polish, args.certs,
                                  args.polish_list_share, args.polish_neighbourhood,
                                  args.polish_sub_time, args.polish_seed, pure=False)
                    for k in tasks]
        elif args.lp_from:
            futs = [client.submit(lp_of, kind, seed, args.lp_time, pure=False)
                    for kind, seed in tasks]
            fut_key = {f.key: k for f, k in zip(futs, tasks, strict=True)}
        else:
            futs = [client.submit(run_one, kind, seed, args.budget, args.ref_budget,
                                  args.lp_time, args.certs, args.clock, pure=False)
                    for kind, seed in tasks]
        for i, fut in enumerate(as_completed(futs), 1):
            if args.polish_from:
                r = fut.result()
            elif args.lp_from:
                r = dict(old[fut_key[fut.key]])
                r["lp_bound"] = fut.result()
                r = finish(r)
            else:
                r = fut.result()
            records.append(r)
            print(f"[{i}/{len(tasks)}] {r['kind']} seed {r['seed']} n={r['n']} M={r['memory']}: "
                  f"MC-SF {r['mcsf']:.0f} improve {r['improve']:.0f} ref {r['ref']:.0f} "
                  f"bound {r['bound']:.0f} (lp {r['lp_bound']}) gap {100 * r['gap']:.1f}%",
                  file=sys.stderr, flush=True)
    wall = time.perf_counter() - t0
    records.sort(key=lambda r: (r["kind"], r["seed"]))
    summary = [summarise(records, k) for k in kinds]
    doc = {"argv": sys.argv[1:] if argv is None else argv, "wall_s": wall,
           "previous_run": ({k: previous.get(k) for k in ("argv", "wall_s", "previous_run")}
                            if previous else None),
           "workers": args.workers, "summary": summary, "records": records}
    cols = ["kind", "instances", "mcsf_over_best_mean", "mcsf_over_best_max",
            "mcsf_over_improve_mean", "certificates_improved",
            "mcsf_over_ref_mean", "mcsf_over_ref_max", "improve_beats_mcsf", "ref_beats_mcsf",
            "gap_median", "gap_max", "mcsf_over_bound_mean", "lp_solved",
            "gap_median_lp_solved", "mcsf_over_bound_mean_lp_solved",
            "median_improve_cpu_s"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for s in summary:
        print("| " + " | ".join(f"{s[c]:.4f}" if isinstance(s.get(c), float) else str(s.get(c))
                                for c in cols) + " |")
    if args.polish_from:
        print(f"polish pass ({' '.join(doc['argv'])}): {wall:.0f} s wall; improve from the "
              f"certificate, {args.polish:g} CPU-s each, list share {args.polish_list_share:g}, "
              f"LNS neighbourhood {args.polish_neighbourhood}, {args.polish_sub_time:g} s "
              f"per step; "
              + "; ".join(f"{r['kind']}-seed{r['seed']}: {r['polish']:.0f} (certificate "
                          f"{r['previous'] if r['best_source'] == 'polish' else r['best']:.0f})"
                          for r in records if "polish" in r))
        print(f"on top of: {' '.join(previous['argv'])}; {previous['wall_s']:.0f} s wall")
    else:
        print(f"wall time {wall:.0f} s on {args.workers} dask workers; budgets: improve "
              f"{args.budget:g} s ({args.clock}), cp+pairs {args.ref_budget:g} s, "
              f"LP {args.lp_time:g} s")
    if args.out:
        from kvopt.core.io import write_json

        write_json(args.out, doc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
