"""Configuration LP bound by column generation, with a valid Lagrangian bound at every step.

The LP of the time-indexed model (:mod:`kvopt.mip.model.builder`) lets fractional starts combine
into per-slot memory loads that no set of running requests has. The *configuration LP*
convexifies the memory knapsack of every slot ``tau``: a *configuration* at ``tau`` is a set
``C`` of (request, age) pairs, at most one age per request, with ``sum_{(j, d) in C}
(s_j + d) <= M`` (the requests running at ``tau`` and their ages ``d = tau - k_j``).

Master LP (start variables ``x[j, k]`` over the start windows ``W_j`` of
:func:`kvopt.mip.model.builder.start_windows`, configuration weights ``lam[tau, C]``)::

    min  sum_{j, k} (k + o_j - a_j) x[j, k]
    s.t. sum_k x[j, k] = 1                                   (every j)
         sum_{C containing (j, d)} lam[tau, C] >= x[j, tau - d]    (every j, k in W_j, d = 1..o_j)
         sum_C lam[tau, C] <= 1                              (every tau)
         sum_{(j, k): t in core_q(j, k)} x[j, k] <= q        (cores, q = 1, 2; optional)
         x, lam >= 0

Columns ``lam[tau, C]`` are priced by a multiple-choice knapsack per slot (capacity ``M``,
one item per (request, age), at most one per request), solved for all slots at once by a
numpy dynamic programme. Every LP solve gives duals ``pi >= 0`` (linking rows) and
``rho >= 0`` (core rows), from which :func:`lagrangian_value` computes a bound that is valid
whatever the duals are, so a run stopped by its time limit still returns a valid bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance
from kvopt.core.limits import Deadline, as_deadline
from kvopt.mip.bounds.combinatorial import core_lengths
from kvopt.mip.model.builder import start_windows


@dataclass
class _Layout:
    """Index layout of the start columns and the linking rows (one per (j, k, d))."""

    n: int
    M: int
    a: NDArray[np.int64]
    s: NDArray[np.int64]
    o: NDArray[np.int64]
    lo: NDArray[np.int64]
    hi: NDArray[np.int64]
    xoff: NDArray[np.int64]       # first x column of request j
    loff: NDArray[np.int64]       # first linking row of request j ((k - lo) * o + d - 1)
    tau_max: int
    cores: list[tuple[int, NDArray[np.int64], NDArray[np.int64]]] = field(default_factory=list)

    @property
    def n_x(self) -> int:
        return int(self.xoff[-1])

    @property
    def n_link(self) -> int:
        return int(self.loff[-1])


def _layout(instance: Instance, lo: NDArray[np.int64], hi: NDArray[np.int64],
            core_levels: tuple[int, ...]) -> _Layout:
    a = instance.arrival.astype(np.int64)
    s = instance.prompt.astype(np.int64)
    o = instance.output.astype(np.int64)
    w = hi - lo + 1
    xoff = np.concatenate([[0], np.cumsum(w)]).astype(np.int64)
    loff = np.concatenate([[0], np.cumsum(w * o)]).astype(np.int64)
    lay = _Layout(instance.n, int(instance.memory), a, s, o, lo, hi, xoff, loff,
                  int((hi + o).max()))
    for q in core_levels:
        L, _ = core_lengths(instance, q)
        lay.cores.append((int(q), np.maximum(L, 0).astype(np.int64), s))
    return lay


def lagrangian_value(lay: _Layout, pi: NDArray[np.float64],
                     rho: list[NDArray[np.float64]]) -> float:
    """Lagrangian bound for linking duals ``pi >= 0`` and core duals ``rho[q] >= 0``.

    ``L = sum_j min_{k in W_j} [c_jk + sum_d pi[j, k, d] + sum_q sum_{t in core_q(j, k)}
    rho_q[t]] - sum_tau P_tau(pi) - sum_q q sum_t rho_q[t]`` with ``P_tau`` the best
    configuration profit at ``tau`` (:func:`price_slots`). See :func:`colgen_bound` for the
    proof that ``L <= OPT``.

    Examples
    --------
    With zero duals the bound ignores memory: every request starts at once (``4 + 3 + 2``);
    :func:`colgen_bound` raises it to OPT = 13 by choosing better duals.

    >>> inst = Instance(memory=6, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 3, 2])
    >>> lo, hi = start_windows(inst, horizon=inst.horizon)
    >>> lay = _layout(inst, lo, hi, ())          # start windows, no core rows
    >>> lagrangian_value(lay, np.zeros(lay.n_link), [])
    9.0
    """
    return _lagrangian_from(lay, pi, rho, price_slots(lay, pi)[0])


def _core_shift(lay: _Layout) -> int:
    """Core slots ``t = k - s_j + i`` are stored at index ``t + shift`` (``t >= -max s``)."""
    return int(lay.s.max())


def _n_core_slots(lay: _Layout) -> int:
    return lay.tau_max + _core_shift(lay) + 1


def price_slots(lay: _Layout, pi: NDArray[np.float64], *, want: NDArray[np.bool_] | None = None
                ) -> tuple[NDArray[np.float64], list[list[tuple[int, int]] | None]]:
    """Best configuration at every slot: multiple-choice knapsack, capacity ``M``.

    Item ``(j, d)`` at slot ``tau`` has weight ``s_j + d`` and profit ``pi[j, tau - d, d]``
    (only items with positive profit are offered). Returns the best profit per slot
    ``tau = 0 .. tau_max`` and, for the slots flagged in ``want``, one optimal configuration
    as a list of ``(j, d)``.

    Examples
    --------
    With every linking dual 1, a slot's best profit is the most (request, age) pairs that fit
    in ``M = 6`` together (weights ``s_j + d``):

    >>> inst = Instance(memory=6, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 3, 2])
    >>> lo, hi = start_windows(inst, horizon=inst.horizon)
    >>> lay = _layout(inst, lo, hi, ())
    >>> best, configs = price_slots(lay, np.ones(lay.n_link), want=np.arange(10) == 3)
    >>> best.tolist(), configs[3]
    ([0.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 1.0], [(1, 1), (0, 1)])
    """
    T1 = lay.tau_max + 1
    M = lay.M
    F = np.zeros((T1, M + 1))
    choice: list[NDArray[np.int16]] = []
    for j in range(lay.n):
        oj, sj, loj = int(lay.o[j]), int(lay.s[j]), int(lay.lo[j])
        wj = int(lay.hi[j] - lay.lo[j] + 1)
        seg = pi[lay.loff[j]: lay.loff[j + 1]].reshape(wj, oj)
        G = F.copy()
        ch = np.zeros((T1, M + 1), dtype=np.int16)
        for d in range(1, oj + 1):
            wt = sj + d
            if wt > M:
                break
            p = seg[:, d - 1]
            pos = np.flatnonzero(p > 1e-12)
            if pos.size == 0:
                continue
            taus = loj + pos + d
            cand = F[taus, : M + 1 - wt] + p[pos, None]
            sub = G[taus, wt:]
            better = cand > sub + 1e-12
            if better.any():
                G[taus, wt:] = np.where(better, cand, sub)
                chs = ch[taus, wt:]
                ch[taus, wt:] = np.where(better, np.int16(d), chs)
        F = G
        choice.append(ch)
    best = F[:, M].copy()
    configs: list[list[tuple[int, int]] | None] = [None] * T1
    if want is not None:
        for tau in np.flatnonzero(want):
            c = M
            items: list[tuple[int, int]] = []
            for j in range(lay.n - 1, -1, -1):
                d = int(choice[j][tau, c])
                if d > 0:
                    items.append((j, d))
                    c -= int(lay.s[j]) + d
            configs[int(tau)] = items
    return best, configs


@dataclass
class ColgenResult:
    """Outcome of :func:`colgen_bound`.

    ``bound`` is a valid lower bound on OPT in every status; ``lp_value`` is the master LP
    value at the last solve (a bound only when ``status == "optimal"``).

    Examples
    --------
    >>> inst = Instance(memory=6, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 3, 2])
    >>> res = colgen_bound(inst, time_limit=30)
    >>> res.status, round(res.bound, 6), round(res.lp_value, 6), res.meta["slots"]
    ('optimal', 13.0, 13.0, 9)
    """

    bound: float
    status: str
    lp_value: float | None
    iterations: int
    columns: int
    seconds: float
    history: list[tuple[float, float, float]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


def colgen_bound(instance: Instance, *, time_limit: float | None = 60.0,
                 upper: float | None = None, starts: NDArray[np.int64] | None = None,
                 cores: tuple[int, ...] = (1, 2), max_iterations: int = 10_000,
                 tol: float = 1e-6, verbose: bool = False,
                 deadline: Deadline | None = None) -> ColgenResult:
    """Configuration-LP lower bound on the total latency (column generation, HiGHS).

    Parameters
    ----------
    instance
        A slotted instance.
    time_limit, deadline
        Wall-clock seconds for the whole call (or a caller's
        :class:`~kvopt.core.limits.Deadline`); when it runs out the best Lagrangian bound so
        far is returned with ``status="time_limit"``.
    upper, starts
        A feasible schedule's start slots (default MC-SF) and its TEL: they set the start
        windows and the first columns.
    cores
        Core levels whose rows join the master.

    Returns
    -------
    ColgenResult

    Notes
    -----
    **Proof of validity.** Let ``k*`` be an optimal schedule; it lies in the windows ``W_j``
    (:func:`~kvopt.mip.model.builder.start_windows` keeps every optimal schedule). Let ``C_tau`` be
    the set of ``(j, tau - k*_j)`` over the requests running at ``tau``; it is a
    configuration because the schedule respects ``M``. For any ``pi >= 0`` and
    ``rho_q >= 0``::

        OPT = sum_j c_{j k*_j}
            = sum_j [c_{j k*_j} + sum_d pi[j, k*_j, d] + sum_q rho_q(core_q(j, k*_j))]
              - sum_tau pi(C_tau) - sum_q sum_t rho_q[t] * #{j : t in core_q(j, k*_j)}

    since every ``(j, k*_j, d)`` lies in exactly one ``C_tau`` (``tau = k*_j + d``). Each
    bracket is ``>=`` its minimum over ``k in W_j``, ``pi(C_tau) <= P_tau(pi)`` (the knapsack
    optimum) and ``#{...} <= q`` (:func:`~kvopt.mip.bounds.combinatorial.core_lengths`), so
    ``OPT >= L(pi, rho)`` of :func:`lagrangian_value`. At an optimal master solution,
    LP duality makes ``L`` equal to the master value. Objective values are integers, so
    ``ceil(L)`` is valid too (the caller rounds).

    Examples
    --------
    >>> inst = Instance(memory=6, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[4, 3, 2])
    >>> res = colgen_bound(inst, time_limit=30)
    >>> res.status, math.ceil(res.bound - 1e-6)   # OPT = 4 + 3 + 6 = 13 (all three serial-ish)
    ('optimal', 13)
    """
    from kvopt.core.mcsf import mcsf_starts

    dl = as_deadline(time_limit, deadline)
    t0 = dl.elapsed()
    instance.require_slotted()
    starts = np.asarray(mcsf_starts(instance) if starts is None else starts, dtype=np.int64)
    if upper is None:
        upper = instance.tel_of_starts(starts)
    lo, hi = start_windows(instance, horizon=instance.horizon, upper=upper)
    lay = _layout(instance, np.minimum(lo, starts), np.maximum(hi, starts), cores)
    master = _Master(lay, verbose)
    first = _schedule_configs(lay, starts)   # first columns: the schedule's configurations
    master.add_configs(first)
    ncols = len(first)
    best = -math.inf
    lp_value: float | None = None
    status = "time_limit"
    history: list[tuple[float, float, float]] = []
    it = 0
    while it < max_iterations and not dl.expired():
        duals = master.solve(dl)
        if duals is None:
            break
        it += 1
        lp_value, pi, sigma, rho = duals
        prof, _ = price_slots(lay, pi)
        want = prof > -sigma + tol
        val = _lagrangian_from(lay, pi, rho, prof)
        best = max(best, val)
        history.append((dl.elapsed() - t0, lp_value, val))
        if verbose:
            print(f"it {it}: lp {lp_value:.3f} lagr {val:.3f} best {best:.3f} "
                  f"new {int(want.sum())} cols {ncols}")
        if not want.any():
            status = "optimal"
            best = max(best, lp_value)
            break
        _, cfgs = price_slots(lay, pi, want=want)
        new = [(int(tau), c) for tau, c in enumerate(cfgs) if c]
        master.add_configs(new)
        ncols += len(new)
    return ColgenResult(bound=best, status=status, lp_value=lp_value, iterations=it,
                        columns=ncols, seconds=dl.elapsed() - t0, history=history,
                        meta={"x_columns": lay.n_x, "link_rows": lay.n_link,
                              "slots": lay.tau_max + 1})


def _schedule_configs(lay: _Layout, starts: NDArray[np.int64]
                      ) -> list[tuple[int, list[tuple[int, int]]]]:
    """The configuration of a schedule at every slot where something runs."""
    out: list[tuple[int, list[tuple[int, int]]]] = []
    for tau in range(1, lay.tau_max + 1):
        d = tau - starts
        run = np.flatnonzero((d >= 1) & (d <= lay.o))
        if run.size:
            out.append((tau, [(int(j), int(d[j])) for j in run]))
    return out


class _Master:
    """The master LP of :func:`colgen_bound` in HiGHS: rows assign (n) | link (one per
    (j, k, d)) | conv (one per slot) | cores (one block per level), the start columns, and
    the configuration columns added by :meth:`add_configs`."""

    def __init__(self, lay: _Layout, verbose: bool) -> None:
        import highspy

        self.lay = lay
        n, nl = lay.n, lay.n_link
        self.T1 = lay.tau_max + 1
        self.ncs = _n_core_slots(lay)
        self.r_link, self.r_conv = n, n + nl
        self.r_core = [self.r_conv + self.T1 + i * self.ncs for i in range(len(lay.cores))]
        inf = self.inf = highspy.kHighsInf
        nc = self.ncs * len(lay.cores)
        row_lo = np.concatenate([np.ones(n), np.zeros(nl), np.full(self.T1, -inf),
                                 np.full(nc, -inf)])
        row_up = np.concatenate([np.ones(n), np.full(nl, inf), np.ones(self.T1),
                                 np.concatenate([np.full(self.ncs, float(q))
                                                 for q, _, _ in lay.cores])
                                 if lay.cores else np.zeros(0)])
        cost, starts_idx, index, value = self._start_columns()
        h = self.h = highspy.Highs()
        h.setOptionValue("output_flag", bool(verbose))
        h.setOptionValue("threads", 1)
        lp = highspy.HighsLp()
        lp.num_col_ = lay.n_x
        lp.num_row_ = row_lo.size
        lp.col_cost_ = cost
        lp.col_lower_ = np.zeros(lay.n_x)
        lp.col_upper_ = np.full(lay.n_x, inf)
        lp.row_lower_ = row_lo
        lp.row_upper_ = row_up
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.array(starts_idx, dtype=np.int32)
        lp.a_matrix_.index_ = np.array(index, dtype=np.int32)
        lp.a_matrix_.value_ = np.array(value, dtype=np.float64)
        lp.a_matrix_.num_col_ = lay.n_x
        lp.a_matrix_.num_row_ = row_lo.size
        h.passModel(lp)

    def _start_columns(self) -> tuple[NDArray[np.float64], list[int], list[int], list[float]]:
        """Cost and column-wise entries of the start columns ``x[j, k]``."""
        lay = self.lay
        starts_idx, index, value = [0], [], []
        cost = np.empty(lay.n_x)
        shift = _core_shift(lay)
        for j in range(lay.n):
            oj = int(lay.o[j])
            for k in range(int(lay.lo[j]), int(lay.hi[j]) + 1):
                col = int(lay.xoff[j]) + k - int(lay.lo[j])
                cost[col] = k + oj - int(lay.a[j])
                first_row = self.r_link + int(lay.loff[j]) + (k - int(lay.lo[j])) * oj
                rows = [j, *range(first_row, first_row + oj)]
                vals = [1.0] + [-1.0] * oj
                for ci, (_, L, s) in enumerate(lay.cores):
                    Lj = int(L[j])
                    if Lj > 0:
                        st = k - int(s[j]) + shift
                        rows += list(range(self.r_core[ci] + st, self.r_core[ci] + st + Lj))
                        vals += [1.0] * Lj
                index += rows
                value += vals
                starts_idx.append(len(index))
        return cost, starts_idx, index, value

    def add_configs(self, cfgs: list[tuple[int, list[tuple[int, int]]]]) -> None:
        """One column per configuration ``(tau, [(j, d), ...])``."""
        lay = self.lay
        st, idx = [0], []
        for tau, items in cfgs:
            rows = [self.r_conv + tau]
            for j, d in items:
                k = tau - d
                rows.append(self.r_link + int(lay.loff[j]) + (k - int(lay.lo[j])) * int(lay.o[j])
                            + d - 1)
            idx += rows
            st.append(len(idx))
        m = len(cfgs)
        self.h.addCols(m, np.zeros(m), np.zeros(m), np.full(m, self.inf), len(idx),
                       np.array(st[:-1], dtype=np.int32), np.array(idx, dtype=np.int32),
                       np.ones(len(idx)))

    def solve(self, deadline: Deadline) -> tuple[float, NDArray[np.float64], NDArray[np.float64],
                                                 list[NDArray[np.float64]]] | None:
        """Solve the master within ``deadline``: its value and duals ``pi`` (linking, clipped
        to ``>= 0``), ``sigma`` (convexity) and ``rho`` (cores, ``>= 0``); ``None`` if not
        solved to optimality."""
        import highspy

        h = self.h
        h.setOptionValue("time_limit", float(deadline.remaining(floor=1e-3) or math.inf))
        h.run()
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            return None
        dual = np.array(h.getSolution().row_dual)
        nl = self.lay.n_link
        pi = np.maximum(dual[self.r_link: self.r_link + nl], 0.0)
        sigma = dual[self.r_conv: self.r_conv + self.T1]
        rho = [np.maximum(-dual[r: r + self.ncs], 0.0) for r in self.r_core]
        return float(h.getInfo().objective_function_value), pi, sigma, rho


def _lagrangian_from(lay: _Layout, pi: NDArray[np.float64], rho: list[NDArray[np.float64]],
                     prof: NDArray[np.float64]) -> float:
    total = 0.0
    shift = _core_shift(lay)
    P = [np.concatenate([[0.0], np.cumsum(r)]) for r in rho]
    for j in range(lay.n):
        k = np.arange(lay.lo[j], lay.hi[j] + 1)
        oj = int(lay.o[j])
        seg = pi[lay.loff[j]: lay.loff[j + 1]].reshape(k.size, oj)
        cost = (k + oj - lay.a[j]).astype(np.float64) + seg.sum(axis=1)
        for (_, L, s), Pq in zip(lay.cores, P, strict=True):
            Lj = int(L[j])
            if Lj > 0:
                st = k - int(s[j]) + shift
                cost = cost + Pq[st + Lj] - Pq[st]
        total += float(cost.min())
    total -= float(prof.sum())
    for (q, _, _), r in zip(lay.cores, rho, strict=True):
        total -= q * float(r.sum())
    return total
