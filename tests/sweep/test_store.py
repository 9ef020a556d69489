"""The SQLite store, resume, and failures recorded as results (in-process runs)."""

import sqlite3

import pytest

from kvopt.core.errors import UsageError
from kvopt.sweep import ResultStore, expand_tasks, parse_spec, run_spec
from kvopt.sweep.store import VOLATILE

SPEC = '''
seeds = "0:3"
[[instances]]
name = "m1"
generator = "model1"
params = { n = 30 }
[[instances]]
name = "small"
generator = "random-small"
[[policies]]
name = "mcsf"
[[policies]]
name = "alpha-protection"
params = { alpha = 0.1 }
[[solvers]]
name = "highs"
time_limit = 20
instances = ["small"]
'''


def _strip(rows):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in rows]


def test_livelock_is_a_result_and_the_sweep_goes_on(tmp_path):
    spec = parse_spec(SPEC)
    db = tmp_path / "r.sqlite"
    out = run_spec(spec, db, workers=0)
    assert out.ran == len(expand_tasks(spec)) == 3 * 2 + 3 * 3
    assert out.statuses.get("livelock", 0) >= 1  # alpha-protection on model 1 (issue 10)
    with ResultStore(db, readonly=True) as store:
        rows = store.rows()
    live = [r for r in rows if r["status"] == "livelock"]
    assert live and all("LivelockError" in r["error"] for r in live)
    assert {r["status"] for r in rows if r["evaluator"] == "mcsf"} == {"simulated"}
    assert all(r["valid"] for r in rows if r["status"] in ("simulated", "optimal"))


def test_resume_skips_recorded_tasks_and_gives_the_same_rows(tmp_path):
    spec = parse_spec(SPEC)
    tasks = expand_tasks(spec)
    full = tmp_path / "full.sqlite"
    run_spec(spec, full, workers=0)
    # a sweep that stopped after 4 results: the same rows as the full run, after a resume
    part = tmp_path / "part.sqlite"
    with ResultStore(full, readonly=True) as src, ResultStore(part) as dst:
        for r in src.rows()[:4]:
            dst.insert(r)
    again = run_spec(spec, part, workers=0)
    assert (again.skipped, again.ran) == (4, len(tasks) - 4)
    with ResultStore(full, readonly=True) as a, ResultStore(part, readonly=True) as b:
        assert _strip(a.rows()) == _strip(b.rows())
        assert b.count() == len(tasks)
    assert run_spec(spec, part, workers=0).ran == 0


def test_a_raising_task_is_recorded_not_fatal_and_retried_on_request(tmp_path, monkeypatch):
    import kvopt.sweep.tasks as tasks_mod

    real = tasks_mod._simulate

    def broken(inst, payload, row):
        if payload["method"] == "mcsf" and payload["seed"] == 1:
            raise RuntimeError("boom")
        real(inst, payload, row)

    monkeypatch.setattr(tasks_mod, "_simulate", broken)
    spec = parse_spec(SPEC)
    db = tmp_path / "r.sqlite"
    out = run_spec(spec, db, workers=0)
    assert out.statuses["error"] == 2 and out.ran == len(expand_tasks(spec))
    with ResultStore(db, readonly=True) as store:
        errs = [r for r in store.rows() if r["status"] == "error"]
    assert all("RuntimeError: boom" in r["error"] for r in errs)
    assert run_spec(spec, db, workers=0).ran == 0  # not retried forever
    monkeypatch.setattr(tasks_mod, "_simulate", real)
    again = run_spec(spec, db, workers=0, retry_errors=True)
    assert again.ran == 2 and again.statuses == {"simulated": 2}


def test_no_duplicate_rows_and_wal(tmp_path):
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as store:
        assert store.insert({"task": "k", "entry": "e", "seed": 0, "status": "simulated"})
        assert not store.insert({"task": "k", "entry": "e", "seed": 0, "status": "error"})
        mode = store.conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    con = sqlite3.connect(db)
    assert con.execute("SELECT COUNT(*), status FROM results").fetchone() == (1, "simulated")
    con.close()


def test_store_refuses_other_files(tmp_path):
    other = tmp_path / "other.sqlite"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE results (x)")
    con.commit()
    con.close()
    with pytest.raises(UsageError, match="--db"):
        ResultStore(other)
    text = tmp_path / "t.txt"
    text.write_text("hello\n" * 100)
    with pytest.raises(UsageError, match="--db"):
        ResultStore(text, readonly=True)
    assert text.read_text() == "hello\n" * 100
