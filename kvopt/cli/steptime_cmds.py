"""``kvopt steptime``: step-time models against real GPU measurements (validate, fit,
profile); also the ``--step-time`` argument type every simulating command shares."""

from __future__ import annotations

import argparse
from typing import Any


def step_time_arg(value: str) -> Any:
    """argparse ``type`` of ``--step-time``: a registry name (returned as is) or a
    fitted-model JSON file (returned loaded, so a bad file is a usage error, exit 2).

    Examples
    --------
    >>> step_time_arg("unit")
    'unit'
    >>> step_time_arg("nope")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: unknown step-time model 'nope'; ...
    """
    from kvopt.core.errors import UsageError
    from kvopt.sim.steptime import STEP_TIME_MODELS, get_step_time

    if value in STEP_TIME_MODELS:
        return value
    try:
        return get_step_time(value)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(exc.reason) from None


#: The sub-commands this module registers and their one-line help (``kvopt --help`` lists
#: them without building their parsers).
COMMANDS = {
    "steptime": ("step-time models vs real GPU measurements: list, validate, fit, "
                 "calibrate-engine, profile"),
}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``steptime`` with ``list``, ``validate``, ``fit``, ``calibrate-engine`` and
    ``profile``."""
    from kvopt.cli.common import add_json_argument, float_in, int_at_least, seed_arg
    from kvopt.sim.steptime import ENGINE_CALIBRATION
    from kvopt.sim.steptime.fit import ENGINE_SETS
    from kvopt.sim.steptime.measured import MEASUREMENT_SETS

    p = sub.add_parser("steptime", help=COMMANDS["steptime"])
    ss = p.add_subparsers(dest="steptime_command", metavar="ACTION")
    ss.required = True

    ls = ss.add_parser("list", help="the step-time models --step-time accepts")
    add_json_argument(ls)
    ls.set_defaults(func=run_list)

    v = ss.add_parser(
        "validate", help="predicted vs measured step times for every shipped measurement set",
        description="Per measurement set, setup, model and kind (prefill, decode, mixed, "
        "prefill-batch): median and worst relative error of the shipped models; with --fit "
        "also of k-fold cross-validated fits (every row predicted by a model fitted without "
        "it). --out writes validate.json, validate.md and pred_vs_measured.png.")
    v.add_argument("--set", action="append", default=None, choices=list(MEASUREMENT_SETS),
                   help="measurement set (repeatable; default all)")
    v.add_argument("--fit", action="store_true", help="also fit and report held-out errors")
    v.add_argument("--folds", type=int_at_least(2, 100), default=5,
                   help="cross-validation folds (default 5)")
    v.add_argument("--seed", type=seed_arg, default=0, help="fold assignment seed (default 0)")
    v.add_argument("--out", default=None, metavar="DIR", help="write the report files here")
    add_json_argument(v)
    v.set_defaults(func=run_validate)

    f = ss.add_parser(
        "fit", help="fit a model's free constants to your measured steps (CSV)",
        description="Least squares (relative error) of the base model's free constants "
        "(profiled: overhead, profile_scale, bw_eff, mfu, c_seq; roofline: t0, c_seq, mfu, "
        "bw_eff) on a seeded split of the rows; prints the error on the held-out rows. CSV "
        "columns: prefill, decode (or batch), kv, ms (or ms_median); optional prefill_sq, "
        "kind, steps. --out saves the fitted model (JSON) for --step-time.")
    f.add_argument("measurements", metavar="MEASUREMENTS", help="CSV of measured steps")
    f.add_argument("--base", required=True, type=step_time_arg, metavar="MODEL",
                   help="model whose constants are fitted (e.g. h100-llama2-70b-tp4)")
    f.add_argument("--where", action="append", default=[], metavar="COLUMN=VALUE",
                   help="keep only rows with this value (repeatable), e.g. model=llama-2-7b")
    f.add_argument("--interconnect", default=None,
                   choices=["auto", "nvswitch", "pairwise", "none"],
                   help="profiled base: all-reduce table (none: one measured shard)")
    f.add_argument("--holdout", type=float_in(0, 1, lo_open=True, hi_open=True), default=0.25,
                   help="fraction of each kind's rows held out (default 0.25)")
    f.add_argument("--seed", type=seed_arg, default=0, help="split seed (default 0)")
    f.add_argument("--out", default=None, metavar="FILE.json", help="save the fitted model")
    add_json_argument(f)
    f.set_defaults(func=run_fit)

    c = ss.add_parser(
        "calibrate-engine", help="calibrate serving-engine costs on measured serving runs",
        description="Fit the serving-engine costs (per step, per decoding sequence, per "
        "all-reduce and extra rank) that GPU-time models lack, by least squares on relative "
        "errors, on the rows of --set (GPU constants unchanged); prints the error on every "
        "serving-engine set, in-sample on --set and out-of-sample on the others. --out writes "
        "the constants (the shipped kvopt/data/engine/" + ENGINE_CALIBRATION + ".json comes "
        "from --set " + ENGINE_CALIBRATION + "). Deterministic.")
    c.add_argument("--set", action="append", default=None, choices=list(ENGINE_SETS),
                   help=f"calibration set (repeatable; default {ENGINE_CALIBRATION})")
    c.add_argument("--family", action="append", default=None,
                   choices=["profiled", "roofline"],
                   help="GPU-time model family (repeatable; default both)")
    c.add_argument("--out", default=None, metavar="FILE.json", help="write the constants")
    add_json_argument(c)
    c.set_defaults(func=run_calibrate_engine)

    pr = ss.add_parser(
        "profile", help="time Llama-shaped forward passes on your GPU (needs PyTorch + CUDA)",
        description="Random-weight Llama-2-shaped forward passes (one tensor-parallel shard, "
        "no all-reduce) captured in CUDA graphs over a grid of prefill / decode / mixed "
        "batches; writes the CSV `kvopt steptime fit` reads. Needs `pip install kvopt[gpu]`.")
    pr.add_argument("--model", default="llama-2-7b", choices=["llama-2-7b", "llama-2-70b"],
                    help="layer shapes to time (default llama-2-7b)")
    pr.add_argument("--tp", type=int_at_least(1, 64), default=1,
                    help="shard of this TP degree (default 1)")
    pr.add_argument("--grid", default="quick", choices=["quick", "full"],
                    help="quick (~40 batches) or full (the h100_llama_steps.csv grid)")
    pr.add_argument("--repeats", type=int_at_least(3, 10**4), default=30,
                    help="timed replays per batch (default 30)")
    pr.add_argument("--kv-budget-gib", type=float_in(0, 1e4, lo_open=True), default=32.0,
                    help="largest KV cache allocated (GiB; larger batches are skipped)")
    pr.add_argument("--out", required=True, metavar="FILE.csv", help="CSV to write")
    add_json_argument(pr)
    pr.set_defaults(func=run_profile)


def run_list(args: argparse.Namespace) -> int:
    """Print the registry."""
    from kvopt.cli.common import emit
    from kvopt.sim.steptime import STEP_TIME_DESCRIPTIONS, STEP_TIME_MODELS

    names = sorted(STEP_TIME_MODELS)
    width = max(map(len, names))
    emit(args, {"models": names, "descriptions": {n: STEP_TIME_DESCRIPTIONS[n] for n in names}},
         "\n".join(f"{n:<{width}}  {STEP_TIME_DESCRIPTIONS[n]}" for n in names)
         + "\n(or a fitted-model JSON file)")
    return 0


def run_validate(args: argparse.Namespace) -> int:
    """Validate the shipped models (and fits) against the shipped measurements."""
    import sys

    from kvopt.cli.common import check_output_dir, emit
    from kvopt.report.steptime import (
        strip_rows,
        summary_markdown,
        validation_markdown,
        write_validation_report,
    )
    from kvopt.sim.steptime.fit import validate

    check_output_dir(args.out, "--out")
    res = validate(args.set, fit=args.fit, folds=args.folds, seed=args.seed)
    if args.out:
        cmd = "kvopt steptime validate" + "".join(f" --set {s}" for s in args.set or []) + (
            f" --fit --folds {args.folds} --seed {args.seed}" if args.fit else "") + (
            f" --out {args.out}")
        for path in write_validation_report(res, args.out, cmd):
            print(f"wrote {path}", file=sys.stderr)
    emit(args, strip_rows(res), summary_markdown(res) + "\n\n" + validation_markdown(res))
    return 0


def _where(items: list[str]) -> dict[str, str]:
    from kvopt.core.errors import UsageError

    out = {}
    for it in items:
        k, sep, v = it.partition("=")
        if not sep or not k:
            raise UsageError("--where", f"expected COLUMN=VALUE, got {it!r}")
        out[k] = v
    return out


def run_fit(args: argparse.Namespace) -> int:
    """Fit, report the held-out error, optionally save."""
    import dataclasses

    from kvopt.cli.common import check_input_file, check_output_file, emit
    from kvopt.core.errors import UsageError
    from kvopt.sim.steptime import ProfiledStepTime, get_step_time, save_step_time
    from kvopt.sim.steptime.fit import FIT_PARAMS, fit_step_time
    from kvopt.sim.steptime.measured import read_steps_csv

    check_input_file(args.measurements, "MEASUREMENTS")
    check_output_file(args.out, "--out", (args.measurements,))
    where = _where(args.where)
    if type(get_step_time(args.base)) not in FIT_PARAMS:
        raise UsageError("--base", "has no free constants to fit (use a profiled or roofline "
                                   "model)")
    if args.interconnect is not None and not isinstance(get_step_time(args.base),
                                                        ProfiledStepTime):
        raise UsageError("--interconnect", "only a profiled base model has one")
    rows = read_steps_csv(args.measurements, where)
    base = get_step_time(args.base)
    if args.interconnect is not None:
        assert isinstance(base, ProfiledStepTime)
        base = dataclasses.replace(base, interconnect=args.interconnect,
                                   name=f"{base.name}-{args.interconnect}")
    res = fit_step_time(rows, base, holdout=args.holdout, seed=args.seed)
    doc = {"measurements": args.measurements, "where": where, "rows": len(rows),
           "interconnect": args.interconnect, **res.to_dict(), "model": res.model.name}
    if args.out:
        save_step_time(res.model, args.out, extra=doc)
        doc["out"] = args.out
    lines = [f"fit of {res.base} to {len(rows)} rows of {args.measurements} "
             f"(held out {args.holdout:g} per kind, seed {args.seed})",
             "  constants: " + ", ".join(f"{k} {v:.4g}" for k, v in res.constants.items()),
             "  kind       n  held-out median |err|  worst    (base model: median, worst)"]
    for k, e in res.heldout.items():
        b = res.base_heldout[k]
        lines.append(f"  {k:<9} {e['n']:>3}  {100 * e['median_abs']:>8.1f}%  "
                     f"{100 * e['worst']:>+12.1f}%   ({100 * b['median_abs']:.1f}%, "
                     f"{100 * b['worst']:+.1f}%)")
    tr = res.train["all"]
    lines.append(f"  in-sample (training rows, n={tr['n']}): median |err| "
                 f"{100 * tr['median_abs']:.1f}%")
    if args.out:
        lines.append(f"  saved {args.out} (use: kvopt simulate ... --step-time {args.out})")
    emit(args, doc, "\n".join(lines))
    return 0


def run_calibrate_engine(args: argparse.Namespace) -> int:
    """Calibrate engine costs, print in- and out-of-sample errors, optionally save."""
    import sys

    from kvopt.cli.common import check_output_file, emit
    from kvopt.core.io import write_json
    from kvopt.sim.steptime import ENGINE_CALIBRATION
    from kvopt.sim.steptime.fit import calibrate_engine

    check_output_file(args.out, "--out")
    sets = args.set or [ENGINE_CALIBRATION]
    fams = list(dict.fromkeys(args.family or ["profiled", "roofline"]))
    doc = calibrate_engine(sets, fams)
    doc["command"] = "kvopt steptime calibrate-engine" + "".join(
        f" --set {s}" for s in sets) + "".join(f" --family {f}" for f in args.family or []) + (
        f" --out {args.out}" if args.out else "")
    if args.out:
        write_json(args.out, doc)
        print(f"wrote {args.out}", file=sys.stderr)
    lines = [f"engine costs calibrated on {', '.join(sets)} (t = t_gpu + step + seq * D "
             f"+ 2 L (tp - 1) ar_rank_latency)"]
    for fam, fd in doc["families"].items():
        cst = fd["costs"]
        lines.append(f"{fam} ({fd['rows']} rows): step {1e3 * cst['step']:.3f} ms, seq "
                     f"{1e3 * cst['seq']:.4f} ms, ar_rank_latency "
                     f"{1e6 * cst['ar_rank_latency']:.2f} us")
        lines.append("  set                  sample  median |err|   worst  (median per setup)")
        for n, e in fd["errors"].items():
            per = " / ".join(f"{100 * v['all']['median_abs']:.1f}%" for k, v in e.items()
                             if k not in ("in_sample", "pooled"))
            tag = "in" if e["in_sample"] else "out"
            lines.append(f"  {n:<20} {tag:<7} {100 * e['pooled']['all']['median_abs']:11.1f}% "
                         f"{100 * e['pooled']['all']['worst']:+7.1f}%  ({per})")
    emit(args, doc, "\n".join(lines))
    return 0


def run_profile(args: argparse.Namespace) -> int:
    """Profile this machine's GPU (PyTorch)."""
    import sys

    from kvopt.cli.common import check_output_file, emit
    from kvopt.sim.steptime.gpu_profile import profile_to_csv

    check_output_file(args.out, "--out")
    n = profile_to_csv(args.out, model=args.model, tp=args.tp, grid=args.grid,
                       repeats=args.repeats, kv_budget_bytes=args.kv_budget_gib * 2**30,
                       log=sys.stderr)
    emit(args, {"rows": n, "out": args.out}, f"wrote {n} rows to {args.out}")
    return 0
