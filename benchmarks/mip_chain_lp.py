"""Issue 22: the interval LP plus a chain flow over a lag-interval family (arc-time form).

The interval LP (:func:`kvopt.mip.bounds.intervals.interval_model`) keeps each slot in at most
one lag interval of a family ``S``: a time-indexed single machine. This script adds, for the
first family of :func:`~kvopt.mip.bounds.intervals.interval_families`, the *order* of its
members as a unit flow through a time-expanded graph (the arc-time-indexed form of
single-machine scheduling): a fractional solution must then be a convex combination of chains
of ``S`` in which each member starts at least its pairwise lag after the one before it.

**Validity.** Let ``S`` be a family: intervals ``I_i = [k_i + alpha_i, k_i + beta_i)`` with
``beta_i - alpha_j <= lag[i, j]`` (:func:`kvopt.mip.model.cpmodel.pair_lags`), pairwise
disjoint in every feasible schedule (module docstring of :mod:`kvopt.mip.bounds.intervals`).
Order ``S`` by the position of its intervals. For consecutive ``u`` before ``v`` the lag
disjunction gives ``k_v >= k_u + lag[u, v]`` or ``k_u >= k_v + lag[v, u]``; the second means
``k_u + alpha_u >= k_v + beta_v - alpha_u + alpha_u > k_v + alpha_v``, so ``u``'s interval
would start after ``v``'s ends, against the order. Hence ``k_v >= k_u + lag[u, v]``: every
schedule's starts of ``S`` form a chain. The flow: ready nodes ``R(h, t)`` ("``h`` may start
from slot ``t``") with wait arcs ``R(h, t) -> R(h, t + 1)`` and start arcs ``R(h, t) ->
(h, t)`` carrying the model's ``x[h, t]``; from a start node ``(g, k)`` the flow goes to
``R(h, max(0, k + lag[g, h]))`` for the next member ``h`` (not back to ``g`` itself when
``g`` is one request) or to the sink; one unit leaves the source into any ``R(h, t)``. A
schedule's chain is a path carrying its starts (copies of an aggregated group follow each
other, which the family's condition ``beta - alpha <= lag[i, i']`` allows), arcs past the
horizon are never used, and clamping ``R`` at 0 only adds paths. So every feasible schedule
extends to a feasible point with the same objective, and the LP is ``<= OPT``.
``tests/mip/test_chain_lp_benchmark.py`` checks it against brute-force optima.

Three sets of instances (the records of ``reports/mip/``):

- ``--frontier RECORDS --n N ...``: the frontier instances the state search proved
  (``frontier_cpu_v2.json``, windows from OPT); the share of the LP-to-OPT gap closed;
- ``--split RECORDS``: the n = 24 / 36 paper-like instances of section 9
  (``gap_split_large.json``, windows from their best schedule); the certified gaps;
- ``--paper DIR --only NAMES``: paper-scale instances and their committed certificates.

Examples (the runs of ``reports/mip/chain_lp_*.txt``)::

    PYTHONPATH=. python benchmarks/mip_chain_lp.py --frontier \\
        reports/mip/frontier_cpu_v2.json --n 12 14 16 18
    PYTHONPATH=. python benchmarks/mip_chain_lp.py --split reports/mip/gap_split_large.json
    PYTHONPATH=. python benchmarks/mip_chain_lp.py --paper reports/mip/paper_scale \\
        --only model1-seed1
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))


def chain_members(inst: Any, groups: list[Any]) -> list[int]:
    """The groups (indices into ``groups``) of the first lag-interval family, in index
    order; ``[]`` when there is none."""
    from kvopt.mip.bounds.intervals import interval_families
    from kvopt.mip.model.builder import request_groups

    fams = interval_families(inst, groups, n_families=1)
    if not fams:
        return []
    return sorted(set(request_groups(groups)[fams[0].members].tolist()))


def chain_rows(data: Any, inst: Any, members: list[int]) -> tuple[sp.csr_matrix, Any, int]:
    """The flow of the module docstring over ``members`` (groups of ``data``): its rows
    ``E [x; f] = rhs`` over the model's columns ``x`` and ``n_new`` flow columns ``f >= 0``
    (cost 0). Returns ``(E, rhs, n_new)``."""
    from kvopt.mip.bounds.intervals import _lags

    lag = _lags(inst)
    rep = np.array([int(g[0]) for g in data.groups], dtype=np.int64)
    cg, cs = data.col_group, data.col_start
    H = int(cs.max()) + int(inst.output.max()) + 2
    m = len(members)
    cols = [np.flatnonzero(cg == g) for g in members]
    n0 = data.n_cols
    rows: list[Any] = []
    cidx: list[Any] = []
    vals: list[Any] = []

    def put(r: Any, c: Any, v: float) -> None:
        r, c = (np.ravel(x) for x in np.broadcast_arrays(r, c))
        rows.append(r)
        cidx.append(c)
        vals.append(np.full(r.size, v))

    nxt = n0                                   # next flow column
    ready = [b * H for b in range(m)]          # first row of R(members[b], .)
    unit = m * H                               # the row: one unit leaves the source
    t = np.arange(H)
    for b in range(m):
        wait, src = nxt + t, nxt + H + t       # wait R(h, t) -> R(h, t + 1); source -> R(h, t)
        nxt += 2 * H
        put(ready[b] + t, src, 1.0)
        put(ready[b] + t[1:], wait[:-1], 1.0)
        put(ready[b] + t, wait, -1.0)
        put(ready[b] + cs[cols[b]], cols[b], -1.0)          # start arcs carry x[h, t]
        put(unit, src, 1.0)
    node = unit + 1                            # first row of the start nodes (g, k)
    for a in range(m):
        k = cs[cols[a]]
        put(node + np.arange(k.size), cols[a], 1.0)                # x[g, k] flows out
        put(node + np.arange(k.size), nxt + np.arange(k.size), -1.0)   # to the sink
        nxt += k.size
        for b in range(m):
            if a == b and data.groups[members[a]].size == 1:
                continue                       # one request never follows itself
            arr = np.maximum(k + int(lag[rep[members[a]], rep[members[b]]]), 0)
            ok = arr < H
            y = nxt + np.arange(int(ok.sum()))
            nxt += y.size
            put(node + np.flatnonzero(ok), y, -1.0)
            put(ready[b] + arr[ok], y, 1.0)
        node += k.size
    E = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cidx))),
                      shape=(node, nxt))
    rhs = np.zeros(node)
    rhs[unit] = 1.0
    return E, rhs, nxt - n0


def chain_bound(inst: Any, upper: float) -> dict[str, Any]:
    """The interval LP and the same LP with the chain flow of its first family, both solved
    by :func:`kvopt.mip.bounds.sparse_lp.solve_lp_duals` (row-differenced, interior point)."""
    import dataclasses

    from kvopt.mip.bounds.intervals import interval_model
    from kvopt.mip.bounds.sparse_lp import solve_lp_duals

    data = interval_model(inst, upper=upper)
    t0 = time.perf_counter()
    base = solve_lp_duals(data)
    t_lp = time.perf_counter() - t0
    if base.status != "optimal" or base.value is None:
        raise RuntimeError(f"interval LP: HiGHS status {base.status}")
    members = chain_members(inst, data.groups)
    out = {"lp": float(base.value), "chain": float(base.value), "members": len(members),
           "lp_s": t_lp, "chain_s": 0.0, "flow_columns": 0}
    if not members:
        return out
    t0 = time.perf_counter()
    E, rhs, n_new = chain_rows(data, inst, members)
    A = sp.vstack([sp.hstack([data.A, sp.csr_matrix((data.n_rows, n_new))]), E]).tocsr()
    big = dataclasses.replace(
        data, A=A, c=np.r_[data.c, np.zeros(n_new)],
        row_lower=np.r_[data.row_lower, rhs], row_upper=np.r_[data.row_upper, rhs],
        col_lower=np.r_[data.col_lower, np.zeros(n_new)],
        col_upper=np.r_[data.col_upper, np.full(n_new, np.inf)],
        integrality=np.zeros(data.n_cols + n_new, dtype=np.int8),
        col_group=None, col_start=None, row_kind=[*data.row_kind, *["chain"] * E.shape[0]])
    res = solve_lp_duals(big)
    if res.status != "optimal" or res.value is None:
        raise RuntimeError(f"chain LP: HiGHS status {res.status}")
    out.update(chain=float(res.value), chain_s=time.perf_counter() - t0, flow_columns=n_new)
    return out


def _instances(args: argparse.Namespace) -> list[tuple[str, Any, float, str]]:
    from mip_partial_int import instances

    ns = argparse.Namespace(frontier=args.frontier, split=args.split, paper=args.paper,
                            only=args.only)
    out = instances(ns)
    if args.frontier:
        out = [o for o in out if o[1].n in args.n]
    return out


def main(argv: list[str] | None = None) -> int:
    from kvopt.cli.common import int_at_least

    p = argparse.ArgumentParser(prog="mip_chain_lp.py",
                                description="The interval LP with and without the chain flow "
                                            "of its first family (module docstring).")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--frontier", metavar="RECORDS",
                     help="records of benchmarks/mip_frontier_cpu.py (frontier_cpu_v2.json)")
    src.add_argument("--split", metavar="RECORDS",
                     help="records of benchmarks/mip_dual_small.py --split "
                          "(gap_split_large.json)")
    src.add_argument("--paper", metavar="DIR",
                     help="paper-scale instances NAME.json with certificates NAME.best.json "
                          "(reports/mip/paper_scale)")
    p.add_argument("--n", type=int_at_least(1), nargs="+", default=[12],
                   help="with --frontier: the instance sizes (default 12)")
    p.add_argument("--only", nargs="+", default=["model1-seed1"],
                   help="with --paper: the instance names (default model1-seed1)")
    args = p.parse_args(argv)
    flag = "--frontier" if args.frontier else "--split" if args.split else "--paper"
    try:
        todo = _instances(args)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        p.error(f"{flag}: cannot read {args.frontier or args.split or args.paper}: {exc}")
    print(f"benchmarks/mip_chain_lp.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print("| instance | n | reference | interval LP | + chain | family | gap: LP / chain | "
          "share of the LP gap closed | LP s | chain s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    closed = []
    for name, inst, ref, what in todo:
        r = chain_bound(inst, ref)
        if r["chain"] > ref + 1e-6 and what == "OPT":
            raise RuntimeError(f"{name}: chain bound {r['chain']} above OPT {ref}")
        share = (r["chain"] - r["lp"]) / (ref - r["lp"]) if ref > r["lp"] else 1.0
        closed.append(share)
        print(f"| {name} | {inst.n} | {ref:.0f} ({what}) | {r['lp']:.2f} | {r['chain']:.2f} | "
              f"{r['members']} | {100 * (1 - r['lp'] / ref):.2f} / "
              f"{100 * (1 - r['chain'] / ref):.2f} % | {100 * share:.0f} % | "
              f"{r['lp_s']:.1f} | {r['chain_s']:.1f} |", flush=True)
    if closed:
        c = sorted(closed)
        print(f"closes a median {100 * c[len(c) // 2]:.0f} % of the gap between the interval LP "
              f"and the reference (range {100 * c[0]:.0f}-{100 * c[-1]:.0f} %, "
              f"{len(c)} instances)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
