"""The results of a sweep in SQLite: one row per task, keyed by the task hash.

The database runs in WAL mode and every result is written in its own transaction
(``INSERT ... ON CONFLICT DO NOTHING`` on the primary key ``task``), so a process killed at any
moment leaves every committed result intact and no row twice; a re-run reads
:meth:`ResultStore.done` and skips those tasks. Only the client process writes.

Examples
--------
>>> with ResultStore(":memory:") as db:
...     first = db.insert({"task": "abc", "entry": "e", "seed": 0, "status": "simulated"})
...     again = db.insert({"task": "abc", "entry": "e", "seed": 0, "status": "simulated"})
...     first, again, sorted(db.done()), db.count()
(True, False, ['abc'], 1)
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kvopt.core.errors import UsageError

__all__ = ["COLUMNS", "VOLATILE", "ResultStore"]

#: Columns of the ``results`` table (JSON-encoded: instance_params, params, metrics).
COLUMNS = ("task", "entry", "seed", "instance_params", "instance", "n", "memory", "sha256",
           "evaluator", "kind", "method", "params", "status", "error", "total_latency", "bound",
           "gap", "valid", "evictions", "metrics", "runtime_s", "worker", "code_version",
           "finished_at")
#: Columns that depend on where and when a task ran, not on its result.
VOLATILE = ("runtime_s", "worker", "finished_at")
_JSON = ("instance_params", "params", "metrics")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    task TEXT PRIMARY KEY, entry TEXT NOT NULL, seed INTEGER NOT NULL, instance_params TEXT,
    instance TEXT, n INTEGER, memory INTEGER, sha256 TEXT, evaluator TEXT, kind TEXT,
    method TEXT, params TEXT, status TEXT NOT NULL, error TEXT, total_latency REAL,
    bound REAL, gap REAL, valid INTEGER, evictions INTEGER, metrics TEXT, runtime_s REAL,
    worker TEXT, code_version TEXT, finished_at TEXT);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, started_at TEXT, spec_name TEXT, spec TEXT,
    spec_text TEXT, code_version TEXT, scheduler TEXT, workers INTEGER, tasks INTEGER,
    skipped INTEGER);
"""


class ResultStore:
    """A sweep database (created if missing).

    Parameters
    ----------
    path
        SQLite file (``":memory:"`` for a throw-away store).
    readonly
        Open an existing database for reading only (reports, exports).
    flag
        CLI flag named in errors (``--db``).

    Examples
    --------
    >>> import os, tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "sweep.sqlite")
    ...     with ResultStore(path) as db:                  # a sweep writes ...
    ...         added = [db.insert({"task": k, "entry": "e", "seed": s, "status": "simulated",
    ...                             "total_latency": tel, "metrics": {"evictions": 0}})
    ...                  for k, s, tel in [("a", 0, 12.0), ("b", 1, 9.0), ("a", 0, 99.0)]]
    ...     with ResultStore(path, readonly=True) as db:   # ... a report reads
    ...         rows = [(r["task"], r["seed"], r["total_latency"], r["metrics"])
    ...                 for r in db.rows()]
    >>> added, rows                                        # task "a" is recorded once
    ([True, True, False], [('a', 0, 12.0, {'evictions': 0}), ('b', 1, 9.0, {'evictions': 0})])
    """

    def __init__(self, path: str | Path, *, readonly: bool = False, flag: str = "--db") -> None:
        self.path = str(path)
        if readonly:
            p = Path(self.path)
            if not p.is_file():
                raise UsageError(flag, f"{path} is not a file")
            uri = f"file:{p.resolve()}?mode=ro"
            self.conn = self._connect(uri, flag, uri=True)
            self._check(flag)
            return
        if self.path != ":memory:":
            p = Path(self.path)
            if p.is_dir():
                raise UsageError(flag, f"{path} is a folder; give a file name")
            if not p.parent.is_dir():
                raise UsageError(flag, f"folder {p.parent} does not exist")
        self.conn = self._connect(self.path, flag)
        try:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")  # WAL: durable across a crash
            self.conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise UsageError(flag, f"{path} is not a sweep database ({exc})") from None
        self._check(flag)

    @staticmethod
    def _connect(target: str, flag: str, uri: bool = False) -> sqlite3.Connection:
        try:
            return sqlite3.connect(target, uri=uri, timeout=30, isolation_level=None)
        except sqlite3.Error as exc:
            raise UsageError(flag, f"cannot open {target}: {exc}") from None

    def _check(self, flag: str) -> None:
        try:
            cols = [r[1] for r in self.conn.execute("PRAGMA table_info(results)")]
        except sqlite3.DatabaseError as exc:
            self.conn.close()
            raise UsageError(flag, f"{self.path} is not a sweep database ({exc})") from None
        if tuple(cols) != COLUMNS:
            self.conn.close()
            raise UsageError(flag, f"{self.path} is not a kvopt sweep database (no results "
                             "table with the expected columns)")

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def done(self) -> set[str]:
        """Task keys already recorded (any status)."""
        return {r[0] for r in self.conn.execute("SELECT task FROM results")}

    def count(self) -> int:
        """Number of recorded tasks."""
        return int(self.conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def forget(self, keys: Iterable[str]) -> int:
        """Delete the rows of ``keys`` (to re-run them); returns how many went."""
        n = 0
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            for k in keys:
                n += self.conn.execute("DELETE FROM results WHERE task = ?", (k,)).rowcount
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return n

    def failed(self) -> set[str]:
        """Task keys recorded with status ``error`` (internal failures, lost workers)."""
        return {r[0] for r in self.conn.execute(
            "SELECT task FROM results WHERE status = 'error'")}

    def insert(self, row: dict[str, Any]) -> bool:
        """Record one result in its own transaction; ``False`` if the task was already there."""
        values = []
        for c in COLUMNS:
            v = row.get(c)
            if c in _JSON:
                v = json.dumps(v if v is not None else {}, sort_keys=True)
            elif c == "finished_at" and v is None:
                v = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            elif isinstance(v, bool):
                v = int(v)
            values.append(v)
        sql = (f"INSERT INTO results ({', '.join(COLUMNS)}) VALUES "
               f"({', '.join('?' * len(COLUMNS))}) ON CONFLICT(task) DO NOTHING")
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            added = self.conn.execute(sql, values).rowcount == 1
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return added

    def record_run(self, spec: dict[str, Any], spec_text: str, *, code_version: str,
                   scheduler: str | None, workers: int, tasks: int, skipped: int) -> None:
        """Append one line to the ``runs`` table (what was started, when, how)."""
        self.conn.execute(
            "INSERT INTO runs (started_at, spec_name, spec, spec_text, code_version, scheduler,"
            " workers, tasks, skipped) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), spec.get("name"),
             json.dumps(spec, sort_keys=True), spec_text, code_version, scheduler, workers,
             tasks, skipped))

    def rows(self) -> list[dict[str, Any]]:
        """Every result, decoded (JSON columns parsed, ``valid`` as bool), in a fixed order
        (entry, instance parameters, seed, evaluator)."""
        cur = self.conn.execute(f"SELECT {', '.join(COLUMNS)} FROM results ORDER BY entry, "
                                "instance_params, seed, evaluator, task")
        out = []
        for rec in cur:
            d = dict(zip(COLUMNS, rec, strict=True))
            for c in _JSON:
                d[c] = json.loads(d[c]) if d[c] else {}
            if d["valid"] is not None:
                d["valid"] = bool(d["valid"])
            out.append(d)
        return out
