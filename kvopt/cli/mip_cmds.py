"""``kvopt solve``, ``kvopt bound`` and ``kvopt solvers``."""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from kvopt.cli.common import (
    add_instance_argument,
    add_json_argument,
    bytes_arg,
    check_output_file,
    emit,
    float_in,
    int_at_least,
    read_instance,
    seed_arg,
    stdout_to_stderr,
)
from kvopt.core.errors import MemoryBudgetError, UsageError
from kvopt.core.instance import Instance
from kvopt.core.limits import Deadline

EXIT_OK, EXIT_NOT_PROVEN, EXIT_BAD_INPUT = 0, 1, 2


#: The sub-commands this module registers and their one-line help (``kvopt --help`` lists
#: them without building their parsers).
COMMANDS = {
    "solve": "hindsight-optimal schedule (MIP / CP-SAT) with status, bound and gap",
    "bound": "lower bounds on the optimum and the best schedule's gap, at any scale",
    "solvers": "list the MIP backends and whether they load",
}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``solve``, ``bound`` and ``solvers``."""
    from kvopt.mip.backends import backend_names
    from kvopt.mip.solving import ALL_FORMULATIONS, DEFAULT_SOLVER

    p = sub.add_parser(
        "solve", help=COMMANDS["solve"],
        description="Solve the hindsight-optimal IP of seed 001: by default the toolkit's best "
        "answer within --time-limit (the exact path where it can finish, else the improvement "
        "search beside the strongest bound that fits: interval LP, Lagrangian), stopping "
        "early when the gap closes; --solver / --formulation / --improve pick one method "
        "(experts). Exit 0 proven optimal, 1 not proven (time limit) or error, 2 bad input.")
    add_instance_argument(p)
    p.add_argument("--solver", default=None, choices=backend_names(),
                   help=f"expert: this backend only (with --formulation; default "
                   f"{DEFAULT_SOLVER} when only --formulation is given)")
    p.add_argument("--formulation", default=None, choices=ALL_FORMULATIONS,
                   help="expert: this model only (default with --solver: cp for cpsat, tight "
                   "otherwise; cp+exact: cp+pairs with a primal search and reduced-cost "
                   "fixing; `kvopt solvers` lists each backend's)")
    p.add_argument("--time-limit", type=float_in(0, lo_open=True), default=60.0, metavar="S",
                   help="seconds for the whole call: warm start, bounds, model build, solve "
                   "and validation (default 60; the solver process is stopped at the limit "
                   "and any overrun is reported)")
    p.add_argument("--memory-budget", type=bytes_arg, default=None, metavar="BYTES",
                   help="memory a formulation may take, e.g. 4G or 512M (default: env "
                   "KVOPT_MEMORY_BUDGET, else half the available memory); a larger one is "
                   "refused before it is built, naming the formulations that fit")
    p.add_argument("--slot-seconds", type=float_in(0, lo_open=True), default=None, metavar="DT",
                   help="for time_unit='second' traces: discretise (arrival slot = "
                   "ceil(t / DT)), as `kvopt bound --slot-seconds`")
    p.add_argument("--first", type=int_at_least(1), default=None, metavar="N",
                   help="keep only the first N requests (by arrival order in the file), as "
                   "`kvopt bound --first`")
    p.add_argument("--threads", type=int_at_least(1, 1024), default=1, metavar="N",
                   help="solver threads")
    p.add_argument("--no-warm-start", action="store_true", help="do not start from MC-SF")
    p.add_argument("--objective", choices=("tel", "goodput"), default="tel",
                   help="tel: total end-to-end latency (minimised, default); goodput: SLO "
                   "goodput (maximised, needs per-request SLOs; --formulation is ignored, "
                   "default solver highs)")
    p.add_argument("--improve", action="store_true",
                   help="primal improvement search instead of an exact solve: list search "
                   "(serial decoding) and CP-SAT large-neighbourhood search from MC-SF and "
                   "other schedules, within --time-limit (whole call); a progress bar on "
                   "stderr. --solver/--formulation are not used")
    p.add_argument("--seed", type=seed_arg, default=0,
                   help="seed of the improvement search (default and --improve; default 0; "
                   "printed with the result)")
    p.add_argument("--schedule-out", metavar="FILE", help="write the schedule JSON (atomic)")
    p.add_argument("--verbose", action="store_true", help="show the solver log (on stderr)")
    add_json_argument(p)
    p.set_defaults(func=run_solve)

    p = sub.add_parser(
        "bound", help=COMMANDS["bound"],
        description="Print the trivial, volume (seed 001 Sec. 4), fluid (SRPT), core "
        "(ramp-packing) and LP (tight+cores) / Lagrangian bounds and the gap of the best known "
        "schedule (MC-SF, or a --solve run).")
    add_instance_argument(p)
    p.add_argument("--slot-seconds", type=float_in(0, lo_open=True), default=None, metavar="DT",
                   help="for time_unit='second' traces: discretise with kvopt.mip.discretize "
                   "(arrival slot = ceil(t / DT))")
    p.add_argument("--first", type=int_at_least(1), default=None, metavar="N",
                   help="keep only the first N requests (by arrival order in the file)")
    p.add_argument("--lp", choices=("auto", "exact", "lagrangian", "none"), default="auto",
                   help="LP bound: exact HiGHS LP (small), Lagrangian (block-LP multipliers, "
                   "then subgradient steps; any size); auto (default): as kvopt solve, the "
                   "lag-interval LP (120 s) up to n*T = 2e7 where it fits the memory budget, "
                   "else exact up to 2e5, else the Lagrangian bound where one evaluation "
                   "scans at most 2e8 start slots, else none")
    p.add_argument("--iterations", type=int_at_least(1, 10**6), default=200,
                   help="Lagrangian subgradient steps after the block LPs (within 120 s)")
    p.add_argument("--solve", type=float_in(0, lo_open=True), default=None, metavar="S",
                   help="also run `solve` with this time limit for a better schedule")
    p.add_argument("--improve", type=float_in(0, lo_open=True), default=None, metavar="S",
                   help="also run the primal improvement search (`solve --improve`) with this "
                   "budget for a better schedule")
    p.add_argument("--seed", type=seed_arg, default=0, help="seed of --improve (default 0)")
    p.add_argument("--intervals", type=float_in(0, lo_open=True), default=None, metavar="S",
                   help="also compute the lag-interval LP bound (tight+cores LP plus "
                   "single-machine rows from the pairwise lags) within S seconds; stopped "
                   "early it returns a valid Lagrangian bound")
    p.add_argument("--no-progress", action="store_true",
                   help="no phase / elapsed-time messages on stderr")
    p.add_argument("--memory-budget", type=bytes_arg, default=None, metavar="BYTES",
                   help="memory the exact LP may take, e.g. 4G (default: env "
                   "KVOPT_MEMORY_BUDGET, else half the available memory)")
    add_json_argument(p)
    p.set_defaults(func=run_bound)

    p = sub.add_parser("solvers", help=COMMANDS["solvers"])
    add_json_argument(p)
    p.set_defaults(func=run_solvers)


def run_solve(args: argparse.Namespace) -> int:
    """``kvopt solve``."""
    from kvopt.mip.solving import CP_FORMULATIONS, solve

    if args.formulation in CP_FORMULATIONS and args.solver not in (None, "cpsat"):
        raise UsageError("--formulation", f"{args.formulation} is a CP-SAT model: use it with "
                         f"--solver cpsat, or pick a MILP formulation for --solver {args.solver}")
    check_output_file(args.schedule_out, "--schedule-out", (args.instance,))
    if args.improve:
        return _run_improve(args)
    budget = _budget(args)
    inst = _slotted(_first(read_instance(args), args), args)
    try:
        with stdout_to_stderr(args.verbose):  # solver logs are messages (--json: see main)
            res = solve(inst, solver=args.solver, formulation=args.formulation,
                        time_limit=args.time_limit, threads=args.threads,
                        deadline=Deadline(args.time_limit, t0=getattr(
                            args, "started_at", time.monotonic())),
                        warm_start=not args.no_warm_start, verbose=args.verbose,
                        objective=args.objective, ram=budget, seed=args.seed,
                        progress=not args.json and args.time_limit is not None
                        and args.time_limit > 5)
    except MemoryBudgetError as exc:  # the same refusal, in CLI words
        if _is_instance_field(exc.field):  # horizon-sized work: the field says why
            raise
        raise MemoryBudgetError("--formulation" if args.formulation else "--solver",
                                exc.reason, estimate=exc.estimate, budget=exc.budget,
                                alternatives=exc.alternatives) from None
    if args.schedule_out and res.schedule is not None:
        res.schedule.save(args.schedule_out)
    doc = res.to_dict()
    doc["instance"] = inst.name
    doc["n"] = inst.n
    gap = "-" if res.gap is None else f"{100 * res.gap:.2f}%"
    doc["objective_kind"] = args.objective
    what = "goodput" if args.objective == "goodput" else "total latency"
    text = (f"{inst.name or args.instance}: {res.status}; {what} {res.objective}, "
            f"bound {_fmt(res.bound)}, gap {gap}; {res.solver}/{res.formulation} in "
            f"{res.runtime_s:.2f} s (incumbent from {res.incumbent_source or 'none'})")
    if res.solver == "auto":
        doc["seed"] = args.seed
        text += (f"\n  won: schedule {res.model['schedule_source']}, bound "
                 f"{res.model['bound_source']} (seed {args.seed})\n  time split: "
                 + ", ".join(f"{k[:-2]} {v:.1f} s" for k, v in res.steps.items()))
    if res.time_limit is not None:
        text += (f"\n  time: {res.runtime_s:.2f} s of a {res.time_limit:g} s limit"
                 + (f", OVERRUN {res.overrun_s:.2f} s" if res.overrun_s > 0 else ""))
    if res.bounds:
        text += "\n  bounds: " + "; ".join(_bound_text(k, v) for k, v in res.bounds.items())
    for note in res.model.get("notes", []):
        text += f"\n  note: {note}"
    emit(args, doc, text)
    return EXIT_OK if res.status == "optimal" else EXIT_NOT_PROVEN


def _bound_text(name: str, rec: dict[str, Any]) -> str:
    if rec.get("status") == "computed":
        how = rec.get("method")
        if name == "intervals" and how not in (None, "LP"):  # the interval LP not solved
            return f"{name} {_fmt(rec.get('value'))} ({how}: the interval LP not solved in time)"
        return f"{name} {_fmt(rec.get('value'))}"
    return f"{name} skipped ({rec.get('reason', '')})"


def _budget(args: argparse.Namespace) -> int | None:
    """``--memory-budget`` in bytes (checked before any work)."""
    if args.memory_budget is None:
        return None
    from kvopt.core.limits import parse_bytes

    return parse_bytes(args.memory_budget, "--memory-budget")


def _first(inst: Instance, args: argparse.Namespace) -> Instance:
    """The first ``--first`` requests (all without the flag)."""
    first = getattr(args, "first", None)
    return inst if first is None else inst.take(np.arange(min(first, inst.n)))


def _slotted(inst: Instance, args: argparse.Namespace) -> Instance:
    """The instance in slots: a trace needs ``--slot-seconds`` (said in CLI words)."""
    if inst.is_slotted:
        return inst
    if args.slot_seconds is None:
        raise UsageError("--slot-seconds", f"{args.instance} has arrivals in seconds "
                         "(time_unit='second'); the MIP works in slots: give --slot-seconds "
                         "DT to discretise it (arrival slot = ceil(t / DT))")
    from kvopt.mip.model.discretize import discretize

    return discretize(inst, args.slot_seconds)


def _run_improve(args: argparse.Namespace) -> int:
    """``kvopt solve --improve``."""
    from kvopt.mip.search.improve import improve

    if args.objective != "tel":
        raise UsageError("--improve", "searches total end-to-end latency only (--objective tel)")
    if args.time_limit is None or not args.time_limit > 0:
        raise UsageError("--time-limit", f"must be > 0 with --improve, got {args.time_limit}")
    deadline = Deadline(args.time_limit, t0=getattr(args, "started_at", time.monotonic()))
    inst = _slotted(_first(read_instance(args), args), args)
    # the limit covers the whole call (loading counts): improve shares the CLI's deadline
    res = improve(inst, deadline=deadline, seed=args.seed, progress=not args.json)
    if args.schedule_out and res.schedule is not None:
        res.schedule.save(args.schedule_out)
    # the whole call against its limit, as the default path reports it
    res.runtime_s, res.time_limit = deadline.elapsed(), deadline.limit
    res.overrun_s = deadline.overrun()
    doc = res.to_dict()
    doc.update(instance=inst.name, n=inst.n, seed=args.seed, objective_kind="tel")
    start = res.model["start_objective"]
    gap = "-" if res.gap is None else f"{100 * res.gap:.2f}%"
    text = (f"{inst.name or args.instance}: {res.status}; total latency {res.objective} "
            f"(MC-SF {start:g}, MC-SF / best {start / max(res.objective or 1, 1):.4f}), "
            f"bound {_fmt(res.bound)}, gap {gap}; improve in {res.runtime_s:.2f} s "
            f"({res.solver_status}), seed {args.seed}\n  time: {res.runtime_s:.2f} s of a "
            f"{args.time_limit:g} s limit"
            + (f", OVERRUN {res.overrun_s:.2f} s" if res.overrun_s > 0 else ""))
    emit(args, doc, text)
    return EXIT_OK if res.status == "optimal" else EXIT_NOT_PROVEN


def _is_instance_field(field: str) -> bool:
    """Whether a refusal names an instance field (``requests.output``, ``memory``) rather
    than a model choice."""
    return field.startswith("requests") or field == "memory"


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.6g}"


def run_bound(args: argparse.Namespace) -> int:
    """``kvopt bound``."""
    budget = _budget(args)
    inst = read_instance(args)
    if not inst.is_slotted and args.slot_seconds is None:
        raise UsageError("--slot-seconds", f"{args.instance} is a trace in seconds; the bounds "
                         "work on slots: give --slot-seconds DT (slot = ceil(arrival / DT))")
    inst = _slotted(_first(inst, args), args)
    from kvopt.mip.certify import bound_report

    try:
        doc = bound_report(inst, lp=args.lp, iterations=args.iterations,
                           solve_time=args.solve, ram=budget,
                           improve_time=args.improve, seed=args.seed,
                           intervals_time=args.intervals,
                           progress=not args.json and not args.no_progress)
    except MemoryBudgetError as exc:
        if _is_instance_field(exc.field):
            raise
        raise MemoryBudgetError("--lp", exc.reason, estimate=exc.estimate,
                                budget=exc.budget) from None
    lines = [f"{doc['instance']}: n = {doc['n']}, M = {doc['memory']}"]
    for k, v in doc["bounds"].items():
        lines.append(f"  {k:>11} bound  {_fmt(v)}")
    gap = "-" if doc["gap"] is None else f"{100 * doc['gap']:.2f}%"
    lines.append(f"  best schedule ({doc['best_schedule']['source']}) "
                 f"{_fmt(doc['best_schedule']['objective'])}; best bound "
                 f"{doc['best_bound_name']} {doc['best_bound']:.6g}; gap {gap}")
    for k, why in doc.get("skipped", {}).items():
        lines.append(f"  {k:>11} bound  skipped: {why}")
    emit(args, doc, "\n".join(lines))
    return EXIT_OK if doc["best_schedule"]["valid"] else EXIT_NOT_PROVEN


def run_solvers(args: argparse.Namespace) -> int:
    """``kvopt solvers``."""
    from kvopt.mip.backends import solver_availability

    rows = solver_availability()
    lines = []
    for r in rows:
        mark = "yes" if r["available"] else "no "
        extra = f"{r.get('module')} {r['version']}" if r["available"] else r["error"]
        forms = (r.get("capabilities") or {}).get("formulations")
        if forms:
            extra += f"; formulations: {', '.join(forms)}"
        lines.append(f"{r['name']:<6} {mark}  {extra}")
    emit(args, {"solvers": rows}, "\n".join(lines))
    return EXIT_OK
