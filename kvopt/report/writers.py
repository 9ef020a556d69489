"""The one table writer (markdown, CSV, LaTeX), manifest writer and figure writer of kvopt.

Every report (``kvopt report ...``, ``kvopt queueing --plot-fig8/--errata``, ``kvopt sweep``,
``benchmarks/``) writes its files through these functions, so a table looks the same in
every report and a rerun with the same inputs writes the same bytes:

- :func:`table` renders a header and rows of cells as ``"md"`` (GitHub markdown), ``"csv"`` or
  ``"tex"`` (booktabs ``tabular``); :func:`fmt` is the shared cell formatter (both live in
  :mod:`kvopt.core.tables`, so that ``sweep`` renders its tables the same way);
- :func:`manifest` / :func:`write_manifest` record the command, versions and the sha256 of
  every file (no timestamps);
- :func:`figure_png` / :func:`save_figure` render a matplotlib ``Figure`` to PNG with fixed
  metadata: matplotlib's ``Software`` tag (which carries its version) is stripped, so the
  bytes do not depend on the matplotlib version through the metadata.

Examples
--------
>>> print(table(["a", "b"], [[1, "x"], [2.5, None]]), end="")
| a | b |
|---|---|
| 1 | x |
| 2.5000 | - |
>>> print(table(["a", "b"], [[1, "x"]], "csv"), end="")
a,b
1,x
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kvopt.core.io import atomic_write_bytes, atomic_write_text
from kvopt.core.tables import TableFormat, fmt, table

__all__ = ["PNG_METADATA", "TableFormat", "figure_png", "fmt", "manifest", "save_figure",
           "sha256_bytes", "table", "versions", "write_files", "write_manifest"]

#: PNG metadata of every kvopt figure: ``Software`` (matplotlib's name and version) removed.
PNG_METADATA: dict[str, str | None] = {"Software": None}


def sha256_bytes(data: bytes) -> str:
    """Hex sha256 of ``data`` (the hash a manifest records per file).

    Examples
    --------
    >>> sha256_bytes(b"x")
    '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881'
    """
    return hashlib.sha256(data).hexdigest()


def versions(*modules: str) -> dict[str, str]:
    """kvopt's and Python's version plus ``__version__`` of each named module.

    Examples
    --------
    >>> sorted(versions("numpy"))
    ['kvopt', 'numpy', 'python']
    """
    import importlib

    import kvopt

    out = {"kvopt": kvopt.__version__, "python": platform.python_version()}
    for name in modules:
        out[name] = str(importlib.import_module(name).__version__)
    return out


def manifest(files: Mapping[str, bytes] | None = None, **fields: Any) -> dict[str, Any]:
    """A manifest: ``fields`` in the given order, then ``files`` (name -> sha256, sorted by
    name) when given. No timestamps, so a rerun writes the same bytes.

    Examples
    --------
    >>> manifest({"t.md": b"x"}, command=["kvopt", "x"])["files"]["t.md"][:12]
    '2d711642b726'
    """
    doc = dict(fields)
    if files is not None:
        doc["files"] = {name: sha256_bytes(data) for name, data in sorted(files.items())}
    return doc


def write_manifest(path: str | os.PathLike[str], doc: Mapping[str, Any]) -> None:
    """Write a manifest (see :func:`manifest`) as indented JSON, atomically.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = pathlib.Path(d) / "manifest.json"
    ...     write_manifest(p, manifest({"t.md": b"x"}, command=["kvopt", "x"]))
    ...     print(p.read_text(), end="")
    {
     "command": [
      "kvopt",
      "x"
     ],
     "files": {
      "t.md": "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"
     }
    }
    """
    atomic_write_text(path, json.dumps(doc, indent=1) + "\n")


def write_files(out_dir: str | os.PathLike[str], files: Mapping[str, bytes | str]) -> list[Path]:
    """Write ``files`` (name -> bytes or text) into ``out_dir``, each atomically.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     paths = write_files(pathlib.Path(d) / "out", {"t.md": "# T", "f.bin": b"ok"})
    ...     [(p.name, p.read_bytes()) for p in paths]
    [('t.md', b'# T'), ('f.bin', b'ok')]
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, data in files.items():
        atomic_write_bytes(out / name, data.encode() if isinstance(data, str) else data)
        paths.append(out / name)
    return paths


def figure_png(fig: Any, dpi: float = 110, **savefig_kwargs: Any) -> bytes:
    """Render a matplotlib ``Figure`` to PNG bytes with :data:`PNG_METADATA`.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(1, 1))
    >>> _ = fig.subplots().plot([0, 1])
    >>> data = figure_png(fig, dpi=20)
    >>> data[:4], b"Software" in data, data == figure_png(fig, dpi=20)
    (b'\\x89PNG', False, True)
    """
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata=dict(PNG_METADATA), **savefig_kwargs)
    return buf.getvalue()


#: Metadata of the other formats :func:`save_figure` writes (tool versions and dates removed).
_OTHER_METADATA: dict[str, dict[str, str | None]] = {
    "pdf": {"Creator": None, "Producer": None, "CreationDate": None},
    "svg": {"Creator": None, "Date": None},
}


def save_figure(fig: Any, path: str | os.PathLike[str], dpi: float = 110,
                **savefig_kwargs: Any) -> bytes:
    """Write ``fig`` to ``path`` atomically and return the bytes: PNG (:func:`figure_png`)
    unless the suffix names another format (``.pdf``, ``.svg``: written without tool versions
    or dates; others as matplotlib writes them).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(1, 1))
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = pathlib.Path(tmp.name) / "f.png"
    >>> save_figure(fig, p, dpi=20) == p.read_bytes()
    True
    >>> tmp.cleanup()
    """
    kind = Path(path).suffix.lstrip(".").lower() or "png"
    if kind == "png":
        data = figure_png(fig, dpi, **savefig_kwargs)
    else:
        buf = io.BytesIO()
        meta = _OTHER_METADATA.get(kind)
        fig.savefig(buf, format=kind, dpi=dpi, **({"metadata": dict(meta)} if meta else {}),
                    **savefig_kwargs)
        data = buf.getvalue()
    atomic_write_bytes(path, data)
    return data
