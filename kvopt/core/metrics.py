"""Metrics of a validated schedule: TEL, latency percentiles, TTFT, TPOT, makespan, memory.

All times are in the instance's unit: slots for ``time_unit="step"`` (converted
through ``schedule.times`` when the schedule carries wall-clock times, reported
separately as ``*_s`` fields) and seconds for trace instances.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from numpy.typing import NDArray

from kvopt.core.instance import Instance
from kvopt.core.schedule import Schedule
from kvopt.core.validate import check_schedule, memory_profile


@dataclass(frozen=True)
class Metrics:
    """Summary metrics of one schedule (see :func:`compute_metrics`)."""

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
    feasible: bool

    def to_dict(self) -> dict[str, float | int | str | bool]:
        """JSON-ready form."""
        return asdict(self)


def latencies(instance: Instance, schedule: Schedule) -> NDArray[np.float64]:
    """End-to-end latency ``c_i - a_i`` of each request (instance time unit)."""
    c = schedule.completion(instance)
    if instance.is_slotted and schedule.times is None:
        return (c - instance.arrival).astype(np.float64)
    if instance.is_slotted:
        # slot instance simulated with real step times: latency from the arrival slot's time
        return schedule.time_of(c) - schedule.time_of(instance.arrival)
    return schedule.time_of(c) - instance.arrival


def compute_metrics(instance: Instance, schedule: Schedule, *, check: bool = True) -> Metrics:
    """Compute :class:`Metrics` of ``schedule``.

    Parameters
    ----------
    instance, schedule
        The pair to evaluate.
    check
        Run :func:`check_schedule` first and record ``feasible``.

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> m = compute_metrics(inst, Schedule.from_starts(inst, [0, 0]))
    >>> m.total_latency, m.makespan, m.peak_memory
    (12.0, 8.0, 10)
    """
    feasible = check_schedule(instance, schedule).ok if check else True
    lat = latencies(instance, schedule)
    first = schedule.first_start(instance)
    final = schedule.final_start(instance)
    t_arr = (schedule.time_of(instance.arrival) if instance.is_slotted and schedule.times
             is not None else instance.arrival.astype(np.float64))
    ttft = schedule.time_of(first + 1) - t_arr
    o = instance.output
    t_first_final = schedule.time_of(final + 1)
    t_done = schedule.time_of(final + o)
    multi = o > 1
    tpot = ((t_done[multi] - t_first_final[multi]) / (o[multi] - 1)).mean() if multi.any() else 0.0
    mem = memory_profile(instance.prompt[schedule.run_request], schedule.run_start,
                         schedule.run_length)
    return Metrics(
        n=instance.n,
        unit="second" if (schedule.times is not None or not instance.is_slotted) else "step",
        total_latency=float(lat.sum()),
        mean_latency=float(lat.mean()),
        p50_latency=float(np.percentile(lat, 50)),
        p90_latency=float(np.percentile(lat, 90)),
        p99_latency=float(np.percentile(lat, 99)),
        ttft_mean=float(ttft.mean()),
        tpot_mean=float(tpot),
        makespan=float(t_done.max()),
        peak_memory=int(mem.max()) if mem.size else 0,
        evictions=schedule.num_evictions,
        feasible=feasible,
    )
