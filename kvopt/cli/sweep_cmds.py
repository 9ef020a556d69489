"""``kvopt sweep``: a spec file (or generator flags) on Dask, results in a resumable SQLite db.

Forms::

    kvopt sweep SPEC.toml --db results.sqlite [--scheduler tcp://HOST:PORT | --workers N]
    kvopt sweep export --db results.sqlite --csv FILE [--metrics a,b]
    kvopt sweep --generator model1 --seeds 0:10 --policies mcsf --out DIR [--db FILE]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from kvopt.cli.common import (
    add_json_argument,
    add_solve_time_limit,
    check_input_file,
    check_output_dir,
    check_output_file,
    emit,
    float_in,
    int_at_least,
)
from kvopt.core.errors import UsageError
from kvopt.core.generators import GENERATORS
from kvopt.sweep.output import write_sweep
from kvopt.sweep.run import SweepSpec, run_spec
from kvopt.sweep.spec import SpecError, check_spec, expand_tasks, load_spec, parse_seeds
from kvopt.sweep.store import ResultStore

#: Flags of the generator form (not allowed with a spec file).
_FLAG_FORM = ("generator", "seeds", "policies", "solver", "solve_time_limit", "param", "out",
              "preemption")


#: The sub-commands this module registers and their one-line help (``kvopt --help`` lists
#: them without building their parsers).
COMMANDS = {
    "sweep": ("run a sweep spec (policies x solvers x instances x seeds) on Dask into a "
              "resumable SQLite database"),
}


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Register ``sweep``."""
    from kvopt.mip.backends import backend_names

    p = sub.add_parser(
        "sweep", help=COMMANDS["sweep"],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="kvopt sweep SPEC.toml --db results.sqlite [--scheduler tcp://HOST:PORT | "
        "--workers N]\n  runs every task of the spec not yet in the database (a LocalCluster "
        "of N workers by\n  default, 0: in-process; or an existing Dask scheduler), recording "
        "each result as it\n  arrives: re-running resumes; a task's failure (livelock, solver "
        "refusal, exception)\n  is recorded with its status and the sweep goes on.\n"
        "kvopt sweep export --db results.sqlite --csv FILE\n  writes one CSV line per task.\n"
        "kvopt sweep --generator G --seeds A:B --policies P,Q [--solver S] --out DIR\n"
        "  the flag form: a one-entry spec; writes rows.csv, summary.md, manifest.json to DIR\n"
        "  (results also kept in --db, default DIR/results.sqlite).")
    p.add_argument("spec", metavar="SPEC", nargs="?", default=None,
                   help="sweep spec (TOML), or 'export'")
    p.add_argument("--db", default=None, help="SQLite results database (created if missing)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS",
                   help="address of a running Dask scheduler, e.g. tcp://127.0.0.1:8786")
    p.add_argument("--workers", type=int_at_least(0, 1024), default=None,
                   help="LocalCluster worker processes (default 2; 0: in this process)")
    p.add_argument("--task-time-limit", type=float_in(0, lo_open=True), default=None,
                   metavar="S", help="seconds a task may run before it is killed and recorded "
                   "as status 'timeout' (default: the spec's task_time_limit, 600; a solver "
                   "task gets at least its time limit + 60)")
    p.add_argument("--retry-errors", action="store_true",
                   help="re-run tasks recorded with status 'error' (lost workers, bugs)")
    p.add_argument("--csv", default=None, help="export: CSV file to write")
    p.add_argument("--metrics", default=None,
                   help="export: comma-separated metric columns (default: the spec's)")
    g = p.add_argument_group("flag form (instead of SPEC)")
    g.add_argument("--generator", choices=sorted(GENERATORS), default=None,
                   help="instance generator (default model1)")
    g.add_argument("--seeds", default=None, help="START:STOP (exclusive) or a comma list "
                   "(default 0:10)")
    g.add_argument("--policies", default=None, help="comma-separated policy names (mcsf)")
    g.add_argument("--solver", default=None, choices=backend_names(),
                   help="MIP backend for OPT (omit to skip)")
    add_solve_time_limit(g, None, "seconds for each MIP solve (default 10)")
    g.add_argument("--param", action="append", default=None, metavar="KEY=NUMBER",
                   help="generator parameter, e.g. --param n=12 (repeatable)")
    g.add_argument("--out", default=None, help="output folder")
    g.add_argument("--preemption", default=None, choices=("restart", "recompute", "swap"),
                   help="preemption mode of every policy (default: each policy's); the ratio "
                   "to the MIP optimum then reads 'vs non-preemptive OPT' (in a spec file: "
                   "params = { preemption = ... })")
    add_json_argument(p)
    p.set_defaults(func=run)


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


