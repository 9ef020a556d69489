"""Tables from sweep results: ratios to the optimum, per-evaluator summaries, CSV export.

All functions take the rows of :meth:`kvopt.sweep.store.ResultStore.rows` (or of
:func:`kvopt.sweep.run_sweep`) and are pure.

Examples
--------
>>> rows = [
...     {"entry": "e", "instance_params": {}, "seed": 0, "evaluator": "opt:highs",
...      "kind": "solver", "status": "optimal", "total_latency": 10.0, "valid": True},
...     {"entry": "e", "instance_params": {}, "seed": 0, "evaluator": "mcsf",
...      "kind": "policy", "status": "simulated", "total_latency": 12.0, "valid": True},
...     {"entry": "e", "instance_params": {}, "seed": 0, "evaluator": "alpha-protection",
...      "kind": "policy", "status": "livelock", "total_latency": None, "valid": None}]
>>> [r["ratio_to_opt"] for r in with_ratios(rows)]
[1.0, 1.2, None]
>>> s = summarize(with_ratios(rows))
>>> [(x["evaluator"], x["instances"], x["results"], x["livelock"], x["ratio_mean"]) for x in s]
[('opt:highs', 1, 1, 0, 1.0), ('mcsf', 1, 1, 0, 1.2), ('alpha-protection', 1, 0, 1, None)]
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from typing import Any

from kvopt.core.errors import UsageError

__all__ = ["DEFAULT_GROUP_BY", "GROUP_KEYS", "export_csv", "metric_value", "summarize",
           "summary_table", "with_ratios"]

#: Statuses counted as a usable result.
OK_STATUSES = ("simulated", "optimal", "time_limit", "feasible")
#: The other statuses: livelocked, failed, stopped at the sweep's per-task wall-clock limit
#: (``timeout``), internal error.
NOT_OK_STATUSES = ("livelock", "failed", "timeout", "error")


def _instance_key(r: dict[str, Any]) -> tuple[str, str, int]:
    return (r["entry"], json.dumps(r.get("instance_params") or {}, sort_keys=True), r["seed"])


def ratio_basis(row: dict[str, Any]) -> str:
    """What ``ratio_to_opt`` of a row divides by: ``"OPT"``, or ``"non-preemptive OPT"`` for a
    policy run with ``preemption`` ``recompute`` or ``swap``: the MIP's optimum is
    non-preemptive and such a policy can beat it (the ratio may be below 1; the bound for
    those modes is :mod:`kvopt.mip.bounds.preemptive`).

    Examples
    --------
    >>> ratio_basis({"params": {"preemption": "recompute"}}), ratio_basis({"params": {}})
    ('non-preemptive OPT', 'OPT')
    """
    keeps = (row.get("params") or {}).get("preemption") in ("recompute", "swap")
    return "non-preemptive OPT" if keeps else "OPT"


def with_ratios(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copy of ``rows`` with ``ratio_to_opt``: TEL over the proven optimum (a solver row with
    status ``optimal``) of the same instance (entry, parameters, seed); ``None`` without one.
    ``ratio_basis`` says what it divides by (:func:`ratio_basis`).

    Examples
    --------
    >>> base = {"entry": "e", "instance_params": {}, "kind": "policy", "status": "simulated"}
    >>> rows = [{**base, "seed": 0, "kind": "solver", "status": "optimal", "total_latency": 10.0},
    ...         {**base, "seed": 0, "total_latency": 9.0, "params": {"preemption": "swap"}},
    ...         {**base, "seed": 1, "total_latency": 15.0}]          # seed 1: no optimum
    >>> [(r["seed"], r["ratio_to_opt"], r["ratio_basis"]) for r in with_ratios(rows)]
    [(0, 1.0, 'OPT'), (0, 0.9, 'non-preemptive OPT'), (1, None, 'OPT')]
    """
    opt: dict[tuple[str, str, int], float] = {}
    for r in rows:
        if (r.get("kind") == "solver" and r.get("status") == "optimal"
                and r.get("total_latency")):
            opt.setdefault(_instance_key(r), float(r["total_latency"]))
    out = []
    for r in rows:
        o = opt.get(_instance_key(r))
        tel = r.get("total_latency")
        ratio = None
        if o is not None and tel is not None and r.get("status") in OK_STATUSES:
            ratio = float(tel) / o
        out.append({**r, "ratio_to_opt": ratio, "ratio_basis": ratio_basis(r)})
    return out


