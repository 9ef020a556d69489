"""``kvopt simulate``: run an online policy on an instance or trace."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from kvopt.cli.common import add_instance_argument, add_json_argument, emit, read_instance


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _options(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in pairs:
        if "=" not in p:
            raise argparse.ArgumentTypeError(f"--option needs KEY=VALUE, got {p!r}")
        k, v = p.split("=", 1)
        out[k.replace("-", "_")] = _parse_value(v)
    return out


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``simulate``."""
    from kvopt.cli.steptime_cmds import step_time_arg
    from kvopt.sim.policies import POLICIES

    p = sub.add_parser(
        "simulate", help="simulate an online policy (MC-SF, Amin, FCFS, ...) on an instance",
        description="Simulate POLICY on INSTANCE with a step-time model; prints latency metrics. "
        "Exit 0 ok, 1 the policy livelocked or failed, 2 bad input.")
    add_instance_argument(p)
    p.add_argument("--policy", required=True, choices=sorted(POLICIES), help="policy name")
    p.add_argument("--step-time", default="unit", type=step_time_arg, metavar="MODEL",
                   help="batch duration model: a name from `kvopt steptime list` or a "
                        "fitted-model JSON file from `kvopt steptime fit` (default: unit)")
    p.add_argument("--seed", type=int, default=None, help="seed for ties, clearing and noise")
    p.add_argument("--noise", default=None, metavar="KIND:VALUE",
                   help="prediction noise, e.g. uniform:0.5 (seed 001), interval:0.5 or "
                        "buckets:100 (seed 000); default: the instance's predictions")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="policy option, e.g. alpha=0.2 (repeatable)")
    p.add_argument("--replay", metavar="SCHEDULE", default=None,
                   help="schedule JSON to replay (with --policy replay)")
    p.add_argument("--schedule-out", metavar="FILE", default=None,
                   help="write the simulated schedule (JSON, atomically)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_json_argument(p)
    p.set_defaults(func=run_simulate)


def _noise(spec: str | None) -> Any:
    if spec is None:
        return None
    if spec == "exact":
        return "exact"
    kind, _, val = spec.partition(":")
    key = {"uniform": "eps", "interval": "x", "buckets": "width"}.get(kind)
    if key is None or not val:
        raise ValueError(f"--noise must be uniform:EPS, interval:X, buckets:WIDTH or exact, "
                         f"got {spec!r}")
    return {"kind": kind, key: float(val) if kind != "buckets" else int(val)}


def run_simulate(args: argparse.Namespace) -> int:
    """Run the simulation and print the metrics."""
    from kvopt.core.errors import InvalidInstanceError
    from kvopt.core.schedule import load_schedule
    from kvopt.sim import LivelockError, SimulationError, simulate

    inst = read_instance(args)
    try:
        opts = _options(args.option)
        noise = _noise(args.noise)
    except (argparse.ArgumentTypeError, ValueError) as exc:
        print(f"kvopt simulate: error: {exc}", file=sys.stderr)
        return 2
    if args.policy == "replay":
        if args.replay is None:
            print("kvopt simulate: error: --policy replay needs --replay SCHEDULE",
                  file=sys.stderr)
            return 2
        opts["schedule"] = load_schedule(args.replay)
    progress = not args.json and not args.no_progress and inst.n >= 20000
    try:
        res = simulate(inst, args.policy, step_time=args.step_time, seed=args.seed,
                       predictions=noise, progress=progress, **opts)
    except (TypeError, ValueError) as exc:
        raise InvalidInstanceError("--option", str(exc)) from exc
    except LivelockError as exc:
        emit(args, {"policy": args.policy, "ok": False, "error": "livelock", "message": str(exc)},
             f"livelock: {exc}")
        return 1
    except SimulationError as exc:
        emit(args, {"policy": args.policy, "ok": False, "error": "simulation",
                    "message": str(exc)}, f"simulation failed: {exc}")
        return 1
    if args.schedule_out:
        res.schedule.save(args.schedule_out)
    m = res.metrics
    doc = {"policy": res.policy, "step_time": res.step_time, "seed": res.seed, "ok": True,
           "instance": inst.name, **m.to_dict(),
           "decisions": res.stats.get("decisions"), "slots": res.stats.get("slots"),
           "wall_seconds": res.stats.get("wall_seconds")}
    unit = m.unit
    text = (f"{res.policy} on {inst.name or 'instance'} (n={inst.n}, M={inst.memory}, "
            f"step time {res.step_time})\n"
            f"  total latency {m.total_latency:.6g} {unit}, mean {m.mean_latency:.6g}, "
            f"p99 {m.p99_latency:.6g}\n"
            f"  TTFT mean {m.ttft_mean:.6g}, TPOT mean {m.tpot_mean:.6g}, makespan "
            f"{m.makespan:.6g}\n"
            + (f"  wall clock: total latency {m.total_latency_s:.6g} s, mean "
               f"{m.mean_latency_s:.6g} s, p99 {m.p99_latency_s:.6g} s, TTFT mean "
               f"{m.ttft_mean_s:.6g} s, makespan {m.makespan_s:.6g} s\n"
               if unit == "step" and m.has_clock else "")
            + f"  peak memory {m.peak_memory} / {inst.memory}, evictions {m.evictions}")
    emit(args, doc, text)
    return 0
