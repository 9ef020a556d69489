"""``kvopt report ratios|search|table1|agreement|reproduce ...``."""

from __future__ import annotations

import argparse

from kvopt.cli.common import (
    DEFAULT_SEED,
    add_json_argument,
    add_solve_time_limit,
    check_input_file,
    check_output_dir,
    check_output_file,
    emit,
    float_in,
    int_at_least,
    seed_arg,
)
from kvopt.core.errors import UsageError


def _alpha(text: str) -> float:
    """Parse ``0.25`` or ``1/4``."""
    try:
        if "/" in text:
            num, den = text.split("/", 1)
            val = float(num) / float(den)
        else:
            val = float(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (0.0 < val <= 1.0):
        raise argparse.ArgumentTypeError(f"alpha must be in (0, 1], got {text}")
    return val


#: The sub-commands this module registers and their one-line help (``kvopt --help`` lists
#: them without building their parsers).
COMMANDS = {
    "report": "reports: ratio-vs-alpha table/plots, counterexample search",
}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``report`` with its sub-commands (one function each below)."""
    p = sub.add_parser("report", help=COMMANDS["report"])
    rs = p.add_subparsers(dest="report_command", metavar="REPORT")
    rs.required = True
    for add in (_add_ratios, _add_search, _add_table1, _add_agreement, _add_reproduce,
                _add_sweep):
        add(rs)


def _add_ratios(rs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``kvopt report ratios``."""
    r = rs.add_parser(
        "ratios", help="ratio-vs-alpha table (md/csv/tex), plots and manifest",
        description="Write table.md, table.csv, table.tex, ratios_amax.png, ratios_amin.png, "
        "lambda_fit.png, convergence.md/csv and manifest.json into --out. Theory columns from "
        "kvopt.theory; measured columns simulate kvopt.sim policies against H-SF and solve "
        "small instances with kvopt.mip. Deterministic given --seeds.")
    r.add_argument("--alphas", type=_alpha, nargs="+", default=None, metavar="A",
                   help="alpha values (e.g. 1 1/2 0.25); default 1, 1/2, 1/3, 1/4, 1/5, 1/10, "
                   "1/20, 1/50, 1/100, 1/1000")
    r.add_argument("--out", required=True, help="output directory")
    r.add_argument("--seeds", type=seed_arg, nargs="+", default=[0, 1, 2],
                   help="policy / instance seeds (default 0 1 2; recorded in manifest.json)")
    r.add_argument("--n", type=int_at_least(10, 10**6), default=2000,
                   help="jobs per large measured instance")
    r.add_argument("--max-u", type=int_at_least(1, 10**4), default=400,
                   help="skip measured columns with u = round(4/alpha) above this (400)")
    r.add_argument("--theory-only", action="store_true", help="no simulation, no MIP")
    r.add_argument("--no-opt", action="store_true", help="skip the vs-OPT (MIP) columns")
    r.add_argument("--no-convergence", action="store_true", help="skip convergence.md/csv")
    add_json_argument(r)
    r.set_defaults(func=run_ratios)


def _add_search(rs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``kvopt report search``."""
    from kvopt.mip.backends import backend_names

    s = rs.add_parser(
        "search", help="counterexample search: maximise TEL(policy)/OPT on small instances",
        description="Random restarts + hill climbing over small instances under the given "
        "constraints; OPT proven by the MIP. Writes the worst instance found to --out.")
    s.add_argument("policy", metavar="POLICY", help="kvopt.sim policy (mcsf, amin, amax, ...)")
    s.add_argument("--out", required=True, help="instance JSON to write")
    s.add_argument("--restarts", type=int_at_least(1, 10**6), default=10,
                   help="random restarts (default 10)")
    s.add_argument("--steps", type=int_at_least(0, 10**6), default=40,
                   help="hill-climbing steps per restart (default 40)")
    s.add_argument("--rng-seed", type=seed_arg, default=DEFAULT_SEED,
                   help=f"seed of the search (default {DEFAULT_SEED}; printed with the result)")
    s.add_argument("--seeds", type=seed_arg, nargs="+", default=[0, 1, 2, 3],
                   help="policy seeds averaged for randomised policies")
    size = int_at_least(0, 10**6)  # the ranges of the searched instances
    s.add_argument("--n", type=size, nargs=2, default=[2, 6], metavar=("MIN", "MAX"),
                   help="requests per instance (default 2 6)")
    s.add_argument("--memory", type=size, nargs=2, default=[4, 12], metavar=("MIN", "MAX"),
                   help="KV-cache size M (default 4 12)")
    s.add_argument("--prompt", type=size, nargs=2, default=[0, 3], metavar=("MIN", "MAX"),
                   help="prompt lengths (default 0 3)")
    s.add_argument("--output", type=size, nargs=2, default=[1, 8], metavar=("MIN", "MAX"),
                   help="output lengths, at most M - s (default 1 8)")
    s.add_argument("--max-arrival", type=size, default=0,
                   help="latest arrival slot (default 0: all at slot 0)")
    s.add_argument("--same-prompt", action="store_true",
                   help="all requests share one prompt size (seed 000's setting)")
    s.add_argument("--interval", type=size, nargs=2, default=None, metavar=("L", "U"),
                   help="prediction interval [L, U] of every request (Amin/Amax need one)")
    s.add_argument("--solver", default="highs", choices=backend_names(),
                   help="MIP backend that proves each instance's OPT (default highs)")
    add_solve_time_limit(s, 10.0, "seconds for each MIP solve, one per instance tried "
                         "(default 10)")
    add_json_argument(s)
    s.set_defaults(func=run_search)


def _add_table1(rs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``kvopt report table1``."""
    t = rs.add_parser(
        "table1", help="seed 001 Table 1 (and Fig. 5 prediction noise) with the simulator",
        description="Average end-to-end latency of MC-SF, MC-Benchmark, the alpha/beta "
        "benchmarks and vLLM-like FCFS over seeded workloads (seed k draws instance k and the "
        "policy's random choices); writes table1.json / table1.md, or with --noise the "
        "prediction-noise experiment noise.json / noise.md, into --out.")
    t.add_argument("--seeds", type=int_at_least(1, 10**4), default=50,
                   help="number of seeds 0..SEEDS-1 (default 50)")
    t.add_argument("--n", type=int_at_least(1, 10**6), default=1000, help="requests per instance")
    t.add_argument("--rate", type=float_in(0, 1e6, lo_open=True), default=50.0,
                   help="Poisson arrival rate per second (default 50)")
    t.add_argument("--step-time", type=_step_time_name, default="a100-llama2-70b-tp2",
                   metavar="MODEL", help="step-time model name (default a100-llama2-70b-tp2)")
    t.add_argument("--workloads", type=_workloads, default=["azure", "lmsys-standin"],
                   metavar="W,W", help="comma-separated: azure, lmsys-standin (default both)")
    t.add_argument("--noise", type=_eps_list, default=None, metavar="EPS,EPS,...",
                   help="instead of Table 1: the prediction-noise experiment (Fig. 5) with "
                        "these eps values in [0, 1) on the first workload")
    t.add_argument("--out", default=None, help="output directory (default: print only)")
    add_json_argument(t)
    t.set_defaults(func=run_table1)


def _add_agreement(rs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``kvopt report agreement``."""
    g = rs.add_parser(
        "agreement", help="queueing formulas vs simulation (z-scores), markdown",
        description="Every kvopt.queueing formula case (8 policy/prediction cases x 4 size "
        "distributions x loads 0.3, 0.6, 0.9) against the simulator: N jobs per row (2.5 N at "
        "load 0.9), batch-means SE, z = (simulated - formula) / SE. Writes OUT.md.")
    g.add_argument("out", metavar="OUT.md", help="markdown file to write")
    g.add_argument("--n", type=int_at_least(1000, 10**8), default=400_000,
                   help="simulated jobs per row (default 400000)")
    g.add_argument("--seed", type=seed_arg, default=DEFAULT_SEED,
                   help=f"simulation seed (default {DEFAULT_SEED}; printed)")
    add_json_argument(g)
    g.set_defaults(func=run_agreement)


def _add_reproduce(rs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``kvopt report reproduce``."""
    rp = rs.add_parser(
        "reproduce", help="the reproduction report: every checkable target of the five seeds",
        description="For every checkable target of seeds 001, 000, 004, 002 and 003: the "
        "paper's value, kvopt's, the tolerance, the verdict (reproduced, differs, erratum, "
        "not yet implemented) and the command that recomputes it, plus an errata section "
        "with computed evidence. Writes reproduction.md (+ PNG figures), reproduction.html "
        "(self-contained) and results.json into --out. --only SEED/KEY computes one target "
        "and prints it. Paper-scale certificates and bounds are read from reports/mip of the "
        "repository (--root).")
    rp.add_argument("--out", default=None, help="output directory (required without --only)")
    rp.add_argument("--fast", action="store_true",
                    help="fewer runs and smaller instances (what the test suite runs)")
    rp.add_argument("--only", default=None, metavar="SEED/KEY",
                    help="compute and print one target (e.g. 001/T1, 000/errata)")
    rp.add_argument("--seed", type=seed_arg, default=DEFAULT_SEED,
                    help=f"seed of every random choice (default {DEFAULT_SEED}; printed)")
    rp.add_argument("--root", default=None, metavar="DIR",
                    help="repository with reports/mip (default: this checkout, else the cwd)")
    add_json_argument(rp)
    rp.set_defaults(func=run_reproduce)


def _add_sweep(rs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """``kvopt report sweep``."""
    w = rs.add_parser(
        "sweep", help="summary table of a sweep database (kvopt sweep SPEC --db FILE)",
        description="One row per grid point (instance entry x instance-generator parameters "
        "x evaluator, the policy with one point of its option grid), averaged over the seeds: "
        "tasks, usable results, valid, proven optimal, livelocked/failed/timeout/error tasks, "
        "mean and std of --metric over the results, and the ratio to the proven optimum of the "
        "same instance (mean, max, count). --group-by picks other groups.")
    w.add_argument("--db", required=True, help="sweep database (SQLite)")
    w.add_argument("--group-by", type=_group_by, default=None, metavar="KEY,KEY",
                   help="comma-separated, of entry, instance (the generator's parameters), "
                   "evaluator, seed (default entry,instance,evaluator: one row per grid "
                   "point; e.g. entry,evaluator averages over the instance parameters too)")
    w.add_argument("--metric", default="total_latency",
                   help="metric averaged per evaluator (default total_latency; e.g. "
                   "mean_latency_s, p90_latency, evictions, runtime_s)")
    w.add_argument("--format", choices=("md", "csv", "tex"), default="md", help="table format")
    w.add_argument("--out", default=None, help="write the table to this file (default stdout)")
    add_json_argument(w)
    w.set_defaults(func=run_sweep_report)


def _step_time_name(text: str) -> str:
    """argparse ``type`` of ``report table1 --step-time``: a registered model name."""
    from kvopt.sim.steptime import STEP_TIME_MODELS

    if text not in STEP_TIME_MODELS:
        raise argparse.ArgumentTypeError(
            f"unknown step-time model {text!r}; one of {', '.join(sorted(STEP_TIME_MODELS))}")
    return text


def _workloads(text: str) -> list[str]:
    """argparse ``type`` of ``--workloads``: known workload names, comma-separated."""
    from kvopt.report.table1 import WORKLOADS

    names = [w.strip() for w in text.split(",")]
    bad = [w for w in names if w not in WORKLOADS]
    if bad or not names:
        raise argparse.ArgumentTypeError(
            f"unknown workload {bad[0] if bad else text!r}; one of {', '.join(WORKLOADS)}")
    return names


def _eps_list(text: str) -> tuple[float, ...]:
    """argparse ``type`` of ``--noise``: comma-separated eps values in [0, 1)."""
    parse = float_in(0, 1, hi_open=True)
    return tuple(parse(x) for x in text.split(","))


def run_ratios(args: argparse.Namespace) -> int:
    """Write the ratio report."""
    from kvopt.report.ratios import DEFAULT_ALPHAS, MeasureConfig, table_markdown, write_report

    check_output_dir(args.out, "--out")
    alphas = tuple(args.alphas) if args.alphas else DEFAULT_ALPHAS
    cfg = MeasureConfig(seeds=tuple(args.seeds), n=args.n, max_u=args.max_u,
                        opt=not args.no_opt)
    command = ["kvopt", "report", "ratios", "--alphas", *[repr(a) for a in alphas],
               "--out", str(args.out), "--seeds", *[str(s) for s in args.seeds],
               "--n", str(args.n), "--max-u", str(args.max_u)]
    command += [flag for flag, on in (("--theory-only", args.theory_only),
                                      ("--no-opt", args.no_opt),
                                      ("--no-convergence", args.no_convergence)) if on]
    man = write_report(args.out, alphas=alphas, config=cfg, measured=not args.theory_only,
                       convergence=not args.no_convergence, command=command,
                       progress=not args.json)
    doc = {"out": str(args.out), "seeds": list(args.seeds), "files": man["files"],
           "rows": man["rows"], "convergence": man["convergence"]}
    emit(args, doc, table_markdown(man["rows"]) + f"\nwrote {len(man['files']) + 1} files "
         f"to {args.out} (seeds {' '.join(map(str, args.seeds))})")
    return 0


def run_search(args: argparse.Namespace) -> int:
    """Run the counterexample search and write the worst instance."""
    from kvopt.report.search import SearchSpace, check_search, search

    check_output_file(args.out, "--out")
    space = SearchSpace(n=tuple(args.n), memory=tuple(args.memory), prompt=tuple(args.prompt),
                        output=tuple(args.output), max_arrival=args.max_arrival,
                        same_prompt=args.same_prompt,
                        interval=None if args.interval is None else tuple(args.interval))
    try:
        check_search(args.policy, space)
    except UsageError as exc:
        flag = "POLICY" if exc.field == "policy" else "--" + exc.field.replace("_", "-")
        raise UsageError(flag, exc.reason) from None
    res = search(args.policy, space=space, restarts=args.restarts, steps=args.steps,
                 seeds=args.seeds, rng_seed=args.rng_seed, solver=args.solver,
                 time_limit=args.solve_time_limit, progress=not args.json)
    if res.instance is None:
        emit(args, {"ok": False, "policy": args.policy, "rng_seed": args.rng_seed},
             f"no instance with a proven optimum (rng seed {args.rng_seed})")
        return 1
    res.instance.save(args.out)
    doc = {"policy": res.policy, "ratio": res.ratio, "tel": res.tel, "opt": res.opt,
           "evaluations": res.evaluations, "skipped": res.skipped, "out": str(args.out),
           "rng_seed": args.rng_seed, "seeds": list(args.seeds),
           "space": space.to_dict(), "instance": res.instance.to_dict()}
    inst = res.instance
    emit(args, doc, f"worst TEL({res.policy})/OPT = {res.ratio:.4f} (TEL {res.tel:g}, OPT "
         f"{res.opt:g}) after {res.evaluations} evaluations (rng seed {args.rng_seed}, policy "
         f"seeds {' '.join(map(str, args.seeds))})\nM = {inst.memory}, arrival = "
         f"{inst.arrival.tolist()}, prompt = {inst.prompt.tolist()}, output = "
         f"{inst.output.tolist()}\nwrote {args.out}")
    return 0


def run_table1(args: argparse.Namespace) -> int:
    """Run seed 001 Table 1 (or the prediction-noise experiment) and write its files."""
    from kvopt.report import table1

    if args.out is not None:
        check_output_dir(args.out, "--out")
    if args.noise:
        res = table1.run_prediction_noise(args.workloads[0], args.seeds, args.noise, n=args.n,
                                          rate=args.rate, step_time=args.step_time)
        files = [] if args.out is None else table1.write_noise(args.out, res)
        emit(args, {**res, "files": [str(f) for f in files]}, table1.noise_markdown(res))
        return 0
    results = [table1.run_table1(w, args.seeds, n=args.n, rate=args.rate,
                                 step_time=args.step_time) for w in args.workloads]
    files = [] if args.out is None else table1.write_table1(args.out, results)
    emit(args, {"results": results, "files": [str(f) for f in files]},
         "\n".join(table1.to_markdown(r) for r in results))
    return 0


def _group_by(text: str) -> tuple[str, ...]:
    """argparse ``type=`` of ``report sweep --group-by``."""
    from kvopt.sweep.summary import GROUP_KEYS

    keys = tuple(k.strip() for k in text.split(",") if k.strip())
    bad = [k for k in keys if k not in GROUP_KEYS]
    if bad or not keys or len(set(keys)) != len(keys):
        raise argparse.ArgumentTypeError(f"expected distinct keys among {', '.join(GROUP_KEYS)}"
                                         f", got {text!r}")
    return keys


def run_sweep_report(args: argparse.Namespace) -> int:
    """Summarise a sweep database."""
    from pathlib import Path

    from kvopt.core.io import atomic_write_text
    from kvopt.core.metrics import Metrics
    from kvopt.report.writers import table
    from kvopt.sweep.store import COLUMNS, ResultStore
    from kvopt.sweep.summary import summarize, summary_table, with_ratios

    if args.metric not in Metrics.__dataclass_fields__ and args.metric not in COLUMNS:
        raise UsageError("--metric", f"unknown metric {args.metric!r} (a kvopt Metrics field "
                         "or runtime_s)")
    check_input_file(args.db, "--db")
    check_output_file(args.out, "--out")
    with ResultStore(args.db, readonly=True) as store:
        rows = store.rows()
    summary = summarize(with_ratios(rows), args.metric, **(
        {"group_by": args.group_by} if args.group_by else {}))
    text = table(*summary_table(summary), args.format).rstrip("\n")
    if args.out is not None:
        atomic_write_text(Path(args.out), text + "\n")
    emit(args, {"db": args.db, "metric": args.metric, "tasks": len(rows), "summary": summary,
                "out": args.out}, text if args.out is None else f"{len(summary)} rows -> "
                f"{args.out}")
    return 0


def run_agreement(args: argparse.Namespace) -> int:
    """Write the formula-vs-simulation agreement table."""
    import time

    from kvopt.core.io import atomic_write_text
    from kvopt.report.agreement import agreement_markdown, agreement_rows

    check_output_file(args.out, "OUT.md")
    t0 = time.time()
    rows = list(agreement_rows(args.n, args.seed))
    text = agreement_markdown(rows, n=args.n, seed=args.seed, wall_s=time.time() - t0,
                              out=args.out)
    atomic_write_text(args.out, text)
    z = [r[-1] for r in rows]
    emit(args, {"out": str(args.out), "n": args.n, "seed": args.seed, "rows": len(rows),
                "max_abs_z": max(abs(v) for v in z)},
         "\n".join(text.splitlines()[:5]) + f"\nwrote {args.out} (seed {args.seed})")
    return 0


def run_reproduce(args: argparse.Namespace) -> int:
    """Compute the reproduction report (or one target) and write / print it."""
    from pathlib import Path

    from kvopt.report import reproduce as rp

    if args.only is not None:
        rp.check_only(args.only)
    elif args.out is None:
        raise UsageError("--out", "is required (or give --only SEED/KEY)")
    if args.out is not None:
        check_output_dir(args.out, "--out")
    root = Path(args.root) if args.root is not None else None
    if root is not None and not root.is_dir():
        raise UsageError("--root", f"not a directory: {args.root}")
    sections = rp.run(fast=args.fast, root=root, only=args.only, seed=args.seed)
    command = "kvopt report reproduce" + (f" --only {args.only}" if args.only else "") + (
        " --fast" if args.fast else "") + (f" --seed {args.seed}" if args.seed else "")
    files = [] if args.out is None else rp.write_report(args.out, sections, fast=args.fast,
                                                        command=command, seed=args.seed)
    lines = [f"{t.seed}/{t.key} [{t.verdict}] {t.claim}: paper {t.paper}; kvopt {t.kvopt}"
             + (f" ({t.reason})" if t.verdict != "reproduced" and t.reason else "")
             for s in sections for t in s.targets]
    lines += [f"{s.seed} erratum: {e.where}: {e.evidence}" for s in sections for e in s.errata]
    lines.append(f"{rp.summary(sections)} (seed {args.seed})"
                 + (f"; wrote {len(files)} files to {args.out}" if files else ""))
    doc = {"counts": rp.counts(sections), "seed": args.seed, "fast": args.fast,
           "targets": [t.to_dict() for s in sections for t in s.targets],
           "errata": [e.to_dict() for s in sections for e in s.errata],
           "files": [str(f) for f in files]}
    emit(args, doc, "\n".join(lines))
    return 0