def metric_value(row: dict[str, Any], metric: str) -> Any:
    """A column of the row, else one of its stored metrics (``None`` if absent).

    Examples
    --------
    >>> row = {"total_latency": 12.0, "metrics": {"total_latency": 11.0, "mean_latency": 3.0}}
    >>> [metric_value(row, m) for m in ("total_latency", "mean_latency", "p99_latency")]
    [12.0, 3.0, None]
    """
    if metric in row and metric != "metrics":
        return row[metric]
    return (row.get("metrics") or {}).get(metric)


def _mean_std(v: list[float]) -> tuple[float | None, float | None]:
    if not v:
        return None, None
    m = sum(v) / len(v)
    s = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1)) if len(v) > 1 else None
    return m, s


#: What :func:`summarize` may group by: the spec entry, the instance generator's grid point
#: (``instance_params``), the evaluator (a policy with one point of its option grid, or a
#: solver) and the seed.
GROUP_KEYS = ("entry", "instance", "evaluator", "seed")
#: The default grouping: one summary row per grid point (entry x instance parameters x
#: evaluator), averaged over the seeds.
DEFAULT_GROUP_BY = ("entry", "instance", "evaluator")


def _group_value(r: dict[str, Any], key: str) -> Any:
    if key == "instance":
        params = r.get("instance_params") or {}
        return ",".join(f"{k}={v}" for k, v in sorted(params.items())) or "-"
    return r[key]


def summarize(rows: Sequence[dict[str, Any]], metric: str = "total_latency",
              group_by: Sequence[str] = DEFAULT_GROUP_BY) -> list[dict[str, Any]]:
    """Per group (by default one per grid point: entry, instance parameters and evaluator; see
    :data:`GROUP_KEYS`), in order of first appearance: tasks, usable results, valid, proven
    optimal, livelocked/failed/timeout/error tasks, mean and std of ``metric`` over the
    results, and the ratio to the optimum (mean, max, count; rows from :func:`with_ratios`).

    Examples
    --------
    >>> rows = [{"entry": "e", "instance_params": {"n": n}, "seed": s, "evaluator": "mcsf",
    ...          "status": "simulated", "total_latency": float(n + s)}
    ...         for n in (10, 20) for s in (0, 1)]
    >>> [(x["instance"], x["mean"]) for x in summarize(rows)]
    [('n=10', 10.5), ('n=20', 20.5)]
    >>> [(x["evaluator"], x["mean"]) for x in summarize(rows, group_by=("evaluator",))]
    [('mcsf', 15.5)]
    """
    bad = [k for k in group_by if k not in GROUP_KEYS]
    if bad or not group_by:
        raise UsageError("group_by", f"expected some of {GROUP_KEYS}, got {tuple(group_by)}")
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(_group_value(r, k) for k in group_by), []).append(r)
    out = []
    for key, rs in groups.items():
        ok = [r for r in rs if r["status"] in OK_STATUSES]
        vals = [float(v) for r in ok if (v := metric_value(r, metric)) is not None]
        mean, std = _mean_std(vals)
        ratios = [r["ratio_to_opt"] for r in rs if r.get("ratio_to_opt") is not None]
        out.append({
            **dict(zip(group_by, key, strict=True)), "group_by": list(group_by),
            "instances": len(rs), "results": len(ok),
            "valid": sum(bool(r.get("valid")) for r in rs),
            "optimal": sum(r["status"] == "optimal" for r in rs),
            **{st: sum(r["status"] == st for r in rs) for st in NOT_OK_STATUSES},
            "metric": metric, "mean": mean, "std": std,
            "mean_total_latency": _mean_std([float(r["total_latency"]) for r in ok
                                             if r.get("total_latency") is not None])[0],
            "ratio_mean": sum(ratios) / len(ratios) if ratios else None,
            "ratio_max": max(ratios) if ratios else None, "ratio_count": len(ratios),
            "ratio_basis": ratio_basis(rs[0]),
        })
    return out


