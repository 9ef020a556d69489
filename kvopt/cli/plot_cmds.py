"""``kvopt plot INSTANCE SCHEDULE --out FILE.png``: a picture of a schedule."""

from __future__ import annotations

import argparse

from kvopt.cli.common import (
    add_instance_argument,
    add_json_argument,
    check_figure_file,
    check_input_file,
    emit,
    int_at_least,
    read_instance,
)
from kvopt.core.errors import UsageError

#: The sub-commands this module registers and their one-line help (``kvopt --help`` lists
#: them without building their parsers).
COMMANDS = {
    "plot": "draw a schedule: runs per request (evictions visible) and memory vs M",
}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``plot``."""
    p = sub.add_parser(
        "plot", help=COMMANDS["plot"],
        description="Write a PNG of SCHEDULE on INSTANCE: a Gantt chart of every run (completed "
        "runs blue, evicted runs red, arrivals as ticks) above the memory in use at every slot "
        "against the capacity M. The title gives the TEL and the validator's verdict.")
    add_instance_argument(p)
    p.add_argument("schedule", metavar="SCHEDULE", help="schedule JSON (kvopt solve/simulate "
                   "--schedule-out)")
    p.add_argument("--out", required=True, metavar="FILE.png", help="PNG to write (atomic)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--seconds", dest="seconds", action="store_true", default=None,
                   help="time axis in seconds (needs a schedule with times)")
    g.add_argument("--slots", dest="seconds", action="store_false",
                   help="time axis in slots (slotted instances only)")
    p.add_argument("--dpi", type=int_at_least(20, 2400), default=100, help="resolution (100)")
    p.add_argument("--title", default=None, help="figure title (default: name, TEL, verdict)")
    add_json_argument(p)
    p.set_defaults(func=run_plot)


def run_plot(args: argparse.Namespace) -> int:
    """Draw the schedule."""
    from kvopt.core.schedule import load_schedule
    from kvopt.report.schedule_plot import save_schedule_plot

    check_figure_file(args.out, "--out", ("png",), (args.instance, args.schedule))
    check_input_file(args.schedule, "SCHEDULE")
    inst = read_instance(args)
    sched = load_schedule(args.schedule)
    if sched.instance_sha256 != inst.sha256():
        raise UsageError("SCHEDULE", f"{args.schedule} is a schedule of another instance "
                         f"(sha256 {sched.instance_sha256[:12]}, {args.instance} has "
                         f"{inst.sha256()[:12]})")
    if args.seconds and sched.times is None:
        raise UsageError("--seconds", f"{args.schedule} carries no times (unit step times)")
    if args.seconds is False and not inst.is_slotted:
        raise UsageError("--slots", f"{args.instance} is a trace in seconds")
    save_schedule_plot(inst, sched, args.out, dpi=args.dpi, seconds=args.seconds,
                       title=args.title)
    emit(args, {"out": str(args.out), "instance": inst.name, "runs": sched.num_runs,
                "evictions": sched.num_evictions}, f"wrote {args.out}")
    return 0
