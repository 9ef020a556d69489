"""GMAX's hardness (seed 003, Thm D.1): the multiple-knapsack reduction, encoded and solved.

Multiple knapsack (MKP): ``K`` knapsacks of capacity ``C``; item ``i`` has weight ``w_i > 0``
and value ``v_i > 0``; maximise the value packed. The reduction maps it to a serving instance
(:func:`knapsack_instance`): ``K`` batch slots (``max_batch = K``, memory ``K max w`` so it never
binds), one request per item, arriving at 0, with ``o_i = w_i`` decode slots, prompt 0, a
``deadline`` SLO ``C`` and goodput ``value = v_i``. In the common timing convention a request
started at ``k`` completes at ``k + w_i``, so it earns ``v_i`` iff ``k + w_i <= C``.

Why the optima agree: a packing runs each knapsack's items back to back on one batch slot,
all done by ``C``. Conversely the on-time requests of a schedule run inside ``(0, C]`` with at
most ``K`` at a time; intervals with overlap at most ``K`` split into ``K`` chains (interval
graphs are perfect), each a knapsack of load ``<= C``.

Three exact solvers for the two sides: :func:`solve_knapsack` (the MKP MIP,
``x[i, j]`` = item ``i`` in knapsack ``j``), :func:`kvopt.mip.goodput.solve_goodput` on the
mapped instance, and :func:`knapsack_dp` (``K = 1``: the pseudo-polynomial DP over capacity;
``K = 1`` is ``1||sum w_j U_j``, weakly NP-hard; with ``K`` in the input MKP is strongly
NP-hard).

Examples
--------
>>> r = hardness_check([2, 3, 4], [3, 4, 6], capacity=5, solver="highs")
>>> r["knapsack_optimum"], r["goodput_optimum"], r["dp_optimum"]
(7.0, 7.0, 7.0)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.mip.backends.base import get_backend
from kvopt.mip.model.data import MILPData


def _check(weights: Sequence[int], values: Sequence[float], capacity: int,
           knapsacks: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    w = np.asarray(weights)
    v = np.asarray(values, dtype=np.float64)
    if w.ndim != 1 or w.size == 0:
        raise UsageError("weights", "need at least one item")
    if w.dtype.kind not in "iu" and not np.all(w == np.round(w)):
        raise UsageError("weights", f"must be integers, got {list(weights)}")
    w = w.astype(np.int64)
    if (w <= 0).any():
        raise UsageError("weights", f"must be > 0, got {w.tolist()}")
    if v.shape != w.shape:
        raise UsageError("values", f"has {v.size} entries but weights has {w.size}")
    if not np.isfinite(v).all() or (v <= 0).any():
        raise UsageError("values", f"must be finite and > 0, got {v.tolist()}")
    if isinstance(capacity, bool) or int(capacity) != capacity or capacity <= 0:
        raise UsageError("capacity", f"must be a positive integer, got {capacity!r}")
    if isinstance(knapsacks, bool) or int(knapsacks) != knapsacks or knapsacks < 1:
        raise UsageError("knapsacks", f"must be an integer >= 1, got {knapsacks!r}")
    return w, v


def knapsack_instance(weights: Sequence[int], values: Sequence[float], capacity: int,
                      knapsacks: int = 1) -> Instance:
    """The serving instance of Thm D.1's reduction (module docstring).

    Examples
    --------
    >>> inst = knapsack_instance([2, 3], [3, 4], capacity=4, knapsacks=2)
    >>> inst.max_batch, inst.memory, inst.output.tolist(), inst.slo.deadline.tolist()
    (2, 6, [2, 3], [4.0, 4.0])
    """
    w, v = _check(weights, values, capacity, knapsacks)
    n = w.size
    return Instance(memory=int(knapsacks * w.max()), arrival=np.zeros(n, dtype=np.int64),
                    prompt=np.zeros(n, dtype=np.int64), output=w, max_batch=int(knapsacks),
                    slo_kind=["deadline"] * n, deadline=np.full(n, float(capacity)), value=v,
                    name=f"mkp-K{knapsacks}-C{capacity}-n{n}",
                    source="kvopt.mip.hardness.knapsack_instance (seed 003 Thm D.1)")


def knapsack_milp(weights: Sequence[int], values: Sequence[float], capacity: int,
                  knapsacks: int = 1) -> MILPData:
    """MKP as :class:`MILPData` (``min -sum v x``; column ``i * K + j`` = item ``i`` in ``j``).

    Examples
    --------
    >>> d = knapsack_milp([2, 3], [3, 4], capacity=4, knapsacks=2)
    >>> d.n_cols, d.n_rows
    (4, 4)
    """
    w, v = _check(weights, values, capacity, knapsacks)
    n, K = w.size, int(knapsacks)
    cols = np.arange(n * K)
    item, sack = cols // K, cols % K
    rows = np.concatenate([item, n + sack])  # one knapsack per item; capacity per knapsack
    A = sp.csr_matrix((np.concatenate([np.ones(n * K), w[item].astype(np.float64)]),
                       (rows, np.concatenate([cols, cols]))), shape=(n + K, n * K))
    return MILPData(c=-v[item], A=A, row_lower=np.full(n + K, -np.inf),
                    row_upper=np.concatenate([np.ones(n), np.full(K, float(capacity))]),
                    col_lower=np.zeros(n * K), col_upper=np.ones(n * K),
                    integrality=np.ones(n * K, dtype=np.int8),
                    objective_is_integer=bool(np.all(v == np.round(v))),
                    meta={"formulation": "mkp", "items": n, "knapsacks": K})


def solve_knapsack(weights: Sequence[int], values: Sequence[float], capacity: int,
                   knapsacks: int = 1, *, solver: str = "highs",
                   time_limit: float | None = 60.0) -> dict[str, Any]:
    """Solve the MKP MIP: ``{"status", "optimum", "bound", "assignment"}``.

    ``assignment[i]`` is item ``i``'s knapsack (-1: left out). ``status`` is the solver's
    (``"optimal"`` only with a proof).

    Examples
    --------
    >>> solve_knapsack([2, 3, 4], [3, 4, 6], 5, 2)["optimum"]
    13.0
    """
    w, v = _check(weights, values, capacity, knapsacks)
    data = knapsack_milp(weights, values, capacity, knapsacks)
    res = get_backend(solver).solve(data, time_limit=time_limit, threads=1)
    assign, optimum = None, None
    if res.x is not None:
        x = np.rint(res.x).reshape(w.size, int(knapsacks)).astype(bool)
        assign = np.where(x.any(axis=1), x.argmax(axis=1), -1).tolist()
        # the value of the rounded packing, not the solver's floating-point objective (which
        # may read 2.9999999999999996 for 3), after checking the packing is one
        load = np.bincount(x.argmax(axis=1)[x.any(axis=1)], weights=w[x.any(axis=1)],
                           minlength=int(knapsacks))
        if (x.sum(axis=1) > 1).any() or (load > capacity).any():
            raise RuntimeError(f"solver {solver!r} returned an infeasible packing: bug")
        optimum = float(v[x.any(axis=1)].sum())
    return {"status": res.status, "optimum": optimum, "bound": -float(res.bound),
            "assignment": assign}


def knapsack_dp(weights: Sequence[int], values: Sequence[float], capacity: int) -> float:
    """0/1 knapsack optimum (one knapsack) by the DP over capacity, ``O(n C)``.

    ``best[c] = max(best[c], best[c - w_i] + v_i)`` over items, ``c`` descending.

    Examples
    --------
    >>> knapsack_dp([2, 3, 4], [3, 4, 6], 5)
    7.0
    """
    w, v = _check(weights, values, capacity, 1)
    best = np.zeros(int(capacity) + 1)
    for wi, vi in zip(w.tolist(), v.tolist(), strict=True):
        if wi <= capacity:
            best[wi:] = np.maximum(best[wi:], best[: capacity + 1 - wi] + vi)
    return float(best[-1])


def hardness_check(weights: Sequence[int], values: Sequence[float], capacity: int,
                   knapsacks: int = 1, *, solver: str = "highs",
                   time_limit: float | None = 60.0) -> dict[str, Any]:
    """Knapsack MIP optimum, goodput optimum of the mapped instance and (``K = 1``) the DP.

    Returns a JSON-ready dict with ``knapsack_optimum``, ``goodput_optimum``, ``dp_optimum``
    (``None`` for ``K > 1``), both solve statuses, ``equal`` and the mapped instance's name.

    Examples
    --------
    Two knapsacks of capacity 5 (items 2 + 3 in one, 4 in the other) and two batch slots
    with deadline 5 earn the same 13:

    >>> r = hardness_check([2, 3, 4], [3, 4, 6], capacity=5, knapsacks=2)
    >>> r["knapsack_optimum"], r["goodput_optimum"], r["dp_optimum"], r["equal"]
    (13.0, 13.0, None, True)
    >>> r["goodput_status"], r["instance"]
    ('optimal', 'mkp-K2-C5-n3')
    """
    from kvopt.mip.goodput import solve_goodput

    w, v = _check(weights, values, capacity, knapsacks)
    ks = solve_knapsack(weights, values, capacity, knapsacks, solver=solver,
                        time_limit=time_limit)
    inst = knapsack_instance(weights, values, capacity, knapsacks)
    gp = solve_goodput(inst, solver=solver, time_limit=time_limit)
    dp = knapsack_dp(weights, values, capacity) if knapsacks == 1 else None
    vals = [x for x in (ks["optimum"], gp.objective, dp) if x is not None]
    return {"weights": w.tolist(), "values": v.tolist(), "capacity": int(capacity),
            "knapsacks": int(knapsacks), "knapsack_optimum": ks["optimum"],
            "knapsack_status": ks["status"], "goodput_optimum": gp.objective,
            "goodput_status": str(gp.status), "goodput_bound": gp.bound, "dp_optimum": dp,
            "equal": len(vals) == (3 if dp is not None else 2) and max(vals) - min(vals) < 1e-6,
            "instance": inst.name}
