"""Issue 22, figure 2: can the interval LP's own multipliers carry a stronger bound?

For ``mu >= 0`` on the interval LP's rows (:mod:`kvopt.mip.bounds.lagrangian`) and every
feasible schedule ``y`` in the start windows::

    TEL(y) >= L(mu) + delta(mu) . y,      delta = reduced costs (>= 0)

so ``L(mu) + min_y delta . y`` is a lower bound on OPT for any set of schedules ``y`` that
contains OPT's. Decompositions keep ``mu`` (the LP's duals) and strengthen only the inner
minimum: a *group* of requests minimised exactly (a pair, or the whole instance) in place of
each request alone. This script measures how much that can give, on the instances of
``reports/mip/README.md`` section 10.9 whose optimum the state search proved (OPT known):

- **pairs**: for every two requests (not aggregated with identical ones: groups of one; on
  5 of the 13 instances 1-2 groups of identical requests, 2-4 requests, are left out) the
  exact minimum of ``delta_i(k_i) + delta_j(k_j)``
  over the start pairs that fit together (two requests alone fit iff the memory at the last
  common slot is ``<= M``, checked here against a slot-by-slot count), the largest such gain
  and the total of a greedy matching;
- **whole instance**: HiGHS minimises ``delta . y`` over the interval model itself
  (integral, first on the columns of small reduced cost: :func:`whole_instance`, up to 4 x
  ``--mip-seconds``); its schedule is re-checked by
  :func:`kvopt.core.validate.check_schedule` and ``delta . y`` recomputed here, so
  ``delta . y`` is an *upper* bound on what any decomposition at these multipliers can add
  (it needs no proof of the solver's);
- **pair rows**: new rows instead of new inner problems: for every two requests and every
  run of start differences at which they cannot run together, the clique rows
  ``sum_{k in P} x[i, k] + sum_{k' in Q} x[j, k'] <= 1`` (every difference ``k' - k`` in the
  run), separated from the LP solution for ``--rounds`` rounds (bound: the Lagrangian of all
  rows at the final duals).

Run of section 10.10 (alone, 2 cores)::

    PYTHONPATH=. python benchmarks/mip_fixed_duals.py > reports/mip/fixed_duals.txt
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mip_dual_small import make
from mip_unproven_split import read_rows

ROOT = Path(__file__).resolve().parents[1]
GRID = [ROOT / f"reports/mip/dual_grid_{f}.txt"
        for f in ("paper-M", "paper-M_b", "paper-M2", "paper-M2_b")]


def bad_differences(sa: int, oa: int, sb: int, ob: int, M: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Start differences ``d = k_b - k_a`` at which requests ``a`` and ``b`` alone exceed
    ``M`` (``d`` outside the returned range always fit: they do not overlap), and the mask.

    Both hold ``s + tau - k`` at ``tau = k + 1 .. k + o``; while both run the sum grows by 2 per
    slot, so it peaks at the last common slot ``min(o_a, d + o_b)`` (``k_a = 0``)."""
    d = np.arange(-ob - 1, oa + 2)
    lo = np.maximum(1, d + 1)
    hi = np.minimum(oa, d + ob)
    return d, (lo <= hi) & (sa + sb + 2 * hi - d > M)


def _check_bad(sa: int, oa: int, sb: int, ob: int, M: int) -> None:
    """The closed form of :func:`bad_differences` against a slot-by-slot count."""
    d, bad = bad_differences(sa, oa, sb, ob, M)
    for di, b in zip(d.tolist(), bad.tolist(), strict=True):
        mem = np.zeros(2 * (oa + ob) + 8, dtype=np.int64)
        off = ob + 2
        mem[off + 1: off + oa + 1] += sa + np.arange(1, oa + 1)
        mem[off + di + 1: off + di + ob + 1] += sb + np.arange(1, ob + 1)
        assert (int(mem.max()) > M) == b, (sa, oa, sb, ob, M, di)


def lp_lagrangian(data: Any) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """The LP's Lagrangian value, multipliers (all rows), reduced costs and LP solution."""
    from kvopt.mip.bounds.lagrangian import lagrangian_reduced_costs, relaxed_rows
    from kvopt.mip.bounds.sparse_lp import solve_lp_duals

    res = solve_lp_duals(data)
    assert res.row_dual is not None and res.x is not None
    rows = relaxed_rows(data)
    mu = np.zeros(data.n_rows)
    mu[rows] = np.maximum(-res.row_dual[rows], 0.0)
    L, delta = lagrangian_reduced_costs(data, mu)
    return L, mu, delta, res.x


