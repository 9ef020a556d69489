"""A picture of a schedule: the runs of every request (a Gantt chart, evicted runs visible) above
the memory profile against the capacity ``M``.

Uses matplotlib's object API (``Figure``, no ``pyplot``), so it neither needs nor changes a
global backend: in Jupyter the returned figure displays inline, from a script
:func:`save_schedule_plot` writes a PNG.

Examples
--------
>>> from kvopt import Instance, Schedule
>>> inst = Instance(memory=10, arrival=[0, 1], prompt=[1, 1], output=[4, 6])
>>> sched = Schedule(run_request=[0, 1, 1], run_start=[0, 1, 4], run_length=[4, 2, 6],
...                  run_completed=[True, False, True], instance_sha256=inst.sha256())
>>> fig = plot_schedule(inst, sched)
>>> [ax.get_ylabel() for ax in fig.axes]
['request', 'KV tokens']
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.core.schedule import Schedule
from kvopt.core.validate import check_schedule, memory_profile
from kvopt.report.writers import figure_png

__all__ = ["plot_schedule", "save_schedule_plot"]


def plot_schedule(instance: Instance, schedule: Schedule, *, seconds: bool | None = None,
                  title: str | None = None, figsize: tuple[float, float] = (9.0, 5.5)) -> Any:
    """Gantt chart of ``schedule``'s runs plus its memory profile against ``M``.

    Parameters
    ----------
    instance, schedule
        The schedule must belong to the instance (same sha256).
    seconds
        Time axis in wall-clock seconds through ``schedule.times`` (default: seconds for trace
        instances and for slotted instances whose schedule carries times, else slots).
    title
        Figure title; default: the instance name, TEL and the validator's verdict.
    figsize
        Inches.

    Returns
    -------
    matplotlib.figure.Figure
        Two axes: runs per request (completed runs blue, evicted runs red, arrivals as grey
        ticks) and the memory in use at every slot with the capacity ``M`` dashed.

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> inst = Instance(memory=8, arrival=[0, 0], prompt=[1, 1], output=[4, 6])
    >>> fig = plot_schedule(inst, Schedule.from_starts(inst, [0, 0]))  # both at once: too big
    >>> fig.texts[0].get_text()
    'instance: n = 2, M = 8; unknown, TEL 10 slots, INFEASIBLE (1 violations)'
    """
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    if schedule.instance_sha256 != instance.sha256():
        raise UsageError("schedule", f"belongs to another instance (sha256 "
                         f"{schedule.instance_sha256[:12]}, instance {instance.sha256()[:12]})")
    if seconds is None:
        seconds = not instance.is_slotted or schedule.times is not None
    if seconds and schedule.times is None:
        raise UsageError("seconds", "the schedule carries no times (unit step times)")
    report = check_schedule(instance, schedule)
    start, length = schedule.run_start, schedule.run_length
    req, done = schedule.run_request, schedule.run_completed
    prof = memory_profile(instance.prompt[req], start, length)

    def x(k: Any) -> Any:
        return schedule.time_of(k) if seconds else np.asarray(k, dtype=np.float64)

    arrival = (instance.arrival.astype(np.float64) if not instance.is_slotted or not seconds
               else x(instance.arrival))
    if not instance.is_slotted and not seconds:
        raise UsageError("seconds", "a trace instance (time_unit='second') is drawn in seconds")

    fig = Figure(figsize=figsize)
    gantt, mem = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [2.2, 1]})
    lw = float(np.clip(300.0 / max(instance.n, 1), 0.5, 8.0))
    for mask, color, label in ((done, "tab:blue", "completed run"),
                               (~done, "tab:red", "evicted run")):
        if mask.any():
            segs = np.stack([np.column_stack([x(start[mask]), req[mask]]),
                             np.column_stack([x(start[mask] + length[mask]), req[mask]])], axis=1)
            gantt.add_collection(LineCollection(list(segs), colors=color, linewidths=lw,
                                                label=label))
    gantt.scatter(arrival, np.arange(instance.n), marker="|", color="0.4", s=12 * lw,
                  label="arrival", zorder=3)
    gantt.set_ylim(instance.n - 0.5, -0.5)
    gantt.set_ylabel("request")
    gantt.autoscale_view(scalex=True, scaley=False)
    handles = [Line2D([], [], color="tab:blue", lw=3, label="completed run"),
               Line2D([], [], color="tab:red", lw=3, label=f"evicted run "
                      f"({schedule.num_evictions})"),
               Line2D([], [], color="0.4", marker="|", ls="", label="arrival")]
    gantt.legend(handles=handles, loc="upper right", fontsize=8)
    taus = np.arange(prof.shape[0])
    mem.step(x(taus), prof, where="pre", lw=0.9, color="tab:green",  # slot tau = (tau-1, tau]
             label="memory in use")
    mem.axhline(instance.memory, color="k", ls="--", lw=0.8, label=f"M = {instance.memory}")
    mem.set_ylim(0, max(instance.memory, int(prof.max()) if prof.size else 0) * 1.08 + 1)
    mem.set_ylabel("KV tokens")
    mem.set_xlabel("seconds" if seconds else "slot")
    mem.legend(loc="upper right", fontsize=8)
    if title is None:
        verdict = "feasible" if report.ok else f"INFEASIBLE ({len(report.violations)} violations)"
        unit = "s" if not instance.is_slotted else "slots"
        title = (f"{instance.name or 'instance'}: n = {instance.n}, M = {instance.memory}; "
                 f"{schedule.source}, TEL {report.objective:.6g} {unit}, {verdict}")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def save_schedule_plot(instance: Instance, schedule: Schedule, path: str | os.PathLike[str],
                       *, dpi: int = 100, **kwargs: Any) -> None:
    """Write :func:`plot_schedule`'s figure to ``path`` (PNG, atomically).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from kvopt import Instance, Schedule
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> tmp = tempfile.TemporaryDirectory()
    >>> out = pathlib.Path(tmp.name) / "s.png"
    >>> save_schedule_plot(inst, Schedule.from_starts(inst, [0, 0]), out)
    >>> out.read_bytes()[:4] == b"\\x89PNG"
    True
    >>> tmp.cleanup()
    """
    from kvopt.core.io import atomic_write_bytes

    fig = plot_schedule(instance, schedule, **kwargs)
    figure = figure_png(fig, dpi=dpi)
    atomic_write_bytes(path, figure)
