"""``kvopt hardness knapsack`` (seed 003's knapsack reduction, solved on both sides) and
``kvopt hardness report`` (constructions, GMAX vs the offline optimum, Eq. 43)."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from kvopt.cli.common import (
    add_json_argument,
    add_solve_time_limit,
    emit,
    int_at_least,
    seed_arg,
)
from kvopt.core.errors import UsageError

EXIT_OK, EXIT_DIFFER = 0, 1


def _list_of(kind: type, what: str) -> Callable[[str], list[float] | list[int]]:
    """argparse ``type=``: a comma-separated list of positive numbers."""
    def parse(text: str) -> list[float] | list[int]:
        try:
            vals = [kind(x) for x in text.split(",") if x.strip() != ""]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated {what}, got {text!r}") from None
        if not vals:
            raise argparse.ArgumentTypeError("needs at least one value")
        if any(v <= 0 for v in vals):
            raise argparse.ArgumentTypeError(f"every entry must be > 0, got {text!r}")
        return vals

    parse.__name__ = f"comma-separated {what}"
    return parse


#: The sub-commands this module registers and their one-line help (``kvopt --help`` lists
#: them without building their parsers).
COMMANDS = {
    "hardness": "seed 003's hardness reduction (multiple knapsack -> goodput)",
}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``hardness knapsack``."""
    p = sub.add_parser(
        "hardness", help=COMMANDS["hardness"],
        description="GMAX's hardness theorem (seed 003 Thm D.1), encoded: solve a (multiple) "
        "knapsack instance as a MIP and the goodput MIP of the serving instance it maps to.")
    hs = p.add_subparsers(dest="hardness_command", metavar="KIND")
    hs.required = True
    k = hs.add_parser(
        "knapsack", help="knapsack MIP vs goodput MIP of the mapped instance (vs DP for K = 1)",
        description="Print knapsack_optimum (MKP MIP), goodput_optimum (offline goodput MIP of "
        "the mapped serving instance) and, for one knapsack, dp_optimum (pseudo-polynomial "
        "DP). Exit 0 when all agree and are proven, 1 otherwise, 2 bad input.")
    k.add_argument("--weights", required=True, type=_list_of(int, "positive integers"),
                   metavar="W1,W2,...", help="item weights (processing slots)")
    k.add_argument("--values", required=True, type=_list_of(float, "positive numbers"),
                   metavar="V1,V2,...", help="item values (goodput)")
    k.add_argument("--capacity", required=True, type=int_at_least(1), metavar="C",
                   help="knapsack capacity (the common deadline)")
    k.add_argument("--knapsacks", type=int_at_least(1, 100), default=1, metavar="K",
                   help="number of knapsacks (batch slots), default 1")
    k.add_argument("--solver", default="highs", choices=("highs", "cbc", "cpsat", "scipy"),
                   help="MIP backend for both programs (default highs)")
    add_solve_time_limit(k, 60.0, "seconds for each of the two MIP solves (default 60)")
    k.add_argument("--instance-out", metavar="FILE",
                   help="also write the mapped serving instance (JSON, atomic)")
    add_json_argument(k)
    k.set_defaults(func=run_knapsack)

    r = hs.add_parser(
        "report", help="goodput report: EDF/SJF sweep, counterexample, GMAX vs OPT, Eq. 43",
        description="Write reports/goodput-style tables (edf_sweep, counterexample, random, "
        "eq43; .md/.csv) and manifest.json to --out. Deterministic given --seeds.")
    r.add_argument("--out", required=True, metavar="DIR", help="output folder")
    r.add_argument("--seeds", type=_seed_range, default=range(0, 30), metavar="A:B",
                   help="seeds of the random mixed-SLO instances, A inclusive to B exclusive "
                   "(default 0:30)")
    r.add_argument("--n", type=int_at_least(1, 1000), default=6,
                   help="requests per random instance")
    r.add_argument("--max-batch", type=int_at_least(1, 10**6), default=2, metavar="B",
                   help="batch limit of the random instances (default 2)")
    add_solve_time_limit(r, 20.0, "seconds for each instance's goodput MIP (default 20)")
    add_json_argument(r)
    r.set_defaults(func=run_report)


