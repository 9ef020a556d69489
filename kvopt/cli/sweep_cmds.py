"""``kvopt sweep``: seeded instances x policies (x hindsight MIP) on a Dask cluster."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kvopt.cli.common import (
    add_json_argument,
    check_output_dir,
    emit,
    float_in,
    int_at_least,
)
from kvopt.core.errors import UsageError
from kvopt.sweep.output import write_sweep
from kvopt.sweep.run import GENERATORS, SweepSpec, run_sweep


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``sweep``."""
    from kvopt.mip.backends import backend_names

    p = sub.add_parser(
        "sweep", help="evaluate policies (and the MIP optimum) over seeded instances with Dask",
        description="Draw one instance per seed from a generator, simulate each policy, optionally "
        "solve the hindsight MIP, validate every schedule, and write rows.csv, summary.md and "
        "manifest.json to --out. Rows are sorted by seed, independent of worker timing "
        "(runtime_s excepted).")
    p.add_argument("--generator", choices=sorted(GENERATORS), default="model1")
    p.add_argument("--seeds", default="0:10", help="START:STOP (exclusive) or a comma list")
    p.add_argument("--policies", default="mcsf", help="comma-separated policy names")
    p.add_argument("--solver", default=None, choices=backend_names(),
                   help="MIP backend for OPT (omit to skip)")
    p.add_argument("--time-limit", type=float_in(0, lo_open=True), default=10.0,
                   help="per-solve limit, seconds")
    p.add_argument("--param", action="append", default=[], metavar="KEY=INT",
                   help="generator parameter, e.g. --param n=12 (repeatable)")
    p.add_argument("--workers", type=int_at_least(0), default=2,
                   help="Dask worker processes (0: in-process)")
    p.add_argument("--out", required=True, help="output folder")
    add_json_argument(p)
    p.set_defaults(func=run)


def _seeds(text: str) -> list[int]:
    try:
        if ":" in text:
            a, b = text.split(":")
            return list(range(int(a), int(b)))
        return [int(x) for x in text.split(",") if x]
    except ValueError as exc:
        msg = f"expected START:STOP or a list, got {text!r}"
        raise UsageError("--seeds", msg) from exc


def _params(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise UsageError("--param", f"expected KEY=VALUE, got {item!r}")
        try:
            out[key] = int(value)
        except ValueError:
            try:
                out[key] = float(value)
            except ValueError:
                raise UsageError("--param", f"{key} needs a number, got {value!r}") from None
    return out


def check_sweep_arguments(spec: SweepSpec) -> None:
    """Everything a sweep's tasks would reject, checked here before any cluster starts: the
    generator parameters (names against the generator's signature, values by drawing the
    first seed's instance), the policy names and what each policy needs on that instance."""
    import inspect

    from kvopt.sim import POLICIES, check_policy

    if not spec.seeds:
        raise UsageError("--seeds", "no seeds")
    gen = GENERATORS[spec.generator]
    params = inspect.signature(gen).parameters
    settable = sorted(k for k, p in params.items()
                      if p.kind is p.KEYWORD_ONLY and not isinstance(p.default, tuple))
    for key in spec.generator_params:
        if key not in settable:
            raise UsageError("--param", f"{spec.generator} has no parameter {key!r} (settable: "
                             f"{', '.join(settable)})")
    try:
        inst = gen(spec.seeds[0], **spec.generator_params)
    except UsageError as exc:
        raise UsageError(f"--param {exc.field}", exc.reason) from None
    for policy in spec.policies:
        if policy not in POLICIES:
            raise UsageError("--policies", f"unknown policy {policy!r}; choose from "
                             f"{', '.join(sorted(POLICIES))}")
        try:
            check_policy(inst, policy)
        except UsageError as exc:
            if exc.field != "predictions":
                raise UsageError("--policies", f"{policy}: {exc}") from None
            raise UsageError("--policies", f"{policy} needs interval predictions, and "
                             f"{spec.generator} instances have none") from None


def run(args: argparse.Namespace) -> int:
    """Run the sweep and write its files atomically."""
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    if not policies and args.solver is None:
        raise UsageError("--policies", "nothing to evaluate: give policies or --solver")
    spec = SweepSpec(args.generator, _seeds(args.seeds), policies, args.solver,
                     args.time_limit, _params(args.param))
    check_sweep_arguments(spec)
    check_output_dir(args.out, "--out")
    rows = run_sweep(spec, workers=args.workers, progress=not args.json)
    command = "kvopt " + " ".join(sys.argv[1:]) if sys.argv[0].endswith("kvopt") else None
    summary, table = write_sweep(Path(args.out), rows, spec, workers=args.workers,
                                 command=command)
    emit(args, {"summary": summary, "out": str(args.out)}, table)
    if any(not r["valid"] for r in rows):
        print("kvopt sweep: some schedules failed validation", file=sys.stderr)
        return 1
    return 0