def pair_gains(inst: Any, data: Any, delta: np.ndarray) -> tuple[float, float]:
    """Largest pair gain and the total of a greedy matching (singleton groups)."""
    s, o, M = inst.prompt.astype(int), inst.output.astype(int), int(inst.memory)
    single = [g for g, mem in enumerate(data.groups) if mem.size == 1]
    cols = {g: np.flatnonzero(data.col_group == g) for g in single}
    U = len(single)
    gain = np.zeros((U, U))
    for a in range(U):
        ga = single[a]
        ia = int(data.groups[ga][0])
        for b in range(a + 1, U):
            gb = single[b]
            ib = int(data.groups[gb][0])
            _check_bad(s[ia], o[ia], s[ib], o[ib], M)
            d, bad = bad_differences(s[ia], o[ia], s[ib], o[ib], M)
            diff = data.col_start[cols[gb]][None, :] - data.col_start[cols[ga]][:, None]
            idx = np.clip(diff - d[0], 0, d.size - 1)
            inside = (diff >= d[0]) & (diff <= d[-1])
            ok = ~(inside & bad[idx])
            tot = delta[cols[ga]][:, None] + delta[cols[gb]][None, :]
            gain[a, b] = gain[b, a] = float(tot[ok].min())
    best = float(gain.max()) if U > 1 else 0.0
    used = np.zeros(U, dtype=bool)
    total = 0.0
    g2 = gain.copy()
    while U > 1:
        g2[used, :] = -1.0
        g2[:, used] = -1.0
        ua, ub = (int(v) for v in np.unravel_index(int(np.argmax(g2)), g2.shape))
        if g2[ua, ub] <= 1e-9:
            break
        total += float(g2[ua, ub])
        used[ua] = used[ub] = True
    return best, total


def whole_instance(inst: Any, data: Any, delta: np.ndarray, seconds: float
                   ) -> tuple[str, float | None, float | None]:
    """A schedule of small ``delta . y``: HiGHS minimises ``delta . y`` over the interval
    model restricted to the columns of ``delta <= theta`` for ``theta`` = 1, 3, 10, then all
    columns (``seconds`` each), stopping at the first ``theta`` where it finds one of
    ``delta . y <= theta``. Returns ``(theta and status, delta . y, TEL)`` of the best
    schedule found, re-checked and ``delta . y`` recomputed here (``None``: none found).
    Any feasible schedule caps what a decomposition at these multipliers can add; HiGHS's
    optimality or infeasibility claims are not used."""
    from kvopt import Schedule
    from kvopt.core.validate import check_schedule
    from kvopt.mip.backends.highs import HighsBackend
    from kvopt.mip.model.builder import decode_starts

    best: tuple[str, float | None, float | None] = ("none found", None, None)
    for theta in (1.0, 3.0, 10.0, np.inf):
        upper = np.where(delta <= theta, data.col_upper, 0.0)
        sub = dataclasses.replace(data, c=delta, obj_offset=0.0, x0=None, col_upper=upper,
                                  objective_is_integer=False,
                                  integrality=np.ones(data.n_cols, dtype=np.int8))
        res = HighsBackend().solve(sub, time_limit=seconds, threads=1)
        if res.x is None:
            continue
        y = np.rint(res.x).astype(np.int64)
        starts = decode_starts(data, res.x, inst.n)
        rep = check_schedule(inst, Schedule.from_starts(inst, starts))
        assert rep.ok and rep.objective is not None, rep
        dy = float(delta @ y)
        if best[1] is None or dy < best[1]:
            best = (f"{theta:g}: {res.status}", dy, float(rep.objective))
        if dy <= theta:
            break
    return best


