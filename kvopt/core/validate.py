"""The independent schedule checker.

:func:`check_schedule` trusts nothing a producer says: it recomputes the memory
profile from the runs (vectorized difference arrays), checks arrivals, run
lengths, overlaps and the capacity ``M`` at every slot, and recomputes the
objective (total end-to-end latency). Every preemption mode of :mod:`kvopt.core.schedule`
(restart, recompute, swap) and the serving-engine fields (blocks, chunked prefill, paused
slots) go through the same checks: what each run resumed from, memory in blocks, host memory.
With a batch limit (``instance.max_batch``) it counts the running requests at every slot;
with SLOs (:mod:`kvopt.core.slo`) it recomputes every request's SLO satisfaction and the
goodput. Every problem becomes a :class:`Violation`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import InfeasibleScheduleError
from kvopt.core.instance import Instance, horizon_field, longer_horizon_part
from kvopt.core.limits import check_allocation
from kvopt.core.schedule import Schedule
from kvopt.core.slo import GoodputReport, evaluate_goodput

#: Violation kinds reported by :func:`check_schedule`.
VIOLATION_KINDS = (
    "instance_mismatch",  # schedule bound to another instance (hash differs)
    "bad_run",            # request index out of range, negative start or length
    "not_completed",      # request without a completing run
    "multiple_completions",
    "before_arrival",     # a run starts before its request arrives
    "run_length",         # completing run length != o, or evicted run length >= o
    "overlap",            # two runs of one request overlap, or a run follows completion
    "memory",             # memory above M at a slot (amount = excess tokens)
    "batch",              # more than max_batch requests running at a slot (amount = excess)
    "times",              # times array too short, non-finite or decreasing
    "progress",           # a run resumes from the wrong number of tokens for the preemption mode
    "host_memory",        # swapped-out KV above the schedule's host memory at a slot
    "block_size",         # the schedule's block size does not divide M
    "paused",             # paused slots not increasing, or combined with chunked prefill
    "objective",          # claimed objective differs from the recomputed one
    "goodput",            # claimed goodput (meta["claimed_goodput"]) differs from the recomputed
)
OBJ_RTOL = 1e-9
TIME_ATOL = 1e-9


@dataclass(frozen=True)
class Violation:
    """One failed check: ``kind`` (see :data:`VIOLATION_KINDS`), slot, request and amount.

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> tight = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> v = check_schedule(tight, Schedule.from_starts(tight, [0, 0])).violations[0]
    >>> v.kind, v.slot, v.amount, v.message    # 2 tokens over M at slot 3
    ('memory', 3, 2.0, 'memory 8 > M = 6 at slot 3')
    """

    kind: str
    slot: int | None
    request: int | None
    amount: float
    message: str

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {"kind": self.kind, "slot": self.slot, "request": self.request,
                "amount": self.amount, "message": self.message}


@dataclass(frozen=True)
class FeasibilityReport:
    """Result of :func:`check_schedule`.

    Attributes
    ----------
    violations
        Every failed check (empty when feasible).
    objective
        Recomputed total end-to-end latency in the instance's unit: slots for
        ``time_unit="step"`` (the model's objective, also when the schedule carries wall-clock
        ``times``; :func:`kvopt.compute_metrics` then reports seconds) and seconds for
        ``time_unit="second"`` instances. ``None`` if the schedule is too broken to compute it.
    peak_memory
        Maximum of the recomputed memory profile.
    goodput
        Recomputed SLO satisfaction and goodput (:class:`kvopt.core.slo.GoodputReport`) when
        the instance carries SLOs and every request completes once; else ``None``.

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> tight = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> rep = check_schedule(tight, Schedule.from_starts(tight, [0, 3]))
    >>> rep.ok, rep.objective, rep.peak_memory, rep.goodput
    (True, 9.0, 4, None)
    >>> print(check_schedule(tight, Schedule.from_starts(tight, [0, 0])))
    1 violation(s):
      memory: memory 8 > M = 6 at slot 3
    """

    violations: list[Violation] = field(default_factory=list)
    objective: float | None = None
    peak_memory: int = 0
    goodput: GoodputReport | None = None

    @property
    def ok(self) -> bool:
        """True when no check failed."""
        return not self.violations

    def kinds(self) -> set[str]:
        """The set of violation kinds present."""
        return {v.kind for v in self.violations}

    def raise_if_invalid(self) -> None:
        """Raise :class:`InfeasibleScheduleError` if any check failed."""
        if not self.ok:
            raise InfeasibleScheduleError(self)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        doc: dict[str, object] = {"ok": self.ok, "objective": self.objective,
                                  "peak_memory": self.peak_memory}
        if self.goodput is not None:
            doc.update(self.goodput.to_dict())
        doc["violations"] = [v.to_dict() for v in self.violations]
        return doc

    def __str__(self) -> str:
        if self.ok:
            extra = "" if self.goodput is None else f"; goodput {self.goodput.token_goodput:g}"
            return (f"feasible; total latency {self.objective}; peak memory {self.peak_memory}"
                    f"{extra}")
        head = f"{len(self.violations)} violation(s):"
        lines = [f"  {v.kind}: {v.message}" for v in self.violations[:20]]
        if len(self.violations) > 20:
            lines.append(f"  ... and {len(self.violations) - 20} more")
        return "\n".join([head, *lines])


def memory_profile(
    prompt: NDArray[np.int64],
    start: NDArray[np.int64],
    length: NDArray[np.int64],
    horizon: int | None = None,
) -> NDArray[np.int64]:
    """Memory at every slot ``tau = 0..H`` of runs ``(s, k, L)``.

    A run holds ``s + (tau - k)`` at ``tau = k+1 .. k+L``. Computed with two
    difference arrays (a constant part ``s - k`` and a count multiplied by ``tau``),
    so the cost is ``O(runs + H)``.

    Examples
    --------
    >>> memory_profile(np.array([1, 1]), np.array([0, 0]), np.array([4, 8])).tolist()
    [0, 4, 6, 8, 10, 6, 7, 8, 9]
    """
    prompt = np.asarray(prompt, dtype=np.int64)
    start = np.asarray(start, dtype=np.int64)
    length = np.asarray(length, dtype=np.int64)
    end = start + length
    H = int(end.max()) if end.size else 0
    if horizon is not None:
        H = max(H, int(horizon))
    check_allocation(5 * 8 * (H + 2), f"the memory profile over {H + 1:,} slots",
                     longer_horizon_part(float(start.max(initial=0)), float(length.sum())))
    const = np.zeros(H + 2, dtype=np.int64)
    count = np.zeros(H + 2, dtype=np.int64)
    live = length > 0
    lo, hi = start[live] + 1, end[live] + 1
    np.add.at(const, lo, prompt[live] - start[live])
    np.add.at(const, hi, -(prompt[live] - start[live]))
    np.add.at(count, lo, 1)
    np.add.at(count, hi, -1)
    tau = np.arange(H + 1, dtype=np.int64)
    return np.cumsum(const)[: H + 1] + tau * np.cumsum(count)[: H + 1]


def _blocks(x: NDArray[np.int64], b: int) -> NDArray[np.int64]:
    """``x`` tokens rounded up to whole blocks of ``b`` tokens (in tokens)."""
    return x if b == 1 else -(-x // b) * b


def _clocked_profile(const: NDArray[np.int64], lo: NDArray[np.int64], hi: NDArray[np.int64],
                     clock: NDArray[np.int64], b: int) -> NDArray[np.int64]:
    """``sum_r blocks_b(const_r + clock[tau])`` over the runs active at ``lo_r <= tau <= hi_r``,
    for every ``tau = 0 .. len(clock) - 1``, in ``O(runs + min(b, runs) * H)``.

    With ``b = 1`` this is ``sum const + count * clock`` (two difference arrays). With blocks,
    ``b ceil(x / b) = x + (-x mod b)``: the runs are grouped by ``const mod b`` and each group
    adds ``count_group(tau) * (-(rho + clock[tau]) mod b)``.

    Examples
    --------
    >>> clock = np.arange(6)
    >>> _clocked_profile(np.array([3]), np.array([1]), np.array([4]), clock, 4).tolist()
    [0, 4, 8, 8, 8, 0]
    """
    H = clock.shape[0] - 1
    live = hi >= lo
    const, lo, hi = const[live], lo[live], hi[live]
    cs = np.zeros(H + 2, dtype=np.int64)
    cnt = np.zeros(H + 2, dtype=np.int64)
    np.add.at(cs, lo, const)
    np.add.at(cs, hi + 1, -const)
    np.add.at(cnt, lo, 1)
    np.add.at(cnt, hi + 1, -1)
    out = np.cumsum(cs)[: H + 1] + np.cumsum(cnt)[: H + 1] * clock
    if b > 1:
        rho = const % b
        for r in np.unique(rho).tolist():
            sel = rho == r
            c = np.zeros(H + 2, dtype=np.int64)
            np.add.at(c, lo[sel], 1)
            np.add.at(c, hi[sel] + 1, -1)
            out += np.cumsum(c)[: H + 1] * (-(r + clock) % b)
    return out


def check_profile_fits(instance: Instance, budget: str | int | float | None = None) -> None:
    """Refuse, before any work, an instance none of whose schedules could be validated within
    the memory budget: a profile over the horizon (:attr:`Instance.horizon`) takes 8 int64
    arrays of that length (:func:`schedule_memory`).

    Raises
    ------
    MemoryBudgetError
        Naming the field that makes the horizon long (:func:`~kvopt.core.instance.horizon_field`).

    Examples
    --------
    >>> check_profile_fits(Instance(memory=9, arrival=[0, 5], prompt=[1, 1], output=[4, 8]))
    >>> from kvopt.core.errors import MemoryBudgetError
    >>> far = Instance(memory=9, arrival=[0, 10**12], prompt=[1, 1], output=[4, 8])
    >>> try:
    ...     check_profile_fits(far, "1G")
    ... except MemoryBudgetError as exc:
    ...     print(exc.field)
    requests.arrival
    """
    H = instance.horizon
    check_allocation(8 * 8 * (H + 2), "validating a schedule (its memory profile over the "
                     f"horizon of {H:,} slots)", horizon_field(instance), budget)


def schedule_memory(instance: Instance, schedule: Schedule, horizon: int | None = None
                    ) -> tuple[NDArray[np.int64], NDArray[np.int64] | None]:
    """GPU memory at every slot ``tau = 0..H`` and, for a swap schedule, host memory.

    Every rule of :mod:`kvopt.core.schedule`: a run ``(k, L, offset, P)`` of a request with
    prompt ``s`` holds ``s + offset`` at its prefill slots ``k+1 .. k+P`` and
    ``s + offset + 1 + E(tau) - E(k+P+1)`` at ``k+P+1 .. k+L``; a run with ``run_swapped``
    held ``s + offset`` of host memory at the slots between its predecessor's end and its
    start; with ``block_size = b`` each of these amounts is rounded up to whole blocks. For a
    seed-convention schedule this is :func:`memory_profile`.

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> inst = Instance(memory=16, arrival=[0, 0], prompt=[2, 3], output=[3, 2])
    >>> s = Schedule([0, 1, 0], [0, 0, 2], [2, 2, 1], [False, True, True], inst.sha256(),
    ...              run_offset=[0, 0, 2], preemption="recompute")
    >>> schedule_memory(inst, s)[0].tolist()   # request 0 resumes with 2 + 2 tokens at slot 3
    [0, 7, 9, 5]
    >>> schedule_memory(inst, s.replace(block_size=4))[0].tolist()
    [0, 8, 12, 8]
    """
    req, k, L = schedule.run_request, schedule.run_start, schedule.run_length
    s = instance.prompt[req]
    end = k + L
    H = int(end.max()) if end.size else 0
    if horizon is not None:
        H = max(H, int(horizon))
    check_allocation(8 * 8 * (H + 2), f"the memory profile over {H + 1:,} slots",
                     horizon_field(instance))
    if schedule.is_seed_convention:
        return memory_profile(s, k, L, H), None
    b = schedule.block_size
    base = s + schedule.run_offset
    P = np.minimum(schedule.run_prefill, L)
    tau = np.arange(H + 1, dtype=np.int64)
    clock = schedule.clock(tau)
    first = k + P + 1
    first_c = clock[np.minimum(first, H)]
    gpu = _clocked_profile(base + 1 - first_c, first, end, clock, b)
    zero = np.zeros(H + 1, dtype=np.int64)
    gpu += _clocked_profile(base, k + 1, k + P, zero, b)
    host = None
    if schedule.preemption == "swap":
        sw = np.flatnonzero(schedule.run_swapped)
        prev_end = _previous_end(schedule)[sw]
        ok = prev_end >= 0
        host = _clocked_profile(base[sw][ok], prev_end[ok] + 1, k[sw][ok], zero, b)
    return gpu, host


def _previous_end(schedule: Schedule) -> NDArray[np.int64]:
    """For every run, the end slot of the same request's previous run (``-1`` for a first
    run)."""
    req, k, L = schedule.run_request, schedule.run_start, schedule.run_length
    order = np.lexsort((k, req))
    out = np.full(req.shape[0], -1, dtype=np.int64)
    same = req[order][1:] == req[order][:-1]
    out[order[1:][same]] = (k + L)[order][:-1][same]
    return out


def _check_runs(instance: Instance, schedule: Schedule, v: list[Violation]
                ) -> NDArray[np.int64]:
    """Completions per request and the length (tokens) of every run; returns the completion
    counts."""
    n = instance.n
    req, st, ln, done = (schedule.run_request, schedule.run_start, schedule.run_length,
                         schedule.run_completed)
    ncomp = np.bincount(req[done], minlength=n)
    for i in np.flatnonzero(ncomp == 0)[:50]:
        v.append(Violation("not_completed", None, int(i), 0.0, f"request {i} never completes"))
    for i in np.flatnonzero(ncomp > 1)[:50]:
        v.append(Violation("multiple_completions", None, int(i), float(ncomp[i]),
                           f"request {i} completes {ncomp[i]} times"))
    o = instance.output[req]
    if schedule.is_seed_convention:
        wrong = (done & (ln != o)) | (~done & (ln >= o))
        for r in np.flatnonzero(wrong)[:50]:
            kind = "completing" if done[r] else "evicted"
            v.append(Violation("run_length", int(st[r]), int(req[r]), float(ln[r] - o[r]),
                               f"{kind} run of request {req[r]} has length {ln[r]}, output is "
                               f"{o[r]}"))
        return ncomp
    tok = schedule.run_tokens()
    need = o - schedule.run_offset
    last_paused = np.isin(st + ln, schedule.paused) & (ln > schedule.run_prefill + 1)
    wrong = (done & ((tok != need) | last_paused)) | (~done & (tok >= need))
    for r in np.flatnonzero(wrong)[:50]:
        kind = "completing" if done[r] else "evicted"
        tail = " and ends on a paused slot" if done[r] and last_paused[r] else ""
        v.append(Violation("run_length", int(st[r]), int(req[r]), float(tok[r] - need[r]),
                           f"{kind} run of request {req[r]} produces {tok[r]} tokens{tail}, "
                           f"{need[r]} were left (output {o[r]}, resumed from "
                           f"{schedule.run_offset[r]})"))
    return ncomp


def _check_times(instance: Instance, schedule: Schedule, v: list[Violation]) -> bool:
    """The ``times`` array; False if the schedule is too broken to go on."""
    st, ln = schedule.run_start, schedule.run_length
    times = schedule.times
    H = int((st + ln).max()) if st.size else 0
    if times is not None:
        if times.shape[0] < H + 1:
            v.append(Violation("times", H, None, float(H + 1 - times.shape[0]),
                               f"times has {times.shape[0]} entries, needs {H + 1}"))
            return False
        if not np.isfinite(times).all():
            v.append(Violation("times", None, None, 0.0, "times must be finite"))
            return False
        dec = np.flatnonzero(np.diff(times) < -TIME_ATOL)
        for k in dec[:50]:
            v.append(Violation("times", int(k + 1), None, float(times[k] - times[k + 1]),
                               f"times decrease at decision point {k + 1}"))
    elif not instance.is_slotted:
        v.append(Violation("times", None, None, 0.0,
                           "instance arrivals are in seconds: the schedule needs times"))
        return False
    return True


def _check_arrivals(instance: Instance, schedule: Schedule, v: list[Violation]) -> None:
    req, st, times = schedule.run_request, schedule.run_start, schedule.times
    if instance.is_slotted:
        early = st < instance.arrival[req]
        amount = (instance.arrival[req] - st).astype(np.float64)
    else:
        assert times is not None
        early = times[st] < instance.arrival[req] - TIME_ATOL
        amount = instance.arrival[req] - times[st]
    for r in np.flatnonzero(early)[:50]:
        v.append(Violation("before_arrival", int(st[r]), int(req[r]), float(amount[r]),
                           f"request {req[r]} starts at slot {st[r]} before its arrival "
                           f"{instance.arrival[req[r]]}"))


def _check_sequence(instance: Instance, schedule: Schedule, v: list[Violation]) -> None:
    """Overlaps among the runs of one request (and runs after its completion) and, beyond the
    seed convention, what each run resumed from (``progress``)."""
    req, st, ln, done = (schedule.run_request, schedule.run_start, schedule.run_length,
                         schedule.run_completed)
    order = np.lexsort((st, req))
    rq, rs, rl, rd = req[order], st[order], ln[order], done[order]
    same = rq[1:] == rq[:-1]
    clash = same & ((rs[1:] < rs[:-1] + rl[:-1]) | rd[:-1])
    for j in np.flatnonzero(clash)[:50]:
        v.append(Violation("overlap", int(rs[j + 1]), int(rq[j]), 0.0,
                           f"request {rq[j]}: run at slot {rs[j + 1]} overlaps or follows the "
                           f"run started at {rs[j]}"))
    if schedule.is_seed_convention:
        return
    off = schedule.run_offset[order]
    sw = schedule.run_swapped[order]
    pre = schedule.run_prefill[order]
    if schedule.preemption == "restart":
        expect = np.zeros_like(off)
    else:
        expect = np.concatenate([[0], np.where(same, off[:-1] + schedule.run_tokens()[order][:-1],
                                               0)]) if off.size else off
    bad = (off != expect) | (pre < 0)
    first = np.concatenate([[True], ~same]) if off.size else np.zeros(0, dtype=bool)
    swap_bad = sw & ((schedule.preemption != "swap") | first)
    mode = schedule.preemption
    for j in np.flatnonzero(bad | swap_bad)[:50]:
        if swap_bad[j]:
            why = ("a first run cannot be swapped in" if first[j]
                   else f"runs are swapped in only with preemption 'swap', not {mode!r}")
        elif pre[j] < 0:
            why = f"negative prefill {pre[j]}"
        else:
            why = (f"resumes from {off[j]} tokens, expected {expect[j]} "
                   f"({'first run' if first[j] else 'preemption ' + repr(mode)})")
        v.append(Violation("progress", int(rs[j]), int(rq[j]), float(off[j] - expect[j]),
                           f"request {rq[j]}: run at slot {rs[j]} {why}"))


def _check_format(instance: Instance, schedule: Schedule, v: list[Violation]) -> bool:
    """Block size against ``M`` and the paused slots; False if the paused slots are unusable."""
    b, M = schedule.block_size, int(instance.memory)
    if M % b:
        v.append(Violation("block_size", None, None, float(M % b),
                           f"block_size {b} does not divide M = {M}"))
    paused = schedule.paused
    if paused.size and ((paused[0] < 1) or (np.diff(paused) <= 0).any()
                        or schedule.run_prefill.any()):
        v.append(Violation("paused", None, None, 0.0,
                           "paused slots must be increasing and >= 1, and a schedule with "
                           "paused slots (prefill-only iterations) has no chunked prefill"))
        return False
    return True


def _check_memory(instance: Instance, schedule: Schedule, v: list[Violation]) -> int:
    """Memory ``M`` (in blocks if the schedule says so), host memory and pauses; returns the
    peak memory."""
    b, M = schedule.block_size, int(instance.memory)
    mem, host = schedule_memory(instance, schedule)
    over = np.flatnonzero(mem > M)
    for tau in over[:50]:
        unit = "" if b == 1 else f" (blocks of {b})"
        v.append(Violation("memory", int(tau), None, float(mem[tau] - M),
                           f"memory {mem[tau]} > M = {M} at slot {tau}{unit}"))
    if over.size > 50:
        v.append(Violation("memory", int(over[50]), None, float(over.size - 50),
                           f"... memory exceeded at {over.size - 50} more slots"))
    cap = schedule.host_memory
    if host is not None and cap is not None:
        for tau in np.flatnonzero(host > cap)[:50]:
            v.append(Violation("host_memory", int(tau), None, float(host[tau] - cap),
                               f"host memory {host[tau]} > {cap} at slot {tau}"))
    return int(mem.max()) if mem.size else 0


def _check_batch(instance: Instance, schedule: Schedule, v: list[Violation]) -> None:
    """Batch limit: runs active at ``tau = k+1 .. k+L``."""
    st, ln = schedule.run_start, schedule.run_length
    if instance.max_batch is None or not st.size:
        return
    H = int((st + ln).max())
    live = ln > 0
    cnt = np.zeros(H + 2, dtype=np.int64)
    np.add.at(cnt, st[live] + 1, 1)
    np.add.at(cnt, st[live] + ln[live] + 1, -1)
    running = np.cumsum(cnt)[: H + 1]
    over_b = np.flatnonzero(running > instance.max_batch)
    for tau in over_b[:50]:
        v.append(Violation("batch", int(tau), None, float(running[tau] - instance.max_batch),
                           f"{running[tau]} requests running > max_batch = "
                           f"{instance.max_batch} at slot {tau}"))


def _objective(instance: Instance, schedule: Schedule, v: list[Violation], rtol: float
               ) -> tuple[float, GoodputReport | None]:
    """Total latency and goodput from the completing runs (every request completes once).

    Goodput takes each request's virtual start ``c_i - o_i``: exact for deadlines, and for
    a resumed or paused request a pessimistic reading of stream SLOs (its ``j``-th token came
    no later than ``c_i - o_i + j``)."""
    times = schedule.times
    c = schedule.completion(instance)
    if instance.is_slotted:
        objective = float((c - instance.arrival).sum())
    else:
        assert times is not None
        objective = float((times[c] - instance.arrival).sum())
    claimed = schedule.claimed_objective
    if claimed is not None and not np.isclose(claimed, objective, rtol=rtol, atol=1e-9):
        v.append(Violation("objective", None, None, float(claimed - objective),
                           f"claimed objective {claimed} but recomputed {objective}"))
    goodput: GoodputReport | None = None
    if instance.slo is not None:
        goodput = evaluate_goodput(instance.slo, instance.goodput, instance.arrival,
                                   instance.prompt, instance.output, c - instance.output,
                                   None if instance.is_slotted else times)
        claimed_g = schedule.meta.get("claimed_goodput")
        if claimed_g is not None and not np.isclose(float(claimed_g), goodput.token_goodput,
                                                    rtol=rtol, atol=1e-9):
            v.append(Violation("goodput", None, None, float(claimed_g) - goodput.token_goodput,
                               f"claimed goodput {claimed_g} but recomputed "
                               f"{goodput.token_goodput}"))
    return objective, goodput


def check_schedule(
    instance: Instance,
    schedule: Schedule,
    *,
    rtol: float = OBJ_RTOL,
) -> FeasibilityReport:
    """Validate ``schedule`` against ``instance`` and recompute its objective.

    Every mode of :mod:`kvopt.core.schedule` is checked by the same rules: run lengths and
    what each run resumed from (progress), arrivals, overlaps, memory at every slot (in blocks
    when the schedule has a ``block_size``), host memory of swapped requests, the batch limit,
    the objective and the goodput.

    Parameters
    ----------
    instance
        The instance.
    schedule
        Any schedule (from the MIP, the simulator or a file).
    rtol
        Relative tolerance for the claimed objective.

    Returns
    -------
    FeasibilityReport
        ``report.ok`` is True iff every check passed.

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> check_schedule(inst, Schedule.from_starts(inst, [0, 0])).objective
    12.0
    >>> check_schedule(inst, Schedule.from_starts(inst, [0, 1])).ok   # 9 tokens at slot 4
    True
    >>> tight = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> check_schedule(tight, Schedule.from_starts(tight, [0, 0])).kinds()  # 4 + 4 at slot 3
    {'memory'}
    >>> rec = Schedule([0, 1, 0], [0, 0, 3], [1, 3, 2], [False, True, True], tight.sha256(),
    ...                run_offset=[0, 0, 1], preemption="recompute")
    >>> check_schedule(tight, rec).objective    # request 0 keeps its first token
    8.0
    """
    v: list[Violation] = []
    n = instance.n
    if schedule.instance_sha256 != instance.sha256():
        v.append(Violation("instance_mismatch", None, None, 0.0,
                           "schedule was made for another instance (sha256 differs)"))
    req, st, ln = schedule.run_request, schedule.run_start, schedule.run_length
    bad = (req < 0) | (req >= n) | (st < 0) | (ln < 0) | (schedule.run_offset < 0)
    for r in np.flatnonzero(bad)[:50]:
        msg = (f"run {r}: request {req[r]}, start {st[r]}, length {ln[r]}, offset "
               f"{schedule.run_offset[r]} out of range")
        if schedule.is_seed_convention:
            msg = f"run {r}: request {req[r]}, start {st[r]}, length {ln[r]} out of range"
        v.append(Violation("bad_run", int(st[r]), int(req[r]), 0.0, msg))
    if bad.any() or not _check_format(instance, schedule, v):
        return FeasibilityReport(v, None, 0)
    ncomp = _check_runs(instance, schedule, v)
    if not _check_times(instance, schedule, v):
        return FeasibilityReport(v, None, 0)
    _check_arrivals(instance, schedule, v)
    _check_sequence(instance, schedule, v)
    peak = _check_memory(instance, schedule, v)
    _check_batch(instance, schedule, v)
    objective: float | None = None
    goodput: GoodputReport | None = None
    if not (ncomp != 1).any():
        objective, goodput = _objective(instance, schedule, v, rtol)
    return FeasibilityReport(v, objective, peak, goodput)


def assert_feasible(instance: Instance, schedule: Schedule) -> FeasibilityReport:
    """Check and raise :class:`InfeasibleScheduleError` on any violation.

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> tight = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> assert_feasible(tight, Schedule.from_starts(tight, [0, 3])).objective
    9.0
    >>> try:
    ...     assert_feasible(tight, Schedule.from_starts(tight, [0, 0]))
    ... except InfeasibleScheduleError as exc:
    ...     print(exc.report.kinds())
    {'memory'}
    """
    rep = check_schedule(instance, schedule)
    rep.raise_if_invalid()
    return rep
