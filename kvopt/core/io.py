"""Small I/O helpers: atomic file writes and canonical JSON."""

from __future__ import annotations

import json
import os
import tempfile
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temp file in the same folder, then rename).

    A crash or an exception never leaves a partial file at ``path``.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = pathlib.Path(tmp.name) / "out" / "kv.bin"     # missing folders are made
    >>> atomic_write_bytes(p, b"\\x00\\x01")
    >>> try:
    ...     atomic_write_bytes(p, "not bytes")             # fails while writing
    ... except TypeError:
    ...     pass
    >>> p.read_bytes(), [f.name for f in p.parent.iterdir()]   # old file kept, no temp left
    (b'\\x00\\x01', ['kv.bin'])
    >>> tmp.cleanup()
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual file mode
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) atomically; see :func:`atomic_write_bytes`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = pathlib.Path(tmp.name) / "note.txt"
    >>> atomic_write_text(p, "M = 10 tokens\\n")
    >>> p.read_text()
    'M = 10 tokens\\n'
    >>> tmp.cleanup()
    """
    atomic_write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike[str], doc: Any) -> None:
    """Write ``doc`` as indented JSON, atomically.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = pathlib.Path(tmp.name) / "result.json"
    >>> write_json(p, {"objective": 12.0, "starts": [0, 0]})
    >>> print(p.read_text(), end="")
    {
     "objective": 12.0,
     "starts": [
      0,
      0
     ]
    }
    >>> tmp.cleanup()
    """
    atomic_write_text(path, json.dumps(doc, indent=1) + "\n")


def write_csv(path: str | os.PathLike[str], columns: dict[str, Any]) -> None:
    """Write equal-length ``columns`` (name -> sequence) as a CSV file with a header, atomically.

    Floats are written with ``repr`` precision (``12.0``, ``0.1``), integers as integers.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = tempfile.TemporaryDirectory()
    >>> p = pathlib.Path(tmp.name) / "t.csv"
    >>> write_csv(p, {"a": [1, 2], "b": [0.5, 1.0]})
    >>> p.read_text()
    'a,b\\n1,0.5\\n2,1.0\\n'
    >>> tmp.cleanup()
    """
    import numpy as np

    names = list(columns)
    cols = [np.asarray(columns[k]).tolist() for k in names]
    lines = [",".join(names)]
    lines += [",".join(str(v) for v in row) for row in zip(*cols, strict=True)]
    atomic_write_text(path, "\n".join(lines) + "\n")


def data_file(folder: str, name: str) -> Traversable:
    """A file shipped as package data in ``kvopt/data/<folder>/``.

    Found through :mod:`importlib.resources`, so it works the same from a source checkout and
    from an installed wheel. Use :func:`importlib.resources.as_file` where a real path is needed.

    Examples
    --------
    >>> data_file("traces", "azure_conv_2023.csv").is_file()
    True
    """
    return resources.files("kvopt") / "data" / folder / name


def shipped_path(relative: str | os.PathLike[str]) -> Path:
    """Absolute path of a file shipped in the kvopt repository (``instances/...``,
    ``reports/...``), whatever the working directory.

    Looks in the checkout the package was imported from, then under the working directory.

    Examples
    --------
    >>> shipped_path("instances/tiny/a2-example.json").name
    'a2-example.json'
    """
    rel = Path(relative)
    repo = Path(__file__).resolve().parents[2]
    for base in (repo, Path.cwd()):
        if (base / rel).exists():
            return base / rel
    raise FileNotFoundError(f"{rel} is not shipped with this kvopt installation (looked in "
                            f"{repo} and {Path.cwd()}); use a source checkout of kvopt")