def pair_rows(inst: Any, data: Any, x: np.ndarray, tol: float = 1e-4, per_run: int = 3
              ) -> list[tuple[int, int, int, int, int, int]]:
    """Pair clique rows violated by ``x`` by more than ``tol`` (module docstring):
    ``(group a, lo, hi, group b, lo2, hi2)``, starts of ``a`` in ``[lo, hi]`` and of ``b`` in
    ``[lo2, hi2]``; at most ``per_run`` per pair and run, the most violated."""
    s, o, M = inst.prompt.astype(int), inst.output.astype(int), int(inst.memory)
    T = int(data.col_start.max()) + 2
    G = len(data.groups)
    X = np.zeros((G, T))
    np.add.at(X, (data.col_group, data.col_start), x[: data.n_cols])
    C = np.concatenate([np.zeros((G, 1)), np.cumsum(X, axis=1)], axis=1)

    def window(g: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        lo_c = np.clip(lo, 0, T)
        hi_c = np.clip(hi + 1, 0, T)
        return C[g, np.maximum(hi_c, lo_c)] - C[g, lo_c]

    single = [g for g, mem in enumerate(data.groups) if mem.size == 1]
    t = np.arange(T)
    out = []
    for a in single:
        ia = int(data.groups[a][0])
        for b in single:
            if b == a:
                continue
            ib = int(data.groups[b][0])
            d, bad = bad_differences(s[ia], o[ia], s[ib], o[ib], M)
            edges = np.flatnonzero(np.diff(np.concatenate([[0], bad.astype(int), [0]])))
            for r0, r1 in zip(edges[::2], edges[1::2], strict=True):
                d1, d2 = int(d[r0]), int(d[r1 - 1])
                if d1 < 0:
                    continue                 # the same run seen from b's side (d >= 0 there)
                n_p = d2 - d1 + 1
                vals = np.stack([window(a, t - p, t) + window(b, t + d1, t + d2 - p)
                                 for p in range(n_p)])
                p_best = vals.argmax(axis=0)
                v_best = vals.max(axis=0)
                viol = np.flatnonzero(v_best > 1 + tol)
                for tt in viol[np.argsort(-v_best[viol])][:per_run]:
                    p = int(p_best[tt])
                    out.append((a, int(tt) - p, int(tt), b, int(tt) + d1, int(tt) + d2 - p))
    return out


def add_pair_rows(data: Any, rows: list[tuple[int, int, int, int, int, int]]) -> Any:
    """``data`` plus the pair clique rows (kind ``"pairclique"``, ``<= 1``)."""
    cg, cs = data.col_group, data.col_start
    A = data.A.tocoo()
    R, C, V = [A.row], [A.col], [A.data]
    k = 0
    for a, lo, hi, b, lo2, hi2 in sorted(set(rows)):
        cols = np.flatnonzero(((cg == a) & (cs >= lo) & (cs <= hi))
                              | ((cg == b) & (cs >= lo2) & (cs <= hi2)))
        R.append(np.full(cols.size, data.n_rows + k))
        C.append(cols)
        V.append(np.ones(cols.size))
        k += 1
    A2 = sp.csr_matrix((np.concatenate(V), (np.concatenate(R), np.concatenate(C))),
                       shape=(data.n_rows + k, data.n_cols))
    return dataclasses.replace(data, A=A2,
                               row_lower=np.concatenate([data.row_lower, np.full(k, -np.inf)]),
                               row_upper=np.concatenate([data.row_upper, np.ones(k)]),
                               row_kind=[*data.row_kind, *["pairclique"] * k])


def main(argv: list[str] | None = None) -> int:
    from kvopt.mip.bounds.intervals import interval_model

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--grid", type=Path, nargs="+", default=GRID,
                   help="outputs of mip_unproven_split.py --grid (their proven rows are used)")
    p.add_argument("--mip-seconds", type=float, default=30.0)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    names = " ".join(str(g.relative_to(ROOT)) if g.is_relative_to(ROOT) else str(g)
                     for g in args.grid)
    print(f"benchmarks/mip_fixed_duals.py --mip-seconds {args.mip_seconds:g} --rounds "
          f"{args.rounds} --grid {names}; "
          f"cpus {os.cpu_count()}; load {os.getloadavg()[0]:.2f}")
    print("| family | n | seed | OPT | LP (L at its duals) | OPT - L | best pair gain | "
          "matched pairs | whole instance: theta: status | its delta . y (its TEL) | "
          "share of OPT - L "
          "| L with pair rows |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    t0 = time.perf_counter()
    shares, pair_shares = [], []
    for r in (r for g in args.grid for r in read_rows(g) if r.proven):
        inst = make(r.family, r.n, r.seed)
        data = interval_model(inst, upper=r.ub)
        L, _, delta, x = lp_lagrangian(data)
        assert abs(L - r.lp) < 0.1, (L, r.lp)            # the grid's interval LP, reproduced
        best, matched = pair_gains(inst, data, delta)
        status, dy, tel = whole_instance(inst, data, delta, args.mip_seconds)
        gap = r.value - L
        Lr = L
        d2 = data
        for _ in range(args.rounds):
            cuts = pair_rows(inst, d2, x)
            if not cuts:
                break
            d2 = add_pair_rows(d2, cuts)
            Lr, _, _, x = lp_lagrangian(d2)
        share = "-" if dy is None else f"{100 * dy / gap:.1f} %"
        if dy is not None:
            shares.append(100 * dy / gap)
        pair_shares.append(100 * (Lr - L) / gap)
        dys = "-" if dy is None else f"{dy:.2f} ({tel:.0f})"
        print(f"| {r.family} | {r.n} | {r.seed} | {r.value:.0f} | {L:.1f} | {gap:.1f} | "
              f"{best:.3f} | {matched:.3f} | {status} | {dys} | {share} | {Lr:.1f} |",
              flush=True)
    if shares:
        print(f"\nwhole instance at the LP's duals: delta . y <= {statistics.median(shares):.1f} % "
              f"of OPT - L (median; max {max(shares):.1f} %, {len(shares)} instances)")
    if pair_shares:
        print(f"pair rows ({args.rounds} rounds) close {statistics.median(pair_shares):.1f} % "
              f"of OPT - L (median; max {max(pair_shares):.1f} %)")
    print(f"wall time {time.perf_counter() - t0:.0f} s; load {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