#: Keys of a :func:`summarize` row shown by the summary tables after the group keys, in order.
SUMMARY_KEYS = ("instances", "results", "valid", "optimal", "livelock", "failed", "timeout",
                "error", "mean", "std", "ratio_mean", "ratio_max", "ratio_count")


def summary_table(summary: Sequence[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    """Header and cells of the summary (rendered by ``kvopt.report.writers.table`` in the
    CLI: markdown, CSV or LaTeX): the group keys, then :data:`SUMMARY_KEYS`.

    Examples
    --------
    >>> head, cells = summary_table([])
    >>> head[:4], cells
    (['entry', 'instance', 'evaluator', 'tasks'], [])
    """
    metric = summary[0]["metric"] if summary else "total_latency"
    group_by = summary[0]["group_by"] if summary else list(DEFAULT_GROUP_BY)
    header = [*group_by, "tasks", "results", "valid", "optimal", "livelock", "failed",
              "timeout", "error", f"mean {metric}", "std", "ratio to OPT mean", "max", "n"]
    cells = []
    for s in summary:
        row = [s[k] for k in (*group_by, *SUMMARY_KEYS)]
        if s.get("ratio_basis", "OPT") != "OPT" and s["ratio_mean"] is not None:
            i = len(group_by) + SUMMARY_KEYS.index("ratio_mean")
            row[i] = f"{s['ratio_mean']:.4g} vs {s['ratio_basis']}"
        cells.append(row)
    return header, cells


#: Columns of :func:`export_csv` before the metrics.
EXPORT_COLUMNS = ("task", "entry", "instance_params", "seed", "instance", "n", "memory",
                  "sha256", "evaluator", "kind", "method", "params", "status", "total_latency",
                  "bound", "gap", "ratio_to_opt", "ratio_basis", "valid", "evictions",
                  "load_vs_capacity")


def export_csv(rows: Sequence[dict[str, Any]], metrics: Sequence[str] = ()) -> str:
    """One CSV line per task: identity, status, objective, bound/gap, ratio to OPT, the
    requested ``metrics``, runtime, worker, code version and the error message.

    Examples
    --------
    >>> import csv, io
    >>> base = {"entry": "e", "instance_params": {}, "seed": 0, "valid": True}
    >>> rows = [{**base, "task": "a", "evaluator": "opt:highs", "kind": "solver",
    ...          "status": "optimal", "total_latency": 10.0},
    ...         {**base, "task": "b", "evaluator": "mcsf", "kind": "policy",
    ...          "status": "simulated", "total_latency": 12.0, "metrics": {"mean_latency": 3.0}}]
    >>> text = export_csv(rows, metrics=["mean_latency"])
    >>> [(r["evaluator"], r["ratio_to_opt"], r["mean_latency"])
    ...  for r in csv.DictReader(io.StringIO(text))]
    [('opt:highs', '1.0', ''), ('mcsf', '1.2', '3.0')]
    """
    cols = [*EXPORT_COLUMNS, *[m for m in metrics if m not in EXPORT_COLUMNS],
            "runtime_s", "worker", "code_version", "finished_at", "error"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(cols)
    for r in with_ratios(rows):
        line = []
        for c in cols:
            v = metric_value(r, c)
            if isinstance(v, dict):
                v = json.dumps(v, sort_keys=True)
            line.append("" if v is None else (repr(v) if isinstance(v, float) else str(v)))
        w.writerow(line)
    return buf.getvalue()
