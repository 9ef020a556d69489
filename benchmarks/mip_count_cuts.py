"""Issue 22, figure 2: completion-count cuts on the interval LP, where OPT is proven.

**The cuts.** For a slot ``T`` let ``F(T) = sum_{(g, k): k + o_g <= T} x[g, k]``, the number of
requests that complete by ``T``, and ``N(T)`` any upper bound on that number over the
schedules the model keeps. Then ``F(T) <= floor(N(T))`` is valid for every such schedule.
Here ``N(T)`` is the optimum of the *count problem*: the model of
:func:`kvopt.mip.bounds.intervals.interval_model` (windows from OPT, which keep every optimal
schedule) with only the columns that complete by ``T``, the assignment rows relaxed to
``<= group size`` and the objective ``max sum x``. The restriction of a kept schedule to its
requests that complete by ``T`` is feasible for it, because every other row of the model is a
``<=`` row with non-negative coefficients (memory, DFF / clique, cores, lag intervals: fewer
running requests never break one; checked below) and the windows still hold. So
``N(T) >=`` that count, both for the count problem solved as a MIP (``--counts mip``, exact)
and as its LP (``--counts lp``, then rounded down). The interval LP with the rows
``F(T) <= floor(N(T))`` for every ``T`` is therefore ``<= OPT``, which the script asserts.

Why they can help: the interval LP mixes shifted fractional copies of the chain of big
requests (``reports/mip/README.md`` section 7.1), so at many ``T`` it completes a fractional
number of requests that is more than any integral schedule can complete by ``T``. The
order-statistic argument behind it: in every schedule the k-th completion is at least
``min {T : N(T) >= k}``.

Prints per instance OPT, the interval LP, the LP with the count cuts, the share of the LP's
distance to OPT that they close, and the seconds spent on the counts (HiGHS through
``scipy.optimize.milp``, one thread). Instances: the frontier instances whose optimum the
state search proved (``reports/mip/frontier_cpu_v2.json``, as in ``mip_frontier_dual.py``).

Run of ``reports/mip/README.md`` section 10.16::

    PYTHONPATH=. python benchmarks/mip_count_cuts.py reports/mip/frontier_cpu_v2.json --n 12 \\
        --counts lp mip > reports/mip/count_cuts_n12.txt
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))


def completions(data: Any, instance: Any) -> NDArray[np.int64]:
    """The completion slot ``k + o_g`` of every column of a time-indexed model.

    Examples
    --------
    >>> from kvopt.core.instance import Instance
    >>> from kvopt.mip.model.builder import build_milp
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> d = build_milp(inst, "naive")
    >>> c = completions(d, inst)
    >>> c[d.col_group == 0][:3].tolist(), c[d.col_group == 1][:3].tolist()
    ([4, 5, 6], [8, 9, 10])
    """
    go = np.array([int(instance.output[g[0]]) for g in data.groups], dtype=np.int64)
    return np.asarray(data.col_start + go[data.col_group], dtype=np.int64)


def count_bound(data: Any, A_csc: sp.csc_matrix, comp: NDArray[np.int64], T: int,
                integral: bool) -> float:
    """The most requests that can complete by ``T`` (module docstring): the count problem as
    a MIP (exact) or as its LP; ``A_csc`` is ``data.A`` by columns (converted once)."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    keep = np.flatnonzero(comp <= T)
    if keep.size == 0:
        return 0.0
    A = A_csc[:, keep].tocsr()
    rows = np.flatnonzero(np.diff(A.indptr) > 0)
    A = A[rows]
    kinds = np.asarray(data.row_kind)[rows]
    lower = data.row_lower[rows].copy()
    other = kinds != "assign"
    # every row but the assignments: <= with non-negative coefficients (the restriction of a
    # schedule to the requests done by T keeps it)
    assert np.all(np.isinf(lower[other])) and A[np.flatnonzero(other)].data.min() >= 0
    lower[~other] = 0.0
    res = milp(-np.ones(keep.size), constraints=LinearConstraint(A, lower, data.row_upper[rows]),
               bounds=Bounds(np.zeros(keep.size), data.col_upper[keep]),
               integrality=np.full(keep.size, 1 if integral else 0))
    if res.status != 0:
        raise RuntimeError(f"count problem at T={T}: {res.message}")
    return float(-res.fun)


