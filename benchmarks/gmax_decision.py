"""GMAX per-decision time (seed 003 Fig. 9: "< 20 ms for thousands of requests").

One frame-boundary decision of :class:`kvopt.sim.gmax.GmaxPolicy` with ``N`` waiting
requests (mixed stream / deadline / compound SLOs, realistic lengths) and batch size ``B``:
the vectorized Analyze step (conditional-quantile length bound, achievable goodput,
feasibility, priority) over all N, the p-cutoff, the input-length sort of the candidates,
the best size-B window and the admission loop. Reference measured in the same run: a plain
sort-based selection on the same requests (the same priorities recomputed, then a full
``argsort`` and the top ``B``) -- what any priority scheduler pays. Prints the median and
p90 over ``--reps`` decisions and the ratio GMAX / reference (goal: GMAX < 20 ms).

Usage::

    python benchmarks/gmax_decision.py [--n 5000] [--batch 256] [--reps 200] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from kvopt import Instance
from kvopt.sim.engine import SimState
from kvopt.sim.gmax import GmaxPolicy


def make_state(n: int, B: int, seed: int) -> tuple[SimState, GmaxPolicy]:
    rng = np.random.default_rng(seed)
    s = rng.integers(10, 2000, n)
    o = rng.integers(10, 1000, n)
    kinds = rng.choice(np.array(["stream", "deadline", "compound"]), n)
    comp = kinds == "compound"
    inst = Instance(
        memory=int((s + o).sum()), arrival=np.zeros(n, dtype=np.int64), prompt=s, output=o,
        max_batch=B, slo_kind=kinds.tolist(),
        ttft_slo=np.where(kinds == "stream", 20.0, np.nan),
        tbt_slo=np.where(kinds == "stream", 1.5, np.nan),
        deadline=np.where(kinds == "deadline", 3000.0, np.where(comp, 6000.0, np.nan)),
        group=np.where(comp, np.arange(n) % 200, -1),
        stage=np.where(comp, (np.arange(n) // 200) % 3, 0))
    st = SimState(inst, np.random.default_rng(seed), B)
    st.is_waiting[:] = True
    st.arrived = n
    pol = GmaxPolicy("gmax", o * np.exp(rng.normal(0, 0.5, n)))
    pol.reset(st)
    return st, pol


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=5000, help="waiting requests (default 5000)")
    ap.add_argument("--batch", type=int, default=256, help="batch size B (default 256)")
    ap.add_argument("--reps", type=int, default=200, help="timed decisions (default 200)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    st, pol = make_state(args.n, args.batch, args.seed)
    ids = np.flatnonzero(st.is_waiting)
    g = np.zeros(ids.size, dtype=np.int64)

    def gmax_decision() -> int:
        pol.next_frame = st.t  # every call is a frame boundary: full re-selection
        admit = pol.decide(st).admit
        return 0 if admit is None else int(admit.size)

    def reference() -> int:
        prio, _, _ = pol.analyze(st, ids, g)
        return int(np.argsort(-prio, kind="stable")[: args.batch].size)

    for f in (gmax_decision, reference):  # warm-up
        f()
    times: dict[str, list[float]] = {"gmax": [], "reference": []}
    for _ in range(args.reps):  # interleaved, so load changes hit both
        for name, f in (("gmax", gmax_decision), ("reference", reference)):
            t0 = time.perf_counter()
            f()
            times[name].append(1e3 * (time.perf_counter() - t0))
    med = {k: float(np.median(v)) for k, v in times.items()}
    p90 = {k: float(np.percentile(v, 90)) for k, v in times.items()}
    admitted = gmax_decision()
    print(f"seed {args.seed}; N = {args.n} waiting, B = {args.batch}, {args.reps} decisions each;"
          f" GMAX admitted {admitted}")
    print(f"GMAX decision       median {med['gmax']:.2f} ms   p90 {p90['gmax']:.2f} ms"
          f"   (goal < 20 ms: {'met' if med['gmax'] < 20 else 'NOT met'})")
    print(f"sort-based reference median {med['reference']:.2f} ms   p90 "
          f"{p90['reference']:.2f} ms")
    print(f"ratio GMAX / reference (median): {med['gmax'] / med['reference']:.2f}")


if __name__ == "__main__":
    main()
