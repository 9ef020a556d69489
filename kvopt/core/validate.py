"""The independent schedule checker.

:func:`check_schedule` trusts nothing a producer says: it recomputes the memory
profile from the runs (vectorized difference arrays), checks arrivals, run
lengths, overlaps and the capacity ``M`` at every slot, and recomputes the
objective (total end-to-end latency). With a batch limit (``instance.max_batch``) it counts the
running requests at every slot; with SLOs (:mod:`kvopt.core.slo`) it recomputes every
request's SLO satisfaction and the goodput. Every problem becomes a :class:`Violation`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import InfeasibleScheduleError
from kvopt.core.instance import Instance
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
    "objective",          # claimed objective differs from the recomputed one
    "goodput",            # claimed goodput (meta["claimed_goodput"]) differs from the recomputed
)
OBJ_RTOL = 1e-9
TIME_ATOL = 1e-9


@dataclass(frozen=True)
class Violation:
    """One failed check: ``kind`` (see :data:`VIOLATION_KINDS`), slot, request and amount."""

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


def check_schedule(
    instance: Instance,
    schedule: Schedule,
    *,
    rtol: float = OBJ_RTOL,
) -> FeasibilityReport:
    """Validate ``schedule`` against ``instance`` and recompute its objective.

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
    """
    v: list[Violation] = []
    n = instance.n
    if schedule.instance_sha256 != instance.sha256():
        v.append(Violation("instance_mismatch", None, None, 0.0,
                           "schedule was made for another instance (sha256 differs)"))
    req, st, ln, done = (schedule.run_request, schedule.run_start, schedule.run_length,
                         schedule.run_completed)
    bad = (req < 0) | (req >= n) | (st < 0) | (ln < 0)
    for r in np.flatnonzero(bad)[:50]:
        msg = f"run {r}: request {req[r]}, start {st[r]}, length {ln[r]} out of range"
        v.append(Violation("bad_run", int(st[r]), int(req[r]), 0.0, msg))
    if bad.any():
        return FeasibilityReport(v, None, 0)

    # one completing run per request
    ncomp = np.bincount(req[done], minlength=n)
    for i in np.flatnonzero(ncomp == 0)[:50]:
        v.append(Violation("not_completed", None, int(i), 0.0, f"request {i} never completes"))
    for i in np.flatnonzero(ncomp > 1)[:50]:
        v.append(Violation("multiple_completions", None, int(i), float(ncomp[i]),
                           f"request {i} completes {ncomp[i]} times"))

    # run lengths
    o = instance.output[req]
    wrong = (done & (ln != o)) | (~done & (ln >= o))
    for r in np.flatnonzero(wrong)[:50]:
        kind = "completing" if done[r] else "evicted"
        v.append(Violation("run_length", int(st[r]), int(req[r]), float(ln[r] - o[r]),
                           f"{kind} run of request {req[r]} has length {ln[r]}, output is {o[r]}"))

    # times
    times = schedule.times
    H = int((st + ln).max()) if st.size else 0
    if times is not None:
        if times.shape[0] < H + 1:
            v.append(Violation("times", H, None, float(H + 1 - times.shape[0]),
                               f"times has {times.shape[0]} entries, needs {H + 1}"))
            return FeasibilityReport(v, None, 0)
        if not np.isfinite(times).all():
            v.append(Violation("times", None, None, 0.0, "times must be finite"))
            return FeasibilityReport(v, None, 0)
        dec = np.flatnonzero(np.diff(times) < -TIME_ATOL)
        for k in dec[:50]:
            v.append(Violation("times", int(k + 1), None, float(times[k] - times[k + 1]),
                               f"times decrease at decision point {k + 1}"))
    elif not instance.is_slotted:
        v.append(Violation("times", None, None, 0.0,
                           "instance arrivals are in seconds: the schedule needs times"))
        return FeasibilityReport(v, None, 0)

    # arrivals
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

    # overlaps among runs of one request (and runs after completion)
    order = np.lexsort((st, req))
    rq, rs, rl, rd = req[order], st[order], ln[order], done[order]
    same = rq[1:] == rq[:-1]
    clash = same & ((rs[1:] < rs[:-1] + rl[:-1]) | rd[:-1])
    for j in np.flatnonzero(clash)[:50]:
        v.append(Violation("overlap", int(rs[j + 1]), int(rq[j]), 0.0,
                           f"request {rq[j]}: run at slot {rs[j + 1]} overlaps or follows the "
                           f"run started at {rs[j]}"))

    # memory
    mem = memory_profile(instance.prompt[req], st, ln)
    over = np.flatnonzero(mem > instance.memory)
    for tau in over[:50]:
        v.append(Violation("memory", int(tau), None, float(mem[tau] - instance.memory),
                           f"memory {mem[tau]} > M = {instance.memory} at slot {tau}"))
    if over.size > 50:
        v.append(Violation("memory", int(over[50]), None, float(over.size - 50),
                           f"... memory exceeded at {over.size - 50} more slots"))
    peak = int(mem.max()) if mem.size else 0

    # batch limit: runs active at tau = k+1 .. k+L
    if instance.max_batch is not None and st.size:
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

    # objective
    objective: float | None = None
    if not (ncomp != 1).any():
        fs = schedule.final_start(instance)
        c = fs + instance.output
        if instance.is_slotted:
            objective = float((c - instance.arrival).sum())
        else:
            assert times is not None
            objective = float((times[c] - instance.arrival).sum())
        claimed = schedule.claimed_objective
        if claimed is not None and not np.isclose(claimed, objective, rtol=rtol, atol=1e-9):
            v.append(Violation("objective", None, None, float(claimed - objective),
                               f"claimed objective {claimed} but recomputed {objective}"))
    # goodput (SLO satisfaction recomputed from the completing runs)
    goodput: GoodputReport | None = None
    if instance.slo is not None and not (ncomp != 1).any():
        fs = schedule.final_start(instance)
        goodput = evaluate_goodput(instance.slo, instance.goodput, instance.arrival,
                                   instance.prompt, instance.output, fs,
                                   None if instance.is_slotted else times)
        claimed_g = schedule.meta.get("claimed_goodput")
        if claimed_g is not None and not np.isclose(float(claimed_g), goodput.token_goodput,
                                                    rtol=rtol, atol=1e-9):
            v.append(Violation("goodput", None, None, float(claimed_g) - goodput.token_goodput,
                               f"claimed goodput {claimed_g} but recomputed "
                               f"{goodput.token_goodput}"))
    return FeasibilityReport(v, objective, peak, goodput)


def assert_feasible(instance: Instance, schedule: Schedule) -> FeasibilityReport:
    """Check and raise :class:`InfeasibleScheduleError` on any violation."""
    rep = check_schedule(instance, schedule)
    rep.raise_if_invalid()
    return rep
