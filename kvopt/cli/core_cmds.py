"""``kvopt validate`` and ``kvopt info``."""

from __future__ import annotations

import argparse

from kvopt.cli.common import add_instance_argument, add_json_argument, emit, read_instance
from kvopt.core.instance import instance_stats
from kvopt.core.schedule import load_schedule
from kvopt.core.validate import check_schedule

#: The sub-commands this module registers and their one-line help (``kvopt --help`` lists
#: them without building their parsers).
COMMANDS = {
    "validate": "check an instance, or a schedule against it",
    "info": "counts, memory and load statistics of an instance",
}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``validate`` and ``info``."""
    p = sub.add_parser(
        "validate", help=COMMANDS["validate"],
        description="Check INSTANCE; with SCHEDULE, check the schedule against it and recompute "
        "its objective. Exit 0 valid, 1 invalid schedule, 2 bad input.")
    add_instance_argument(p)
    p.add_argument("schedule", nargs="?", metavar="SCHEDULE", help="schedule JSON")
    add_json_argument(p)
    p.set_defaults(func=run_validate)

    p = sub.add_parser("info", help=COMMANDS["info"])
    add_instance_argument(p)
    add_json_argument(p)
    p.set_defaults(func=run_info)


def run_validate(args: argparse.Namespace) -> int:
    """Validate an instance (and optionally a schedule)."""
    inst = read_instance(args)
    if args.schedule is None:
        emit(args, {"ok": True, "instance": inst.name, "n": inst.n, "sha256": inst.sha256()},
             f"instance ok: {inst.n} requests, M = {inst.memory}, sha256 {inst.sha256()[:12]}")
        return 0
    sched = load_schedule(args.schedule)
    rep = check_schedule(inst, sched)
    emit(args, rep.to_dict(), str(rep))
    return 0 if rep.ok else 1


def run_info(args: argparse.Namespace) -> int:
    """Print instance statistics."""
    inst = read_instance(args)
    st = instance_stats(inst)
    unit = "s" if inst.time_unit == "second" else "slots"
    lines = [
        f"{inst.name or args.instance}: n = {inst.n}, M = {inst.memory} tokens, "
        f"time unit {inst.time_unit}",
        f"  arrivals over {st['arrival_span']:.6g} {unit}"
        + (f" (rate {st['arrival_rate']:.4g} per {unit[:-1] if unit == 'slots' else 's'})"
           if "arrival_rate" in st else ""),
    ]
    for key in ("prompt", "output"):
        s = st[key]
        assert isinstance(s, dict)
        lines.append(f"  {key:6s} mean {s['mean']:.2f}  median {s['median']:.0f}  "
                     f"p99 {s['p99']:.0f}  max {s['max']:.0f}")
    lines.append(f"  largest peak s+o is {st['peak_over_memory_max']:.1%} of M; memory-slot volume "
                 f"/ M = {st['volume_over_memory']:.1f} slots")
    emit(args, st, "\n".join(lines))
    return 0
