"""The files of a sweep: ``rows.csv``, ``summary.md`` and ``manifest.json``."""

from __future__ import annotations

import csv
import io
import platform
from pathlib import Path
from typing import Any

from kvopt.core.io import atomic_write_text, write_json
from kvopt.sweep.run import SweepSpec

COLUMNS = ("seed", "instance", "n", "memory", "sha256", "evaluator", "status", "total_latency",
           "bound", "gap", "ratio_to_opt", "valid", "evictions", "runtime_s")


def summarize(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per evaluator: count, valid, proven optimal, mean/max ratio to OPT, mean TEL."""
    out = []
    for ev in dict.fromkeys(r["evaluator"] for r in rows):
        rs = [r for r in rows if r["evaluator"] == ev]
        ratios = [r["ratio_to_opt"] for r in rs if r["ratio_to_opt"] is not None]
        tel = [r["total_latency"] for r in rs if r["total_latency"] is not None]
        out.append({
            "evaluator": ev, "instances": len(rs), "valid": sum(bool(r["valid"]) for r in rs),
            "optimal": sum(r["status"] == "optimal" for r in rs),
            "mean_total_latency": sum(tel) / len(tel) if tel else None,
            "ratio_mean": sum(ratios) / len(ratios) if ratios else None,
            "ratio_max": max(ratios) if ratios else None,
            "ratio_count": len(ratios),
        })
    return out


def _fmt(x: Any) -> str:
    return "" if x is None else (f"{x:.4f}" if isinstance(x, float) else str(x))


def _fmt(x: Any) -> str:
    return "" if x is None else (f"{x:.4f}" if isinstance(x, float) else str(x))


def write_sweep(out: Path, rows: list[dict[str, Any]], spec: SweepSpec, *, workers: int,
                command: str | None = None) -> tuple[list[dict[str, Any]], str]:
    """Write the sweep's files atomically; return its summary and the markdown table."""
    from kvopt import __version__

    summary = summarize(rows)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: _fmt(r.get(k)) for k in COLUMNS})
    head = "| evaluator | instances | valid | optimal | mean TEL | ratio mean | ratio max |"
    lines = [head, "|---|---|---|---|---|---|---|"]
    lines += [f"| {s['evaluator']} | {s['instances']} | {s['valid']} | {s['optimal']} | "
              f"{_fmt(s['mean_total_latency'])} | {_fmt(s['ratio_mean'])} | "
              f"{_fmt(s['ratio_max'])} |" for s in summary]
    manifest = {"command": command, "spec": spec.to_dict(), "workers": workers,
                "kvopt": __version__, "python": platform.python_version(), "summary": summary}
    table = "\n".join(lines)
    atomic_write_text(out / "rows.csv", buf.getvalue())
    atomic_write_text(out / "summary.md", table + "\n")
    write_json(out / "manifest.json", manifest)
    return summary, table
