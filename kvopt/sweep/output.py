"""The files of a sweep: ``rows.csv``, ``summary.md`` and ``manifest.json``."""

from __future__ import annotations

import csv
import io
import platform
from pathlib import Path
from typing import Any

from kvopt.core.io import atomic_write_text, write_json
from kvopt.core.tables import table as render_table
from kvopt.sweep.run import SweepSpec
from kvopt.sweep.summary import metric_value, summarize

COLUMNS = ("seed", "instance", "n", "memory", "sha256", "evaluator", "status", "total_latency",
           "bound", "gap", "ratio_to_opt", "valid", "evictions", "load_vs_capacity", "runtime_s")


def _fmt(x: Any) -> str:
    return "" if x is None else (f"{x:.4f}" if isinstance(x, float) else str(x))


def write_sweep(out: Path, rows: list[dict[str, Any]], spec: SweepSpec, *, workers: int,
                command: str | None = None) -> tuple[list[dict[str, Any]], str]:
    """Write the sweep's files atomically; return its summary and the markdown table.

    Examples
    --------
    >>> import tempfile
    >>> from kvopt.sweep.run import SweepSpec, run_sweep
    >>> spec = SweepSpec("random-small", seeds=[0, 1], policies=["fcfs", "mcsf"])
    >>> rows = run_sweep(spec, workers=0)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     summary, table = write_sweep(Path(d), rows, spec, workers=0)
    ...     files = sorted(p.name for p in Path(d).iterdir())
    >>> files
    ['manifest.json', 'rows.csv', 'summary.md']
    >>> print(table)
    | instance | evaluator | instances | valid | optimal | mean TEL | ratio mean | ratio max |
    |---|---|---|---|---|---|---|---|
    | - | fcfs | 2 | 2 | 0 | 19.5000 |  |  |
    | - | mcsf | 2 | 2 | 0 | 17.5000 |  |  |
    """
    from kvopt import __version__

    summary = summarize(rows)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=COLUMNS, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: _fmt(metric_value(r, k)) for k in COLUMNS})
    header = ["instance", "evaluator", "instances", "valid", "optimal", "mean TEL", "ratio mean",
              "ratio max"]
    def basis(s: dict[str, Any], key: str) -> str:  # label a ratio to the non-preemptive OPT
        tail = "" if s[key] is None or s["ratio_basis"] == "OPT" else f" vs {s['ratio_basis']}"
        return _fmt(s[key]) + tail

    cells = [[s["instance"], s["evaluator"], str(s["instances"]), str(s["valid"]),
              str(s["optimal"]),
              _fmt(s["mean_total_latency"]), basis(s, "ratio_mean"), basis(s, "ratio_max")]
             for s in summary]
    manifest = {"command": command, "spec": spec.to_dict(), "workers": workers,
                "kvopt": __version__, "python": platform.python_version(), "summary": summary}
    table = render_table(header, cells).rstrip("\n")
    atomic_write_text(out / "rows.csv", buf.getvalue())
    atomic_write_text(out / "summary.md", table + "\n")
    write_json(out / "manifest.json", manifest)
    return summary, table
