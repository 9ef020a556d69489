"""Simulator throughput: simulated requests per wall-clock minute, and speed-up over the
plain per-slot reference simulator (``tests/sim/reference.py``) measured in the same run.

Workload: the Azure LLM conversation trace (``instances/traces/azure_conv_2023.csv``,
19,366 requests) tiled end to end (tile ``k`` shifted by ``k`` times the trace span) to at
least ``--min-requests`` requests, M = 16492. Policies MC-SF and vLLM-like FCFS, step times
``unit`` and ``a100-llama2-70b-tp2``. The engine is timed without the validator (its time is
printed separately for the first configuration).

The per-slot reference visits every slot and recomputes everything in plain Python, so it is
run on the first ``--ref-n`` requests only; the speed-up compares engine and reference on that
same prefix, and the reference's rate is printed alongside.

With ``--cli`` (or ``--cli-only``) the same tiled trace is written as a CSV and
``python -m kvopt simulate`` is timed end to end (start-up, reading the trace, the simulation,
the validator, the metrics) for the configurations of :data:`CLI_CONFIGS`; ``--baseline REV``
runs the ``*``-marked ones (MC-SF, restart) also with the ``kvopt`` package of git revision
``REV`` (``git archive``), in the same run, for a before / after comparison.

Usage::

    python benchmarks/sim_throughput.py                  # >= 1e6 requests (several minutes)
    python benchmarks/sim_throughput.py --min-requests 100000 --ref-n 300   # quick look
    python benchmarks/sim_throughput.py --cli-only --baseline b7e02ee   # the CLI, before/after
    python benchmarks/sim_throughput.py --cli-only --only noise --min-requests 19366 \
        --baseline 7aa92de       # noisy MC-SF and Amin on the trace itself, before / after
    python benchmarks/sim_throughput.py --cli-only --only trail --min-requests 19366 \
        --baseline d1a03ba       # TRAIL (refined ranks) on the trace itself, before / after
    python benchmarks/sim_throughput.py --cli-only --only tie --min-requests 19366 \
        --baseline d1a03ba       # TIE, the same
    python benchmarks/sim_throughput.py --cli-only --only gmax --min-requests 19366 \
        --baseline 7350c99       # GMAX, the same
    python benchmarks/sim_throughput.py --cli-only --only wait --min-requests 19366 \
        --baseline 1fd350e       # WAIT, the same
    python benchmarks/sim_throughput.py --cli-only --only gsa --min-requests 19366 \
        --baseline 6263725       # GSA, the same
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from kvopt import Instance, check_schedule, load_instance  # noqa: E402
from kvopt.sim import simulate  # noqa: E402
from tests.sim.reference import reference_simulate  # noqa: E402


def tiled_trace(min_requests: int) -> Instance:
    """The Azure conversation trace repeated back to back until it has ``min_requests``."""
    base = load_instance(ROOT / "instances" / "traces" / "azure_conv_2023.csv")
    reps = -(-min_requests // base.n)
    span = float(base.arrival.max()) + 1.0
    arrival = np.concatenate([base.arrival + k * span for k in range(reps)])
    return Instance(memory=base.memory, arrival=arrival, prompt=np.tile(base.prompt, reps),
                    output=np.tile(base.output, reps), time_unit="second",
                    name=f"azure_conv_2023x{reps}")


def write_trace(inst: Instance, path: Path) -> None:
    """``inst`` as a Vidur-format trace CSV (``arrived_at,num_prefill_tokens,...``)."""
    rows = np.column_stack([inst.arrival, inst.prompt, inst.output])
    with path.open("w") as f:
        f.write("arrived_at,num_prefill_tokens,num_decode_tokens\n")
        np.savetxt(f, rows, fmt=["%.6f", "%d", "%d"], delimiter=",")


def export_revision(rev: str, dest: Path) -> Path:
    """The ``kvopt`` package of git revision ``rev`` unpacked under ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    tar = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "kvopt"], check=True,
                         capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return dest


