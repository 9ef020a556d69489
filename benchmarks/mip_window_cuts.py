"""Issue 22: window-hull cuts on the interval LP (Fenchel cuts over windows of slots; measured).

Section 10.12 of ``reports/mip/README.md`` found that the interval LP's weakness is local:
configurations over windows of 8 slots close most of its gap to OPT at n = 12, but the
window-configuration LP (``benchmarks/mip_window_lp.py``), which carries every window's
convex combination inside one master, is far too slow beyond n = 12. This benchmark reaches
for the same strength by *cuts*: solve the interval LP, separate its optimum ``x*`` from the
hull of every window's configurations one small LP at a time, add the violated inequalities
as rows, solve again (warm, dual simplex), a few rounds.

**Configurations.** As in ``mip_window_lp.py``: a window ``W = [t0, t0 + w)`` sees the
columns ``x[g, k]`` (group ``g`` of identical requests, start ``k``) whose run ``k + 1 .. k +
o_g`` meets ``W``; a configuration is an integer ``y[g, k] >= 0`` over those columns with
``sum_k y[g, k] <= |g|`` and memory ``sum y[g, k] (s_g + t - k) [k < t <= k + o_g] <= M`` at
every slot ``t`` of ``W``. Configurations are closed downwards (dropping starts lowers the
memory).

**Separation.** Let ``J`` be the columns of ``W`` with ``x*_j > 0``. The LP::

    min  sum_j e_j   s.t.  sum_C y_C[j] lam_C + e_j >= x*_j  (j in J),   sum_C lam_C <= 1,
                           lam, e >= 0

is solved by column generation (greedy configurations, then an exact pricing: ``max pi . y``
over configurations, a small integer programme, HiGHS through :func:`scipy.optimize.milp` at
a zero gap). At its duals ``pi`` (``0 <= pi <= 1``) and the pricing's dual bound ``P >=
max_C pi . y_C``, the row::

    sum_{j in J} pi_j x_j <= P

is a *window cut*. **Validity:** for a feasible schedule ``y`` within the model's start
windows, its columns in ``J`` form a configuration of ``W`` (a subset of its starts in ``W``,
which fit ``M`` there; closed downwards), so ``pi . y_J <= max_C pi . y_C <= P``. The cut is
violated by ``x*`` when ``pi . x*_J > P`` (at convergence the excess is the LP's value
``sum e``). Every row of the master holds for every feasible schedule in the windows, so the
Lagrangian value at the master's duals (:func:`kvopt.mip.bounds.lagrangian.lagrangian_value`,
cuts included as ``<=`` rows) is ``<= OPT``; that value, not the solver's objective, is what
is reported, every round.

**The master** is the interval model of :func:`kvopt.mip.bounds.intervals.interval_model`
in the row-differenced form the default solves (:func:`kvopt.mip.bounds.sparse_lp.
differenced_lp`; interior point with crossover for the first solve, dual simplex from the
previous basis after each round of cuts). The cuts are rows on its first columns (the
starts), not differenced.

Usage (the runs of reports/mip/README.md section 10.13)::

    PYTHONPATH=. python benchmarks/mip_window_cuts.py --frontier reports/mip/frontier_cpu_v2.json \
        --n 12 --rounds 30 --time 300          # also --n 14, --n 16
    PYTHONPATH=. python benchmarks/mip_window_cuts.py --paper reports/mip/paper_scale \
        --only model1-seed1 --width 8 --rounds 30 --time 300 --verbose
    PYTHONPATH=. python benchmarks/mip_window_cuts.py --paper reports/mip/paper_scale \
        --only model1-seed1 --width 24 --probe 0 20 --max-iter 400
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mip_window_lp import Windows


@dataclasses.dataclass
class Cut:
    """``sum_j coef_j x[cols_j] <= rhs`` (window ``window``), violated by ``excess``."""

    window: int
    cols: NDArray[np.int64]
    coef: NDArray[np.float64]
    rhs: float
    excess: float


class WindowSeparator(Windows):
    """The hull separation of every window (module docstring)."""

    def separate(self, w_i: int, x: NDArray[np.float64], *, tol: float = 1e-6,
                 max_iter: int = 60, min_excess: float = 1e-3) -> Cut | None:
        """The most violated window cut of ``w_i`` found for ``x`` (module docstring), or
        ``None`` when ``x`` restricted to the window is in the hull (to ``min_excess``).

        Column generation for at most ``max_iter`` master solves; the last one is always
        priced exactly, so a cut stopped early is valid but may be shallower than the most
        violated one. ``self.last_iterations`` is the number of solves used."""
        import highspy

        cols = self.windows[w_i][1]
        pos = np.flatnonzero(x[cols] > tol)
        if pos.size == 0:
            return None
        J = cols[pos]
        xs = x[J]
        g_all, mem_all = self.items(w_i)
        g, mem = g_all[pos], mem_all[pos]
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        inf = highspy.kHighsInf
        nj = J.size
        h.addRows(nj, xs, np.full(nj, inf), 0, np.zeros(0, np.int32), np.zeros(0, np.int32),
                  np.zeros(0))
        h.addRows(1, np.array([-inf]), np.array([1.0]), 0, np.zeros(0, np.int32),
                  np.zeros(0, np.int32), np.zeros(0))
        h.addCols(nj, np.ones(nj), np.zeros(nj), np.full(nj, inf), nj,
                  np.arange(nj, dtype=np.int32), np.arange(nj, dtype=np.int32), np.ones(nj))
        seen: set[bytes] = set()

        def add(y: NDArray[np.int64]) -> bool:
            key = y.astype(np.int16).tobytes()
            if key in seen or not y.any():
                return False
            seen.add(key)
            nz = np.flatnonzero(y).astype(np.int32)
            h.addCol(0.0, 0.0, inf, nz.size + 1, np.append(nz, nj).astype(np.int32),
                     np.append(y[nz].astype(np.float64), 1.0))
            return True

        for y0 in self.greedy(xs, g, mem):
            add(y0)
        best: Cut | None = None
        self.last_iterations = 0
        for it in range(1, max_iter + 1):
            self.last_iterations = it
            h.run()
            dual = np.asarray(h.getSolution().row_dual)
            pi = np.clip(dual[:nj], 0.0, 1.0)
            sigma = max(0.0, -float(dual[nj]))
            if float(pi @ xs) - sigma <= min_excess:
                return best                       # the LP value is (nearly) 0: in the hull
            if it < max_iter and sum(add(yg) for yg in self.greedy(pi, g, mem)
                                     if float(pi @ yg) > sigma + 1e-7):
                continue
            # exact pricing: when the greedy one finds nothing, and at the last iteration
            # (any duals give a valid cut)
            y, P = self.exact(pi, g, mem)
            excess = float(pi @ xs) - P
            if excess > min_excess and (best is None or excess > best.excess):
                keep = pi > 1e-9
                best = Cut(w_i, J[keep], pi[keep], P, excess)
            if y is None or float(pi @ y) <= sigma + 1e-7 or not add(y):
                return best
        return best


class CutMaster:
    """The interval LP (row-differenced) with window cuts added in rounds."""

    def __init__(self, inst: Any, upper: float) -> None:
        import highspy

        from kvopt.mip.bounds.intervals import interval_model
        from kvopt.mip.bounds.sparse_lp import differenced_lp

        data = interval_model(inst, upper=upper)
        self.data = dataclasses.replace(data, integrality=np.zeros(data.n_cols, np.int8),
                                        x0=None)
        self.dif = differenced_lp(self.data)
        lp = self.dif.lp
        A = lp.A.tocsc()
        h = self.h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        h.setOptionValue("solver", "ipx")
        hl = highspy.HighsLp()
        hl.num_col_, hl.num_row_ = lp.n_cols, lp.n_rows
        hl.col_cost_, hl.offset_ = lp.c, lp.obj_offset
        hl.col_lower_ = lp.col_lower
        hl.col_upper_ = np.where(np.isfinite(lp.col_upper), lp.col_upper, highspy.kHighsInf)
        hl.row_lower_ = np.where(np.isfinite(lp.row_lower), lp.row_lower, -highspy.kHighsInf)
        hl.row_upper_ = np.where(np.isfinite(lp.row_upper), lp.row_upper, highspy.kHighsInf)
        hl.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        hl.a_matrix_.start_, hl.a_matrix_.index_ = A.indptr, A.indices
        hl.a_matrix_.value_ = A.data
        h.passModel(hl)
        self.cuts: list[Cut] = []

    def solve(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Solve; the starts' values and the row duals (HiGHS' signs, cut rows last)."""
        import highspy

        self.h.run()
        st = self.h.getModelStatus()
        if st != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"master: {self.h.modelStatusToString(st)}")
        self.h.setOptionValue("solver", "simplex")
        sol = self.h.getSolution()
        return (np.asarray(sol.col_value)[: self.data.n_cols],
                np.asarray(sol.row_dual, dtype=np.float64))

    def add(self, cuts: list[Cut]) -> None:
        import highspy

        if not cuts:
            return
        starts = np.cumsum([0] + [c.cols.size for c in cuts[:-1]]).astype(np.int32)
        idx = np.concatenate([c.cols for c in cuts]).astype(np.int32)
        val = np.concatenate([c.coef for c in cuts])
        self.h.addRows(len(cuts), np.full(len(cuts), -highspy.kHighsInf),
                       np.array([c.rhs for c in cuts]), idx.size, starts, idx, val)
        self.cuts.extend(cuts)

    def bound(self, dual: NDArray[np.float64]) -> float:
        """The Lagrangian value at the duals (cuts as ``<=`` rows; module docstring)."""
        from kvopt.mip.bounds.lagrangian import lagrangian_at_duals

        d = self.data
        n = d.n_rows
        mu = np.concatenate([self.dif.original_duals(dual[:n]), dual[n:]])
        if self.cuts:
            rows = np.concatenate([np.full(c.cols.size, i) for i, c in enumerate(self.cuts)])
            C = sp.csr_matrix((np.concatenate([c.coef for c in self.cuts]),
                               (rows, np.concatenate([c.cols for c in self.cuts]))),
                              shape=(len(self.cuts), d.n_cols))
            d = dataclasses.replace(
                d, A=sp.vstack([d.A, C]).tocsr(),
                row_lower=np.concatenate([d.row_lower, np.full(len(self.cuts), -np.inf)]),
                row_upper=np.concatenate([d.row_upper, [c.rhs for c in self.cuts]]),
                row_kind=list(d.row_kind) + ["window_cut"] * len(self.cuts))
        return lagrangian_at_duals(d, mu, margin=1e-9)[0]