def check_scheduler(address: str | None) -> None:
    """``--scheduler`` must look like ``tcp://HOST:PORT`` (or ``HOST:PORT``).

    Examples
    --------
    >>> check_scheduler("tcp://127.0.0.1:8786")
    >>> check_scheduler("localhost")
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid --scheduler: expected tcp://HOST:PORT, got 'localhost'
    """
    if address is None:
        return
    if not re.fullmatch(r"((tcp|tls|inproc|ucx|ws|wss)://)?[^\s:/]+:\d{1,5}", address):
        raise UsageError("--scheduler", f"expected tcp://HOST:PORT, got {address!r}")


_FLAG_OF_KEY = (("instances[0].params", "--param"), ("policies", "--policies"),
                ("solvers", "--solver"), ("seeds", "--seeds"), ("instances", "--generator"))


def _flag_spec(args: argparse.Namespace) -> SweepSpec:
    policies = [x.strip() for x in (args.policies or "mcsf").split(",") if x.strip()]
    if not policies and args.solver is None:
        raise UsageError("--policies", "nothing to evaluate: give policies or --solver")
    try:
        seeds = parse_seeds(args.seeds or "0:10", "seeds")
    except SpecError as exc:
        raise UsageError("--seeds", exc.reason) from None
    spec = SweepSpec(args.generator or "model1", seeds, policies, args.solver,
                     args.solve_time_limit if args.solve_time_limit is not None else 10.0,
                     _params(args.param or []), preemption=args.preemption)
    try:
        check_spec(spec.to_spec())
    except SpecError as exc:
        flag = next((f for k, f in _FLAG_OF_KEY if exc.field.startswith(k)), "--generator")
        if exc.field.endswith(".preemption"):
            flag = "--preemption"
        if flag == "--param":
            name = exc.field.removeprefix("instances[0].params").lstrip(".")
            flag = f"--param {name}" if name else flag
        raise UsageError(flag, exc.reason) from None
    return spec


def run(args: argparse.Namespace) -> int:
    """Dispatch: export, a spec file, or the flag form."""
    check_scheduler(args.scheduler)
    if args.scheduler is not None and args.workers is not None:
        raise UsageError("--workers", "not with --scheduler (the cluster has its own workers)")
    if args.spec == "export":
        return _export(args)
    for flag in ("csv", "metrics"):
        if getattr(args, flag) is not None:
            raise UsageError(f"--{flag}", "only with 'kvopt sweep export'")
    if args.spec is None:
        return _run_flags(args)
    given = [f for f in _FLAG_FORM if getattr(args, f) is not None]
    if given:
        flag = "--" + given[0].replace("_", "-")
        raise UsageError(flag, "belongs to the flag form; with a spec file put it in the spec")
    if args.db is None:
        raise UsageError("--db", "required with a spec file (the results database)")
    check_input_file(args.spec, "SPEC")
    check_output_file(args.db, "--db")
    spec = load_spec(args.spec)
    check_spec(spec)
    workers = 2 if args.workers is None else args.workers
    outcome = run_spec(spec, args.db, scheduler=args.scheduler, workers=workers,
                       progress=not args.json, retry_errors=args.retry_errors, check=False,
                       task_time_limit=args.task_time_limit)
    return _finish(args, spec_tasks={t.key for t in expand_tasks(spec)}, outcome=outcome.to_dict(),
                   metric=spec.metrics[0] if spec.metrics else "total_latency")


