"""``kvopt simulate``: run an online policy on an instance or trace."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from kvopt.cli.common import (
    DEFAULT_SEED,
    add_instance_argument,
    add_json_argument,
    check_input_file,
    check_output_file,
    emit,
    int_at_least,
    read_instance,
    same_file,
    seed_arg,
)
from kvopt.core.errors import InfeasibleScheduleError, UsageError

#: Instances at least this large show simulation progress (every shipped trace does).
PROGRESS_MIN_REQUESTS = 1000


def _parse_value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _options(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in pairs:
        k, sep, v = p.partition("=")
        if not sep or not k:
            raise UsageError("--option", f"expected KEY=VALUE, got {p!r}")
        out[k.replace("-", "_")] = _parse_value(v)
    return out


#: The sub-commands this module registers and their one-line help (``kvopt --help`` lists
#: them without building their parsers).
COMMANDS = {
    "simulate": "simulate an online policy (MC-SF, Amin, FCFS, ...) on an instance",
}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``simulate``."""
    from kvopt.cli.steptime_cmds import step_time_arg
    from kvopt.sim.policies import POLICIES

    p = sub.add_parser(
        "simulate", help=COMMANDS["simulate"],
        description="Simulate POLICY on INSTANCE with a step-time model; prints latency metrics. "
        "Exit 0 ok, 1 the policy livelocked or failed, 2 bad input.")
    add_instance_argument(p)
    p.add_argument("--policy", required=True, choices=sorted(POLICIES), help="policy name")
    p.add_argument("--step-time", default="unit", type=step_time_arg, metavar="MODEL",
                   help="batch duration model: a name from `kvopt steptime list` or a "
                        "fitted-model JSON file from `kvopt steptime fit` (default: unit)")
    p.add_argument("--seed", type=seed_arg, default=DEFAULT_SEED,
                   help=f"seed for ties, clearing and noise (default {DEFAULT_SEED}; printed "
                   "with the results: same seed, same output)")
    p.add_argument("--noise", default=None, metavar="KIND:VALUE",
                   help="prediction noise, e.g. uniform:0.5 (seed 001), interval:0.5 or "
                        "buckets:100 (seed 000); default: the instance's predictions")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                   help="policy option, e.g. alpha=0.2 (repeatable)")
    p.add_argument("--preemption", default=None, choices=("restart", "recompute", "swap"),
                   help="what an evicted request keeps: restart (nothing; the seed convention), "
                   "recompute (its tokens, re-prefilled on resume; vLLM's default) or swap (its "
                   "KV, in host memory); default: the policy's (restart, vllm: recompute)")
    p.add_argument("--host-memory", default=None, type=int_at_least(0), metavar="TOKENS",
                   help="swap space in tokens (--preemption swap; default: vLLM's 4 GiB per "
                   "GPU of the step-time model's KV, or M)")
    p.add_argument("--replay", metavar="SCHEDULE", default=None,
                   help="schedule JSON to replay (with --policy replay)")
    p.add_argument("--schedule-out", metavar="FILE", default=None,
                   help="write the simulated schedule (JSON, atomically)")
    p.add_argument("--requests-out", metavar="FILE.csv", default=None,
                   help="write one CSV row per request: arrival, prompt, output, first_start, "
                   "start, completion, latency, ttft, evictions (instance time unit; *_s "
                   "wall-clock columns with a step-time model on a slotted instance)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_json_argument(p)
    p.set_defaults(func=run_simulate)


_NOISE_KEYS = {"uniform": "eps", "interval": "x", "buckets": "width"}


def _noise(spec: str | None) -> Any:
    """``--noise KIND:VALUE`` as a noise-model dict (``None``: the instance's predictions)."""
    if spec is None or spec == "exact":
        return spec
    kind, _, val = spec.partition(":")
    key = _NOISE_KEYS.get(kind)
    if key is None or not val:
        raise UsageError("--noise", f"expected uniform:EPS, interval:X, buckets:WIDTH or exact, "
                         f"got {spec!r}")
    try:
        num: float | int = int(val) if kind == "buckets" else float(val)
    except ValueError:
        raise UsageError("--noise", f"{kind} needs a {'whole ' if kind == 'buckets' else ''}"
                         f"number after the colon, got {val!r}") from None
    if not num >= 0 or (kind == "buckets" and num < 1) or num == float("inf"):
        raise UsageError("--noise", f"{kind} value must be "
                         f"{'>= 1' if kind == 'buckets' else 'finite and >= 0'}, got {val}")
    return {"kind": kind, key: num}


def _check_policy_arguments(args: argparse.Namespace, inst: Any, noise: Any,
                            opts: dict[str, Any]) -> None:
    """Every policy argument, checked before the run, with errors naming the CLI flag."""
    from kvopt.sim import check_policy
    from kvopt.sim.serving import BlockSizeError

    try:
        check_policy(inst, args.policy, predictions=noise, preemption=args.preemption,
                     host_memory=args.host_memory, **opts)
    except UsageError as exc:
        if exc.field == "predictions":
            raise UsageError("--policy", f"{args.policy} needs interval predictions and "
                             f"{args.instance} has none (no pred_lower/pred_upper): give "
                             "--noise interval:X or buckets:WIDTH, or an instance with "
                             "predictions") from None
        if exc.field == "policy":
            raise UsageError("--policy", exc.reason) from None
        if exc.field == "noise":
            raise UsageError("--noise", exc.reason) from None
        if isinstance(exc, BlockSizeError):
            raise UsageError("--option block_size", f"{exc.reason}; e.g. --memory "
                             f"{exc.memories[0]} or --option block_size="
                             f"{exc.suggested_block}") from None
        if exc.field in ("preemption", "host_memory"):
            raise UsageError("--" + exc.field.replace("_", "-"), exc.reason) from None
        flag = "--option" if exc.field == "options" else f"--option {exc.field}"
        raise UsageError(flag, exc.reason) from None


def run_simulate(args: argparse.Namespace) -> int:
    """Run the simulation and print the metrics."""
    from kvopt.core.io import write_csv
    from kvopt.core.metrics import request_table
    from kvopt.core.schedule import load_schedule
    from kvopt.sim import LivelockError, SimulationError, simulate

    opts = _options(args.option)
    noise = _noise(args.noise)
    if args.policy == "replay" and args.replay is None:
        raise UsageError("--replay", "--policy replay needs --replay SCHEDULE")
    if args.policy != "replay" and args.replay is not None:
        raise UsageError("--replay", "only with --policy replay")
    check_input_file(args.replay, "--replay")
    inputs = (args.instance, args.replay)
    check_output_file(args.schedule_out, "--schedule-out", inputs)
    check_output_file(args.requests_out, "--requests-out", inputs)
    if args.requests_out and args.schedule_out and same_file(Path(args.requests_out),
                                                             Path(args.schedule_out)):
        raise UsageError("--requests-out", f"{args.requests_out} is also --schedule-out; "
                         "give two different files")
    inst = read_instance(args)
    if args.replay is not None:
        sched = load_schedule(args.replay)
        if sched.instance_sha256 != inst.sha256():
            raise UsageError("--replay", f"{args.replay} is a schedule of another instance "
                             f"(sha256 {sched.instance_sha256[:12]}, {args.instance} has "
                             f"{inst.sha256()[:12]})")
        opts["schedule"] = sched
    _check_policy_arguments(args, inst, noise, opts)
    progress = not args.json and not args.no_progress and inst.n >= PROGRESS_MIN_REQUESTS
    try:
        res = simulate(inst, args.policy, step_time=args.step_time, seed=args.seed,
                       predictions=noise, progress=progress, preemption=args.preemption,
                       host_memory=args.host_memory, **opts)
    except LivelockError as exc:
        emit(args, {"policy": args.policy, "seed": args.seed, "ok": False, "error": "livelock",
                    "message": str(exc)}, f"livelock (seed {args.seed}): {exc}")
        return 1
    except InfeasibleScheduleError as exc:
        if args.policy != "replay":
            raise  # the engine produced an invalid schedule: an internal error
        emit(args, {"policy": args.policy, "seed": args.seed, "ok": False, "error": "infeasible",
                    "message": str(exc)}, f"the replayed schedule is infeasible here: {exc}")
        return 1
    except SimulationError as exc:
        emit(args, {"policy": args.policy, "seed": args.seed, "ok": False,
                    "error": "simulation", "message": str(exc)},
             f"simulation failed (seed {args.seed}): {exc}")
        return 1
    if args.schedule_out:
        res.schedule.save(args.schedule_out)
    if args.requests_out:
        write_csv(args.requests_out, request_table(inst, res.schedule))
    m = res.metrics
    doc = {"policy": res.policy, "step_time": res.step_time, "seed": res.seed, "ok": True,
           "preemption": res.schedule.preemption,
           "instance": inst.name, **m.to_dict(),
           "lengths": res.stats.get("lengths"),
           "decisions": res.stats.get("decisions"), "slots": res.stats.get("slots"),
           "wall_seconds": res.stats.get("wall_seconds")}
    if res.headroom is not None:
        doc["load_vs_capacity"] = res.headroom.load
        doc["headroom"] = res.headroom.to_dict()
    fluid_line = ""
    if "fluid" in res.stats:  # fluid-guided policies: the fluid benchmark beside the run
        from kvopt.sim.fluid import simulated_in_slots

        fl, sim = res.stats["fluid"], simulated_in_slots(inst, res.schedule)
        doc["fluid"] = fl
        doc["simulated_slots"] = sim
        fluid_line = (f"\n  fluid benchmark: throughput {fl['throughput']:.4g} /slot, mean "
                      f"latency {fl['mean_latency']:.4g} slots; simulated: throughput "
                      f"{sim['throughput']:.4g} /slot, mean latency {sim['mean_latency']:.4g} "
                      "slots")
    unit = m.unit
    text = (f"{res.policy} on {inst.name or 'instance'} (n={inst.n}, M={inst.memory}, "
            f"step time {res.step_time}, seed {res.seed})\n"
            f"  total latency {m.total_latency:.6g} {unit}, mean {m.mean_latency:.6g}, "
            f"p99 {m.p99_latency:.6g}\n"
            f"  TTFT mean {m.ttft_mean:.6g}, TPOT mean {m.tpot_mean:.6g}, makespan "
            f"{m.makespan:.6g}\n"
            + (f"  wall clock: total latency {m.total_latency_s:.6g} s, mean "
               f"{m.mean_latency_s:.6g} s, p99 {m.p99_latency_s:.6g} s, TTFT mean "
               f"{m.ttft_mean_s:.6g} s, makespan {m.makespan_s:.6g} s\n"
               if unit == "step" and m.has_clock else "")
            + f"  peak memory {m.peak_memory} / {inst.memory}, evictions {m.evictions}"
            + ("" if res.schedule.preemption == "restart"
               else f" (preemption {res.schedule.preemption})")
            + _goodput_line(m)
            + (f"\n  {res.headroom.describe()}" if res.headroom is not None else "")
            + fluid_line
            + (f"\n  output lengths: {res.stats['lengths']}" if res.stats.get("lengths")
               else ""))
    emit(args, doc, text)
    return 0


def _goodput_line(m: Any) -> str:
    """The goodput line of an instance with SLOs (empty without).

    Examples
    --------
    >>> from types import SimpleNamespace as NS
    >>> _goodput_line(NS(token_goodput=9.0, request_goodput=9, goodput_rule="binary",
    ...                  slo_attainment={"deadline": 0.9}))
    '\\n  goodput (binary rule): token goodput 9, request goodput 9; SLO attainment deadline 90.0 %'
    """
    if m.token_goodput is None:
        return ""
    att = ", ".join(f"{k} {100 * v:.1f} %" for k, v in (m.slo_attainment or {}).items())
    return (f"\n  goodput ({m.goodput_rule} rule): token goodput {m.token_goodput:.6g}, "
            f"request goodput {m.request_goodput}" + (f"; SLO attainment {att}" if att else ""))
