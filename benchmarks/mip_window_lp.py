"""Issue 22: window-configuration LP, a multi-request, multi-slot relaxation (measured).

Sections 10.9-10.10 of ``reports/mip/README.md`` say that figure 2 needs rows that cut the
interval LP's optimum across several requests *and* several slots; the per-slot
configuration LP (section 7) convexifies one slot at a time and closes almost nothing.
This benchmark measures the next member of that family: configurations over a *window* of
``w`` consecutive slots.

**The relaxation.** Start from the interval model (:func:`kvopt.mip.bounds.intervals.
interval_model`: ``tight+cores`` plus the level-1 lag-interval rows, windows from ``upper``),
columns ``x[g, k]`` (group ``g`` of identical requests, start ``k``; integer counts in the
exact model). A window ``W = [t0, t0 + w)`` sees the columns whose run ``k + 1 .. k + o_g``
meets ``W``. A *configuration* of ``W`` is an integer vector ``y[g, k] >= 0`` over those
columns with ``sum_k y[g, k] <= |g|`` and, at every slot ``t`` of ``W``, memory
``sum y[g, k] (s_g + t - k) [k < t <= k + o_g] <= M``. Master LP::

    min  c . x
    s.t. the interval model's rows on x
         sum_C y_C[g, k] lam[W, C] + e[W, g, k] >= x[g, k]      (every W, every column seen)
         sum_C lam[W, C] <= 1                                   (every W)
         x, lam, e >= 0,  e costs BIG per unit

**Validity.** An optimal schedule ``k*`` lies in the windows of ``upper >= OPT``; its
restriction to ``W`` is a configuration ``C*_W`` (it respects ``M`` at every slot), so
``x = x(k*)``, ``lam[W, C*_W] = 1``, ``e = 0`` is feasible with value OPT. Hence the master's
optimum over *all* configurations is ``<= OPT``; the slacks ``e`` only relax it further.
Column generation finds that optimum when no configuration has negative reduced cost
(pricing: ``max sum pi[W, g, k] y[g, k]`` over configurations of ``W``, a small integer
programme, HiGHS through :func:`scipy.optimize.milp` at a zero gap; greedy configurations
first, the exact pricing only when they price nothing out).

**What is reported.** At the duals ``(pi, sigma)`` of any restricted master, the master's
value plus ``sum_W min(0, -P_W - sigma_W)`` is a valid bound (the duals, with ``sigma_W``
lowered to cover the best configuration ``P_W`` of every window, are feasible for the dual
of the full master, and their objective is that sum), where ``P_W`` is replaced by the
pricing MIP's dual bound. The value reported for a slack cost is the best such bound of its
exact pricing passes; when the last pass finds nothing, it equals the master's value up to
the pricing's tolerances. The slack cost is raised in turn through ``--big`` (every level's
bound is valid; a higher cost is a tighter relaxation; the columns carry over). A level not
finished in ``--time`` shows its best bound so far, marked as not converged.

Usage (the runs of reports/mip/README.md section 10.12)::

    PYTHONPATH=. python benchmarks/mip_window_lp.py reports/mip/frontier_cpu_v2.json \
        --n 12 --width 8 --big 2 5 20
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))

from mip_synthetic import make_instance


class Windows:
    """The windows of ``w`` slots (stride ``stride``) of an interval model ``data``, the
    columns each sees, and the pricing over their configurations (module docstring); shared by
    this benchmark's master and by ``mip_window_cuts.py``'s separation."""

    def __init__(self, inst: Any, data: Any, width: int, stride: int) -> None:
        self.M = int(inst.memory)
        reps = np.array([int(g[0]) for g in data.groups])
        self.size = np.array([g.size for g in data.groups], dtype=np.int64)
        self.s = inst.prompt.astype(np.int64)[reps]
        self.o = inst.output.astype(np.int64)[reps]
        cg, ck = data.col_group, data.col_start
        assert cg is not None and ck is not None
        self.cg, self.ck = cg.astype(np.int64), ck.astype(np.int64)
        first = self.ck + 1
        last = self.ck + self.o[self.cg]
        T = int(last.max())
        self.width = width
        self.windows: list[tuple[int, NDArray[np.int64]]] = []
        t0 = 1
        while True:
            t1 = t0 + width - 1
            self.windows.append((t0, np.flatnonzero((first <= t1) & (last >= t0))))
            if t1 >= T:
                break
            t0 += stride
        self._items: dict[int, tuple[NDArray[np.int64], NDArray[np.int64]]] = {}

    def items(self, w_i: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """The groups of the columns window ``w_i`` sees and their memory at every slot of
        the window (items x slots); computed once per window (they do not depend on the
        duals)."""
        if w_i not in self._items:
            t0, cols = self.windows[w_i]
            g, k = self.cg[cols], self.ck[cols]
            age = np.arange(t0, t0 + self.width)[None, :] - k[:, None]
            on = (age >= 1) & (age <= self.o[g][:, None])
            self._items[w_i] = (g, np.where(on, self.s[g][:, None] + age, 0))
        return self._items[w_i]

    def greedy(self, pi: NDArray[np.float64], g: NDArray[np.int64], mem: NDArray[np.int64],
               tol: float = 1e-9) -> list[NDArray[np.int64]]:
        """Configurations over the items ``(g, mem)`` of :meth:`items` built greedily from
        those with ``pi > tol`` (by ``pi``, by ``pi`` per unit of memory and per unit of peak
        memory, each taken while it fits): a cheap pricing heuristic."""
        cand = np.flatnonzero(pi > tol)
        out = []
        for key in (-pi[cand], -pi[cand] / np.maximum(mem[cand].sum(axis=1), 1),
                    -pi[cand] / np.maximum(mem[cand].max(axis=1), 1)):
            load = np.zeros(self.width, dtype=np.int64)
            used: dict[int, int] = {}
            y = np.zeros(pi.size, dtype=np.int64)
            for it in cand[np.argsort(key, kind="stable")]:
                gi = int(g[it])
                while used.get(gi, 0) < self.size[gi] and (load + mem[it] <= self.M).all():
                    load += mem[it]
                    used[gi] = used.get(gi, 0) + 1
                    y[it] += 1
            out.append(y)
        return out

    def exact(self, pi: NDArray[np.float64], g: NDArray[np.int64], mem: NDArray[np.int64],
              tol: float = 1e-9) -> tuple[NDArray[np.int64] | None, float]:
        """``max pi . y`` over the configurations of the items ``(g, mem)`` with ``pi > tol``
        (a small integer programme, zero gap): the best one found and an upper bound on the
        maximum (the MIP's dual bound)."""
        from scipy.optimize import Bounds, LinearConstraint, milp

        cand = np.flatnonzero(pi > tol)
        ub = float((pi[cand] * self.size[g[cand]]).sum())
        if cand.size == 0:
            return None, 0.0
        m = mem[cand].T.astype(np.float64)
        keep = m.sum(axis=1) > 0
        ug, inv = np.unique(g[cand], return_inverse=True)
        G = np.zeros((ug.size, cand.size))
        G[inv, np.arange(cand.size)] = 1.0
        cons = [LinearConstraint(m[keep], -np.inf, self.M),
                LinearConstraint(G, -np.inf, self.size[ug].astype(np.float64))]
        res = milp(-pi[cand], constraints=cons, integrality=np.ones(cand.size),
                   bounds=Bounds(0, self.size[g[cand]].astype(np.float64)),
                   options={"disp": False, "mip_rel_gap": 0.0})
        db = getattr(res, "mip_dual_bound", None)
        if db is not None and np.isfinite(db):
            ub = min(ub, -float(db))
        if res.x is None:
            return None, ub
        y = np.zeros(pi.size, dtype=np.int64)
        y[cand] = np.rint(res.x).astype(np.int64)
        return y, ub



class WindowLP(Windows):
    """The master LP and its pricing (module docstring)."""

    def __init__(self, inst: Any, upper: float, width: int, stride: int,
                 big: float | None = None) -> None:
        import highspy

        from kvopt.mip.bounds.intervals import interval_model

        data = interval_model(inst, upper=upper)
        self.data = data
        super().__init__(inst, data, width, stride)
        n_x = data.n_cols
        A = data.A.tocsc()
        h = self.h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        inf = highspy.kHighsInf
        big = float(10 * data.c.max() + 10) if big is None else big
        # the interval model
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = n_x, data.n_rows
        lp.col_cost_, lp.offset_ = data.c, data.obj_offset
        lp.col_lower_ = data.col_lower
        lp.col_upper_ = np.full(n_x, inf)
        lp.row_lower_, lp.row_upper_ = data.row_lower, data.row_upper
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_, lp.a_matrix_.index_ = A.indptr, A.indices
        lp.a_matrix_.value_ = A.data
        h.passModel(lp)
        # linking rows: sum lam*y + e - x >= 0 ; conv rows: sum lam <= 1
        self.link0: list[int] = []
        r = data.n_rows
        for _, cols in self.windows:
            self.link0.append(r)
            r += cols.size
        n_link = r - data.n_rows
        self.conv0 = r
        nw = len(self.windows)
        # one -x[g, k] entry per linking row, in window order
        seen_cols = np.concatenate([cols for _, cols in self.windows]).astype(np.int32)
        h.addRows(n_link, np.zeros(n_link), np.full(n_link, inf), n_link,
                  np.arange(n_link, dtype=np.int32), seen_cols, np.full(n_link, -1.0))
        h.addRows(nw, np.full(nw, -inf), np.ones(nw), 0, np.zeros(0, np.int32),
                  np.zeros(0, np.int32), np.zeros(0))
        # slacks e, one per linking row
        h.addCols(n_link, np.full(n_link, big), np.zeros(n_link), np.full(n_link, inf),
                  n_link, np.arange(n_link, dtype=np.int32),
                  np.arange(data.n_rows, data.n_rows + n_link, dtype=np.int32),
                  np.ones(n_link))
        self.n_link = n_link
        self.n_x = n_x
        self.n_cols_lam = 0
        self.seen: list[set[bytes]] = [set() for _ in self.windows]

    def add_config(self, w_i: int, y: NDArray[np.int64]) -> bool:
        """Add configuration ``y`` (counts over the window's columns) of window ``w_i``."""
        key = y.astype(np.int16).tobytes()
        if key in self.seen[w_i]:
            return False
        self.seen[w_i].add(key)
        nz = np.flatnonzero(y)
        rows = np.concatenate([[self.conv0 + w_i], self.link0[w_i] + nz]).astype(np.int32)
        vals = np.concatenate([[1.0], y[nz].astype(np.float64)])
        self.h.addCol(0.0, 0.0, 1e30, rows.size, rows, vals)
        self.n_cols_lam += 1
        return True

    def set_big(self, big: float) -> None:
        """Cost per unit of the linking slacks."""
        idx = np.arange(self.n_x, self.n_x + self.n_link, dtype=np.int32)
        self.h.changeColsCost(idx.size, idx, np.full(idx.size, float(big)))

    def _pi(self, w_i: int, dual: NDArray[np.float64]) -> NDArray[np.float64]:
        """The duals of window ``w_i``'s linking rows (one per column it sees)."""
        return dual[self.link0[w_i]: self.link0[w_i] + self.windows[w_i][1].size]

    def reduced_cost(self, w_i: int, y: NDArray[np.int64], dual: NDArray[np.float64]) -> float:
        """Reduced cost of configuration ``y`` of window ``w_i`` at row duals ``dual``."""
        return float(-(self._pi(w_i, dual) @ y) - dual[self.conv0 + w_i])

    def greedy_configs(self, w_i: int, dual: NDArray[np.float64], tol: float = 1e-7
                       ) -> list[NDArray[np.int64]]:
        """:meth:`Windows.greedy` at window ``w_i``'s linking duals: configurations whose
        columns join the master only when their reduced cost is negative."""
        return self.greedy(self._pi(w_i, dual), *self.items(w_i), tol)

    def solve(self) -> tuple[float, NDArray[np.float64]]:
        import highspy

        self.h.run()
        st = self.h.getModelStatus()
        if st != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(f"master: {st}")
        return float(self.h.getInfo().objective_function_value), \
            np.asarray(self.h.getSolution().row_dual)

    def slack_total(self) -> float:
        sol = np.asarray(self.h.getSolution().col_value)
        return float(sol[self.n_x: self.n_x + self.n_link].sum())

    def price(self, w_i: int, dual: NDArray[np.float64], sigma: float,
              tol: float = 1e-7) -> tuple[NDArray[np.int64] | None, float]:
        """Best configuration of window ``w_i`` if its reduced cost is below ``-tol``, and an
        upper bound on the best configuration's value ``P_W`` (the MIP's dual bound)."""
        pi = self._pi(w_i, dual)
        g, mem = self.items(w_i)
        cand = pi > tol
        ub = float((pi[cand] * self.size[g[cand]]).sum())
        if not cand.any() or ub <= -sigma + tol:
            return None, ub
        y, ub = self.exact(pi, g, mem, tol)
        if y is None or float(pi @ y) <= -sigma + tol:
            return None, ub
        return y, ub


def schedule_configs(wl: WindowLP, starts: NDArray[np.int64]) -> None:
    """Seed every window with the configuration of a feasible schedule (if within the
    model's windows)."""
    from kvopt.mip.model.builder import encode_starts

    x = encode_starts(wl.cg, wl.ck, wl.data.groups, starts)
    if x is None:
        return
    for w_i, (_, cols) in enumerate(wl.windows):
        wl.add_config(w_i, np.rint(x[cols]).astype(np.int64))


def window_bound(inst: Any, upper: float, width: int, stride: int, seconds: float,
                 starts: NDArray[np.int64] | None = None, verbose: bool = False,
                 bigs: tuple[float, ...] = (2.0,), heuristic: bool = True
                 ) -> dict[str, Any]:
    """Column generation on the window LP, the slack cost raised through ``bigs`` (each
    level's converged value is a valid bound; the columns carry over). Returns the value of
    every converged level, the best Lagrangian bound, and counts."""
    t_start = time.monotonic()
    wl = WindowLP(inst, upper, width, stride, big=bigs[0])
    if starts is not None:
        schedule_configs(wl, starts)
    it = 0
    levels: list[tuple[float, float, float]] = []     # (big, value, seconds)
    best = -math.inf
    for big in bigs:
        wl.set_big(big)
        best = -math.inf          # the Lagrangian bounds of a smaller big are still valid,
        converged = False         # but this level's own is what is reported
        while time.monotonic() - t_start < seconds:
            value, dual = wl.solve()
            it += 1
            added = 0
            lagr = -math.inf
            if heuristic:
                for w_i in range(len(wl.windows)):
                    for y in wl.greedy_configs(w_i, dual):
                        if wl.reduced_cost(w_i, y, dual) < -1e-7 and wl.add_config(w_i, y):
                            added += 1
            if added == 0:
                lagr = value
                for w_i in range(len(wl.windows)):
                    sigma = float(dual[wl.conv0 + w_i])
                    ye, ub = wl.price(w_i, dual, sigma)
                    lagr += min(0.0, -ub - sigma)
                    if ye is not None and wl.add_config(w_i, ye):
                        added += 1
                    if time.monotonic() - t_start > seconds:
                        lagr = -math.inf
                        break
                best = max(best, lagr)
            if verbose:
                print(f"  it {it} big {big}: master {value:.3f} lagrangian {lagr:.3f} best "
                      f"{best:.3f} slack {wl.slack_total():.3f} added {added} columns "
                      f"{wl.n_cols_lam}", flush=True)
            if added == 0 and time.monotonic() - t_start <= seconds:
                converged = True
                break
        if not converged:
            break
        # the last pass priced every window exactly and found nothing: its Lagrangian value
        # (the master's value less the pricing's optimality tolerances) is the level's bound
        levels.append((big, best, time.monotonic() - t_start))
    return {"levels": levels, "lagrangian": best, "iterations": it,
            "columns": wl.n_cols_lam, "windows": len(wl.windows),
            "slack": wl.slack_total(), "seconds": time.monotonic() - t_start}


def main(argv: list[str] | None = None) -> int:
    from kvopt.cli.common import float_in, int_at_least
    from kvopt.mip import solve
    from kvopt.mip.bounds.intervals import interval_bound

    p = argparse.ArgumentParser(
        prog="mip_window_lp.py",
        description="The window-configuration LP against the interval LP on the frontier "
                    "instances the state search proved (module docstring).")
    p.add_argument("records", metavar="RECORDS.json",
                   help="records of benchmarks/mip_frontier_cpu.py "
                        "(reports/mip/frontier_cpu_v2.json)")
    p.add_argument("--n", type=int_at_least(1), nargs="+", default=[12],
                   help="instance sizes to run (default 12)")
    p.add_argument("--seeds", type=int_at_least(0), nargs="+", default=None,
                   help="seeds to run (default: every proven one)")
    p.add_argument("--width", type=int_at_least(1), nargs="+", default=[8],
                   help="window widths in slots (default 8)")
    p.add_argument("--stride", type=float_in(0, 1, lo_open=True), default=0.5,
                   help="window stride as a share of the width, in (0, 1] (default 0.5)")
    p.add_argument("--time", type=float_in(0, lo_open=True), default=1800.0,
                   help="wall seconds per instance and width (default 1800)")
    p.add_argument("--big", type=float_in(0, lo_open=True), nargs="+",
                   default=[2.0, 5.0, 20.0],
                   help="slack costs, raised in turn (default 2 5 20)")
    p.add_argument("--verbose", action="store_true", help="one line per iteration")
    args = p.parse_args(argv)
    from mip_frontier_cpu import read_proven_optima

    opt = read_proven_optima(p, args.records, "RECORDS.json", args.n, args.seeds)
    print(f"benchmarks/mip_window_lp.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print("| n | seed | OPT | interval LP | width/stride | slack cost | window LP | "
          "share of the LP gap closed | s (cumulative) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n, seed, o in opt:
        inst = make_instance(f"frontier-n{n}", seed, {})
        b = interval_bound(inst, upper=o, time_limit=60).bound
        res = solve(inst, time_limit=120)
        if (res.status != "optimal" or res.objective is None or res.schedule is None
                or abs(res.objective - o) > 1e-6):
            raise RuntimeError(f"n={n} seed={seed}: solve gave {res.status} {res.objective}")
        starts = np.asarray(res.schedule.final_start(inst), dtype=np.int64)
        for w in args.width:
            stride = max(1, round(w * args.stride))
            r = window_bound(inst, o, w, stride, args.time, starts=starts,
                             verbose=args.verbose, bigs=tuple(args.big))
            for big, v, sec in r["levels"]:
                if v > o + 1e-6:
                    raise RuntimeError(f"n={n} seed={seed} w={w}: window LP {v} above OPT {o}")
                closed = (v - b) / (o - b) if o > b else 1.0
                print(f"| {n} | {seed} | {o:.0f} | {b:.2f} | {w}/{stride} | {big:g} | {v:.2f} | "
                      f"{100 * closed:.0f} % | {sec:.0f} |", flush=True)
            if len(r["levels"]) < len(args.big):
                v = r["lagrangian"]
                print(f"| {n} | {seed} | {o:.0f} | {b:.2f} | {w}/{stride} | "
                      f"{args.big[len(r['levels'])]:g} | {v:.2f} (Lagrangian, not converged) | "
                      f"{100 * (v - b) / (o - b):.0f} % | {r['seconds']:.0f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