def with_le_rows(data: Any, cols: list[NDArray[np.int64]], vals: list[NDArray[np.float64]],
                 upper: list[float], kind: str) -> Any:
    """``data`` plus one row ``sum_i vals[r][i] x[cols[r][i]] <= upper[r]`` per ``r``, of
    kind ``kind``."""
    C = sp.csr_matrix((np.concatenate(vals),
                       (np.repeat(np.arange(len(cols)), [c.size for c in cols]),
                        np.concatenate(cols))), shape=(len(cols), data.n_cols))
    return dataclasses.replace(
        data, A=sp.vstack([data.A, C]).tocsr(),
        row_lower=np.concatenate([data.row_lower, np.full(len(cols), -np.inf)]),
        row_upper=np.concatenate([data.row_upper, np.asarray(upper, dtype=np.float64)]),
        row_kind=[*data.row_kind, *([kind] * len(cols))])


def with_count_rows(data: Any, comp: NDArray[np.int64], N: dict[int, float]) -> Any:
    """``data`` plus the rows ``F(T) <= floor(N[T])``."""
    cols = [np.flatnonzero(comp <= T) for T, _ in sorted(N.items())]
    return with_le_rows(data, cols, [np.ones(c.size) for c in cols],
                        [math.floor(v + 1e-6) for _, v in sorted(N.items())], "count")


def lp_solution(data: Any, paper: bool = False) -> tuple[float, NDArray[np.float64]]:
    """The LP optimum of ``data`` (objective offset included) and its column values: dense
    dual simplex, or with ``paper`` the row-differenced form by interior point with crossover
    (the paper-scale LPs; ``reports/mip/README.md`` section 7.3)."""
    from kvopt.mip.bounds.sparse_lp import solve_lp_duals

    res = (solve_lp_duals(data) if paper
           else solve_lp_duals(data, form="dense", method="simplex"))
    if res.value is None or res.x is None:
        raise RuntimeError(f"LP not solved: {res.info.get('message')}")
    return float(res.value + data.obj_offset), res.x


def main(argv: list[str] | None = None) -> int:
    from mip_frontier_cpu import read_proven_optima
    from mip_synthetic import make_instance

    from kvopt.cli.common import int_at_least
    from kvopt.mip.bounds.intervals import interval_model

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", type=Path, help="reports/mip/frontier_cpu_v2.json")
    ap.add_argument("--n", type=int_at_least(1), nargs="+", default=[12],
                    help="instance sizes (default 12)")
    ap.add_argument("--seeds", type=int_at_least(0), nargs="+", default=None,
                    help="seeds (default: every proven one)")
    ap.add_argument("--counts", nargs="+", choices=("lp", "mip"), default=["lp", "mip"],
                    help="the count problem as its LP and/or as a MIP (default both)")
    args = ap.parse_args(argv)
    optima = read_proven_optima(ap, args.records, "records", args.n, args.seeds)
    print(f"# benchmarks/mip_count_cuts.py {' '.join(sys.argv[1:] if argv is None else argv)}")
    print("| n | seed | OPT | interval LP | "
          + " | ".join(f"+ count cuts ({c}) | closed | counts s" for c in args.counts) + " |")
    print("|---|---|---|---|" + "---|---|---|" * len(args.counts))
    for n, seed, opt in optima:
        inst = make_instance(f"frontier-n{n}", seed, {})
        data = interval_model(inst, upper=opt)
        comp = completions(data, inst)
        base = lp_solution(data)[0]
        A_csc = data.A.tocsc()
        cells = []
        for mode in args.counts:
            t0 = time.process_time()
            N = {T: count_bound(data, A_csc, comp, T, mode == "mip")
                 for T in range(int(comp.min()), int(comp.max()) + 1)}
            secs = time.process_time() - t0
            val = lp_solution(with_count_rows(data, comp, N))[0]
            if val > opt + 1e-6:
                raise RuntimeError(f"n={n} seed={seed}: {val} above OPT {opt}")
            closed = (val - base) / (opt - base) if opt > base + 1e-9 else 1.0
            cells.append(f"{val:.2f} | {100 * closed:.0f} % | {secs:.0f}")
        print(f"| {n} | {seed} | {opt:.0f} | {base:.2f} | " + " | ".join(cells) + " |",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
