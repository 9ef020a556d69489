"""Primal improvement search: better valid schedules than MC-SF within a time budget.

Two moves share one incumbent (a vector of start slots, always feasible):

- **list search** (:func:`sgs_decode`): a priority list is decoded by the *serial schedule
  generation scheme*: requests are taken in list order and each starts at the earliest slot
  ``k >= a_i`` at which its ramp ``s_i + 1, ..., s_i + o_i`` fits under ``M`` on top of the
  requests already placed. Random insertion, swap and block moves on the list, accepted with
  a simulated annealing rule (cooling cycles over the budget, each restarting from the best
  list); a candidate is re-decoded only from near its first changed position
  (:mod:`kvopt.mip.search.lists`). Every decode is
  feasible by construction; the best one seen is kept.
- **LNS with CP-SAT** (:func:`lns_step`): most start slots are fixed; a *neighbourhood* (the
  requests starting in a time window, or a random subset, or the requests running at a
  random slot) is re-optimised exactly by CP-SAT on the staircase model of
  :mod:`kvopt.mip.model.cpmodel`, the fixed requests entering as a fixed memory profile. The
  incumbent is the hint, so a sub-solve never returns anything worse.

Starting points: MC-SF (shortest predicted output first, true lengths), MC-Benchmark
(arrival order) and the serial decodes of a few priority rules; the best is the first
incumbent. Every schedule handed back is re-checked by :func:`kvopt.core.validate.check_schedule`.

Examples
--------
>>> from kvopt import Instance
>>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
>>> res = improve(inst, time_limit=1, seed=0)
>>> res.objective, res.model["start_objective"]     # MC-SF serialises: 10; best is 9
(9.0, 10.0)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import MemoryBudgetError
from kvopt.core.instance import Instance, horizon_field
from kvopt.core.limits import Deadline, as_deadline, check_allocation
from kvopt.core.progress import Progress
from kvopt.core.schedule import Schedule
from kvopt.core.validate import check_schedule, memory_profile
from kvopt.mip.bounds.combinatorial import combinatorial_bound
from kvopt.mip.result import SolveResult, SolveStatus, integral_bound
from kvopt.mip.search.lists import (  # noqa: F401 - the table sizes: here too
    _IncrementalSGS,
    list_table_bytes,
    list_table_slots,
)
from kvopt.mip.search.starts import (  # noqa: F401 - sgs_decode, starting_points: here too
    ValuedPoints,
    best_start,
    serial_starts,
    sgs_decode,
    sgs_earliest_fit,
    starting_points,
)

#: Share of :func:`improve`'s budget its starting points may take when it computes them.
STARTS_SHARE = 0.5
#: :func:`improve`'s search stops this many times the measured cost of valuing and
#: validating one starting point before its deadline: its own final check and the caller's
#: output (on the whole Azure trace at 0.5 s slots one check takes ~0.15-0.25 s).
RESERVE_CHECKS = 2


def _order_of(starts: NDArray[np.int64], instance: Instance) -> NDArray[np.int64]:
    return np.lexsort((np.arange(instance.n), instance.output, starts))


def _move(order: NDArray[np.int64], rng: np.random.Generator
          ) -> tuple[NDArray[np.int64], int] | None:
    """A random neighbour of a priority list and the first position it changes.

    Insertions (mostly short distances), swaps of two nearby entries, and moves of a block of
    2-5 consecutive entries."""
    n = order.size
    r = rng.random()
    if r < 0.7:  # insertion
        i = int(rng.integers(n))
        j = (int(np.clip(i + rng.integers(-5, 6), 0, n - 1)) if r < 0.5
             else int(rng.integers(n)))
        if i == j:
            return None
        return np.insert(np.delete(order, i), j, order[i]), min(i, j)
    if r < 0.85:  # swap
        i = int(rng.integers(n))
        j = int(np.clip(i + rng.integers(-10, 11), 0, n - 1))
        if i == j:
            return None
        cand = order.copy()
        cand[i], cand[j] = cand[j], cand[i]
        return cand, min(i, j)
    size = int(rng.integers(2, 6))  # block move
    if size >= n:
        return None
    i = int(rng.integers(n - size + 1))
    rest = np.concatenate((order[:i], order[i + size:]))
    j = int(np.clip(i + rng.integers(-10, 11), 0, rest.size))
    if i == j:
        return None
    return np.concatenate((rest[:j], order[i: i + size], rest[j:])), min(i, j)


def list_search(
    instance: Instance,
    starts: NDArray[np.int64],
    *,
    rng: np.random.Generator,
    deadline: Deadline,
    max_evals: int | None = None,
    temperature: float | None = None,
    cycles: int = 4,
    delay_share: float = 0.0,
    tick: Callable[[], None] | None = None,
    target: float | Callable[[], float] | None = None,
    trace: list[tuple[float, float]] | None = None,
) -> tuple[NDArray[np.int64], int]:
    """Simulated annealing over priority lists decoded by :func:`sgs_decode`.

    Starts from the list of ``starts`` sorted by start slot. Moves (:func:`_move`): random
    insertions (mostly short distances), swaps, block moves, and (share ``delay_share``)
    *delay moves* on the per-request release slots of :func:`sgs_decode` (release one request
    1-3 slots after its current start, or reset it to its arrival; accepted only when
    strictly better), without which some optima are no decode at all. Each candidate is
    re-decoded only from its first changed position (:class:`_IncrementalSGS`). The run is
    split into ``cycles`` annealing cycles over the budget (``max_evals`` decodes if given,
    else the time to ``deadline``, a :class:`~kvopt.core.limits.Deadline` on any clock);
    each cycle cools linearly from ``temperature`` to 0 and starts again from the best list.
    Returns the best decode (or ``starts`` if nothing better) and the number of decodes.
    ``tick`` is called every 100 decodes (progress). The search stops early once the best TEL
    is ``<= target`` (e.g. a lower bound: nothing better exists; a callable is read again
    every 100 decodes, for a bound that rises meanwhile); each new best is appended to
    ``trace`` as ``(deadline.elapsed(), TEL)``.

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    >>> best, _ = list_search(inst, np.array([0, 3, 4]), rng=np.random.default_rng(0),
    ...                       deadline=Deadline(None), max_evals=50)
    >>> inst.tel_of_starts(best)
    9.0
    """
    n = instance.n
    best = np.asarray(starts, dtype=np.int64).copy()
    best_v = instance.tel_of_starts(best)
    if n < 2:
        return best, 0
    dec = _IncrementalSGS(instance, _order_of(best, instance),
                          slots=list_table_slots(instance, best))
    best_order, best_release = dec.order.copy(), dec.release.copy()
    if dec.value < best_v:
        best, best_v = dec.current_starts, dec.value
        if trace is not None:
            trace.append((deadline.elapsed(), best_v))
    def goal_now() -> float:
        return -math.inf if target is None else target() if callable(target) else target

    goal = goal_now()
    T0 = temperature if temperature is not None else max(0.04 * best_v / n, 1.0)
    t_start = deadline.elapsed()
    span = max(deadline.remaining() or math.inf, 1e-9)
    evals = 1
    cycle = 0
    while (best_v > goal and not deadline.expired()
           and (max_evals is None or evals < max_evals)):
        frac = (evals / max_evals if max_evals is not None
                else (deadline.elapsed() - t_start) / span)
        c = min(int(frac * cycles), cycles - 1)
        if c != cycle:  # new cycle: restart from the best list
            cycle = c
            if dec.value > best_v:
                dec.evaluate(best_order.copy(), 0, best_release)
                dec.accept(best_v)
        temp = T0 * max(1.0 - (frac * cycles - c), 0.0)
        rel = None
        if rng.random() < delay_share:  # delay move: release one request later / reset it
            p = int(rng.integers(n))
            i = int(dec.order[p])
            rel = dec.release.copy()
            if rel[i] > dec.arrival[i] and rng.random() < 0.5:
                rel[i] = dec.arrival[i]
            else:
                k = int(dec.starts[dec.cur][i])
                rel[i] = min(k + int(rng.integers(1, 4)), dec.release_cap)
            cand = dec.order
        else:
            mv = _move(dec.order, rng)
            if mv is None:
                continue
            cand, p = mv
        v = dec.evaluate(cand, p, rel)
        evals += 1
        if evals % 100 == 0:
            goal = goal_now()
            if tick is not None:
                tick()
        if rel is not None:  # delays only when strictly better (they would pile up)
            accept = v < dec.value
        else:
            accept = v <= dec.value or (temp > 0
                                        and rng.random() < math.exp(-(v - dec.value) / temp))
        if accept:
            dec.accept(v)
            if v < best_v:
                best, best_v = dec.current_starts, v
                best_order, best_release = cand.copy(), dec.release.copy()
                if trace is not None:
                    trace.append((deadline.elapsed(), best_v))
    return best, evals


def lns_step(
    instance: Instance,
    starts: NDArray[np.int64],
    free: NDArray[np.int64],
    *,
    time_limit: float | None = None,
    seed: int = 0,
    pairs: bool = False,
    deadline: Deadline | None = None,
) -> NDArray[np.int64] | None:
    """Re-optimise the start slots of the requests ``free`` with the others fixed (CP-SAT).

    The fixed requests enter as a fixed memory profile (one fixed rectangle per run of equal
    memory); each free request ``i`` has the staircase of :mod:`kvopt.mip.model.cpmodel` and a
    start domain ``[max(a_i, min_{j in free} k_j - o_max), max_{j in free} k_j + o_max]``
    (a neighbourhood, not a relaxation). The incumbent is the hint and an upper bound.
    ``pairs``: also the exact pairwise lags of :func:`kvopt.mip.model.cpmodel.pair_lags` between
    free requests as reified disjunctions (the ``cp+pairs`` constraints; valid for every
    feasible schedule, so the neighbourhood is unchanged). They are implied by the memory
    cumulative but let CP-SAT find improvements it otherwise misses: on ``model1(1002,
    n=10)`` with all 10 requests free the plain model finds nothing better than 515 in
    3 s, with the pairs it finds the optimum 511 in 0.9 CPU-s.
    Returns new starts (a copy) if CP-SAT found a strictly better assignment, else ``None``
    (also when the build reaches the deadline). A model whose intervals (``sum_{i in free}
    o_i`` plus the fixed part's runs) would take more than the memory budget at
    ``CP_BYTES_PER_INTERVAL`` each raises :class:`~kvopt.core.errors.MemoryBudgetError`
    before it is built (the LNS then halves its neighbourhood).
    Deterministic for a given ``seed`` when the time limit (``time_limit`` seconds, or a
    caller's ``deadline``, the model build included) is not reached (single worker).

    Examples
    --------
    >>> inst = Instance(memory=4, arrival=[0, 0, 0], prompt=[1, 1, 2], output=[3, 1, 2])
    >>> lns_step(inst, np.array([0, 3, 4]), np.array([1, 2]), time_limit=5).tolist()
    [0, 0, 3]
    """
    from ortools.sat.python import cp_model

    from kvopt.mip.model.sizing import CP_BYTES_PER_INTERVAL

    dl = as_deadline(time_limit, deadline)
    a, s, o = instance.arrival, instance.prompt, instance.output
    M = int(instance.memory)
    free = np.unique(np.asarray(free, dtype=np.int64))
    if free.size == 0:
        return None
    fixed = np.ones(instance.n, dtype=bool)
    fixed[free] = False
    hi = int(starts[free].max()) + int(o.max())
    lo = max(int(starts[free].min()) - int(o.max()), 0)
    H = hi + int(o.max()) + 2
    prof = memory_profile(s[fixed], starts[fixed], o[fixed], H)[:H]
    # the fixed part: one rectangle per run of equal memory (vectorized; a random free set
    # spans the horizon: ~10^6 runs, 10 s on the Azure trace in 0.05 s slots)
    t0 = max(int(a[free].min()), lo) + 1
    seg = prof[t0:H] if t0 < H else prof[:0]
    first = np.concatenate(([0], np.flatnonzero(np.diff(seg)) + 1)) if seg.size else seg
    length = np.diff(np.concatenate((first, [seg.size])))
    first, length = first[seg[first] != 0], length[seg[first] != 0]
    n_iv = int(o[free].sum()) + first.size  # CP-SAT's own memory: refused above the budget
    check_allocation(CP_BYTES_PER_INTERVAL * n_iv, f"an LNS step's CP-SAT model ({n_iv:,} "
                     "intervals)", horizon_field(instance))
    m = cp_model.CpModel()
    ks = []
    intervals, demands = [], []
    for i in free:
        ai, oi = int(a[i]), int(o[i])
        v = m.new_int_var(max(ai, lo), max(hi, ai), "")
        ks.append(v)
        intervals.append(m.new_fixed_size_interval_var(v + 1, oi, ""))
        demands.append(int(s[i]) + 1)
        for d in range(2, oi + 1):
            # the staircase has o_i intervals (500,000 per step on the Azure trace in 0.05 s
            # slots, 2.5 s to build): the build stops at the step's deadline
            if d % 4096 == 0 and dl.expired():
                return None
            intervals.append(m.new_fixed_size_interval_var(v + d, oi - d + 1, ""))
            demands.append(1)
    for j, (f, ln) in enumerate(zip(first.tolist(), length.tolist(), strict=True)):
        if j % 4096 == 4095 and dl.expired():
            return None
        intervals.append(m.new_fixed_size_interval_var(t0 + f, ln, ""))
        demands.append(int(seg[f]))
    if int(prof.max(initial=0)) > M:  # pragma: no cover - incumbent is feasible
        raise RuntimeError("fixed part of the incumbent exceeds M")
    m.add_cumulative(intervals, demands, M)
    if pairs:  # exact pairwise lags among the free requests (valid for every schedule)
        from kvopt.mip.model.cpmodel import add_pair_disjunctions, pair_lags

        # the lags of the free requests only (the full n x n matrix is 3 GB and 24 s on the
        # whole Azure trace; a lag depends on its pair alone)
        add_pair_disjunctions(m, ks, pair_lags(instance.take(free)))
    cur = int(starts[free].sum())
    obj = sum(ks)
    m.add(obj <= cur)
    m.minimize(obj)
    for v, i in zip(ks, free, strict=True):
        m.add_hint(v, int(starts[i]))
    if dl.expired():
        return None
    solver = cp_model.CpSolver()
    left = dl.remaining(floor=0.01)
    if left is not None:
        solver.parameters.max_time_in_seconds = float(left)
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = int(seed)
    code = solver.solve(m)
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    new = np.array([solver.value(v) for v in ks], dtype=np.int64)
    if int(new.sum()) >= cur:
        return None
    out = np.asarray(starts, dtype=np.int64).copy()
    out[free] = new
    return out


def _neighbourhood(instance: Instance, starts: NDArray[np.int64], size: int,
                   rng: np.random.Generator) -> NDArray[np.int64]:
    """Free set of about ``size`` requests: a start-time window, the requests running
    around a random slot, or a random subset."""
    n = instance.n
    size = min(max(size, 2), n)
    kind = rng.random()
    order = np.argsort(starts, kind="stable")
    if kind < 0.6:  # consecutive in start order (a time window)
        p = int(rng.integers(0, n - size + 1))
        return order[p: p + size]
    if kind < 0.85:  # the requests closest in time to a random one
        c = int(starts[int(rng.integers(n))])
        mid = starts + instance.output // 2
        return np.argsort(np.abs(mid - c) + rng.random(n), kind="stable")[:size]
    return rng.choice(n, size=size, replace=False)


def improve(
    instance: Instance,
    *,
    time_limit: float = 30.0,
    seed: int = 0,
    initial: NDArray[np.int64] | None = None,
    lower: float | None = None,
    list_share: float = 0.9,
    neighbourhood: int = 8,
    sub_time: float = 1.0,
    max_steps: int | None = None,
    progress: bool = False,
    clock: str = "wall",
    temperature: float | None = None,
    cycles: int = 2,
    delay_share: float = 0.0,
    lns_pairs: bool = True,
    deadline: Deadline | None = None,
    bound: Callable[[], float | None] | None = None,
    stop: Callable[[], bool] | None = None,
    label: str = "kvopt solve --improve",
    points: dict[str, NDArray[np.int64]] | ValuedPoints | None = None,
) -> SolveResult:
    """Search for a schedule better than MC-SF within ``time_limit`` seconds (whole call).

    Parameters
    ----------
    instance
        A slotted instance.
    time_limit
        Budget of the whole call (starting points, list search, LNS, validation), ``> 0``.
    seed
        Seed of every random choice (neighbourhoods, moves, CP-SAT's seed). With a wall-clock
        budget the number of steps, hence the result, depends on the machine's speed; with
        ``max_steps`` and a generous ``time_limit`` it is reproducible.
    initial
        Extra starting schedule (start slots), e.g. a solver's incumbent.
    lower
        A known lower bound on OPT (e.g. an LP bound), reported with the gap.
    list_share
        Share of the budget given to the list search before the LNS.
    neighbourhood
        Initial number of free requests per LNS step (adapted: grows when sub-problems are
        solved to optimality quickly, shrinks when they time out).
    sub_time
        CP-SAT time limit per LNS step (s).
    max_steps
        Stop after this many LNS steps (and ``max_steps * 50`` list decodes).
    temperature, cycles, delay_share
        Simulated annealing of the list search (:func:`list_search`): initial temperature
        (default ``0.04 * TEL / n`` of the best starting point), number of cooling cycles,
        share of delay moves (default 0: on ``model1-seed1`` with 30 CPU-s, shares 0.02-0.1
        gave 8574-8669 against 8483-8490 without).
    lns_pairs
        Pairwise-lag disjunctions in every LNS sub-problem (:func:`lns_step`).
    clock
        ``"wall"`` (default): ``time_limit`` is wall-clock seconds; ``"cpu"``: CPU seconds of
        this process (all threads, CP-SAT included), for fair budgets on a loaded machine
        (:meth:`kvopt.core.limits.Deadline.cpu`).
    deadline
        A caller's :class:`~kvopt.core.limits.Deadline` to share (then ``time_limit`` and
        ``clock`` are ignored).
    bound
        A lower bound that may rise during the search (e.g. an LP solved meanwhile in another
        process, :func:`kvopt.mip.portfolio.solve_auto`): read every 100 list decodes and
        every LNS step; the search stops once its best schedule meets it.
    stop
        Read with ``bound``: once it returns ``True`` the search ends (e.g. another process
        has proved the optimum).
    label
        The progress bar's label.
    points
        The starting points if the caller has them (:func:`starting_points`; checked again
        unless :class:`~kvopt.mip.search.starts.ValuedPoints`); default: computed here.
    progress
        A progress bar over the time budget on stderr (:class:`kvopt.core.progress.Progress`:
        tqdm on a terminal, plain lines without ``\\r`` elsewhere).

    Returns
    -------
    kvopt.mip.result.SolveResult
        ``solver="improve"``, ``formulation="lns+sgs"``; ``status`` is ``"optimal"`` only if
        the best schedule meets the lower bound, otherwise ``"time_limit"``; ``model`` holds
        ``start_objective`` (MC-SF), the starting points' objectives, the step counts and the
        improvement history ``[(elapsed_s, objective, source), ...]`` (every new best of the
        list search and of the LNS, on the deadline's clock).

    Examples
    --------
    >>> from kvopt.core.generators import model1
    >>> inst = model1(1, n=12, memory=20)
    >>> res = improve(inst, time_limit=1, seed=1)
    >>> res.objective <= res.model["start_objective"] and res.report.ok
    True
    """
    instance.require_slotted()
    dl = _improve_deadline(time_limit, clock, deadline)
    wall0 = time.perf_counter()
    t0 = dl.elapsed()
    budget = dl.remaining()
    assert budget is not None
    rng = np.random.default_rng(seed)
    best, values, src, end = _starting_point(instance, initial, points, dl, t0 + budget)
    goal = _Goal(max(combinatorial_bound(instance), lower if lower is not None else -math.inf),
                 bound, stop)
    history: list[tuple[float, float, str]] = [(dl.elapsed() - t0, values[src], src)]
    bar = _Bar(budget, dl, t0, progress, label)
    phase = Deadline(min(t0 + list_share * budget, end), t0=dl.t0, clock=dl.clock)
    best, evals, list_skipped = _list_phase(
        instance, best, rng, phase, goal=goal, bar=bar, history=history, t0=t0,
        max_evals=None if max_steps is None else 50 * max_steps, temperature=temperature,
        cycles=cycles, delay_share=delay_share)
    best, lns = _lns_phase(instance, best, Deadline(end, t0=dl.t0, clock=dl.clock), rng,
                           goal=goal, size=neighbourhood,
                           sub_time=sub_time, max_steps=max_steps, pairs=lns_pairs,
                           history=history, t0=t0, tick=bar.report)
    bar.close()
    goal()
    return _improve_result(instance, best, seed, values, src, goal.lb, evals, lns, history,
                           time.perf_counter() - wall0, list_skipped)


def _starting_point(instance: Instance, initial: NDArray[np.int64] | None,
                    points: dict[str, NDArray[np.int64]] | ValuedPoints | None, dl: Deadline,
                    end: float) -> tuple[NDArray[np.int64], dict[str, float], str, float]:
    """:func:`improve`'s best starting point, every starting point's TEL and the best's name
    (:func:`best_start`; the points computed here within :data:`STARTS_SHARE` of ``dl``
    unless given), and when its search must stop (``dl``'s clock): :data:`RESERVE_CHECKS`
    times the measured cost of valuing and validating one starting point before ``end``,
    for the final check and the caller's output (:class:`ValuedPoints` bring both the
    values and that cost, measured by the caller)."""
    if points is None:
        points = starting_points(instance, dl.sub(dl.share(STARTS_SHARE)))
    t_check = dl.elapsed()
    best, values, src = best_start(instance, initial, points)
    check_s = (points.check_s if isinstance(points, ValuedPoints)
               else (dl.elapsed() - t_check) / max(len(values), 1))
    return best, values, src, end - RESERVE_CHECKS * check_s


class _Goal:
    """The target of :func:`improve`'s search: the best lower bound known now, rounded up
    (TEL is an integer); ``bound()`` may raise it; ``inf`` once ``stop()`` returns ``True``."""

    def __init__(self, lb: float, bound: Callable[[], float | None] | None,
                 stop: Callable[[], bool] | None) -> None:
        self.lb, self.bound, self.stop = lb, bound, stop

    def __call__(self) -> float:
        new = self.bound() if self.bound is not None else None
        if new is not None:
            self.lb = max(self.lb, new)
        if self.stop is not None and self.stop():
            return math.inf
        return integral_bound(self.lb)


def _list_phase(instance: Instance, best: NDArray[np.int64], rng: np.random.Generator,
                phase: Deadline, *, goal: Callable[[], float], bar: _Bar,
                history: list[tuple[float, float, str]], t0: float, max_evals: int | None,
                temperature: float | None, cycles: int, delay_share: float,
                ) -> tuple[NDArray[np.int64], int, str | None]:
    """The list search of :func:`improve` from ``best`` until ``phase``: the better of its
    result and ``best`` (each new best appended to ``history``), the number of decodes
    (none when ``best`` meets ``goal()`` already, or ``phase`` is over) and why it did not
    run (its tables, :func:`list_table_bytes`, above the memory budget: the LNS goes on)."""
    if instance.tel_of_starts(best) <= goal() or instance.n < 2 or phase.expired():
        return best, 0, None
    trace: list[tuple[float, float]] = []
    try:
        cand, evals = list_search(instance, best, rng=rng, deadline=phase, max_evals=max_evals,
                                  temperature=temperature, cycles=cycles,
                                  delay_share=delay_share, tick=bar.report, target=goal,
                                  trace=trace)
    except MemoryBudgetError as exc:
        return best, 0, exc.reason
    if instance.tel_of_starts(cand) < instance.tel_of_starts(best):
        best = cand
        history.extend((when - t0, v, "list") for when, v in trace)  # strictly decreasing
    bar.report()
    return best, evals, None


def _improve_deadline(time_limit: float, clock: str, deadline: Deadline | None) -> Deadline:
    """The budget of :func:`improve`: the caller's ``deadline``, or ``time_limit`` seconds
    on the ``clock`` (checked here: the API edge)."""
    from kvopt.core.errors import UsageError
    from kvopt.core.limits import check_time_limit

    if deadline is not None:
        if deadline.limit is None:
            raise UsageError("deadline", "improve needs a time limit")
        return deadline
    if clock not in ("wall", "cpu"):
        raise UsageError("clock", f"must be 'wall' or 'cpu', got {clock!r}")
    limit = check_time_limit(time_limit, "time_limit")
    if limit is None:
        raise UsageError("time_limit", "improve needs a time limit (seconds > 0), got None")
    return Deadline.cpu(limit) if clock == "cpu" else Deadline(limit)


class _Bar:
    """The progress bar of :func:`improve`: whole seconds of the budget used so far."""

    def __init__(self, budget: float, dl: Deadline, t0: float, enabled: bool,
                 label: str) -> None:
        self.bar = Progress(max(math.ceil(budget), 1), label, unit="s", enabled=enabled)
        self.dl, self.t0, self.shown = dl, t0, 0
        self.report()

    def report(self) -> None:
        el = min(int(self.dl.elapsed() - self.t0), self.bar.total or 0)
        if el > self.shown:
            self.bar.update(el - self.shown)
            self.shown = el

    def close(self) -> None:
        self.bar.close()


def _lns_phase(instance: Instance, best: NDArray[np.int64], dl: Deadline,
               rng: np.random.Generator, *, goal: Callable[[], float], size: int,
               sub_time: float,
               max_steps: int | None, pairs: bool, history: list[tuple[float, float, str]],
               t0: float, tick: Callable[[], None]) -> tuple[NDArray[np.int64], dict[str, int]]:
    """CP-SAT large-neighbourhood search from ``best`` until ``dl`` (or ``max_steps``, or the
    lower bound ``goal()``); each improvement is appended to ``history``. Returns the best
    starts and the step counts."""
    best_v = instance.tel_of_starts(best)
    steps = improved = 0
    size = min(size, instance.n)
    while (best_v > goal() and instance.n >= 2 and (dl.remaining() or 0.0) > 0.05
           and (max_steps is None or steps < max_steps)):
        free = _neighbourhood(instance, best, size, rng)
        left = dl.remaining() or 0.0
        ts = dl.elapsed()
        try:
            new = lns_step(instance, best, free, deadline=dl.sub(sub_time),
                           seed=int(rng.integers(2**31 - 1)), pairs=pairs)
        except MemoryBudgetError:  # its CP-SAT model: a smaller neighbourhood, or none
            if size <= 2:
                break
            size, steps = max(2, size // 2), steps + 1
            continue
        took = dl.elapsed() - ts
        steps += 1
        if new is not None:
            best, best_v = new, instance.tel_of_starts(new)
            improved += 1
            history.append((dl.elapsed() - t0, best_v, "lns"))
        # adapt the neighbourhood: fast sub-solves -> larger, slow ones -> smaller
        if took < 0.25 * sub_time:
            size = min(size + 1, instance.n)
        elif took >= 0.9 * min(sub_time, left) and size > 4:
            size -= 1
        tick()
    return best, {"lns_steps": steps, "lns_improving_steps": improved,
                  "final_neighbourhood": size}


def _improve_result(instance: Instance, best: NDArray[np.int64], seed: int,
                    values: dict[str, float], src: str, lb: float, evals: int,
                    lns: dict[str, int], history: list[tuple[float, float, str]],
                    runtime: float, list_skipped: str | None = None) -> SolveResult:
    """The validated best schedule as a :class:`~kvopt.mip.result.SolveResult` (``model``
    has ``list_search_skipped``, the reason, when the list search could not run)."""
    best_v = instance.tel_of_starts(best)
    start_v = values.get("mcsf", values[src])  # MC-SF may not have finished in time
    sched = Schedule.from_starts(instance, best, source="mip:improve",
                                 claimed_objective=best_v,
                                 meta={"solver": "improve", "seed": seed,
                                       "start_objective": start_v})
    rep = check_schedule(instance, sched)
    if not rep.ok:  # pragma: no cover - every move keeps feasibility
        raise RuntimeError(f"improve produced an invalid schedule: {rep}")
    lb = integral_bound(lb)
    status = SolveStatus.OPTIMAL if best_v <= lb else SolveStatus.TIME_LIMIT
    gap = 0.0 if status is SolveStatus.OPTIMAL else max(best_v - lb, 0.0) / max(best_v, 1.0)
    sched = sched.with_meta(status=status, bound=lb, gap=gap)
    model = {"start_objective": start_v, "starting_points": values, "start_source": src,
             "list_decodes": evals, **lns, "history": history, "seed": seed}
    if list_skipped is not None:
        model["list_search_skipped"] = list_skipped
    return SolveResult(status=status, objective=rep.objective, bound=lb, gap=gap,
                       solver="improve", formulation="lns+sgs", runtime_s=runtime,
                       schedule=sched, report=rep,
                       solver_status=f"{lns['lns_steps']} LNS steps, {evals} list decodes",
                       incumbent_source=history[-1][2], model=model)
