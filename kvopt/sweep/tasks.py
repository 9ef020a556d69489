"""One sweep task on a worker: build the instance, evaluate it, return a result row.

A task never raises for what can happen to a task: a livelock, a simulation that cannot
proceed, a solver refusal or a time limit are results with their status; an unexpected
exception (a bug) is recorded as status ``error`` with its type, message and traceback tail,
so one task cannot stop a sweep. A task that runs past the sweep's per-task wall-clock
limit (:func:`iter_tasks`) is killed and recorded as status ``timeout``, so one hung task
cannot stall a sweep either. Result rows are plain data (the columns of
:data:`kvopt.sweep.store.COLUMNS`).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import socket
import struct
import time
import traceback
from collections.abc import Generator, Iterator
from typing import Any

from kvopt.core.errors import KvoptError
from kvopt.core.instance import Instance

__all__ = ["failed_row", "iter_tasks", "run_task", "run_tasks"]

#: Statuses of a task that ran to a result (not an internal error).
RESULT_STATUSES = ("simulated", "optimal", "time_limit", "feasible", "infeasible", "livelock",
                   "failed", "timeout")
#: Seconds a solver task gets beyond its own time limit before the per-task limit applies.
SOLVER_SLACK_S = 60.0


def _base(payload: dict[str, Any]) -> dict[str, Any]:
    return {"task": payload["key"], "entry": payload["entry"], "seed": payload["seed"],
            "instance_params": payload["instance_params"], "evaluator": payload["label"],
            "kind": payload["evaluator"], "method": payload["method"],
            "params": payload["params"], "code_version": payload["code_version"],
            "instance": None, "n": None, "memory": None, "sha256": None,
            "status": None, "error": None, "total_latency": None, "bound": None, "gap": None,
            "valid": None, "evictions": None, "metrics": {}, "runtime_s": None,
            "worker": f"{socket.gethostname()}:{os.getpid()}"}


def failed_row(payload: dict[str, Any], status: str, error: str) -> dict[str, Any]:
    """The row of a task that produced no result (also used by the client for lost tasks).

    Examples
    --------
    >>> from kvopt.sweep.spec import parse_spec, expand_tasks
    >>> spec = parse_spec('[[instances]]\\ngenerator = "random-small"\\n'
    ...                   '[[policies]]\\nname = "fcfs"')
    >>> payload = expand_tasks(spec)[0].payload(ship_instance=True)
    >>> row = failed_row(payload, "error", "the worker was lost")
    >>> row["task"] == payload["key"], row["evaluator"], row["status"], row["error"]
    (True, 'fcfs', 'error', 'the worker was lost')
    >>> row["total_latency"], row["valid"], row["metrics"]
    (None, None, {})
    """
    row = _base(payload)
    row["status"], row["error"] = status, error
    return row


def _instance(payload: dict[str, Any]) -> Instance:
    if payload.get("generator"):
        from kvopt.core.generators import GENERATORS

        return GENERATORS[payload["generator"]](payload["seed"], **payload["instance_params"])
    return Instance.from_dict(payload["instance"])


def run_task(payload: dict[str, Any]) -> dict[str, Any]:
    """Evaluate one task (see the module docstring); never raises for a task's failure.

    Examples
    --------
    >>> from kvopt.sweep.spec import parse_spec, expand_tasks
    >>> spec = parse_spec('[[instances]]\\ngenerator = "random-small"\\n'
    ...                   '[[policies]]\\nname = "fcfs"')
    >>> row = run_task(expand_tasks(spec)[0].payload(ship_instance=True))
    >>> row["status"], row["valid"]
    ('simulated', True)
    """
    from kvopt.sweep.spec import code_version

    row = _base(payload)
    if payload["code_version"] != code_version():
        row["status"] = "error"
        row["error"] = (f"worker runs kvopt {code_version()}, the client {payload['code_version']}"
                        ": install the same kvopt on every worker")
        return row
    t0 = time.perf_counter()
    try:
        inst = _instance(payload)
        row.update(instance=inst.name, n=inst.n, memory=inst.memory, sha256=inst.sha256()[:16])
        if payload["evaluator"] == "solver":
            _solve(inst, payload, row)
            from kvopt.sim.headroom import instance_headroom

            _load(row, instance_headroom(inst, payload.get("step_time") or "unit"))
        else:
            _simulate(inst, payload, row)
    except KvoptError as exc:
        from kvopt.sim import LivelockError

        row["status"] = "livelock" if isinstance(exc, LivelockError) else "failed"
        row["error"] = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # a bug in one task is recorded, not fatal
        tb = traceback.format_exc().strip().splitlines()
        row["status"] = "error"
        row["error"] = f"{type(exc).__name__}: {exc}\n" + "\n".join(tb[-8:])
    row["runtime_s"] = time.perf_counter() - t0
    return row


def _simulate(inst: Instance, payload: dict[str, Any], row: dict[str, Any]) -> None:
    from kvopt.core.validate import check_schedule
    from kvopt.sim import simulate

    sim = simulate(inst, payload["method"], step_time=payload["step_time"],
                   seed=payload["seed"], validate=False, **payload["params"])
    rep = check_schedule(inst, sim.schedule)
    row.update(status="simulated", total_latency=rep.objective, valid=bool(rep.ok),
               evictions=int(sim.schedule.num_evictions), metrics=_metrics(sim.metrics))
    _load(row, sim.headroom)


def _solve(inst: Instance, payload: dict[str, Any], row: dict[str, Any]) -> None:
    from kvopt.mip import solve

    res = solve(inst, solver=payload["method"], formulation=payload["formulation"],
                time_limit=payload["time_limit"], threads=1)
    rep = res.report  # solve() ran check_schedule on its schedule
    row.update(status=str(res.status), total_latency=None if rep is None else rep.objective,
               bound=res.bound, gap=res.gap, valid=None if rep is None else bool(rep.ok),
               evictions=0)
    if res.schedule is not None:
        from kvopt.core.metrics import compute_metrics

        row["metrics"] = _metrics(compute_metrics(inst, res.schedule))


def _load(row: dict[str, Any], headroom: Any) -> None:
    """Every row reports load vs capacity: ``lambda / mu`` and ``mu``
    (:mod:`kvopt.sim.headroom`; ``None`` for an offline batch)."""
    row["metrics"] = {**(row.get("metrics") or {}), "load_vs_capacity": headroom.load,
                      "mu": headroom.mu}


def _metrics(m: Any) -> dict[str, Any]:
    out = {}
    for k, v in m.to_dict().items():
        if isinstance(v, (int, float, str, bool)) or v is None:
            out[k] = v
    return out


def run_tasks(payloads: list[dict[str, Any]], task_time_limit: float | None = None
              ) -> list[dict[str, Any]]:
    """:func:`iter_tasks` on a batch (a batch travels as one Dask task).

    Examples
    --------
    >>> from kvopt.sweep.spec import parse_spec, expand_tasks
    >>> spec = parse_spec('seeds = [0, 1]\\n[[instances]]\\ngenerator = "random-small"\\n'
    ...                   '[[policies]]\\nname = "fcfs"\\n[[policies]]\\nname = "mcsf"')
    >>> rows = run_tasks([t.payload(ship_instance=True) for t in expand_tasks(spec)])
    >>> [(r["evaluator"], r["seed"], r["status"], r["total_latency"]) for r in rows]
    [('fcfs', 0, 'simulated', 13.0), ('mcsf', 0, 'simulated', 13.0), \
('fcfs', 1, 'simulated', 26.0), ('mcsf', 1, 'simulated', 22.0)]
    """
    return list(iter_tasks(payloads, task_time_limit))


def iter_tasks(payloads: list[dict[str, Any]], task_time_limit: float | None = None
               ) -> Iterator[dict[str, Any]]:
    """:func:`run_task` on each payload, in order, yielding each row as it is ready.

    With ``task_time_limit`` (seconds; a solver task gets at least its own time limit plus
    :data:`SOLVER_SLACK_S`) the tasks run one after another in a forked child process: a task
    past its limit is killed with the child's process group and recorded as status
    ``timeout``, and a new child goes on with the next task. Without ``fork`` (or without a
    limit) the tasks run in this process.

    Examples
    --------
    >>> from kvopt.sweep.spec import parse_spec, expand_tasks
    >>> spec = parse_spec('seeds = "0:2"\\n[[instances]]\\ngenerator = "random-small"\\n'
    ...                   '[[policies]]\\nname = "fcfs"')
    >>> ps = [t.payload(ship_instance=True) for t in expand_tasks(spec)]
    >>> [r["status"] for r in iter_tasks(ps, task_time_limit=60)]
    ['simulated', 'simulated']
    """
    if task_time_limit is None or not hasattr(os, "fork"):
        for p in payloads:
            yield run_task(p)
        return
    start = 0
    while start < len(payloads):
        start = yield from _watched(payloads, start, task_time_limit)


def _limit_of(payload: dict[str, Any], limit: float) -> float:
    if payload.get("evaluator") == "solver" and payload.get("time_limit"):
        return max(limit, float(payload["time_limit"]) + SOLVER_SLACK_S)
    return limit


def _watched(payloads: list[dict[str, Any]], start: int, limit: float
             ) -> Generator[dict[str, Any], None, int]:
    """Run ``payloads[start:]`` in one forked child; yield their rows; return the index of
    the first task not run (after a killed or lost one)."""
    from kvopt.core.isolate import fork_piped, write_all

    pid, rfd = fork_piped()
    if pid == 0:  # pragma: no cover - runs in the child (rfd: the pipe's write end)
        code = 0
        try:
            os.setpgid(0, 0)
            for p in payloads[start:]:
                data = pickle.dumps(run_task(p), protocol=pickle.HIGHEST_PROTOCOL)
                write_all(rfd, struct.pack("<Q", len(data)) + data)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    i, buf, t0 = start, b"", time.monotonic()
    try:
        while i < len(payloads):
            left = _limit_of(payloads[i], limit) - (time.monotonic() - t0)
            ready = select.select([rfd], [], [], min(left, 60.0))[0] if left > 0 else []
            if not ready and left > 60.0:  # waited a minute of a longer limit: wait again
                continue
            if not ready:  # past the limit: kill the task (and whatever it started)
                row = failed_row(payloads[i], "timeout", "ran past the per-task wall-clock "
                                 f"limit of {_limit_of(payloads[i], limit):g} s and was killed")
                row["runtime_s"] = time.monotonic() - t0
                yield row
                return i + 1
            chunk = os.read(rfd, 1 << 20)
            if not chunk:  # the child died without a signal from us
                yield failed_row(payloads[i], "error", "the task's process ended without a "
                                 f"result ({_exit_text(pid)})")
                return i + 1
            buf += chunk
            while len(buf) >= 8 and len(buf) >= 8 + (size := struct.unpack("<Q", buf[:8])[0]):
                yield pickle.loads(buf[8:8 + size])
                buf, i, t0 = buf[8 + size:], i + 1, time.monotonic()
        return i
    finally:
        os.close(rfd)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def _exit_text(pid: int) -> str:
    with contextlib.suppress(ChildProcessError):
        _, status = os.waitpid(pid, 0)
        if os.WIFSIGNALED(status):
            return f"signal {signal.Signals(os.WTERMSIG(status)).name}"
        return f"exit status {os.WEXITSTATUS(status)}"
    return "status unknown"
