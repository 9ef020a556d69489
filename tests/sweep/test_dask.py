"""Real Dask: a LocalCluster sweep killed with SIGKILL and resumed, and an existing
``dask scheduler`` + ``dask worker`` pair on loopback reached with ``--scheduler``.

The default-run versions use a small spec (about 50 tasks); the smoke spec version is slow.
Every process started here runs in its own session and is killed in a ``finally``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kvopt.sweep import ResultStore, expand_tasks, load_spec, run_spec
from kvopt.sweep.store import VOLATILE

ROOT = Path(__file__).resolve().parents[2]
SMALL = '''
name = "dasktest"
seeds = "0:6"
[[instances]]
name = "small"
generator = "random-small"
[[instances]]
name = "m1"
generator = "model1"
params = { n = 200 }
[[policies]]
name = "mcsf"
[[policies]]
name = "fcfs"
[[solvers]]
name = "highs"
time_limit = 30
instances = ["small"]
'''


def _strip(rows):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]


def _count(db: Path) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return int(con.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def _start(argv: list[str], log: Path) -> subprocess.Popen:
    with log.open("w") as f:
        return subprocess.Popen([sys.executable, "-m", *argv], cwd=ROOT, stdout=f,
                                stderr=subprocess.STDOUT, start_new_session=True)


def _kill_group(p: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=30)


def _reference(spec_path: Path, tmp_path: Path) -> list[dict]:
    ref = tmp_path / "ref.sqlite"
    run_spec(load_spec(spec_path), ref, workers=0)  # clean single-process run
    with ResultStore(ref, readonly=True) as store:
        return store.rows()


def _kill_and_resume(spec_path: Path, tmp_path: Path, *, kill_after: int, limit: float) -> None:
    spec = load_spec(spec_path)
    total = len(expand_tasks(spec))
    db = tmp_path / "r.sqlite"
    argv = ["kvopt", "sweep", str(spec_path), "--db", str(db), "--workers", "2"]
    p = _start(argv, tmp_path / "killed.log")
    try:
        t0 = time.monotonic()
        while _count(db) < kill_after:
            assert p.poll() is None, (tmp_path / "killed.log").read_text()
            assert time.monotonic() - t0 < limit, "the sweep made no progress"
            time.sleep(0.05)
        os.kill(p.pid, signal.SIGKILL)  # the client, midway
        p.wait(timeout=30)
    finally:
        _kill_group(p)  # its LocalCluster's workers
    left = _count(db)
    assert kill_after <= left < total, (left, total)  # killed midway, results kept
    r = subprocess.run([sys.executable, "-m", *argv], cwd=ROOT, capture_output=True, text=True,
                       timeout=limit, check=False)
    assert r.returncode == 0, r.stderr
    assert f"{left} already in" in r.stderr and f"{total - left} to run" in r.stderr
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT COUNT(*), COUNT(DISTINCT task) FROM results").fetchone() == (
        total, total)
    con.close()
    with ResultStore(db, readonly=True) as store:
        rows = store.rows()
    assert {row["task"] for row in rows} == {t.key for t in expand_tasks(spec)}
    assert _strip(rows) == _strip(_reference(spec_path, tmp_path))


def test_sigkill_midway_then_resume_small(tmp_path):
    spec = tmp_path / "small.toml"
    spec.write_text(SMALL)
    _kill_and_resume(spec, tmp_path, kill_after=3, limit=240)


@pytest.mark.slow
def test_sigkill_midway_then_resume_smoke_spec(tmp_path):
    _kill_and_resume(ROOT / "instances" / "sweeps" / "smoke.toml", tmp_path, kill_after=60,
                     limit=600)


def test_existing_scheduler_on_loopback(tmp_path):
    spec = tmp_path / "small.toml"
    spec.write_text(SMALL.replace('seeds = "0:6"', 'seeds = "0:2"'))
    sched_file = tmp_path / "scheduler.json"
    procs = []
    try:
        procs.append(_start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                             "--port", "0", "--no-dashboard", "--scheduler-file",
                             str(sched_file)], tmp_path / "scheduler.log"))
        t0 = time.monotonic()
        while not sched_file.exists() or not sched_file.read_text().strip():
            assert procs[0].poll() is None, (tmp_path / "scheduler.log").read_text()
            assert time.monotonic() - t0 < 120, "dask scheduler did not start"
            time.sleep(0.1)
        address = json.loads(sched_file.read_text())["address"]
        assert address.startswith("tcp://127.0.0.1:")
        procs.append(_start(["distributed.cli.dask_worker", address, "--nworkers", "1",
                             "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"],
                            tmp_path / "worker.log"))
        db = tmp_path / "r.sqlite"
        r = subprocess.run([sys.executable, "-m", "kvopt", "sweep", str(spec), "--db", str(db),
                            "--scheduler", address], cwd=ROOT, capture_output=True, text=True,
                           timeout=300, check=False)
        assert r.returncode == 0, r.stderr
        assert f"to run on {address}" in r.stderr
        with ResultStore(db, readonly=True) as store:
            rows = store.rows()
        worker_pid = {row["worker"].rsplit(":", 1)[1] for row in rows}
        assert worker_pid and str(os.getpid()) not in worker_pid  # ran on the dask worker
        assert _strip(rows) == _strip(_reference(spec, tmp_path))
    finally:
        for p in reversed(procs):
            _kill_group(p)
