"""The one :class:`Schedule` type produced by the MIP and by the simulator.

A schedule is a list of *runs*. Run ``r`` starts request ``run_request[r]`` at
slot ``run_start[r]`` (the decision point ``k``); it is active at
``tau = k+1 .. k+run_length[r]`` holding ``s + (tau - k)`` tokens. A run with
``run_completed[r]`` is the request's final run and has ``run_length == o``; the
request completes at ``c = k + o``. Every other run was evicted after
``run_length`` slots (the request restarts from scratch, as with vLLM's
recompute preemption). A non-preemptive schedule has exactly one completed run
per request.

``times`` (optional) maps decision points to wall-clock time: ``times[k]`` is
when decision point ``k`` happens, batch ``tau`` runs from ``times[tau-1]`` to
``times[tau]``. Without it, slots have unit length (``times[k] = k``).
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvopt.core.errors import InvalidScheduleError

if TYPE_CHECKING:
    from kvopt.core.instance import Instance

SCHEMA = "kvopt.schedule"
SCHEMA_VERSION = 1


def _ro(a: ArrayLike, dtype: Any) -> NDArray[Any]:
    arr = np.array(a, dtype=dtype, copy=True).reshape(-1)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True, eq=False)
class Schedule:
    """Start slots (and evictions) of every request of one instance.

    Parameters
    ----------
    run_request, run_start, run_length, run_completed
        One entry per run; see the module docstring.
    instance_sha256
        :meth:`Instance.sha256` of the instance this schedule belongs to.
    source
        Producer, e.g. ``"mip:highs"`` or ``"sim:mcsf"``.
    times
        Optional wall-clock time of each decision point ``0..H`` (seconds).
    claimed_objective
        What the producer says the total latency is; the validator recomputes it.
    meta
        Free JSON-serialisable metadata (solver status, policy parameters, ...).

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> sched = Schedule.from_starts(inst, [0, 0], source="hand")
    >>> sched.completion(inst).tolist()
    [4, 8]
    """

    run_request: NDArray[np.int64]
    run_start: NDArray[np.int64]
    run_length: NDArray[np.int64]
    run_completed: NDArray[np.bool_]
    instance_sha256: str
    source: str = "unknown"
    times: NDArray[np.float64] | None = None
    claimed_objective: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "run_request", _ro(self.run_request, np.int64))
        set_(self, "run_start", _ro(self.run_start, np.int64))
        set_(self, "run_length", _ro(self.run_length, np.int64))
        set_(self, "run_completed", _ro(self.run_completed, np.bool_))
        if self.times is not None:
            set_(self, "times", _ro(self.times, np.float64))
        r = self.run_request.shape[0]
        for key in ("run_start", "run_length", "run_completed"):
            if getattr(self, key).shape[0] != r:
                raise InvalidScheduleError(
                    key, f"has length {getattr(self, key).shape[0]} but run_request has {r}"
                )

    # ----------------------------------------------------------- builders
    @classmethod
    def from_starts(
        cls,
        instance: Instance,
        starts: ArrayLike,
        *,
        source: str = "unknown",
        times: ArrayLike | None = None,
        claimed_objective: float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> Schedule:
        """A non-preemptive schedule: request ``i`` starts once, at ``starts[i]``."""
        st = np.asarray(starts, dtype=np.int64)
        n = instance.n
        return cls(
            run_request=np.arange(n, dtype=np.int64),
            run_start=st,
            run_length=instance.output,
            run_completed=np.ones(n, dtype=bool),
            instance_sha256=instance.sha256(),
            source=source,
            times=None if times is None else np.asarray(times, dtype=np.float64),
            claimed_objective=claimed_objective,
            meta=dict(meta or {}),
        )

    # -------------------------------------------------------------- views
    @property
    def num_runs(self) -> int:
        """Number of runs (completed plus evicted)."""
        return int(self.run_request.shape[0])

    @property
    def num_evictions(self) -> int:
        """Number of evicted (restarted) runs."""
        return int((~self.run_completed).sum())

    def final_start(self, instance: Instance) -> NDArray[np.int64]:
        """Start slot of each request's completing run (-1 if it has none)."""
        out = np.full(instance.n, -1, dtype=np.int64)
        done = self.run_completed
        out[self.run_request[done]] = self.run_start[done]
        return out

    def first_start(self, instance: Instance) -> NDArray[np.int64]:
        """Start slot of each request's first run (-1 if it has none)."""
        out = np.full(instance.n, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(out, self.run_request, self.run_start)
        out[out == np.iinfo(np.int64).max] = -1
        return out

    def completion(self, instance: Instance) -> NDArray[np.int64]:
        """Completion slot ``c_i = k_i + o_i`` of each request (its final run)."""
        return self.final_start(instance) + instance.output

    @property
    def horizon(self) -> int:
        """Last slot in which any run is active (0 for an empty schedule)."""
        if self.num_runs == 0:
            return 0
        return int((self.run_start + self.run_length).max())

    def time_of(self, slots: ArrayLike) -> NDArray[np.float64]:
        """Wall-clock time of decision points ``slots`` (identity without ``times``)."""
        s = np.asarray(slots, dtype=np.int64)
        if self.times is None:
            return s.astype(np.float64)
        return self.times[s]

    def replace(self, **changes: Any) -> Schedule:
        """Copy with some fields changed (by name).

        Examples
        --------
        >>> from kvopt import Instance
        >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
        >>> s = Schedule.from_starts(inst, [0, 0]).replace(source="hand", claimed_objective=12)
        >>> s.source, s.claimed_objective, s.num_runs
        ('hand', 12, 2)
        """
        return dataclasses.replace(self, **changes)

    def with_meta(self, **meta: Any) -> Schedule:
        """Copy with extra metadata."""
        return self.replace(meta={**self.meta, **meta})

    def same_runs(self, other: Schedule) -> bool:
        """True if both schedules have the same runs (order-insensitive) and times."""
        def key(s: Schedule) -> NDArray[np.int64]:
            a = np.stack([s.run_request, s.run_start, s.run_length,
                          s.run_completed.astype(np.int64)], axis=1)
            return a[np.lexsort(a.T[::-1])]
        if self.num_runs != other.num_runs or not np.array_equal(key(self), key(other)):
            return False
        if (self.times is None) != (other.times is None):
            return False
        return self.times is None or (other.times is not None
                                      and np.array_equal(self.times, other.times))

    # ------------------------------------------------------------ file I/O
    def to_dict(self) -> dict[str, Any]:
        """The ``kvopt.schedule`` v1 JSON document."""
        doc: dict[str, Any] = {
            "schema": SCHEMA,
            "schema_version": SCHEMA_VERSION,
            "instance_sha256": self.instance_sha256,
            "source": self.source,
            "runs": {
                "request": self.run_request.tolist(),
                "start": self.run_start.tolist(),
                "length": self.run_length.tolist(),
                "completed": self.run_completed.tolist(),
            },
        }
        if self.times is not None:
            doc["times"] = self.times.tolist()
        if self.claimed_objective is not None:
            doc["claimed_objective"] = float(self.claimed_objective)
        if self.meta:
            doc["meta"] = self.meta
        return doc

    @classmethod
    def from_dict(cls, doc: Any) -> Schedule:
        """Parse a ``kvopt.schedule`` v1 document (field errors name the field)."""
        if not isinstance(doc, dict):
            raise InvalidScheduleError("<root>", "a schedule must be a JSON object")
        if doc.get("schema") != SCHEMA:
            raise InvalidScheduleError("schema", f"expected {SCHEMA!r}, got {doc.get('schema')!r}")
        if doc.get("schema_version") != SCHEMA_VERSION:
            raise InvalidScheduleError(
                "schema_version", f"unsupported version {doc.get('schema_version')!r}"
            )
        runs = doc.get("runs")
        if not isinstance(runs, dict):
            raise InvalidScheduleError("runs", "missing or not an object")
        arrays = {}
        for key in ("request", "start", "length", "completed"):
            if not isinstance(runs.get(key), list):
                raise InvalidScheduleError(f"runs.{key}", "missing or not a list")
            arrays[key] = runs[key]
        for key in ("request", "start", "length"):
            for j, v in enumerate(arrays[key]):
                if isinstance(v, bool) or not isinstance(v, int):
                    raise InvalidScheduleError(f"runs.{key}[{j}]", f"must be an integer, got {v!r}")
        if not isinstance(doc.get("instance_sha256"), str):
            raise InvalidScheduleError("instance_sha256", "missing")
        times = doc.get("times")
        if times is not None and not (isinstance(times, list) and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in times)):
            raise InvalidScheduleError("times", "must be a list of numbers")
        claimed = doc.get("claimed_objective")
        if claimed is not None and (isinstance(claimed, bool)
                                    or not isinstance(claimed, (int, float))):
            raise InvalidScheduleError("claimed_objective", f"must be a number, got {claimed!r}")
        if not isinstance(doc.get("meta", {}), dict):
            raise InvalidScheduleError("meta", "must be an object")
        return cls(
            run_request=arrays["request"],
            run_start=arrays["start"],
            run_length=arrays["length"],
            run_completed=np.array([bool(v) for v in arrays["completed"]], dtype=bool),
            instance_sha256=doc["instance_sha256"],
            source=str(doc.get("source", "unknown")),
            times=doc.get("times"),
            claimed_objective=doc.get("claimed_objective"),
            meta=dict(doc.get("meta", {})),
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the schedule as JSON, atomically."""
        from kvopt.core.io import atomic_write_text

        atomic_write_text(path, json.dumps(self.to_dict()) + "\n")

    def __repr__(self) -> str:
        return (f"<Schedule source={self.source!r} runs={self.num_runs} "
                f"evictions={self.num_evictions} horizon={self.horizon}>")


def load_schedule(path: str | os.PathLike[str]) -> Schedule:
    """Read a schedule JSON file written by :meth:`Schedule.save`."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except OSError as exc:
        raise InvalidScheduleError("path", f"cannot read {p}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise InvalidScheduleError("path", f"{p} is not valid JSON: {exc}") from exc
    return Schedule.from_dict(doc)
