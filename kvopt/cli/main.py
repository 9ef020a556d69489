"""Entry point of the ``kvopt`` command.

Each sub-command lives in a module exposing ``add_parser(subparsers)`` (which sets
``func`` through ``set_defaults``) and a ``run(args) -> int``. Exit codes: 0 ok,
1 a check failed (invalid schedule, time limit without proof), 2 bad input or usage.
Machine output goes to stdout (one JSON document with ``--json``); messages and
progress go to stderr.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from kvopt.core.errors import KvoptError

#: Modules contributing sub-commands, in help order.
COMMAND_MODULES = (
    "kvopt.cli.core_cmds",
    "kvopt.cli.mip_cmds",
    "kvopt.cli.sim_cmds",
    "kvopt.cli.theory_cmds",
    "kvopt.cli.report_cmds",
    "kvopt.cli.queueing_cmds",
    "kvopt.cli.sweep_cmds",
)

EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (sub-commands registered from :data:`COMMAND_MODULES`)."""
    from kvopt import __version__

    parser = argparse.ArgumentParser(
        prog="kvopt",
        description="Hindsight optima, online policies, competitive ratios and queueing "
        "formulas for LLM inference under a KV-cache limit.",
    )
    parser.add_argument("--version", action="version", version=f"kvopt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kvopt`` with ``argv`` (default ``sys.argv[1:]``) and return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(None if argv is None else list(argv))
    except SystemExit as exc:  # argparse: 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    try:
        return int(args.func(args))
    except KvoptError as exc:
        print(f"kvopt {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
