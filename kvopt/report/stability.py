"""Stability sweep: simulated queues at arrival rates around ``mu = M / (b E[g])``.

For a workload (the heavy-tailed log-t generator of :mod:`kvopt.predictions.workload`, or
the first ``n`` requests of the Azure conversation trace) the prompts and outputs are fixed
and only the arrival rate moves: ``lambda = load * mu`` for each ``load``, where ``mu`` is
:func:`kvopt.sim.headroom.instance_headroom` of the workload (``b`` read at the full-memory
batch of the step-time model). Each policy is simulated at each load, and the run is called
stable or not by :func:`kvopt.core.stability.backlog_drift` on the *work* in system (the
token-steps ``g`` of the requests arrived and not completed; its growth from the second to
the last quarter of the arrival period per unit of arriving work, stable iff <= 5 %). Work,
not count: a shortest-first policy keeps the count of waiting requests flat above capacity
by leaving the long ones behind (``drift_count`` is reported too).

The *simulated knee* of a policy is the load where the drift crosses the threshold
(linear interpolation between the last stable and the first unstable load of the grid);
``served / mu`` is the completion rate measured over the last three quarters of the arrival
period of the most loaded run, in work (token-steps per time unit divided by
``mu E[g] = M / b``): above its capacity a policy serves at its capacity, so this
estimates the knee from the other side.

Examples
--------
>>> rows = stability_sweep(["heavy-tailed"], ["mcsf"], loads=[0.5, 1.5], n=300,
...                        step_time="unit", memory=4000)
>>> [(r["load"], r["stable"]) for r in rows]
[(0.5, True), (1.5, False)]
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.core.stability import Headroom, backlog_drift, lifetime_token_steps

__all__ = ["WORKLOADS", "knees", "stability_plot", "stability_sweep", "workload_at"]

#: Workloads of the sweep.
WORKLOADS = ("heavy-tailed", "azure")


def _base(workload: str, n: int, memory: int, seed: int) -> Instance:
    if workload == "heavy-tailed":
        from kvopt.predictions.workload import heavy_tailed_workload

        return heavy_tailed_workload(n, rate=1.0, memory=memory, time_unit="second",
                                     catalog_seed=seed, seed=seed).instance
    if workload == "azure":
        from importlib.resources import as_file

        from kvopt.core.instance import load_instance
        from kvopt.core.io import data_file

        with as_file(data_file("traces", "azure_conv_2023.csv")) as path:
            trace = load_instance(path, memory=memory)
        if n > trace.n:
            raise UsageError("n", f"the Azure trace has {trace.n} requests, asked for {n}")
        return trace.take(range(n))
    raise UsageError("workload", f"choose from {', '.join(WORKLOADS)}, got {workload!r}")


def workload_at(workload: str, load: float, *, n: int, step_time: str, memory: int = 16492,
                seed: int = 0) -> tuple[Instance, Headroom]:
    """The workload's requests with arrivals rescaled to ``lambda = load * mu``.

    Examples
    --------
    >>> inst, h = workload_at("azure", 0.8, n=200, step_time="unit")
    >>> round(h.load, 6)
    0.8
    """
    from kvopt.sim.headroom import instance_headroom

    base = _base(workload, n, memory, seed)
    h0 = instance_headroom(base, step_time)
    if h0.load is None:
        raise UsageError("workload", "all requests arrive at once: no rate to scale")
    a = np.asarray(base.arrival, dtype=np.float64)
    scale = h0.arrival_rate / (load * h0.mu)
    inst = base.replace(arrival=(a - a.min()) * scale,
                        name=f"{workload}-n{n}-load{load:g}")
    return inst, instance_headroom(inst, step_time)


def _served(arrival: np.ndarray, completion: np.ndarray, g: np.ndarray) -> float:
    """Work completed (token-steps) per time unit over the last three quarters of the
    arrival period."""
    lo, hi = float(arrival.min()), float(arrival.max())
    t0 = lo + (hi - lo) / 4
    done = (completion > t0) & (completion <= hi)
    return float(g[done].sum()) / (hi - t0)


def stability_sweep(workloads: Sequence[str] = WORKLOADS,
                    policies: Sequence[str] = ("mcsf", "fcfs", "wait"),
                    loads: Sequence[float] = (0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2), *,
                    n: int = 2000, step_time: str = "a100-llama2-70b-tp2",
                    memory: int = 16492, seed: int = 0, threshold: float = 0.05,
                    progress: bool = False) -> list[dict[str, Any]]:
    """One row per (workload, policy, load): mean / p99 latency (instance unit), the drift
    and verdict of :func:`~kvopt.core.stability.backlog_drift`, ``served / mu``, evictions,
    the simulation's wall seconds, and ``delta = max(s + o) / M``, the slack of the largest
    request (the paper's sufficient condition for stability is ``lambda < mu (1 - delta)``).

    Examples
    --------
    >>> r = stability_sweep(["heavy-tailed"], ["mcsf"], loads=[1.5], n=300, step_time="unit",
    ...                     memory=4000)[0]
    >>> r["stable"], round(r["drift"], 3), round(r["drift_count"], 3)  # work grows, count flat
    (False, 0.31, -0.001)
    >>> round(r["served_over_mu"], 3), round(r["delta"], 3)
    (0.969, 0.739)
    """
    from kvopt.core.metrics import request_table
    from kvopt.core.progress import Progress
    from kvopt.sim import check_policy, simulate

    for w in workloads:
        if w not in WORKLOADS:
            raise UsageError("workload", f"choose from {', '.join(WORKLOADS)}, got {w!r}")
    for ld in loads:
        if not (isinstance(ld, (int, float)) and 0 < ld < math.inf):
            raise UsageError("loads", f"must be positive numbers, got {ld!r}")
    rows = []
    with Progress(len(workloads) * len(policies) * len(loads), "stability sweep",
                  enabled=progress, unit="run") as bar:
        for w in workloads:
            for ld in loads:
                inst, h = workload_at(w, float(ld), n=n, step_time=step_time, memory=memory,
                                      seed=seed)
                for p in policies:
                    check_policy(inst, p)
                    t0 = time.perf_counter()
                    res = simulate(inst, p, step_time=step_time, seed=seed)
                    wall = time.perf_counter() - t0
                    t = request_table(inst, res.schedule)
                    g = lifetime_token_steps(inst.prompt, inst.output)
                    b = backlog_drift(t["arrival"], t["completion"], weights=g,
                                      threshold=threshold)
                    bc = backlog_drift(t["arrival"], t["completion"], threshold=threshold)
                    rows.append({
                        "workload": w, "policy": p, "load": float(ld),
                        "load_measured": h.load, "mu": h.mu, "b": h.step, "mean_g": h.mean_g,
                        "delta": float((inst.prompt + inst.output).max()) / inst.memory,
                        "mean_latency": res.metrics.mean_latency,
                        "p99_latency": res.metrics.p99_latency, "drift": b.drift,
                        "stable": b.stable, "drift_count": bc.drift,
                        "served_over_mu": _served(t["arrival"], t["completion"], g)
                        / (h.mu * h.mean_g),
                        "evictions": res.metrics.evictions, "wall_s": wall, "n": inst.n})
                    bar.update()
    return rows


def knees(rows: Sequence[dict[str, Any]], threshold: float = 0.05) -> list[dict[str, Any]]:
    """Per (workload, policy): the simulated knee (load where the drift crosses
    ``threshold``, interpolated; ``None`` if every load is stable, ``<= min load`` if none
    is), the first unstable load of the grid, and ``served / mu`` at the largest load.

    Examples
    --------
    >>> rows = [{"workload": "w", "policy": "p", "load": x, "drift": d, "served_over_mu": s}
    ...         for x, d, s in [(0.8, 0.0, 0.8), (1.0, 0.01, 0.97), (1.2, 0.21, 0.95)]]
    >>> k = knees(rows)[0]
    >>> round(k["knee"], 3), k["first_unstable"], k["served_over_mu"]   # 1 + 0.2 * 0.04/0.2
    (1.04, 1.2, 0.95)
    """
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault((r["workload"], r["policy"]), []).append(r)
    out = []
    for (w, p), rs in groups.items():
        rs = sorted(rs, key=lambda r: r["load"])
        knee: float | None = None
        first = next((r for r in rs if r["drift"] > threshold), None)
        if first is not None:
            i = rs.index(first)
            if i == 0:
                knee = first["load"]
            else:
                lo = rs[i - 1]
                frac = (threshold - lo["drift"]) / (first["drift"] - lo["drift"])
                knee = lo["load"] + frac * (first["load"] - lo["load"])
        out.append({"workload": w, "policy": p, "knee": knee,
                    "first_unstable": None if first is None else first["load"],
                    "served_over_mu": rs[-1]["served_over_mu"]})
    return out


def stability_plot(rows: Sequence[dict[str, Any]], knee_rows: Sequence[dict[str, Any]]
                   ) -> Any:
    """Mean latency against ``lambda / mu`` per workload (one panel each), one line per
    policy, the formula's boundary ``lambda / mu = 1`` and each policy's simulated knee.

    Examples
    --------
    >>> rows = [{"workload": "w", "policy": p, "load": x, "mean_latency": m}
    ...         for p, pts in [("mcsf", [(0.8, 5.0), (1.2, 40.0)]),
    ...                        ("fcfs", [(0.8, 8.0), (1.2, 90.0)])] for x, m in pts]
    >>> fig = stability_plot(rows, [{"workload": "w", "policy": "mcsf", "knee": 1.04}])
    >>> ax = fig.axes[0]
    >>> ax.get_title(), ax.get_yscale(), ax.get_legend_handles_labels()[1]
    ('w: dotted = simulated knee', 'log', ['mcsf', 'fcfs', 'formula: lambda = mu'])
    """
    from matplotlib.figure import Figure

    ws = list(dict.fromkeys(r["workload"] for r in rows))
    fig = Figure(figsize=(5.2 * len(ws), 4.0))
    axes = fig.subplots(1, len(ws), squeeze=False)[0]
    for ax, w in zip(axes, ws, strict=True):
        ps = list(dict.fromkeys(r["policy"] for r in rows if r["workload"] == w))
        for _j, p in enumerate(ps):
            rs = sorted((r for r in rows if r["workload"] == w and r["policy"] == p),
                        key=lambda r: r["load"])
            line = ax.plot([r["load"] for r in rs], [r["mean_latency"] for r in rs],
                           marker="o", label=p)[0]
            k = next((k for k in knee_rows if k["workload"] == w and k["policy"] == p), None)
            if k is not None and k["knee"] is not None:
                ax.axvline(k["knee"], color=line.get_color(), ls=":", lw=1.2)
        ax.axvline(1.0, color="black", lw=1.5, label="formula: lambda = mu")
        ax.set_yscale("log")
        ax.set_xlabel("load vs capacity lambda / mu")
        ax.set_ylabel("mean latency (s)")
        ax.set_title(f"{w}: dotted = simulated knee")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
