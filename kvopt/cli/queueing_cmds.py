"""``kvopt queueing``: M/G/1 mean response times from the SOAP formulas (and simulation).

Examples::

    kvopt queueing srpt --load 0.8 --sizes exp:1
    kvopt queueing trail --C 0.8 --load 0.9 --sizes exp:1 --predictions exp --json
    kvopt queueing sprpt --load 0.5 --sizes uniform:0,2 --predictions exp --simulate 200000
    kvopt queueing --plot-fig8 fig8.png --simulate 200000 --seed 1
"""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

import numpy as np

from kvopt.cli.common import (
    DEFAULT_SEED,
    check_figure_file,
    check_output_file,
    emit,
    int_at_least,
    seed_arg,
    write_stdout,
)
from kvopt.core.errors import UsageError
from kvopt.core.io import atomic_write_text

__all__ = ["add_parser", "run"]

_EPILOG = """\
POLICY: fcfs, sjf|spjf, psjf|pspjf, srpt|sprpt, trail (needs --C), trail-printed (the
paper's printed Lemma 1, for comparison only; not simulated).  sjf/psjf/srpt are the
prediction policies with the predictions given (perfect by default).
SIZES: exp:MEAN  det:V  uniform:A,B  hyperexp:P1,M1,P2,M2,...  bpareto:ALPHA,LO,HI
       logt:MU,SIGMA,XMAX[,NU] (censored)  logtt:... (truncated)  empirical:CSV[,COLUMN]
PREDICTIONS: perfect (default), exp, lognormal:SIGMA, unifnoise:EPS
"""


