"""``kvopt predictions price ...`` and ``kvopt predictions experiment ...`` (issue 11)."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from kvopt.cli.common import (
    DEFAULT_SEED,
    add_json_argument,
    add_solve_time_limit,
    check_output_dir,
    emit,
    float_in,
    int_at_least,
    seed_arg,
)

#: The sub-commands this module registers and their one-line help (``kvopt --help`` lists
#: them without building their parsers).
COMMANDS = {
    "predictions": "prediction-aware policies: price of prediction, TRAIL/TIE experiment",
}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``predictions`` with the sub-commands ``price`` and ``experiment``."""
    from kvopt.report.price import DEFAULT_ERRORS, PRICE_POLICIES

    p = sub.add_parser("predictions",
                       help=COMMANDS["predictions"])
    ps = p.add_subparsers(dest="predictions_command", metavar="PREDICTIONS")
    ps.required = True

    r = ps.add_parser(
        "price", help="TEL(policy)/OPT vs prediction error: price.md, price.csv, price.png",
        description="For MC-SF/SSJF/SPRPT (noisy points), Amin/Amax (intervals), TRAIL (refined) "
        "and TIE (log-t): TEL / OPT on small instances solved to proven optimality by the MIP, "
        "and TEL / best combinatorial bound on larger ones, per noise level.")
    r.add_argument("--out", required=True, help="output folder")
    r.add_argument("--errors", type=float_in(0, 1.5), nargs="+", default=list(DEFAULT_ERRORS),
                   metavar="E", help="noise levels (default %(default)s)")
    r.add_argument("--policies", nargs="+", choices=PRICE_POLICIES, default=None,
                   help=f"default: {' '.join(PRICE_POLICIES)} (with --preemption recompute/swap: "
                   "those that support it)")
    r.add_argument("--instances", type=int_at_least(1, 10**4), default=20,
                   help="small instances with proven OPT (default 20)")
    r.add_argument("--n", type=int_at_least(1, 1000), default=7, help="requests per small instance")
    r.add_argument("--large", type=int_at_least(0, 10**4), default=3,
                   help="larger instances vs the combinatorial bound (default 3; 0 = none)")
    r.add_argument("--large-n", type=int_at_least(2, 10**5), default=200,
                   help="requests per larger instance (default 200)")
    add_solve_time_limit(r, 60.0, "seconds for each MIP solve (default 60)")
    r.add_argument("--seed", type=seed_arg, default=DEFAULT_SEED,
                   help=f"instances and simulations (default {DEFAULT_SEED}; printed)")
    r.add_argument("--preemption", default="restart", choices=("restart", "recompute", "swap"),
                   help="what an evicted request keeps (default restart); with recompute or "
                   "swap the reference is the preemptive optimum / bound "
                   "(kvopt.mip.bounds.preemptive)")
    add_json_argument(r)
    r.set_defaults(func=run_price)

    e = ps.add_parser(
        "experiment", help="FCFS/SJF/SSJF/TRAIL/TIE (+ablations) on the A100 step time: "
        "table.md, table.csv, latency.png",
        description="Heavy-tailed per-prompt log-t workload and the Azure conversation trace, "
        "Llama-2-70B on 2xA100 (GPU-time step time a100-llama2-70b-tp2-gpu), M = 16492.")
    e.add_argument("--out", required=True, help="output folder")
    e.add_argument("--n", type=int_at_least(10, 10**6), default=1500,
                   help="heavy-tailed requests (default 1500)")
    e.add_argument("--rate", type=float_in(0, 1e6, lo_open=True), default=0.8,
                   help="heavy-tailed arrival rate, requests/s (default 0.8)")
    e.add_argument("--azure-n", type=int_at_least(10, 10**6), default=1500,
                   help="first requests of the Azure conversation trace (default 1500)")
    e.add_argument("--time-scale", type=float_in(0, 1e6, lo_open=True), default=0.125,
                   help="Azure arrivals are divided by this (default 0.125: 8x slower)")
    e.add_argument("--workloads", nargs="+", choices=("heavy-tailed", "azure-conv"),
                   default=["heavy-tailed", "azure-conv"],
                   help="which workloads to run (default both)")
    e.add_argument("--seed", type=seed_arg, default=DEFAULT_SEED,
                   help=f"workload, predictions and policies (default {DEFAULT_SEED}; printed)")
    e.add_argument("--seeds", type=int_at_least(1), default=1,
                   help="seeds SEED .. SEED + SEEDS - 1, reported as mean ± standard error "
                   "(default 1)")
    e.add_argument("--preemption", default=None, choices=("restart", "recompute", "swap"),
                   help="run FCFS, SRPT, SPJF, SPRPT, SSJF, TRAIL (C = 0.2, 0.8, 1, inf) and "
                   "TIE with this preemption mode (default: the issue-11 policy set, each "
                   "policy's default mode)")
    add_json_argument(e)
    e.set_defaults(func=run_experiment)


