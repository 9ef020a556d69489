"""``kvopt hardness knapsack``: seed 003's knapsack reduction, solved on both sides."""

from __future__ import annotations

import argparse

from kvopt.cli.common import add_json_argument, emit, float_in, int_at_least
from kvopt.core.errors import UsageError

EXIT_OK, EXIT_DIFFER = 0, 1


def _list_of(kind: type, what: str):  # type: ignore[no-untyped-def]
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


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``hardness knapsack``."""
    p = sub.add_parser(
        "hardness", help="seed 003's hardness reduction (multiple knapsack -> goodput)",
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
    k.add_argument("--knapsacks", type=int_at_least(1), default=1, metavar="K",
                   help="number of knapsacks (batch slots), default 1")
    k.add_argument("--solver", default="highs", choices=("highs", "cbc", "cpsat", "scipy"),
                   help="MIP backend for both programs (default highs)")
    k.add_argument("--time-limit", type=float_in(0, lo_open=True), default=60.0, metavar="S",
                   help="time limit per solve in seconds (default 60)")
    k.add_argument("--instance-out", metavar="FILE",
                   help="also write the mapped serving instance (JSON, atomic)")
    add_json_argument(k)
    k.set_defaults(func=run_knapsack)


def run_knapsack(args: argparse.Namespace) -> int:
    """``kvopt hardness knapsack``."""
    from kvopt.cli.common import check_output_file
    from kvopt.mip.hardness import hardness_check, knapsack_instance

    if len(args.values) != len(args.weights):
        raise UsageError("--values", f"has {len(args.values)} entries but --weights has "
                         f"{len(args.weights)}")
    check_output_file(args.instance_out, "--instance-out")
    doc = hardness_check(args.weights, args.values, args.capacity, args.knapsacks,
                         solver=args.solver, time_limit=args.time_limit)
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
