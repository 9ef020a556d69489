"""Issue 22, traces: the Lagrangian bound at block-LP multipliers against the bounds it
replaces, on windows of the Azure conversation trace (0.05 s slots), at equal time.

Per window (the first N requests of ``instances/traces/azure_conv_2023.csv``): the schedule
of MC-SF in volume order (the default solve's usual start on a trace, its TEL = ``UB``), the
SRPT fluid bound (what the default reported above ``n T = 2e7`` before), the plain Lagrangian
bound by subgradient ascent from zero for ``--seconds`` (what it reported below that size
where the interval LP does not fit; with this stop's scan to the last priced slot, ~10x faster
per step than before), and :func:`kvopt.mip.bounds.blocks.block_lagrangian_bound` for the same
``--seconds``. Each bound is printed with ``1 - bound / UB``, the certified gap it gives
MC-SF's schedule; the two Lagrangian runs are the same-run reference of each other.
Deterministic (no random choice).

Run of ``reports/mip/README.md`` section 10.17::

    PYTHONPATH=. python benchmarks/mip_trace_bounds.py > reports/mip/trace_bounds.txt
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "instances" / "traces" / "azure_conv_2023.csv"


def main(argv: list[str] | None = None) -> int:
    from kvopt.core.instance import load_instance
    from kvopt.core.limits import Deadline
    from kvopt.core.mcsf import mcsf_starts
    from kvopt.mip.bounds.blocks import block_lagrangian_bound, evaluation_work
    from kvopt.mip.bounds.combinatorial import fluid_bound
    from kvopt.mip.bounds.relaxations import lagrangian_bound
    from kvopt.mip.model.discretize import discretize

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--first", type=int, nargs="+", default=[200, 400, 1000, 2000])
    p.add_argument("--seconds", type=float, default=30.0)
    p.add_argument("--slot-seconds", type=float, default=0.05)
    args = p.parse_args(argv)
    if any(n < 2 for n in args.first) or not args.seconds > 0 or not args.slot_seconds > 0:
        p.error("--first >= 2, --seconds > 0 and --slot-seconds > 0")
    trace = load_instance(TRACE)
    print(f"# {' '.join(sys.argv)}")
    print(f"# windows {args.first}, {args.seconds:g} s per Lagrangian, "
          f"{args.slot_seconds:g} s slots")
    print("| first N | n T | evaluation work | UB (MC-SF, volume) | fluid (gap) | "
          "subgradient from 0 (gap, wall) | block LPs + subgradient (gap; blocks) |")
    print("|---|---|---|---|---|---|---|")
    for n in args.first:
        inst = discretize(trace.take(np.arange(min(n, trace.n))), args.slot_seconds)
        starts = mcsf_starts(inst, order="volume")
        ub = inst.tel_of_starts(starts)
        fl = fluid_bound(inst)
        t = time.monotonic()
        plain, _ = lagrangian_bound(inst, iterations=10**9, upper=ub,
                                    deadline=Deadline(args.seconds))
        plain_s = time.monotonic() - t
        t = time.monotonic()
        blk = block_lagrangian_bound(inst, starts, upper=ub, deadline=Deadline(args.seconds))
        blk_s = time.monotonic() - t
        blocks = ", ".join(f"{lv['block']} ({lv['seconds']:.1f} s"
                           + (")" if lv["status"] == "optimal" else ", not solved)")
                           for lv in blk.levels)
        print(f"| {inst.n} | {inst.n * inst.horizon:.3g} | {evaluation_work(inst, starts):.3g} "
              f"| {ub:.0f} | {fl:.0f} ({1 - fl / ub:.2%}) | {plain:.0f} ({1 - plain / ub:.2%}, "
              f"{plain_s:.0f} s) | {blk.value:.0f} ({1 - blk.value / ub:.2%}; {blocks}; "
              f"refine {blk.refine_s:.0f} s; {blk_s:.0f} s) |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
