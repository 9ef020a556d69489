"""``kvopt ratio POLICY [--alpha A | --u U] [--l L] [--s S] [--memory M] [--json]``."""

from __future__ import annotations

import argparse

from kvopt.cli.common import add_json_argument, emit, float_in, int_at_least
from kvopt.core.errors import UsageError

#: The sub-commands this module registers and their one-line help (``kvopt --help`` lists
#: them without building their parsers).
COMMANDS = {
    "ratio": "theoretical competitive ratio of a policy (seed 000 / seed 001)",
}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``ratio``."""
    from kvopt.theory.values import RATIO_POLICIES

    p = sub.add_parser(
        "ratio", help=COMMANDS["ratio"],
        description="Print the theory values for POLICY. Ratios are against H-SF in the fluid "
        "limit (seed 000) unless stated. amin: lambda_max of Corollary 1's Rayleigh quotient "
        "(--u U gives lengths in [l, U], default l = 1, s = 0); amax: proven upper bound, the "
        "printed ('claimed') lower bound and the value its construction gives; a-l: two-point "
        "instances only; mcsf: seed 001's O(1) constant and, with --memory, the Omega(sqrt M) "
        "lower bound for every deterministic online algorithm. '--json' prints 'ratio' (the "
        "headline value: Amin lambda_max, Amax proven upper bound, ...) and the other values.")
    p.add_argument("policy", choices=RATIO_POLICIES, metavar="POLICY",
                   help="one of " + ", ".join(RATIO_POLICIES))
    g = p.add_mutually_exclusive_group()
    g.add_argument("--alpha", type=float_in(0, 1, lo_open=True), default=None,
                   help="prediction accuracy l/u in (0, 1]")
    g.add_argument("--u", type=int_at_least(1, 10**6), default=None,
                   help="upper end of the length interval")
    p.add_argument("--l", type=int_at_least(1, 10**6), default=None,
                   help="lower end of the length interval (default 1 with --u; with --alpha "
                   "the smallest integers l/u = alpha)")
    p.add_argument("--s", type=float_in(0), default=0.0, help="prompt size s (amin only; 0)")
    p.add_argument("--memory", type=int_at_least(1), default=None,
                   help="M (mcsf's sqrt(M)/28 bound)")
    add_json_argument(p)
    p.set_defaults(func=run_ratio)


def _interval(args: argparse.Namespace) -> tuple[int, int, float]:
    """``(l, u, alpha)`` from ``--alpha``/``--u``/``--l`` (ranges already checked by argparse)."""
    alpha = 0.1 if args.alpha is None else float(args.alpha)
    if args.l is None and args.u is None:
        from kvopt.theory.ratios import alpha_to_lu

        l, u = alpha_to_lu(alpha)
        return l, u, alpha
    l = 1 if args.l is None else int(args.l)
    if args.u is not None:
        if args.u < l:
            raise UsageError("--u", f"must be >= --l = {l}, got {args.u}")
        return l, int(args.u), l / args.u
    return l, max(l, round(l / alpha)), alpha


def run_ratio(args: argparse.Namespace) -> int:
    """Print the theory values of one policy."""
    from kvopt.theory.values import ratio_values

    l, u, alpha = _interval(args)
    doc = ratio_values(args.policy, l=l, u=u, alpha=alpha, s=args.s, memory=args.memory)
    lines = [f"{args.policy}: alpha = {alpha:.6g} (l = {l}, u = {u}, s = {args.s:g}); "
             f"benchmark {doc['benchmark']}",
             f"  ratio = {doc['ratio']:.6f}  [{doc['kind']}]"]
    for key, val in doc.items():
        if key in {"policy", "alpha", "l", "u", "s", "benchmark", "ratio", "kind"} or val is None:
            continue
        lines.append(f"  {key} = {val:.6f}" if isinstance(val, float) else f"  {key} = {val}")
    emit(args, doc, "\n".join(lines))
    return 0