#: The sub-commands this module registers and their one-line help (``kvopt --help`` lists
#: them without building their parsers).
COMMANDS = {
    "queueing": "M/G/1 SOAP formulas (FCFS, SJF, SRPT, SPRPT, TRAIL) and simulation",
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register the ``queueing`` sub-command on an argparse ``subparsers`` object."""
    p = subparsers.add_parser(
        "queueing", help=COMMANDS["queueing"],
        description="Mean response time of an M/G/1 queue under a size- or prediction-based "
        "policy, from the SOAP formulas (TRAIL: corrected Lemma 1); optionally checked by "
        "simulation. --plot-fig8 reproduces seed 004 Fig. 8.",
        epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("policy", nargs="?", metavar="POLICY", help="scheduling policy")
    p.add_argument("--load", type=float, metavar="RHO", help="load rho = lam E[S] in (0, 1)")
    p.add_argument("--sizes", metavar="SPEC", help="job-size distribution, e.g. exp:1")
    p.add_argument("--predictions", metavar="SPEC", default=None,
                   help="prediction model (default perfect; exp for --plot-fig8)")
    p.add_argument("--C", dest="C", type=float, metavar="VALUE",
                   help="TRAIL: preemption allowed while age < C * prediction")
    p.add_argument("--given", metavar="X,R",
                   help="also print E[T(x, r)] for a job of size X and prediction R")
    p.add_argument("--per-size", metavar="X1,X2,...",
                   help="also print the per-size means E[T(x)] (averaged over predictions)")
    p.add_argument("--simulate", type=int_at_least(0, 10**8), metavar="N", default=0,
                   help="also simulate N jobs (batch-means standard error)")
    p.add_argument("--seed", type=seed_arg, default=DEFAULT_SEED, metavar="N",
                   help=f"simulation seed (default {DEFAULT_SEED}; printed with the results)")
    p.add_argument("--json", action="store_true", help="print one JSON object to stdout")
    p.add_argument("--plot-fig8", metavar="OUT.png",
                   help="reproduce seed 004 Fig. 8 (TRAIL, Exp(1) sizes, exp predictions "
                   "unless --sizes/--predictions are given; N jobs per point from --simulate, "
                   "default 100000)")
    p.add_argument("--errata", metavar="OUT.md",
                   help="write the printed-vs-corrected Lemma 1 table (markdown; simulation "
                   "columns use --simulate N jobs per row, 0 = formulas only)")
    p.add_argument("--lams", metavar="L1,L2,...", default="0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9",
                   help="arrival rates for --plot-fig8")
    p.add_argument("--Cs", metavar="C1,C2,...", default="0.2,0.5,0.8,1",
                   help="C values for --plot-fig8")
    p.set_defaults(func=run)


def _reason(exc: ValueError) -> str:
    """The reason of a queueing argument error (:class:`UsageError`; any other ValueError
    of a spec parser as its message)."""
    return exc.reason if isinstance(exc, UsageError) else re.sub(r"^`[^`]*`: ", "", str(exc))


def _bad(flag: str, reason: str) -> UsageError:
    return UsageError(flag, reason)


#: Fewest jobs a simulation accepts (10 per batch of the batch-means error, 20 batches).
MIN_SIM_JOBS = 200


def _floats(text: str, flag: str) -> list[float]:
    try:
        vals = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise _bad(flag, f"expected comma-separated numbers, got {text!r}") from None
    if not vals:
        raise _bad(flag, "empty list")
    return vals


def _parsed(parse: Any, spec: str | None, flag: str) -> Any:
    """``parse(spec)`` (a spec-string parser), its ``ValueError`` reported against ``flag``."""
    try:
        return parse(spec)
    except ValueError as exc:  # the parsers only validate the spec string
        raise _bad(flag, _reason(exc)) from None


def _check_sim_jobs(n: int) -> None:
    if n != 0 and n < MIN_SIM_JOBS:
        raise _bad("--simulate", f"N must be 0 (no simulation) or >= {MIN_SIM_JOBS}, got {n}")


def _fig8(args: argparse.Namespace) -> int:
    from kvopt.queueing.distributions import parse_sizes
    from kvopt.queueing.predictions import parse_predictions
    from kvopt.report.fig8 import fig8_data, plot_fig8

    check_figure_file(args.plot_fig8, "--plot-fig8")
    sizes = _parsed(parse_sizes, args.sizes or "exp:1", "--sizes")
    preds = _parsed(parse_predictions, args.predictions or "exp", "--predictions")
    loads = np.array(_floats(args.lams, "--lams"))
    Cs = _floats(args.Cs, "--Cs")
    if np.any(loads <= 0) or np.any(loads >= 1):
        raise _bad("--lams", "every load must be in (0, 1)")
    if any(not (c > 0 and np.isfinite(c)) for c in Cs):
        raise _bad("--Cs", "every C must be a finite number > 0")
    n = args.simulate or 100_000
    _check_sim_jobs(n)
    lams = loads / sizes.mean
    data = fig8_data(lams, Cs, sizes, preds, n_jobs=n, seed=args.seed)
    title = (f"TRAIL (SPRPT, limited preemption): sizes {sizes.spec}, predictions "
             f"{preds.spec}, {n} jobs/point, seed {args.seed}")
    plot_fig8(data, args.plot_fig8, title)
    doc = {"figure": str(args.plot_fig8), "sizes": sizes.spec, "predictions": preds.spec,
           "n_jobs": n, "seed": args.seed,
           **{k: np.asarray(v).tolist() for k, v in data.items()}}
    lines = [f"wrote {args.plot_fig8} (seed {args.seed})",
             f"{'C':>5} {'lam':>5} {'formula':>9} {'sim':>9} {'se':>7} {'z':>6} "
             f"{'mean_mem':>9} {'peak_mem':>9}"]
    for i, C in enumerate(data["Cs"]):
        for j, lam in enumerate(data["lams"]):
            f, s, se = data["formula"][i, j], data["sim"][i, j], data["se"][i, j]
            lines.append(f"{C:5.2f} {lam:5.2f} {f:9.4f} {s:9.4f} {se:7.4f} {(s - f) / se:6.2f} "
                         f"{data['mean_memory'][i, j]:9.3f} {data['peak_memory'][i, j]:9.2f}")
    emit(args, doc, "\n".join(lines))
    return 0


def _errata(args: argparse.Namespace) -> int:
    from kvopt.report.errata import errata_markdown

    check_output_file(args.errata, "--errata")
    _check_sim_jobs(args.simulate)
    text = errata_markdown(n_sim=args.simulate, seed=args.seed)
    atomic_write_text(args.errata, text + "\n")
    if args.json:
        write_stdout(json.dumps({"errata": str(args.errata), "n_sim": args.simulate,
                                 "seed": args.seed}) + "\n")
    else:
        print(text)
    return 0


def run(args: argparse.Namespace) -> int:
    """Execute ``kvopt queueing``: 0 on success; a bad argument raises
    :class:`~kvopt.core.errors.UsageError` naming the flag (exit 2) before any computation."""
    from kvopt.queueing.distributions import parse_sizes
    from kvopt.queueing.predictions import parse_predictions
    from kvopt.queueing.simulator import simulate_queue
    from kvopt.queueing.soap import SoapModel, check_policy

    if args.simulate < 0:
        raise _bad("--simulate", f"N must be >= 0, got {args.simulate}")
    if args.plot_fig8:
        return _fig8(args)
    if args.errata:
        return _errata(args)
    if not args.policy:
        raise _bad("POLICY", "missing (or use --plot-fig8 OUT.png / --errata OUT.md)")
    if args.load is None:
        raise _bad("--load", "--load RHO is required")
    if not (0 < args.load < 1):
        raise _bad("--load", f"rho must be in (0, 1), got {args.load:g}")
    if not args.sizes:
        raise _bad("--sizes", "--sizes SPEC is required (e.g. exp:1)")
    _check_sim_jobs(args.simulate)
    try:
        policy, C = check_policy(args.policy, args.C)
    except UsageError as exc:  # names `policy` or `C`
        flag = "--C" if exc.field == "C" else "POLICY"
        raise _bad(flag, _reason(exc)) from None
    if args.simulate and policy == "trail-printed":
        raise _bad("POLICY", "trail-printed is a formula only; simulate trail")
    Cout = C if policy in ("trail", "trail-printed") else None
    sizes = _parsed(parse_sizes, args.sizes, "--sizes")
    preds = _parsed(parse_predictions, args.predictions, "--predictions")
    xr = _floats(args.given, "--given") if args.given else None
    if xr is not None and (len(xr) != 2 or min(xr) < 0):
        raise _bad("--given", "expected X,R with X, R >= 0")
    xs = np.array(_floats(args.per_size, "--per-size")) if args.per_size else None
    if xs is not None and np.any(xs < 0):
        raise _bad("--per-size", "sizes must be >= 0")
    # every argument is valid: from here on an exception is an internal error
    lam = args.load / sizes.mean
    model = SoapModel(sizes, preds, lam)
    mean = model.mean_response(policy, Cout)
    doc: dict[str, Any] = {"policy": policy, "C": Cout, "sizes": sizes.spec,
                           "predictions": preds.spec, "load": args.load, "lam": lam,
                           "mean_response": mean}
    lines = [f"policy {policy}" + (f" (C={Cout:g})" if Cout is not None else "")
             + f"  sizes {sizes.spec}  predictions {preds.spec}  load {args.load:g} "
             f"(lam {lam:.6g})", f"mean_response (formula)   {mean:.6f}"]
    if xr is not None:
        v = float(model.response_given(xr[0], xr[1], policy, Cout)[0])
        doc["given"] = {"x": xr[0], "r": xr[1], "mean_response": v}
        lines.append(f"E[T(x={xr[0]:g}, r={xr[1]:g})]        {v:.6f}")
    if xs is not None:
        ts = model.response_given_size(xs, policy, Cout)
        doc["per_size"] = [{"x": float(a), "mean_response": float(b)}
                           for a, b in zip(xs, ts, strict=True)]
        lines += [f"E[T(x={a:g})]{' ' * max(1, 14 - len(f'{a:g}'))}{b:.6f}"
                  for a, b in zip(xs, ts, strict=True)]
    if args.simulate:
        s = simulate_queue(policy, lam, sizes, preds, Cout, n_jobs=args.simulate, seed=args.seed)
        lo, hi = s.ci()
        doc["simulation"] = s.to_dict() | {"seed": args.seed, "z": (s.mean_response - mean)
                                           / s.se if s.se > 0 else None}
        lines.append(f"mean_response (simulated) {s.mean_response:.6f} +- {s.se:.6f} "
                     f"(95% CI [{lo:.4f}, {hi:.4f}], {s.n_jobs} jobs kept of {args.simulate}, "
                     f"seed {args.seed})")
        lines.append(f"memory (sum of ages)      mean {s.mean_memory:.4f}  peak "
                     f"{s.peak_memory:.4f}")
    emit(args, doc, "\n".join(lines))
    return 0