def time_cli(trace: Path, args: list[str], pythonpath: Path | None) -> tuple[float, dict]:
    """Wall seconds of ``python -m kvopt simulate TRACE ARGS --json`` (everything: start-up,
    reading the trace, the simulation, the validator, the metrics) and its JSON output."""
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "kvopt", "simulate", str(trace), *args,
                        "--no-progress", "--json"], capture_output=True, text=True, env=env,
                       cwd=str(pythonpath or ROOT))
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"kvopt simulate {' '.join(args)} failed: {r.stderr[-2000:]}")
    return wall, json.loads(r.stdout)


def cli_rows(inst: Instance, configs: list[tuple[str, list[str]]], baseline: str | None
             ) -> None:
    """Time ``kvopt simulate`` on ``inst`` for every configuration (and for the baseline
    revision first where it applies), in this one run."""
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "tiled.csv"
        write_trace(inst, trace)
        old = export_revision(baseline, Path(tmp) / "old") if baseline else None
        print(f"\nvia the CLI (python -m kvopt simulate {trace.name} ... --json; wall time "
              f"includes start-up, reading {inst.n:,} requests, the validator and metrics)")
        head = (f"{'code':12} {'configuration':70} {'wall s':>8} {'req/min':>12} "
                f"{'evictions':>10} {'decisions':>10}")
        print(head)
        print("-" * len(head))
        for label, args in configs:
            runs = [("before", old), ("after", None)] if (old is not None
                                                          and label.startswith("*")) else [
                ("after", None)]
            for code, path in runs:
                wall, doc = time_cli(trace, args, path)
                name = baseline[:10] if code == "before" and baseline else "this tree"
                print(f"{name:12} {label.lstrip('*'):70} {wall:8.1f} "
                      f"{inst.n / wall * 60:12,.0f} {doc.get('evictions', 0):10,} "
                      f"{doc.get('decisions', 0):10,}")


