"""Reduced-cost fixing of start slots: a Lagrangian bound and per-request start domains.

Given an incumbent of total latency ``UB``, the exact search only needs the schedules that
are *strictly better* (TEL ``<= UB - 1``, TEL being an integer). The LP relaxation of a
time-indexed formulation (:func:`kvopt.mip.model.builder.build_milp`, default ``tight+cores``)
prices every start slot: a slot whose reduced cost pushes every schedule using it to
``>= UB`` can be removed from that request's domain.

The argument does not trust the LP solver. Only its row duals are used, as Lagrange
multipliers ``mu >= 0`` of the inequality rows (memory, DFF, core and clique rows: each is
satisfied by every feasible schedule, see :mod:`kvopt.mip.model.builder`), and the bound is
recomputed here in floating point from ``mu``, so any ``mu >= 0`` gives valid results;
good duals only make them stronger.

Proof. Let ``y`` be the integer column vector of a feasible schedule whose starts lie in the
start windows of the formulation (:func:`kvopt.mip.model.builder.start_windows`: every schedule
of TEL ``<= UB`` does), ``c`` the latency costs, ``A y <= u`` the inequality rows. For
``mu >= 0``::

    TEL(y) = c.y >= c.y + mu.(A y - u) = sum_{g,k} r[g,k] y[g,k] - mu.u,   r = c + A^T mu.

Group ``g`` (identical requests) has ``sum_k y[g,k] = |g|`` and ``y >= 0``, so with
``m_g = min_k r[g,k]`` and any slot ``k*`` used by one of its requests,
``sum_k r[g,k] y[g,k] >= |g| m_g + (r[g,k*] - m_g)``. Hence

    TEL(y) >= L(mu) + delta[g, k*],   L(mu) = sum_g |g| m_g - mu.u,   delta = r - m_g >= 0.

So ``L(mu)`` is a lower bound on OPT (weak duality; at the LP optimum's duals it equals the
LP bound), and if ``L(mu) + delta[g, k] > UB - 1`` no schedule strictly better than the
incumbent starts a request of ``g`` at ``k``. Restricting each request's start domain to
the kept slots *plus the incumbent starts of its group* keeps the incumbent (also with its
identical requests re-labelled in index order, as the symmetry breaking of
:mod:`kvopt.mip.model.cpmodel` wants) and every strictly better schedule: the restricted problem
has the same optimum. A margin of ``1e-6 * max(1, UB)``
guards the floating-point comparison.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance
from kvopt.core.limits import Deadline, as_deadline
from kvopt.mip.bounds.intervals import add_interval_rows, interval_families
from kvopt.mip.bounds.lagrangian import lagrangian_reduced_costs
from kvopt.mip.bounds.sparse_lp import solve_lp_duals
from kvopt.mip.model.builder import build_milp
from kvopt.mip.result import integral_bound


@dataclass
class Fixing:
    """Outcome of :func:`reduced_cost_domains`.

    Attributes
    ----------
    bound
        The Lagrangian bound ``L(mu)`` (valid for any duals; a lower bound on OPT).
    lp_value
        HiGHS' LP objective (for information; ``bound`` is the value to use).
    domains
        Per request, the sorted start slots kept (always containing the incumbent start).
    upper
        The incumbent TEL the fixing was computed against.
    window_mean, domain_mean
        Mean start-window length before fixing and mean domain size after.
    families
        The lag-interval families (:class:`kvopt.mip.bounds.intervals.IntervalFamily`) whose rows
        were in the LP (empty without ``intervals=True``).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 1], output=[8, 8, 2])
    >>> fx = reduced_cost_domains(inst, np.array([0, 8, 0]))   # an optimal incumbent
    >>> round(fx.bound, 6), fx.upper, fx.window_mean, round(fx.domain_mean, 4)
    (26.0, 26.0, 9.0, 1.6667)
    """

    bound: float
    lp_value: float
    domains: list[NDArray[np.int64]]
    upper: float
    window_mean: float
    domain_mean: float
    families: list[Any] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


def reduced_cost_domains(
    instance: Instance,
    starts: NDArray[np.int64],
    *,
    formulation: str = "tight+cores",
    time_limit: float | None = None,
    intervals: bool = False,
    lp_form: str = "differenced",
    lp_method: str = "ipm",
    deadline: Deadline | None = None,
) -> Fixing | None:
    """Start domains that keep every schedule better than the incumbent ``starts``.

    Solves the LP relaxation of ``formulation`` (HiGHS, windows from the incumbent), then
    applies the module docstring's fixing with its row duals (both signs of HiGHS' duals are
    tried, the larger bound kept). Returns ``None`` if the LP was not solved within
    ``time_limit`` seconds (or the caller's ``deadline``).
    ``intervals=True`` adds the level-1 lag-interval rows of :mod:`kvopt.mip.bounds.intervals`
    (valid ``<=`` rows for every feasible schedule, proof there) to the LP: a larger bound,
    hence more slots fixed. ``lp_form`` / ``lp_method`` choose how the LP is solved
    (:func:`kvopt.mip.bounds.sparse_lp.solve_lp_duals`; every form gives duals of the original rows,
    and only those enter the fixing).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 0], prompt=[1, 1, 1], output=[8, 8, 2])
    >>> fx = reduced_cost_domains(inst, np.array([0, 8, 0]))
    >>> fx.bound <= 26 <= fx.upper
    True
    >>> [d.tolist() for d in fx.domains]     # the incumbent is optimal: nothing else kept
    [[0, 8], [0, 8], [0]]
    """
    dl = as_deadline(time_limit, deadline)
    instance.require_slotted()
    t0 = time.perf_counter()
    st = np.asarray(starts, dtype=np.int64)
    upper = float(instance.tel_of_starts(st))
    data = build_milp(instance, formulation, upper=upper)
    families: list[Any] = []
    if intervals:
        families = interval_families(instance, data.groups)
        data = add_interval_rows(data, families)
    res = solve_lp_duals(data, deadline=dl, form=lp_form, method=lp_method)
    dual = res.row_dual
    if res.status != "optimal" or res.value is None or dual is None:
        return None
    best: tuple[float, NDArray[np.float64]] | None = None
    for mu in (-dual, dual):
        cand = lagrangian_reduced_costs(data, mu)
        if best is None or cand[0] > best[0]:
            best = cand
    assert best is not None and data.col_group is not None and data.col_start is not None
    bound, delta = best
    keep = bound + delta <= upper - 1.0 + 1e-6 * max(1.0, abs(upper))
    domains: list[NDArray[np.int64]] = [np.empty(0, np.int64)] * instance.n
    for g, members in enumerate(data.groups):
        ks = np.union1d(data.col_start[(data.col_group == g) & keep], st[members])
        for i in members:
            domains[int(i)] = ks.astype(np.int64)
    return Fixing(bound=bound, lp_value=float(res.value), domains=domains, upper=upper,
                  window_mean=float(data.meta["window_mean"]),
                  domain_mean=float(np.mean([d.size for d in domains])), families=families,
                  info={"formulation": formulation + ("+intervals" if intervals else ""),
                        "lp_s": res.info["lp_s"], "lp_form": lp_form,
                        "lp_method": lp_method,
                        "seconds": round(time.perf_counter() - t0, 3),
                        "bound_ceil": integral_bound(bound)})
