"""Table cells and tables (markdown, CSV, LaTeX): the one table renderer of kvopt.

It lives in ``core`` so that every layer that writes a table (``report``, ``sweep``,
``benchmarks/``) renders it the same way; :mod:`kvopt.report.writers` re-exports it beside
the manifest and figure writers.

Examples
--------
>>> print(table(["a", "b"], [[1, "x"], [2.5, None]]), end="")
| a | b |
|---|---|
| 1 | x |
| 2.5000 | - |
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterable, Sequence
from typing import Any, Literal

import numpy as np

from kvopt.core.errors import UsageError

__all__ = ["TableFormat", "fmt", "table"]

TableFormat = Literal["md", "csv", "tex"]

def fmt(v: Any, digits: int = 4, *, none: str = "-", sci_from: float | None = 1e5) -> str:
    """Format one table cell: ``none`` for ``None``, booleans as ``True``/``False``, integers
    as integers, finite floats with ``digits`` decimals (``.4g`` from ``|v| >= sci_from`` on;
    never with ``sci_from=None``), anything else with ``str``.

    Examples
    --------
    >>> fmt(None), fmt(3), fmt(0.123456), fmt(123456.0), fmt(0.5, 2), fmt(None, none="")
    ('-', '3', '0.1235', '1.235e+05', '0.50', '')
    >>> fmt(123456.0, sci_from=None), fmt(True)
    ('123456.0000', 'True')
    """
    if v is None:
        return none
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)) and math.isfinite(float(v)):
        v = float(v)
        return f"{v:.{digits}f}" if sci_from is None or abs(v) < sci_from else f"{v:.4g}"
    return str(v)


def _cell(v: Any) -> str:
    return "-" if v is None else v if isinstance(v, str) else fmt(v)


def table(header: Sequence[str], rows: Iterable[Sequence[Any]], format: TableFormat = "md",
          ) -> str:
    """Render a table (ending with a newline).

    Parameters
    ----------
    header
        Column titles.
    rows
        Rows of cells. Strings are written as they are; other cells through :func:`fmt`
        (markdown and LaTeX). CSV writes ``None`` as an empty cell, floats with ``repr``
        precision and everything else with ``str``.
    format
        ``"md"`` (GitHub markdown), ``"csv"`` or ``"tex"`` (booktabs ``tabular``, header
        ``_`` and ``%`` escaped, a missing cell as ``--``).

    Examples
    --------
    >>> print(table(["x_1", "y"], [["1/2", 0.25], ["1", None]], "tex"), end="")
    \\begin{tabular}{rr}
    \\toprule
    x\\_1 & y \\\\
    \\midrule
    1/2 & 0.2500 \\\\
    1 & -- \\\\
    \\bottomrule
    \\end{tabular}
    """
    if format == "md":
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(_cell(c) for c in r) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    if format == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(header)
        for r in rows:
            w.writerow(["" if c is None else repr(float(c)) if isinstance(c, float) else c
                        for c in r])
        return buf.getvalue()
    if format == "tex":
        esc = [h.replace("_", r"\_").replace("%", r"\%") for h in header]
        out = [r"\begin{tabular}{" + "r" * len(header) + "}", r"\toprule",
               " & ".join(esc) + r" \\", r"\midrule"]
        out += [" & ".join("--" if c is None else _cell(c) for c in r) + r" \\" for r in rows]
        out += [r"\bottomrule", r"\end{tabular}"]
        return "\n".join(out) + "\n"
    raise UsageError("format", f"unknown table format {format!r}; one of md, csv, tex")