#: (label, arguments) of the CLI runs; a label starting with * also runs at ``--baseline``.
CLI_CONFIGS = [
    ("*mcsf (restart), unit", ["--policy", "mcsf"]),
    ("*mcsf (restart), a100-llama2-70b-tp2", ["--policy", "mcsf", "--step-time",
                                             "a100-llama2-70b-tp2"]),
    ("*mcsf, noise uniform:0.5, overflow=evict-smallest, a100-llama2-70b-tp2",
     ["--policy", "mcsf", "--noise", "uniform:0.5", "--option", "overflow=evict-smallest",
      "--step-time", "a100-llama2-70b-tp2"]),
    ("*amin, noise interval:0.5, a100-llama2-70b-tp2",
     ["--policy", "amin", "--noise", "interval:0.5", "--step-time", "a100-llama2-70b-tp2"]),
    ("vllm recompute, chunked prefill 512, blocks of 4, a100-llama2-70b-tp2",
     ["--policy", "vllm", "--preemption", "recompute", "--option", "batching=chunked",
      "--option", "block_size=4", "--step-time", "a100-llama2-70b-tp2"]),
    ("vllm recompute, prefill-only steps, blocks of 4, a100-llama2-70b-tp2",
     ["--policy", "vllm", "--option", "block_size=4", "--step-time", "a100-llama2-70b-tp2"]),
    ("fcfs recompute, a100-llama2-70b-tp2", ["--policy", "fcfs", "--preemption", "recompute",
                                             "--step-time", "a100-llama2-70b-tp2"]),
    ("*trail (C = 0.8, refined), recompute, a100-llama2-70b-tp2",
     ["--policy", "trail", "--preemption", "recompute", "--step-time", "a100-llama2-70b-tp2"]),
    ("*trail (C = 0.8, refined), restart, a100-llama2-70b-tp2",
     ["--policy", "trail", "--step-time", "a100-llama2-70b-tp2"]),
    ("*tie (log-t, adaptive beta), restart, a100-llama2-70b-tp2",
     ["--policy", "tie", "--step-time", "a100-llama2-70b-tp2"]),
    ("*gmax (quantile bounds, frame 50), restart, a100-llama2-70b-tp2",
     ["--policy", "gmax", "--step-time", "a100-llama2-70b-tp2"]),
    ("*wait (8 types, exact lengths), restart, a100-llama2-70b-tp2",
     ["--policy", "wait", "--step-time", "a100-llama2-70b-tp2"]),
    ("*gsa (base 2, first slice 1, pipeline), restart, a100-llama2-70b-tp2",
     ["--policy", "gsa", "--step-time", "a100-llama2-70b-tp2"]),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--min-requests", type=int, default=1_000_000)
    ap.add_argument("--ref-n", type=int, default=2000, help="prefix size for the reference")
    ap.add_argument("--policies", default="mcsf,fcfs")
    ap.add_argument("--step-times", default="unit,a100-llama2-70b-tp2")
    ap.add_argument("--cli", action="store_true",
                    help="also time `kvopt simulate` on the tiled trace (CLI_CONFIGS)")
    ap.add_argument("--cli-only", action="store_true", help="only the CLI timings")
    ap.add_argument("--only", default=None, metavar="TEXT",
                    help="only the CLI configurations whose label contains TEXT")
    ap.add_argument("--baseline", default=None, metavar="REV",
                    help="git revision whose kvopt also runs the *-marked CLI configurations "
                    "in this run (before / after)")
    args = ap.parse_args(argv)

    inst = tiled_trace(args.min_requests)
    if args.cli or args.cli_only:
        configs = [c for c in CLI_CONFIGS if args.only is None or args.only in c[0]]
        if not configs:
            ap.error(f"--only: no CLI configuration contains {args.only!r}")
        cli_rows(inst, configs, args.baseline)
        if args.cli_only:
            return 0
    prefix = inst.take(np.arange(args.ref_n))
    print(f"workload: {inst.name}, n = {inst.n:,}, M = {inst.memory}; reference prefix "
          f"n = {prefix.n}")
    header = (f"{'policy':6} {'step time':22} {'engine s':>9} {'req/min':>12} {'decisions':>10} "
              f"{'slots':>11} | {'ref s':>7} {'ref req/min':>11} {'eng s (prefix)':>14} "
              f"{'speed-up':>8}")
    print(header)
    print("-" * len(header))
    first = True
    for pol in args.policies.split(","):
        for stm in args.step_times.split(","):
            t0 = time.perf_counter()
            res = simulate(inst, pol, step_time=stm, validate=False)
            wall = time.perf_counter() - t0
            if first:
                t1 = time.perf_counter()
                ok = check_schedule(inst, res.schedule).ok
                print(f"(validator on the first schedule: ok={ok}, "
                      f"{time.perf_counter() - t1:.1f} s)")
                first = False
            rate = inst.n / wall * 60
            # reference and engine on the same prefix
            t0 = time.perf_counter()
            ref = reference_simulate(prefix, pol, step_time=stm)
            ref_wall = time.perf_counter() - t0
            t0 = time.perf_counter()
            small = simulate(prefix, pol, step_time=stm, validate=False)
            eng_small = time.perf_counter() - t0
            same = small.schedule.final_start(prefix).tolist() == ref.final_start(prefix).tolist()
            print(f"{pol:6} {stm:22} {wall:9.1f} {rate:12,.0f} {res.stats['decisions']:10,} "
                  f"{res.stats['slots']:11,} | {ref_wall:7.2f} {prefix.n / ref_wall * 60:11,.0f} "
                  f"{eng_small:14.3f} {ref_wall / eng_small:7.0f}x"
                  f"{'' if same else '  (schedules differ!)'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
