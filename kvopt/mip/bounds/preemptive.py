"""Lower bounds that stay lower bounds when evicted requests keep their tokens.

With ``restart`` (the seed convention) the non-preemptive hindsight optimum bounds every
schedule: keep each request's final run and slide it to end at its completion, and the
memory never grows (:mod:`kvopt.core.schedule`). With ``recompute`` or ``swap`` a request can
stop and resume without losing its tokens, and a preemptive schedule can beat that optimum.
This module bounds *every* schedule of every mode with a token-indexed relaxation.

**Theorem.** Let ``S`` be a valid schedule (:func:`kvopt.check_schedule`) of a slotted
instance in any preemption mode, with any block size, chunked prefill or paused slots. For
request ``i`` and token ``j = 1..o_i`` let ``tau_ij`` be the slot in which ``S`` produces
token ``j`` of ``i`` for the last time. Then

(a) ``a_i < tau_i1 < tau_i2 < ... < tau_i,o_i = c_i``, and
(b) at every slot ``tau``, ``sum_{(i, j): tau_ij = tau} (s_i + j) <= M``,

so ``PRE = min sum_i (tau_i,o_i - a_i)`` over (a), (b) is at most ``TEL(S)``.

*Proof.* (a) A run starts at a decision point ``k >= a_i`` and produces from slot
``k + 1``. Under restart the final run produces tokens ``1..o_i`` in increasing slots after
every earlier run; under recompute/swap every token is produced once, in order. The last
token is produced at the completion ``c_i``. (b) The run that produces token ``j`` of ``i``
at ``tau`` resumed from ``offset`` tokens and has produced ``j - offset`` by ``tau``, so it
holds ``s_i + j`` tokens there (more with blocks); the other runs active at ``tau``
(producing, paused, prefilling) hold ``>= 0``; the validator checked the total against
``M``. ``PRE`` relaxes ``S``. QED.

The relaxation drops the non-preemption of runs, the memory of paused and prefilling
requests, swap space and the batch limit. Its exact value is the optimum of the integer
program :func:`preemptive_model` (``z_ijt = 1`` iff token ``j`` of ``i`` is produced by slot
``t``), solved by HiGHS in :func:`solve_preemptive` on small instances; at any scale
:func:`preemptive_bound` gives the trivial, volume and fluid bounds of
:mod:`kvopt.mip.bounds.combinatorial`, whose proofs use only (a) and (b) (token ``j`` of ``i``
takes ``s_i + j`` of one slot's ``M``), so they bound ``PRE`` too. The core bound there
relies on non-preemptive runs and is *not* valid here.

Horizon: an optimal solution of ``PRE`` has no slot after ``max a`` in which no token is
produced while some request is unfinished (moving every later production one slot earlier
keeps (a) and (b) and lowers the objective), so ``T = max a + sum o`` slots suffice.

Tested exhaustively against an independent dynamic program over token counts
(``tests/bruteforce.py``) and against every policy in every mode (``tests/test_cross.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from kvopt.core.errors import MemoryBudgetError
from kvopt.core.instance import Instance
from kvopt.mip.bounds.combinatorial import fluid_bound, trivial_bound, volume_bound
from kvopt.mip.model.data import MILPData


def preemptive_bound(instance: Instance) -> float:
    """Best of the trivial, volume and fluid bounds: a lower bound on the total latency of
    every schedule in every preemption mode (module docstring).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> preemptive_bound(inst)
    12.0
    """
    instance.require_slotted()
    return max(trivial_bound(instance), volume_bound(instance), fluid_bound(instance))


#: Most columns :func:`preemptive_model` builds (its rows are built in Python).
MAX_COLUMNS = 2_000_000


def preemptive_columns(instance: Instance) -> int:
    """Columns of :func:`preemptive_model`: ``sum_i o_i (T - a_i - o_i)``, ``T = max a +
    sum o``.

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0], prompt=[1, 1], output=[2, 1])
    >>> preemptive_columns(inst), preemptive_model(inst).n_cols   # T = 3: 2 * 1 + 1 * 2
    (4, 4)
    """
    a, o = instance.arrival.astype(np.int64), instance.output.astype(np.int64)
    T = int(a.max() + o.sum())
    return int((o * (T - a - o)).sum())


def preemptive_model(instance: Instance, max_columns: int = MAX_COLUMNS) -> MILPData:
    """The integer program of ``PRE`` (module docstring), cumulative form.

    Column ``z[i, j, t]`` (``t`` from ``a_i + j`` to ``T - (o_i - j) - 1``; before that range
    ``z = 0``, after it ``z = 1``) is 1 iff token ``j`` of ``i`` is produced by slot ``t``.
    Rows: ``z[i,j,t] <= z[i,j,t+1]``; ``z[i,j+1,t] <= z[i,j,t-1]`` (one token per slot and
    request, in order); memory ``sum_{i,j} (s_i + j) (z[i,j,t] - z[i,j,t-1]) <= M`` at every
    ``t``. Objective ``sum_i sum_{t = a_i}^{T-1} (1 - z[i, o_i, t])`` = ``sum_i (c_i - a_i)``.
    Above ``max_columns`` columns it refuses (:class:`~kvopt.core.errors.MemoryBudgetError`)
    before building anything.

    Examples
    --------
    >>> d = preemptive_model(Instance(memory=4, arrival=[0, 0], prompt=[1, 1], output=[2, 1]))
    >>> d.n_cols, d.meta["horizon"]
    (4, 3)
    """
    inst = instance
    inst.require_slotted()
    ncol_est = preemptive_columns(inst)
    if ncol_est > max_columns:
        raise MemoryBudgetError("instance", f"the preemptive model would have {ncol_est:,} "
                                f"columns (at most {max_columns:,} are built); use "
                                "preemptive_bound at this size", budget=max_columns)
    a, s, o = (x.astype(np.int64) for x in (inst.arrival, inst.prompt, inst.output))
    T = int(a.max() + o.sum())
    tok_i = np.repeat(np.arange(inst.n), o)
    tok_j = np.concatenate([np.arange(1, oi + 1) for oi in o.tolist()])
    lo = a[tok_i] + tok_j                  # earliest slot of the token
    hi = T - (o[tok_i] - tok_j)            # z = 1 from here on
    base = np.concatenate([[0], np.cumsum(hi - lo)])
    ntok = int(lo.shape[0])
    w = (s[tok_i] + tok_j).astype(np.float64)

    def z(k: int, t: int) -> int | float:
        """Column of z[k, t], or its fixed value 0.0 / 1.0 outside the variable range."""
        if t < lo[k]:
            return 0.0
        if t >= hi[k]:
            return 1.0
        return int(base[k] + t - lo[k])

    rows: list[dict[int, float]] = []
    rhs: list[float] = []

    def le(terms: list[tuple[int | float, float]], bound: float) -> None:
        """Add ``sum coef * z <= bound`` (fixed z's move to the right-hand side)."""
        r: dict[int, float] = {}
        for var, coef in terms:
            if isinstance(var, float):
                bound -= coef * var
            else:
                r[var] = r.get(var, 0.0) + coef
        if r:
            rows.append(r)
            rhs.append(bound)

    mem: dict[int, list[tuple[int | float, float]]] = {}
    for k in range(ntok):
        for t in range(int(lo[k]), int(hi[k]) + 1):
            if t < hi[k] - 1:
                le([(z(k, t), 1.0), (z(k, t + 1), -1.0)], 0.0)  # monotone
            if tok_j[k] > 1 and t < hi[k]:
                le([(z(k, t), 1.0), (z(k - 1, t - 1), -1.0)], 0.0)  # after the previous token
            mem.setdefault(t, []).extend([(z(k, t), w[k]), (z(k, t - 1), -w[k])])
    for t in sorted(mem):
        le(mem[t], float(inst.memory))
    A = sp.lil_matrix((len(rows), int(base[-1])))
    for ridx, r in enumerate(rows):
        for var, coef in r.items():
            A[ridx, var] = coef
    # objective: sum_i sum_{t=a_i}^{T-1} (1 - z[last token of i, t])
    c = np.zeros(int(base[-1]))
    offset = 0.0
    for k in (np.cumsum(o) - 1).tolist():
        for t in range(int(a[tok_i[k]]), T):
            zv = z(k, t)
            if isinstance(zv, float):
                offset += 1.0 - zv
            else:
                offset += 1.0
                c[zv] -= 1.0
    ncol = int(base[-1])
    return MILPData(c=c, A=A.tocsr(), row_lower=np.full(len(rows), -np.inf),
                    row_upper=np.asarray(rhs, dtype=np.float64), col_lower=np.zeros(ncol),
                    col_upper=np.ones(ncol), integrality=np.ones(ncol, dtype=np.int8),
                    obj_offset=offset, meta={"formulation": "preemptive-token",
                                             "horizon": T})


@dataclass(frozen=True)
class PreemptiveResult:
    """Outcome of :func:`solve_preemptive`: HiGHS's status, the incumbent value of ``PRE``
    (``None`` if none was found) and the proven lower bound (always valid for every schedule
    in every mode).

    Examples
    --------
    >>> inst = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> r = solve_preemptive(inst)
    >>> r.status, r.objective, r.bound
    ('optimal', 7.0, 7.0)
    """

    status: str
    objective: float | None
    bound: float
    runtime: float


def solve_preemptive(instance: Instance, *, time_limit: float | None = 60.0,
                     relax: bool = False) -> PreemptiveResult:
    """Solve ``PRE`` (module docstring) with HiGHS (``scipy.optimize.milp``).

    ``status == "optimal"``: ``objective`` is the preemptive optimum and bounds every
    schedule in every mode. On a time limit, ``bound`` (HiGHS's dual bound, at least the
    combinatorial :func:`preemptive_bound`) is still a valid lower bound and ``objective`` only
    an incumbent of the relaxation. ``relax=True`` solves the LP relaxation.

    Examples
    --------
    >>> inst = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> r = solve_preemptive(inst)
    >>> r.status, r.objective, r.bound >= 6.0
    ('optimal', 7.0, True)
    """
    from kvopt.mip.backends.scipy_milp import ScipyBackend

    data = preemptive_model(instance)
    if data.n_cols == 0:  # one request: every token has one slot (n >= 2 leaves room)
        return PreemptiveResult("optimal", data.obj_offset, data.obj_offset, 0.0)
    res = ScipyBackend().solve(data, time_limit=time_limit, threads=1, relax=relax)
    comb = preemptive_bound(instance)
    bound = max(float(res.bound), comb) if res.status != "infeasible" else float(res.bound)
    obj = None if res.objective is None else float(round(res.objective, 6))
    if res.status == "optimal" and obj is not None and not relax:
        bound = obj
    return PreemptiveResult(str(res.status), obj, bound, float(res.runtime_s))
