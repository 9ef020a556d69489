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

Usage::

    python benchmarks/sim_throughput.py                  # >= 1e6 requests (several minutes)
    python benchmarks/sim_throughput.py --min-requests 100000 --ref-n 300   # quick look
"""

from __future__ import annotations

import argparse
import sys
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--min-requests", type=int, default=1_000_000)
    ap.add_argument("--ref-n", type=int, default=2000, help="prefix size for the reference")
    ap.add_argument("--policies", default="mcsf,fcfs")
    ap.add_argument("--step-times", default="unit,a100-llama2-70b-tp2")
    args = ap.parse_args(argv)

    inst = tiled_trace(args.min_requests)
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
