"""Issue 22, figure 2: subset-latency cuts on the interval LP, where OPT is proven.

**The cuts.** For a set ``S`` of requests let ``OPT(S)`` be the optimum total latency of the
instance that keeps only ``S`` (same memory, arrivals, prompts and outputs). Every feasible
schedule ``y`` of the whole instance, restricted to ``S``, is feasible for that instance: its
memory rows only lose terms (each running request holds ``s + age >= 0`` tokens), and every
arrival and length stays. So

    sum_{j in S} (C_j - a_j) >= OPT(S)        for every feasible schedule of the instance.

In the time-indexed model the latency of a group's requests is ``sum_k c[g, k] x[g, k]``
(``c = k + o_g - a_g``), so with ``S`` a union of whole groups the row
``sum_{g in S} sum_k c[g, k] x[g, k] >= OPT(S)`` holds for every kept schedule (the model of
:func:`kvopt.mip.bounds.intervals.interval_model` with windows from OPT keeps every optimal
one). The interval LP with such rows is therefore ``<= OPT``, which the script asserts.
``OPT(S)`` comes from :func:`kvopt.mip.search.statespace.state_search` started above the
serial schedule's latency; a set whose optimum is not proven in ``--sub-time`` gets no row.

**Why they might help.** The interval LP clears the smaller requests faster than any
schedule (``reports/mip/README.md`` sections 9.4, 10.10): it mixes shifted fractional copies
of their ramps, so a set of requests can get a total latency in the LP below what the set
needs even alone. A row for ``S`` cuts exactly that.

**Separation.** Per round, the candidate sets are every run of consecutive groups (2 up to
``--max-size`` requests) in the order of the LP's mean completions, plus ``--random`` random
sets of 2 up to ``--max-size`` requests (a seeded generator); the 40 most violated join the
LP, and it is solved again, for ``--rounds`` rounds or until no candidate is violated.

Prints per instance OPT, the interval LP, the LP with the cuts, the share of the LP's
distance to OPT they close, the rows, the sets whose optimum was sought (those not proven in
``--sub-time``, which get no row, in brackets) and the wall seconds.
Instances: the frontier instances whose optimum the state search proved
(``reports/mip/frontier_cpu_v2.json``, as in ``mip_count_cuts.py``), or, given a folder,
paper-scale instances with windows from their certificates (``reports/mip/paper_scale``;
then the best schedule stands for OPT and the LPs are solved in the row-differenced form).

Runs of ``reports/mip/README.md`` section 10.24::

    PYTHONPATH=. python benchmarks/mip_subset_cuts.py reports/mip/frontier_cpu_v2.json \\
        --n 12 14 16 --max-size 6 8 10 > reports/mip/subset_cuts.txt
    PYTHONPATH=. python benchmarks/mip_subset_cuts.py reports/mip/paper_scale \\
        --only model1-seed1 model2-seed2 --max-size 8 10 --rounds 2 --sub-time 10 \\
        > reports/mip/subset_cuts_paper.txt
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))

#: Rows added per round at most (the most violated first).
PER_ROUND = 40


def subset_opt(instance: Any, requests: list[int], cache: dict[Any, float | None],
               seconds: float) -> float | None:
    """``OPT(S)`` of the requests ``requests`` of ``instance`` (module docstring), or ``None``
    when the state search does not prove it within ``seconds``; cached by the multiset of
    (arrival, prompt, output).

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    >>> subset_opt(inst, [0, 1, 2], {}, 10.0), subset_opt(inst, [0, 2], {}, 10.0)
    (9.0, 7.0)
    """
    from kvopt.core.instance import Instance
    from kvopt.mip.search.starts import serial_starts
    from kvopt.mip.search.statespace import state_search

    key = tuple(sorted((int(instance.arrival[i]), int(instance.prompt[i]),
                        int(instance.output[i])) for i in requests))
    if key not in cache:
        a, p, o = (np.array([k[f] for k in key], dtype=np.int64) for f in range(3))
        sub = Instance(memory=instance.memory, arrival=a.tolist(), prompt=p.tolist(),
                       output=o.tolist())
        upper = float(np.sum(serial_starts(sub) + o - a))
        res = state_search(sub, upper=upper, time_limit=seconds)
        cache[key] = (None if res.status != "optimal"
                      else upper if res.objective is None else float(res.objective))
    return cache[key]


def with_subset_rows(data: Any, cuts: list[tuple[frozenset[int], float]]) -> Any:
    """``data`` plus the rows ``-sum_{g in S} c[g, :] x[g, :] <= -OPT(S)`` (``S`` a set of
    group indices)."""
    from mip_count_cuts import with_le_rows

    cols = [np.flatnonzero(np.isin(data.col_group, sorted(groups))) for groups, _ in cuts]
    return with_le_rows(data, cols, [-data.c[js] for js in cols], [-v for _, v in cuts],
                        "subset")


def group_latency(data: Any, x: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per group, the latency of its requests in the LP solution ``x``."""
    lat = np.zeros(len(data.groups))
    np.add.at(lat, data.col_group, data.c * x)
    return lat