def _command(argv: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)


def run_price(args: argparse.Namespace) -> int:
    """Write the price-of-prediction table and plot."""
    from kvopt.report.price import price_rows, price_table_md, write_price_report

    check_output_dir(args.out, "--out")
    from kvopt.core.errors import UsageError
    from kvopt.report.price import PRICE_POLICIES
    from kvopt.sim import policy_info

    policies = list(args.policies or PRICE_POLICIES)
    if args.preemption != "restart":
        unsupported = [p for p in policies if args.preemption not in policy_info(p).modes]
        if unsupported and args.policies is not None:
            verb = "does" if len(unsupported) == 1 else "do"
            raise UsageError("--policies", f"{', '.join(unsupported)} {verb} not support "
                             f"--preemption {args.preemption}")
        policies = [p for p in policies if p not in unsupported]
    cmd = _command(["kvopt", "predictions", "price", "--out", str(args.out), "--errors",
                    *[f"{x:g}" for x in args.errors], "--policies", *policies,
                    "--instances", str(args.instances), "--n", str(args.n), "--large",
                    str(args.large), "--large-n", str(args.large_n), "--solve-time-limit",
                    f"{args.solve_time_limit:g}", "--seed", str(args.seed),
                    *(["--preemption", args.preemption] if args.preemption != "restart"
                      else [])])
    rows = price_rows(args.errors, instances=args.instances, n=args.n, seed=args.seed,
                      policies=policies, large=args.large, large_n=args.large_n,
                      time_limit=args.solve_time_limit, preemption=args.preemption)
    files = write_price_report(Path(args.out), rows, cmd)
    emit(args, {"rows": rows, "files": [str(f) for f in files], "seed": args.seed,
                "command": cmd},
         price_table_md(rows) + f"\nwrote {len(files)} files to {args.out} (seed {args.seed})")
    return 0


def run_experiment(args: argparse.Namespace) -> int:
    """Write the experiment table and plot."""
    import time

    from kvopt.report.predictions import experiment_rows, table_md, write_experiment

    check_output_dir(args.out, "--out")
    t0 = time.perf_counter()
    rows = experiment_rows(n=args.n, rate=args.rate, azure_n=args.azure_n,
                           time_scale=args.time_scale, seed=args.seed,
                           workloads=args.workloads, preemption=args.preemption,
                           seeds=args.seeds)
    wall = time.perf_counter() - t0
    header = ""
    if args.preemption is not None or args.seeds > 1:
        cmd = _command(["kvopt", "predictions", "experiment", "--out", str(args.out), "--n",
                        str(args.n), "--rate", f"{args.rate:g}", "--azure-n", str(args.azure_n),
                        "--time-scale", f"{args.time_scale:g}", "--workloads", *args.workloads,
                        "--seed", str(args.seed), "--seeds", str(args.seeds),
                        *(["--preemption", args.preemption] if args.preemption else [])])
        header = (f"Command: `{cmd}` (preemption {args.preemption or 'per policy'}; "
                  f"{wall:.0f} s wall)\n\n")
    files = write_experiment(Path(args.out), rows, header)
    emit(args, {"rows": rows, "files": [str(f) for f in files], "seed": args.seed,
                "seeds": args.seeds, "preemption": args.preemption, "wall_seconds": wall},
         table_md(rows) + f"\nwrote {len(files)} files to {args.out} (seed {args.seed}, "
         f"{args.seeds} seed(s), {wall:.0f} s)")
    return 0