def cut_rounds(inst: Any, upper: float, *, width: int = 8, stride: int = 4,
               rounds: int = 10, seconds: float = 600.0, verbose: bool = False,
               reference: float | None = None, max_iter: int = 60) -> dict[str, Any]:
    """Rounds of window cuts on the interval LP; the bound after every round."""
    t_start = time.monotonic()
    m = CutMaster(inst, upper)
    sep = WindowSeparator(inst, m.data, width, stride)
    t_build = time.monotonic() - t_start
    x, dual = m.solve()
    history = [(0, m.bound(dual), 0, time.monotonic() - t_start)]
    if verbose:
        print(f"  build {t_build:.1f} s, windows {len(sep.windows)}, LP {history[0][1]:.2f} "
              f"at {history[0][3]:.1f} s", flush=True)
    complete = True
    for r in range(1, rounds + 1):
        found: list[Cut] = []
        for w_i in range(len(sep.windows)):
            if time.monotonic() - t_start > seconds:
                complete = False
                break
            c = sep.separate(w_i, x, max_iter=max_iter)
            if c is not None:
                found.append(c)
        t_sep = time.monotonic() - t_start
        if not found:
            break
        m.add(found)
        x, dual = m.solve()
        b = m.bound(dual)
        history.append((r, b, len(found), time.monotonic() - t_start))
        if verbose:
            print(f"  round {r}: {len(found)} cuts (excess max {max(c.excess for c in found):.3f}"
                  f"), separation to {t_sep:.1f} s, bound {b:.3f} at {history[-1][3]:.1f} s",
                  flush=True)
        if not complete or time.monotonic() - t_start > seconds:
            break
        if reference is not None and b >= reference - 1e-6:
            break
    return {"history": history, "windows": len(sep.windows), "cuts": len(m.cuts),
            "seconds": time.monotonic() - t_start, "build_s": t_build}