def _finish(args: argparse.Namespace, *, spec_tasks: set[str], outcome: dict[str, Any],
            metric: str) -> int:
    from kvopt.report.writers import table
    from kvopt.sweep.summary import summarize, summary_table, with_ratios

    with ResultStore(args.db, readonly=True) as store:
        rows = [r for r in store.rows() if r["task"] in spec_tasks]
    summary = summarize(with_ratios(rows), metric)
    text = (f"{outcome['ran']} tasks run, {outcome['skipped']} already recorded "
            f"({outcome['total']} in the spec) in {outcome['wall_s']:.1f} s; statuses this run: "
            + (", ".join(f"{k} {v}" for k, v in outcome["statuses"].items()) or "none") + "\n"
            + table(*summary_table(summary)).rstrip("\n"))
    emit(args, {"outcome": outcome, "summary": summary, "db": args.db}, text)
    return _exit_code(rows)


def _exit_code(rows: list[dict[str, Any]]) -> int:
    errors = sum(r["status"] == "error" for r in rows)
    invalid = sum(r.get("valid") is False for r in rows)
    if errors or invalid:
        print(f"kvopt sweep: {errors} task(s) failed with an internal error, {invalid} "
              "schedule(s) failed validation (see kvopt sweep export)", file=sys.stderr)
        return 1
    return 0


def _export(args: argparse.Namespace) -> int:
    import json

    from kvopt.core.io import atomic_write_text
    from kvopt.sweep.summary import export_csv

    for f in (*_FLAG_FORM, "retry_errors", "task_time_limit"):
        v = getattr(args, f)
        if v is not None and v is not False:
            raise UsageError("--" + f.replace("_", "-"), "not an option of 'kvopt sweep export'")
    if args.db is None:
        raise UsageError("--db", "required: the sweep database to export")
    if args.csv is None:
        raise UsageError("--csv", "required: the CSV file to write")
    check_input_file(args.db, "--db")
    check_output_file(args.csv, "--csv", (args.db,))
    with ResultStore(args.db, readonly=True) as store:
        rows = store.rows()
        last = store.conn.execute("SELECT spec FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    if args.metrics is not None:
        metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
        from kvopt.core.metrics import Metrics

        for m in metrics:
            if m not in Metrics.__dataclass_fields__:
                raise UsageError("--metrics", f"unknown metric {m!r} (choose from "
                                 f"{', '.join(sorted(Metrics.__dataclass_fields__))})")
    else:
        metrics = json.loads(last[0]).get("metrics", []) if last else []
    atomic_write_text(Path(args.csv), export_csv(rows, metrics))
    emit(args, {"rows": len(rows), "csv": args.csv}, f"{len(rows)} rows -> {args.csv}")
    return 0


def _run_flags(args: argparse.Namespace) -> int:
    if args.out is None:
        raise UsageError("--out", "required with the flag form (or give a SPEC file)")
    if args.retry_errors:
        raise UsageError("--retry-errors", "only with a spec file")
    spec = _flag_spec(args)
    check_output_dir(args.out, "--out")
    if args.db is not None:
        check_output_file(args.db, "--db")
    workers = 2 if args.workers is None else args.workers
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    db = args.db if args.db is not None else str(out / "results.sqlite")
    from kvopt.sweep.run import run_sweep

    rows = run_sweep(spec, workers=workers, progress=not args.json, db=db,
                     scheduler=args.scheduler, task_time_limit=args.task_time_limit)
    command = "kvopt " + " ".join(sys.argv[1:]) if sys.argv[0].endswith("kvopt") else None
    summary, table = write_sweep(out, rows, spec, workers=workers, command=command)
    emit(args, {"summary": summary, "out": str(args.out), "db": db}, table)
    return _exit_code(rows)
