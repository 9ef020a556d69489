"""Metrics of a validated schedule: TEL, latency percentiles, TTFT, TPOT, makespan, memory,
and for instances with SLOs token goodput, request goodput and SLO attainment per kind
(:mod:`kvopt.core.slo`).

One name, one unit. The unsuffixed time fields (``total_latency``, ``mean_latency``, ...,
``makespan``) are in the instance's own unit, ``Metrics.unit``: slots for ``time_unit="step"``
and seconds for trace instances -- the same unit as :func:`kvopt.check_schedule`'s ``objective``,
so ``compute_metrics(i, s).total_latency == check_schedule(i, s).objective`` always. Wall-clock
seconds are the ``*_s`` fields: the same quantities through ``schedule.times`` when the schedule
carries them (a slotted instance simulated with a step-time model), equal to the unsuffixed ones
for trace instances, and ``None`` when there is no clock (unit slots).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.core.schedule import Schedule
from kvopt.core.slo import evaluate_goodput
from kvopt.core.validate import FeasibilityReport, check_schedule, schedule_memory


@dataclass(frozen=True)
class Metrics:
    """Summary metrics of one schedule (see :func:`compute_metrics`).

    ``unit`` is the unit of the unsuffixed time fields (``"step"`` or ``"second"``); the ``*_s``
    fields are wall-clock seconds or ``None`` without a clock. ``feasible`` is ``None`` when the
    schedule was not checked.

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> m = compute_metrics(inst, Schedule.from_starts(inst, [0, 0]))
    >>> m.unit, m.feasible, m.total_latency, m.p50_latency, m.ttft_mean, m.has_clock
    ('step', True, 12.0, 6.0, 1.0, False)
    >>> m.to_dict()["peak_memory"]
    10
    """

    n: int
    unit: str
    total_latency: float
    mean_latency: float
    p50_latency: float
    p90_latency: float
    p99_latency: float
    ttft_mean: float
    tpot_mean: float
    makespan: float
    peak_memory: int
    evictions: int
    feasible: bool | None
    total_latency_s: float | None = None
    mean_latency_s: float | None = None
    p50_latency_s: float | None = None
    p90_latency_s: float | None = None
    p99_latency_s: float | None = None
    ttft_mean_s: float | None = None
    tpot_mean_s: float | None = None
    makespan_s: float | None = None
    token_goodput: float | None = None
    request_goodput: int | None = None
    slo_attainment: dict[str, float] | None = None
    goodput_rule: str | None = None

    @property
    def has_clock(self) -> bool:
        """Whether the ``*_s`` (wall-clock) fields are set."""
        return self.total_latency_s is not None

    def to_dict(self) -> dict[str, float | int | str | bool | None]:
        """JSON-ready form."""
        return asdict(self)


def latencies(instance: Instance, schedule: Schedule, *, seconds: bool = False
              ) -> NDArray[np.float64]:
    """End-to-end latency ``c_i - a_i`` of each request.

    In the instance's unit (slots or seconds), or with ``seconds=True`` in wall-clock seconds
    through ``schedule.times`` (for a trace instance both are the same).

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> inst = Instance(memory=10, arrival=[0, 1], prompt=[1, 1], output=[4, 2])
    >>> sched = Schedule.from_starts(inst, [0, 1], times=[0.0, 0.5, 1.0, 1.5, 2.0])
    >>> latencies(inst, sched).tolist(), latencies(inst, sched, seconds=True).tolist()
    ([4.0, 2.0], [2.0, 1.0])
    """
    c = schedule.completion(instance)
    if instance.is_slotted and not seconds:
        return (c - instance.arrival).astype(np.float64)
    if instance.is_slotted:
        if schedule.times is None:
            raise UsageError("seconds", "seconds=True needs a schedule with times on a slotted "
                                        "instance")
        # slot instance simulated with real step times: latency from the arrival slot's time
        return schedule.time_of(c) - schedule.time_of(instance.arrival)
    return schedule.time_of(c) - instance.arrival


def _summary(instance: Instance, schedule: Schedule, clock: bool) -> dict[str, float]:
    """The time fields in slots (``clock=False``, slotted instances) or in seconds."""
    first = schedule.first_start(instance)
    final = schedule.final_start(instance)
    o = instance.output
    def at(k: NDArray[np.int64]) -> NDArray[np.float64]:
        return schedule.time_of(k) if clock else np.asarray(k, dtype=np.float64)

    lat = latencies(instance, schedule, seconds=clock)
    t_arr = (at(instance.arrival) if clock and instance.is_slotted
             else instance.arrival.astype(np.float64))
    if schedule.is_seed_convention:
        ttft = at(first + 1) - t_arr
        t_first_final = at(final + 1)
        t_done = at(final + o)
        per = o  # tokens of the final run
    else:  # first token of the first run; the final run's own tokens (module docstring)
        ttft = at(schedule.first_token(instance)) - t_arr
        fin = schedule.run_completed
        first_tok = np.zeros(instance.n, dtype=np.int64)
        per = np.ones(instance.n, dtype=np.int64)
        rq = schedule.run_request[fin]
        first_tok[rq] = (schedule.run_start + schedule.run_prefill + 1)[fin]
        per[rq] = schedule.run_tokens()[fin]
        t_first_final = at(first_tok)
        t_done = at(schedule.completion(instance))
    multi = per > 1
    tpot = ((t_done[multi] - t_first_final[multi]) / (per[multi] - 1)).mean() if multi.any(
    ) else 0.0
    p50, p90, p99 = np.percentile(lat, (50, 90, 99))     # one sort for the three
    return {"total_latency": float(lat.sum()), "mean_latency": float(lat.mean()),
            "p50_latency": float(p50), "p90_latency": float(p90),
            "p99_latency": float(p99), "ttft_mean": float(ttft.mean()),
            "tpot_mean": float(tpot), "makespan": float(t_done.max())}


def compute_metrics(instance: Instance, schedule: Schedule, *, check: bool = True,
                    report: FeasibilityReport | None = None) -> Metrics:
    """Compute :class:`Metrics` of ``schedule``.

    Parameters
    ----------
    instance, schedule
        The pair to evaluate.
    check
        Run :func:`check_schedule` first and record ``feasible`` (``None`` when not checked).
    report
        :func:`check_schedule`'s report of this very pair, when the caller has it already
        (:func:`kvopt.sim.simulate` validates before it measures): used as the check's (its
        ``feasible`` and, when feasible, its peak memory), instead of checking again.

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> m = compute_metrics(inst, Schedule.from_starts(inst, [0, 0]))
    >>> m.total_latency, m.makespan, m.peak_memory, m.total_latency_s
    (12.0, 8.0, 10, None)
    >>> timed = Schedule.from_starts(inst, [0, 0], times=[0.1 * k for k in range(9)])
    >>> m = compute_metrics(inst, timed)
    >>> m.unit, m.total_latency, round(m.total_latency_s, 6)
    ('step', 12.0, 1.2)
    >>> rep = check_schedule(inst, timed)
    >>> compute_metrics(inst, timed, check=False, report=rep) == m
    True
    """
    rep = report if report is not None else check_schedule(instance, schedule) if check else None
    feasible = None if rep is None else rep.ok
    clock = schedule.times is not None or not instance.is_slotted
    own = _summary(instance, schedule, clock=not instance.is_slotted)
    sec = (own if not instance.is_slotted else _summary(instance, schedule, clock=True)
           ) if clock else None
    if rep is not None and rep.ok:
        peak = rep.peak_memory                 # the checker's own profile: not computed twice
    else:
        mem, _ = schedule_memory(instance, schedule)
        peak = int(mem.max()) if mem.size else 0
    good = None
    if instance.slo is not None:
        good = evaluate_goodput(instance.slo, instance.goodput, instance.arrival,
                                instance.prompt, instance.output,
                                schedule.completion(instance) - instance.output,
                                None if instance.is_slotted else schedule.times)
    return Metrics(
        n=instance.n,
        unit="step" if instance.is_slotted else "second",
        **own,
        peak_memory=peak,
        evictions=schedule.num_evictions,
        feasible=feasible,
        **({} if sec is None else {f"{k}_s": v for k, v in sec.items()}),
        token_goodput=None if good is None else good.token_goodput,
        request_goodput=None if good is None else good.request_goodput,
        slo_attainment=None if good is None else good.attainment,
        goodput_rule=None if good is None else good.rule,
    )


def request_table(instance: Instance, schedule: Schedule) -> dict[str, NDArray[np.float64]]:
    """Per-request outcomes of ``schedule``: one array per column, in request order.

    Columns ``request, arrival, prompt, output, first_start, start, completion, latency,
    ttft, evictions``; times are in the instance's unit (slots or seconds). ``first_start``
    is the start of the first run, ``start`` of the completed run (they differ for evicted
    requests); ``ttft`` is from the arrival to the end of the first run's first slot (the
    convention of :class:`Metrics`). With a clock (a slotted instance simulated with real step
    times) the wall-clock ``start_s, completion_s, latency_s, ttft_s`` are added.

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> inst = Instance(memory=10, arrival=[0, 1], prompt=[1, 1], output=[4, 2])
    >>> t = request_table(inst, Schedule.from_starts(inst, [0, 2]))
    >>> t["latency"].tolist(), t["ttft"].tolist(), t["evictions"].tolist()
    ([4.0, 3.0], [1.0, 2.0], [0, 0])
    """
    first = schedule.first_start(instance)
    final = schedule.final_start(instance)
    done = schedule.completion(instance)
    ftok = first + 1 if schedule.is_seed_convention else schedule.first_token(instance)
    evicted = ~schedule.run_completed
    ev = np.bincount(schedule.run_request[evicted], minlength=instance.n)[: instance.n]
    arr = instance.arrival
    cols: dict[str, NDArray[Any]] = {
        "request": np.arange(instance.n), "arrival": arr, "prompt": instance.prompt,
        "output": instance.output}
    if instance.is_slotted:
        cols.update(first_start=first, start=final, completion=done,
                    latency=(done - arr).astype(np.float64),
                    ttft=(ftok - arr).astype(np.float64))
        if schedule.times is not None:
            at = schedule.time_of
            t_arr = at(arr)
            cols.update(start_s=at(final), completion_s=at(done), latency_s=at(done) - t_arr,
                        ttft_s=at(ftok) - t_arr)
    else:
        at = schedule.time_of
        cols.update(first_start=at(first), start=at(final), completion=at(done),
                    latency=at(done) - arr, ttft=at(ftok) - arr)
    cols["evictions"] = ev
    return cols