def _seed_range(text: str) -> range:
    """argparse ``type=``: ``A:B`` with ``0 <= A < B`` seeds (:func:`seed_arg` each)."""
    try:
        a, b = (int(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A:B, got {text!r}") from None
    if not a < b:
        raise argparse.ArgumentTypeError(f"need 0 <= A < B, got {text!r}")
    seed_arg(str(a)), seed_arg(str(b - 1))  # the first and the last seed
    return range(a, b)


def run_knapsack(args: argparse.Namespace) -> int:
    """``kvopt hardness knapsack``."""
    from kvopt.cli.common import check_output_file
    from kvopt.core.errors import MemoryBudgetError
    from kvopt.mip.hardness import hardness_check, knapsack_instance

    if len(args.values) != len(args.weights):
        raise UsageError("--values", f"has {len(args.values)} entries but --weights has "
                         f"{len(args.weights)}")
    check_output_file(args.instance_out, "--instance-out")
    try:
        doc = hardness_check(args.weights, args.values, args.capacity, args.knapsacks,
                             solver=args.solver, time_limit=args.solve_time_limit)
    except MemoryBudgetError as exc:  # the mapped instance's horizon is the sum of the weights
        if exc.field != "instance":
            raise
        raise MemoryBudgetError("--weights", f"the mapped instance's horizon is the sum of the "
                                f"weights; {exc.reason}", estimate=exc.estimate,
                                budget=exc.budget) from None
    if args.instance_out:
        knapsack_instance(args.weights, args.values, args.capacity,
                          args.knapsacks).save(args.instance_out)
    dp = "" if doc["dp_optimum"] is None else f", DP {doc['dp_optimum']:g}"
    text = (f"knapsack MIP {doc['knapsack_optimum']} ({doc['knapsack_status']}), goodput MIP "
            f"{doc['goodput_optimum']} ({doc['goodput_status']}){dp}: "
            f"{'equal' if doc['equal'] else 'DIFFERENT'}")
    emit(args, doc, text)
    proven = doc["knapsack_status"] == "optimal" and doc["goodput_status"] == "optimal"
    return EXIT_OK if doc["equal"] and proven else EXIT_DIFFER


def run_report(args: argparse.Namespace) -> int:
    """``kvopt hardness report``."""
    import shlex
    import sys

    from kvopt.cli.common import check_output_dir
    from kvopt.core.errors import MemoryBudgetError
    from kvopt.report.goodput import goodput_report

    check_output_dir(args.out, "--out")
    command = "kvopt " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] \
        else ""
    try:
        m = goodput_report(args.out, seeds=args.seeds, n=args.n, max_batch=args.max_batch,
                           time_limit=args.solve_time_limit, command=command)
    except MemoryBudgetError as exc:  # the random instances' goodput MIP: their size is --n
        if exc.field != "instance":
            raise
        raise MemoryBudgetError("--n", f"{exc.reason}; give a smaller --n",
                                estimate=exc.estimate, budget=exc.budget) from None
    lines = [f"wrote {', '.join(m['files'])} and manifest.json to {args.out}"]
    for row in m["random_summary"]:
        lines.append(f"  {row['policy']:>10}: goodput/OPT mean {row['mean_ratio']:.4f}, worst "
                     f"{row['worst_ratio']:.4f} over {row['instances']} instances")
    e = m["eq43"]
    lines.append(f"  Eq. 43: 1/{e['inverse']:.3f} at delta {e['delta_star']:.3f} (printed "
                 f"1/{e['printed_inverse']:.2f}); delta = 0.1: 1/{e['inverse_at_0.1']:.2f}")
    emit(args, m, "\n".join(lines))
    return EXIT_OK