def main(argv: list[str] | None = None) -> int:
    from kvopt.cli.common import float_in, int_at_least

    p = argparse.ArgumentParser(
        prog="mip_window_cuts.py",
        description="Window-hull cuts on the interval LP (module docstring), on the frontier "
                    "instances with proven optima or on the paper-scale instances.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--frontier", metavar="RECORDS.json",
                     help="records of benchmarks/mip_frontier_cpu.py "
                          "(reports/mip/frontier_cpu_v2.json)")
    src.add_argument("--paper", metavar="DIR",
                     help="the paper-scale instances and certificates (reports/mip/paper_scale)")
    p.add_argument("--n", type=int_at_least(1), nargs="+", default=[12],
                   help="frontier: instance sizes (default 12)")
    p.add_argument("--seeds", type=int_at_least(0), nargs="+", default=None,
                   help="frontier: seeds (default: every proven one)")
    p.add_argument("--only", nargs="+", default=None,
                   help="paper: instance names (default: all)")
    p.add_argument("--width", type=int_at_least(1), default=8, help="window width (default 8)")
    p.add_argument("--stride", type=int_at_least(1), default=None,
                   help="window stride (default width / 2)")
    p.add_argument("--rounds", type=int_at_least(1), default=10,
                   help="cut rounds at most (default 10)")
    p.add_argument("--time", type=float_in(0, lo_open=True), default=600.0,
                   help="wall seconds per instance (default 600)")
    p.add_argument("--max-iter", type=int_at_least(1), default=60,
                   help="master solves per window separation (default 60)")
    p.add_argument("--probe", type=int_at_least(0), nargs="+", default=None, metavar="W",
                   help="instead of rounds: separate these windows of the interval LP's "
                        "optimum once each and print what it took")
    p.add_argument("--verbose", action="store_true", help="one line per round")
    args = p.parse_args(argv)
    stride = args.stride or max(1, args.width // 2)
    jobs: list[tuple[str, Any, float, float | None]] = []      # name, inst, upper, OPT
    if args.frontier:
        from mip_frontier_cpu import read_proven_optima
        from mip_synthetic import make_instance
        for n, seed, best in read_proven_optima(p, args.frontier, "--frontier", args.n,
                                                args.seeds):
            jobs.append((f"frontier n={n} seed={seed}",
                         make_instance(f"frontier-n{n}", seed, {}), best, best))
        if not jobs:
            p.error("--n/--seeds: no proven frontier instance matches")
    else:
        from mip_staged_lp import certified_instances
        try:
            jobs = [(name, inst, upper, None)
                    for name, inst, upper in certified_instances(Path(args.paper), args.only)]
        except ValueError as exc:
            p.error(f"--paper: {exc}")
    print(f"benchmarks/mip_window_cuts.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    if args.probe is not None:
        print("| instance | window (first slot) | starts seen with x* > 0 | master solves | "
              "cut excess | s |")
        print("|---|---|---|---|---|---|")
        for name, inst, upper, _ in jobs:
            m = CutMaster(inst, upper)
            x, _ = m.solve()
            sep = WindowSeparator(inst, m.data, args.width, stride)
            for w_i in args.probe:
                if w_i >= len(sep.windows):
                    continue
                t0 = time.monotonic()
                c = sep.separate(w_i, x, max_iter=args.max_iter)
                cols = sep.windows[w_i][1]
                print(f"| {name} | {w_i} ({sep.windows[w_i][0]}) | {int((x[cols] > 1e-6).sum())}"
                      f" | {sep.last_iterations} | {c.excess if c else 0.0:.3f} | "
                      f"{time.monotonic() - t0:.1f} |", flush=True)
        return 0
    print("| instance | n | reference | interval LP | after cuts (round) | cuts | windows | "
          "share of the LP gap closed | s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, inst, upper, o in jobs:
        if args.verbose:
            print(f"{name}:", flush=True)
        r = cut_rounds(inst, upper, width=args.width, stride=stride, rounds=args.rounds,
                       seconds=args.time, verbose=args.verbose, reference=o,
                       max_iter=args.max_iter)
        h = r["history"]
        lp, best = h[0][1], max(b for _, b, _, _ in h)
        rnd = max(h, key=lambda t: t[1])[0]
        if o is not None and best > o + 1e-6:
            raise RuntimeError(f"{name}: bound {best} above OPT {o}")
        closed = (best - lp) / (upper - lp) if upper > lp else 1.0
        print(f"| {name} | {inst.n} | {upper:.0f}{' (OPT)' if o is not None else ''} | "
              f"{lp:.2f} | {best:.2f} ({rnd}) | {r['cuts']} | {r['windows']} | "
              f"{100 * closed:.0f} % | {r['seconds']:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
