"""The ``cp`` formulation: a CP-SAT scheduling model fitted to CP-SAT's propagation.

Each request ``i`` has one integer start ``k_i``; its growing memory ``s_i + (tau - k_i)`` at
``tau = k_i+1 .. k_i+o_i`` is decomposed into a *staircase* of rigid rectangles that all move
with ``k_i``: one of height ``s_i + 1`` over ``[k_i+1, k_i+o_i]`` and, for ``d = 2..o_i``, one of
height 1 over ``[k_i+d, k_i+o_i]``. All rectangles share one ``AddCumulative`` of capacity
``M``, so CP-SAT's time-tabling and energetic reasoning see the exact profile. Added on top:

- disjunctive cliques (:func:`kvopt.mip.model.builder.conflict_cliques`) as ``AddNoOverlap``;
- ``k_i <= k_j`` for identical requests ``i < j`` (symmetry breaking);
- start windows from the incumbent (:func:`kvopt.mip.model.builder.start_windows`);
- ``objective >= ceil(LB)`` with the combinatorial bound and, when the time-indexed LP is small,
  its LP bound (``tight+cuts``, HiGHS), and the MC-SF hint.

The ``cp+cores`` formulation adds the level-``q`` cores of
:func:`kvopt.mip.bounds.combinatorial.core_lengths` (``q = 1, 2``): intervals ``[k_i - s_i, k_i -
s_i + L_i)``
of which at most ``q`` overlap, i.e. one ``AddNoOverlap`` (``q = 1``) and one unit-demand
``AddCumulative`` of capacity ``q``. They are implied by the staircase but give CP-SAT's
disjunctive reasoning (edge finding, precedences, its LP cuts) the ramp-packing loss that the
memory cumulative only sees slot by slot.

The ``cp+pairs`` formulation further adds, for every pair of requests that cannot nest, the
exact pairwise lags of :func:`pair_lags` as a reified disjunction
``k_j >= k_i + lag[i, j]  or  k_i >= k_j + lag[j, i]`` (``n (n - 1) / 2`` Booleans at most).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance
from kvopt.core.limits import Deadline, as_deadline
from kvopt.mip.backends.base import BackendResult
from kvopt.mip.backends.cpsat import run_cpsat
from kvopt.mip.bounds.combinatorial import combinatorial_bound, core_lengths
from kvopt.mip.model.builder import conflict_cliques, group_requests, start_windows


def pair_lags(instance: Instance) -> NDArray[np.int64]:
    """Exact pairwise start lags: in every feasible schedule, for every pair ``i != j``,
    ``k_j >= k_i + lag[i, j]`` or ``k_i >= k_j + lag[j, i]``.

    ``lag[i, j] = o_i - max(M - s_i - o_i - s_j, 0)``. Proof: if the running intervals
    ``(k_i, c_i]`` and ``(k_j, c_j]`` are disjoint, one request starts after the other
    completes (``k_j >= c_i >= k_i + lag[i, j]``, or symmetrically). Otherwise let ``i``
    complete first (``c_i <= c_j``, so ``k_j < c_i``): at ``c_i`` request ``i`` holds its peak
    ``s_i + o_i`` and ``j`` holds ``s_j + c_i - k_j``, so ``c_i - k_j <= M - s_i - o_i - s_j``,
    i.e. ``k_j >= k_i + lag[i, j]``. The level-1 cores of :func:`core_lengths` are the uniform
    (single-machine) weakening of these lags.

    Examples
    --------
    >>> pair_lags(Instance(memory=10, arrival=[0, 0], prompt=[0, 0], output=[8, 8])).tolist()
    [[0, 6], [6, 0]]
    """
    s = instance.prompt.astype(np.int64)
    o = instance.output.astype(np.int64)
    peak = s + o
    lag = o[:, None] - np.maximum(int(instance.memory) - peak[:, None] - s[None, :], 0)
    np.fill_diagonal(lag, 0)
    return lag


def add_pair_disjunctions(m: Any, k: list[Any], lag: NDArray[np.int64]) -> int:
    """Add to the CP-SAT model ``m``, for every pair ``u < v`` of start variables ``k`` with
    both lags positive, the reified disjunction ``k_v >= k_u + lag[u, v]`` or
    ``k_u >= k_v + lag[v, u]`` (``lag`` = :func:`pair_lags` restricted to the requests of
    ``k``, in the same order; valid for every feasible schedule). Returns the number of
    pairs added.

    Examples
    --------
    >>> from ortools.sat.python import cp_model
    >>> m = cp_model.CpModel()
    >>> k = [m.NewIntVar(0, 20, "") for _ in range(2)]
    >>> add_pair_disjunctions(m, k, np.array([[0, 6], [6, 0]]))
    1
    """
    n_pairs = 0
    for u in range(len(k)):
        for v in range(u + 1, len(k)):
            if lag[u, v] <= 0 or lag[v, u] <= 0:
                continue
            b = m.NewBoolVar("")
            m.Add(k[v] >= k[u] + int(lag[u, v])).OnlyEnforceIf(b)
            m.Add(k[u] >= k[v] + int(lag[v, u])).OnlyEnforceIf(b.Not())
            n_pairs += 1
    return n_pairs


def _at_most(m: Any, ivs: list[Any], level: int) -> int:
    """At most ``level`` of the intervals ``ivs`` overlap (``AddNoOverlap`` for level 1, a
    unit ``AddCumulative`` otherwise); nothing if there are no more than ``level`` of them.
    Returns the number of intervals constrained."""
    if len(ivs) <= level:
        return 0
    if level == 1:
        m.AddNoOverlap(ivs)
    else:
        m.AddCumulative(ivs, [1] * len(ivs), int(level))
    return len(ivs)


def canonical_starts(instance: Instance, starts: NDArray[np.int64]) -> NDArray[np.int64]:
    """``starts`` with the starts of identical ``(a, s, o)`` requests sorted by index (the same
    schedule up to relabelling interchangeable requests; the form the symmetry breaking
    ``k_u <= k_v`` of :func:`solve_cp` admits).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 3, 3])
    >>> canonical_starts(inst, np.array([5, 0, 1])).tolist()
    [0, 5, 1]
    """
    out = np.asarray(starts, dtype=np.int64).copy()
    for g in group_requests(instance, aggregate=True):
        out[g] = np.sort(out[g])
    return out


def solve_cp(
    instance: Instance,
    *,
    time_limit: float | None = None,
    threads: int = 1,
    warm_starts: NDArray[np.int64] | None = None,
    upper: float | None = None,
    lower: float | None = None,
    verbose: bool = False,
    cores: tuple[int, ...] = (),
    pairs: bool = False,
    domains: list[NDArray[np.int64]] | None = None,
    families: list[Any] | None = None,
    formulation: str | None = None,
    deadline: Deadline | None = None,
) -> tuple[BackendResult, NDArray[np.int64] | None, dict[str, Any]]:
    """Solve the ``cp`` formulation with CP-SAT.

    Parameters
    ----------
    instance
        A slotted instance.
    time_limit, deadline, threads, verbose
        Time limit (s) of the whole call (model build included), or a caller's
        :class:`~kvopt.core.limits.Deadline` to share; workers and log.
    warm_starts
        Hint (MC-SF starts); its TEL also caps the objective.
    upper, lower
        Known feasible TEL and a valid lower bound (e.g. the LP bound) added as
        ``lower <= objective <= upper``.
    cores
        Core levels ``q`` to add (``()``: the ``cp`` formulation; ``(1, 2)``: ``cp+cores``).
    pairs
        Add the exact pairwise lags (:func:`pair_lags`) as reified disjunctions.
    domains
        Per-request start domains (sorted slots) intersected with the start windows, e.g.
        the reduced-cost domains of :func:`kvopt.mip.bounds.fixing.reduced_cost_domains` (which
        keep the incumbent and every better schedule).
    families
        Lag-interval families (:func:`kvopt.mip.bounds.intervals.interval_families`): the intervals
        ``[k_i + alpha_i, k_i + beta_i)`` of a level-``q`` family, at most ``q`` of which
        overlap in every feasible schedule (proof in :mod:`kvopt.mip.bounds.intervals`), as one
        ``AddNoOverlap`` (``q = 1``) or unit ``AddCumulative`` of capacity ``q``.
    formulation
        Name recorded in the stats (default from ``cores`` / ``pairs``).

    Returns
    -------
    (result, starts, stats)
        ``result.x`` is ``None``; ``starts`` are the decoded start slots (or ``None``).

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 2, 1], output=[1, 1, 1])
    >>> res, starts, _ = solve_cp(inst, time_limit=10, threads=1)
    >>> res.status, res.objective
    ('optimal', 4.0)
    """
    from ortools.sat.python import cp_model

    dl = as_deadline(time_limit, deadline)
    instance.require_slotted()
    if warm_starts is not None and upper is None:
        upper = instance.tel_of_starts(warm_starts)
    lo, hi = start_windows(instance, horizon=instance.horizon, upper=upper)
    m = cp_model.CpModel()
    k = _start_variables(m, lo, hi, domains)
    counts = _add_constraints(m, instance, k, cores=cores, pairs=pairs, families=families)
    _add_objective(m, instance, k, lower=lower, upper=upper, warm_starts=warm_starts)
    solver, code, runtime, status = run_cpsat(m, deadline=dl, threads=threads, verbose=verbose)
    has = code in (cp_model.OPTIMAL, cp_model.FEASIBLE)
    starts = np.array([solver.Value(v) for v in k], dtype=np.int64) if has else None
    objective = float(solver.ObjectiveValue()) if has else None
    if status == "infeasible":
        bound = math.inf
    elif has or status == "time_limit":
        bound = float(solver.BestObjectiveBound())
    else:
        bound = -math.inf
    name = formulation or ("cp+pairs" if pairs else "cp+cores" if cores else "cp")
    stats: dict[str, Any] = {"formulation": name, "horizon": instance.horizon, **counts,
                             "window_mean": float((hi - lo + 1).mean())}
    return (BackendResult(status, None, objective, bound, runtime, solver.StatusName(code)),
            starts, stats)


def _start_variables(m: Any, lo: NDArray[np.int64], hi: NDArray[np.int64],
                     domains: list[NDArray[np.int64]] | None) -> list[Any]:
    """One start variable per request, on its window (intersected with ``domains``)."""
    from ortools.sat.python import cp_model

    if domains is None:
        return [m.NewIntVar(int(lo[i]), int(hi[i]), f"k{i}") for i in range(lo.size)]
    k = []
    for i in range(lo.size):
        dom = np.asarray(domains[i], dtype=np.int64)
        dom = dom[(dom >= lo[i]) & (dom <= hi[i])]
        if dom.size == 0:
            raise ValueError(f"empty start domain for request {i}")
        k.append(m.NewIntVarFromDomain(cp_model.Domain.FromValues(dom.tolist()), f"k{i}"))
    return k


def _add_constraints(m: Any, instance: Instance, k: list[Any], *, cores: tuple[int, ...],
                     pairs: bool, families: list[Any] | None) -> dict[str, int]:
    """The staircase cumulative, the disjunctive cliques, the ``cores`` levels, the lag-interval
    ``families``, the pairwise lags (``pairs``) and the symmetry breaking (module docstring);
    returns how many of each."""
    s = instance.prompt.astype(np.int64)
    o = instance.output.astype(np.int64)
    n = instance.n
    intervals, demands = [], []
    for i in range(n):
        oi = int(o[i])
        intervals.append(m.NewFixedSizeIntervalVar(k[i] + 1, oi, ""))
        demands.append(int(s[i]) + 1)
        for d in range(2, oi + 1):
            intervals.append(m.NewFixedSizeIntervalVar(k[i] + d, oi - d + 1, ""))
            demands.append(1)
    m.AddCumulative(intervals, demands, int(instance.memory))
    cliques = conflict_cliques(instance, group_requests(instance, aggregate=False),
                               max_cliques=8)
    for cl in cliques:
        m.AddNoOverlap([m.NewFixedSizeIntervalVar(k[int(i)] + 1, int(o[int(i)]), "")
                        for i in cl])
    n_core = 0
    for q in cores:
        L, _ = core_lengths(instance, q)
        ivs = [m.NewFixedSizeIntervalVar(k[i] - int(s[i]), int(L[i]), "")
               for i in range(n) if L[i] > 0]
        n_core += _at_most(m, ivs, q)
    n_fam = 0
    for fam in families or []:
        ivs = [m.NewFixedSizeIntervalVar(k[int(i)] + int(al), int(be - al), "")
               for i, al, be in zip(fam.members, fam.alpha, fam.beta, strict=True)
               if be > al]
        n_fam += _at_most(m, ivs, int(fam.level))
    n_pairs = add_pair_disjunctions(m, k, pair_lags(instance)) if pairs else 0
    for g in group_requests(instance, aggregate=True):
        for u, v in itertools.pairwise(g):
            m.Add(k[int(u)] <= k[int(v)])
    return {"core_intervals": n_core, "lag_intervals": n_fam, "pairs": n_pairs,
            "intervals": len(intervals), "cliques": len(cliques)}


def _add_objective(m: Any, instance: Instance, k: list[Any], *, lower: float | None,
                   upper: float | None, warm_starts: NDArray[np.int64] | None) -> None:
    """Minimise TEL within ``ceil(max(combinatorial bound, lower)) <= TEL <= upper``, with the
    (canonical) warm start as hint."""
    o = instance.output.astype(np.int64)
    lb = math.ceil(max(combinatorial_bound(instance), lower or -math.inf) - 1e-9)
    obj = sum(k) + int((o - instance.arrival.astype(np.int64)).sum())
    m.Add(obj >= lb)
    if upper is not None:
        m.Add(obj <= math.floor(upper + 1e-9))
    m.Minimize(obj)
    if warm_starts is not None:
        hint = canonical_starts(instance, warm_starts)
        for i in range(instance.n):
            m.AddHint(k[i], int(hint[i]))
