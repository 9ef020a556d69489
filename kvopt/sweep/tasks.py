"""One sweep task on a worker: build the instance, evaluate it, return a result row.

A task never raises for what can happen to a task: a livelock, a simulation that cannot
proceed, a solver refusal or a time limit are results with their status; an unexpected
exception (a bug) is recorded as status ``error`` with its type, message and traceback tail,
so one task cannot stop a sweep. Result rows are plain data (the columns of
:data:`kvopt.sweep.store.COLUMNS`).
"""

from __future__ import annotations

import os
import socket
import time
import traceback
from typing import Any

from kvopt.core.errors import KvoptError
from kvopt.core.instance import Instance

__all__ = ["failed_row", "run_task", "run_tasks"]

#: Statuses of a task that ran to a result (not an internal error).
RESULT_STATUSES = ("simulated", "optimal", "time_limit", "feasible", "infeasible", "livelock",
                   "failed")


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
    """The row of a task that produced no result (also used by the client for lost tasks)."""
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


def _metrics(m: Any) -> dict[str, Any]:
    out = {}
    for k, v in m.to_dict().items():
        if isinstance(v, (int, float, str, bool)) or v is None:
            out[k] = v
    return out


def run_tasks(payloads: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """:func:`run_task` on each payload (a batch travels as one Dask task)."""
    return [run_task(p) for p in payloads]
