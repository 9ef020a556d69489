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
import json
import re
import sys
import time
from collections.abc import Sequence
from typing import NoReturn

from kvopt.core.errors import (
    InfeasibleScheduleError,
    InvalidInstanceError,
    InvalidScheduleError,
    KvoptError,
    UsageError,
)

#: Modules contributing sub-commands, in help order.
COMMAND_MODULES = (
    "kvopt.cli.core_cmds",
    "kvopt.cli.mip_cmds",
    "kvopt.cli.sim_cmds",
    "kvopt.cli.theory_cmds",
    "kvopt.cli.report_cmds",
    "kvopt.cli.queueing_cmds",
    "kvopt.cli.sweep_cmds",
    "kvopt.cli.steptime_cmds",
    "kvopt.cli.hardness_cmds",
    "kvopt.cli.plot_cmds",
    "kvopt.cli.predictions_cmds",
)

EXIT_OK, EXIT_CHECK_FAILED, EXIT_BAD_INPUT = 0, 1, 2


class _ArgumentError(Exception):
    """argparse rejected the command line (message and the parser that rejected it)."""

    def __init__(self, parser: argparse.ArgumentParser, message: str) -> None:
        super().__init__(message)
        self.parser = parser


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors reach :func:`main` (for the ``--json`` error object)."""

    def error(self, message: str) -> NoReturn:
        raise _ArgumentError(self, message)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser: sub-commands registered from :data:`COMMAND_MODULES`.

    With ``command`` (the sub-command a command line names) only the module registering it
    builds its parser; the others are listed by name and help (their ``COMMANDS``), so that
    ``kvopt --help`` or ``kvopt info ...`` do not import what ``kvopt solve`` needs (scipy,
    the solvers). ``None`` builds every parser.

    Examples
    --------
    >>> sorted(build_parser("info")._subparsers._group_actions[0].choices)[:3]
    ['bound', 'hardness', 'info']
    """
    from kvopt import __version__

    parser = _Parser(
        prog="kvopt",
        description="Hindsight optima, online policies, competitive ratios and queueing "
        "formulas for LLM inference under a KV-cache limit.",
    )
    parser.add_argument("--version", action="version", version=f"kvopt {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        mod = importlib.import_module(name)
        if command is None or command in mod.COMMANDS:
            mod.add_parser(sub)
        else:  # listed only: `kvopt --help`, and argparse's list of valid commands
            for cmd, text in mod.COMMANDS.items():
                sub.add_parser(cmd, help=text)
    return parser


def _command_of(argv: Sequence[str]) -> str:
    """The sub-command an argument list names: its first word not starting with ``-``
    (``kvopt`` itself takes no option with a value); ``""`` without one."""
    return next((a for a in argv if not a.startswith("-")), "")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``kvopt`` with ``argv`` (default ``sys.argv[1:]``) and return the exit code.

    A user mistake (bad flag, bad instance or schedule file) prints one line naming the
    argument or field on stderr and returns 2; with ``--json`` stdout also gets one JSON
    object ``{"ok": false, "error": KIND, "field": ..., "message": ...}``. Anything else is
    an internal error and propagates (traceback, exit 1).

    ``args.started_at`` (:func:`time.monotonic` seconds) is when the command started: when
    kvopt was first imported for a command line (``argv`` omitted; not the process start,
    which counts what a shell did before exec'ing kvopt), else this call; time limits
    (``solve --time-limit``) count from it.
    """
    from kvopt.core.limits import kvopt_start, memory_budget_scope

    started_at = kvopt_start() if argv is None else time.monotonic()
    argv = sys.argv[1:] if argv is None else list(argv)
    want_json = "--json" in argv
    parser = build_parser(_command_of(argv))
    try:
        args = parser.parse_args(argv)
    except _ArgumentError as exc:
        msg = f"{exc.parser.prog}: error: {exc}"
        print(f"{msg}\n(usage: {exc.parser.prog} --help)", file=sys.stderr)
        if want_json:
            m = re.match(r"argument ([^:]+):", str(exc))
            _json_error("usage", m.group(1).split("/")[-1] if m else None, msg)
        return EXIT_BAD_INPUT
    except SystemExit as exc:  # --help / --version
        return int(exc.code or 0)
    args.started_at = started_at
    from kvopt.cli.common import json_stdout

    try:
        # --memory-budget bounds every allocation of the command, not only the model's
        # --json: stdout is the command's document only (solver prints go to stderr)
        with memory_budget_scope(getattr(args, "memory_budget", None), "--memory-budget"), \
                json_stdout(bool(getattr(args, "json", False))):
            return int(args.func(args))
    except BrokenPipeError:  # `kvopt ... | head`: the reader left; not an error of ours
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except InfeasibleScheduleError:
        raise  # a producer (simulator, solver) emitted an invalid schedule: a bug, not user input
    except KvoptError as exc:
        sub = [v for k, v in sorted(vars(args).items()) if k.endswith("_command") and v]
        msg = f"kvopt {' '.join([args.command, *sub])}: error: {exc}"
        print(msg, file=sys.stderr)
        if getattr(args, "json", False):
            kind = ("usage" if isinstance(exc, UsageError) else
                    "instance" if isinstance(exc, InvalidInstanceError) else
                    "schedule" if isinstance(exc, InvalidScheduleError) else "input")
            _json_error(kind, getattr(exc, "field", None), msg)
        return EXIT_BAD_INPUT


def _json_error(kind: str, field: str | None, message: str) -> None:
    sys.stdout.write(json.dumps({"ok": False, "error": kind, "field": field,
                                 "message": message}) + "\n")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