def candidate_sets(data: Any, lat: NDArray[np.float64], max_size: int, n_random: int,
                   rng: np.random.Generator) -> set[frozenset[int]]:
    """Sets of groups of 2 to ``max_size`` requests (module docstring: runs in the order of
    the LP's mean completions, from the groups' LP latency ``lat``, and random sets)."""
    sizes = np.array([g.size for g in data.groups], dtype=np.int64)
    order = np.argsort(lat / sizes, kind="stable")
    out: set[frozenset[int]] = set()
    for first in range(order.size):
        total = 0
        for last in range(first, order.size):
            total += int(sizes[order[last]])
            if total > max_size:
                break
            if total >= 2:
                out.add(frozenset(order[first:last + 1].tolist()))
    for _ in range(n_random):
        k = int(rng.integers(2, max_size + 1))
        picked = rng.permutation(order.size)
        keep = picked[np.cumsum(sizes[picked]) <= k]
        if sizes[keep].sum() >= 2:
            out.add(frozenset(keep.tolist()))
    return out


def subset_cut_bound(instance: Any, upper: float, max_size: int, rounds: int,
                     n_random: int, seed: int, sub_seconds: float,
                     paper: bool = False) -> dict[str, Any]:
    """The interval LP (windows from ``upper``) and the same LP after up to ``rounds`` rounds
    of subset-latency rows (module docstring; ``paper``: how the LPs are solved,
    :func:`mip_count_cuts.lp_solution`).

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> inst = Instance(memory=12, arrival=[0] * 6, prompt=[2, 2, 2, 3, 3, 3],
    ...                 output=[5, 3, 2, 3, 7, 7])
    >>> opt = subset_opt(inst, list(range(6)), {}, 10.0)
    >>> r = subset_cut_bound(inst, opt, 5, 3, 20, 0, 10.0)   # sets of up to 5 of the 6
    >>> opt, round(r["lp"], 2), round(r["bound"], 2)
    (47.0, 44.64, 47.0)
    """
    from mip_count_cuts import lp_solution

    from kvopt.mip.bounds.intervals import interval_model

    data = interval_model(instance, upper=upper)
    assert data.col_group is not None
    rng = np.random.default_rng(seed)
    base, x = lp_solution(data, paper)
    cache: dict[Any, float | None] = {}
    cuts: list[tuple[frozenset[int], float]] = []
    value = base
    for _ in range(rounds):
        lat = group_latency(data, x)
        found = []
        have = {s for s, _ in cuts}
        for S in candidate_sets(data, lat, max_size, n_random, rng) - have:
            gs = sorted(S)
            v = subset_opt(instance, [int(i) for g in gs for i in data.groups[g]], cache,
                           sub_seconds)
            if v is not None and (excess := v - float(lat[gs].sum())) > 1e-4:
                found.append((excess, gs, v))
        if not found:
            break
        found.sort(key=lambda t: (-t[0], t[1]))
        cuts += [(frozenset(s), v) for _, s, v in found[:PER_ROUND]]
        value, x = lp_solution(with_subset_rows(data, cuts), paper)
    return {"lp": base, "bound": value, "cuts": cuts, "tried": len(cache),
            "unproven": sum(v is None for v in cache.values()), "data": data}


def main(argv: list[str] | None = None) -> int:
    from mip_staged_lp import add_record_arguments, frontier_or_paper_jobs

    from kvopt.cli.common import float_in, int_at_least

    p = argparse.ArgumentParser(
        prog="mip_subset_cuts.py",
        description="Subset-latency cuts on the interval LP (module docstring), on the "
                    "frontier instances with proven optima, or on paper-scale instances.")
    add_record_arguments(p, default_n=12)
    p.add_argument("--max-size", type=int_at_least(2), nargs="+", default=[8],
                   help="largest set, in requests; one run per value (default 8)")
    p.add_argument("--rounds", type=int_at_least(1), default=6,
                   help="cut rounds at most (default 6)")
    p.add_argument("--random", type=int_at_least(0), default=300,
                   help="random candidate sets per round (default 300)")
    p.add_argument("--seed", type=int_at_least(0), default=0,
                   help="seed of the random sets (default 0)")
    p.add_argument("--sub-time", type=float_in(0, lo_open=True), default=30.0,
                   help="seconds per sub-instance optimum (default 30)")
    args = p.parse_args(argv)
    paper, jobs = frontier_or_paper_jobs(p, args.records, args.only, args.n, args.seeds,
                                         "{n} | {seed}")
    print(f"# benchmarks/mip_subset_cuts.py {' '.join(sys.argv[1:] if argv is None else argv)}"
          f" (seed {args.seed})")
    print(("| instance | best schedule" if paper else "| n | seed | OPT")
          + " | interval LP | max set | + subset rows | closed | rows | sets tried (unproven) | "
          "wall s |")
    print("|---|---|---|---|---|---|---|---|---|" + ("" if paper else "---|"))
    for size in args.max_size:
        for name, inst, o in jobs:
            t0 = time.perf_counter()
            r = subset_cut_bound(inst, o, size, args.rounds, args.random, args.seed,
                                 args.sub_time, paper)
            if r["bound"] > o + 1e-6:
                raise RuntimeError(f"{name}: {r['bound']} above {o}")
            closed = (r["bound"] - r["lp"]) / (o - r["lp"]) if o > r["lp"] + 1e-9 else 1.0
            print(f"| {name} | {o:.0f} | {r['lp']:.2f} | {size} | {r['bound']:.2f} | "
                  f"{100 * closed:.0f} % | {len(r['cuts'])} | {r['tried']} ({r['unproven']}) | "
                  f"{time.perf_counter() - t0:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
