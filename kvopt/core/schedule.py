"""The one :class:`Schedule` type produced by the MIP and by the simulator.

A schedule is a list of *runs*. Run ``r`` starts request ``run_request[r]`` at
slot ``run_start[r]`` (the decision point ``k``) and occupies the ``run_length[r] = L`` slots
``tau = k+1 .. k+L``; in the seed convention (notes/seed-001 §1) it holds ``s + (tau - k)``
tokens there and produces one output token per slot. A run with ``run_completed[r]`` is the
request's final run; the request completes at ``c = k + L``. Every other run was evicted at
decision point ``k + L``. A non-preemptive schedule has exactly one completed run per request,
of length ``o``.

Preemption modes (``preemption``) say what an evicted request keeps:

``"restart"`` (the default; the seed convention, the MIP and the theory)
    nothing: the next run starts from the prompt (``run_offset = 0``) and regenerates every
    token; a completing run has length ``o``.
``"recompute"`` (vLLM's default)
    its generated tokens: the next run resumes from them (``run_offset`` = tokens generated
    so far), holds prompt + generated at once, ``s + offset + (tau - k)`` at ``tau = k+1..``,
    and produces the ``o - offset`` tokens that are left; the re-prefill is a cost of the
    step-time model (wall-clock ``times``), not of the slot model.
``"swap"``
    as ``recompute``, and a run with ``run_swapped`` took its KV back from host memory: between
    the previous run's end ``e`` and its start ``k`` (slots ``e+1 .. k``) the request held
    ``s + offset`` tokens of host memory, at most ``host_memory`` in total at every slot (a
    resumed run without ``run_swapped`` was recomputed: host memory was full).

Two serving-engine refinements, both off by default (vLLM-like schedules use them):

``run_prefill[r] = P`` (chunked prefill)
    the run's first ``P`` slots process prompt chunks: the request holds its whole prompt
    allocation ``s + offset`` there and produces no token (vLLM v0's block manager allocates the
    prompt's blocks when the first chunk is scheduled); its first token is produced at slot
    ``k + P + 1``.
``paused`` (prefill-only iterations, vLLM v0 without chunked prefill)
    sorted slots in which only the runs that start at ``tau - 1`` work (their prefill); every
    other active run holds its memory and produces no token.

So the tokens a run has produced by slot ``tau`` (``k + P < tau <= k + L``) are
``1 + E(tau) - E(k + P + 1)`` with the clock ``E(tau) = tau - #{paused slots <= tau}``, and it
holds ``s + offset`` plus that many tokens; a completing run produces exactly
``o - offset`` tokens. ``block_size = b`` rounds every request's memory up to whole blocks of
``b`` tokens (``b`` must divide ``M``). Without any of these, ``run_length`` is the number of
tokens and the schedule is the seed convention's.

``times`` (optional) maps decision points to wall-clock time: ``times[k]`` is
when decision point ``k`` happens, batch ``tau`` runs from ``times[tau-1]`` to
``times[tau]``. Without it, slots have unit length (``times[k] = k``).

The JSON form (:meth:`Schedule.to_dict`) is ``kvopt.schedule`` version 1 when a schedule uses
none of the fields above (files written before them load and validate unchanged) and version
2 otherwise.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvopt.core.errors import InvalidScheduleError

if TYPE_CHECKING:
    from kvopt.core.instance import Instance

SCHEMA = "kvopt.schedule"
SCHEMA_VERSION = 2
#: Versions :meth:`Schedule.from_dict` reads (1: the seed convention only).
SCHEMA_VERSIONS = (1, 2)
#: Preemption modes (see the module docstring), the seed convention first.
PreemptionMode = Literal["restart", "recompute", "swap"]
PREEMPTION_MODES: tuple[PreemptionMode, ...] = get_args(PreemptionMode)


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
    run_offset, run_prefill, run_swapped
        Per run: tokens it resumed from, chunked-prefill slots before its first token, and
        whether its KV came back from host memory (default 0, 0, False: the seed convention).
    preemption
        ``"restart"`` (default), ``"recompute"`` or ``"swap"``; see the module docstring.
    block_size
        KV block size in tokens (default 1: token-exact memory).
    host_memory
        Host (swap) memory in tokens; ``None``: unlimited.
    paused
        Slots of prefill-only iterations (default: none).

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
    # (None is replaced by the default arrays in __post_init__)
    run_offset: NDArray[np.int64] = None  # type: ignore[assignment]
    run_prefill: NDArray[np.int64] = None  # type: ignore[assignment]
    run_swapped: NDArray[np.bool_] = None  # type: ignore[assignment]
    preemption: PreemptionMode = "restart"
    block_size: int = 1
    host_memory: int | None = None
    paused: NDArray[np.int64] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "run_request", _ro(self.run_request, np.int64))
        set_(self, "run_start", _ro(self.run_start, np.int64))
        set_(self, "run_length", _ro(self.run_length, np.int64))
        set_(self, "run_completed", _ro(self.run_completed, np.bool_))
        r = self.run_request.shape[0]
        zeros = np.zeros(r, dtype=np.int64)
        set_(self, "run_offset", _ro(zeros if self.run_offset is None else self.run_offset,
                                     np.int64))
        set_(self, "run_prefill", _ro(zeros if self.run_prefill is None else self.run_prefill,
                                      np.int64))
        set_(self, "run_swapped", _ro(np.zeros(r, dtype=bool) if self.run_swapped is None
                                      else self.run_swapped, np.bool_))
        set_(self, "paused", _ro(np.zeros(0, dtype=np.int64) if self.paused is None
                                 else self.paused, np.int64))
        if self.times is not None:
            set_(self, "times", _ro(self.times, np.float64))
        for key in ("run_start", "run_length", "run_completed", "run_offset", "run_prefill",
                    "run_swapped"):
            if getattr(self, key).shape[0] != r:
                raise InvalidScheduleError(
                    key, f"has length {getattr(self, key).shape[0]} but run_request has {r}"
                )
        if self.preemption not in PREEMPTION_MODES:
            raise InvalidScheduleError("preemption", f"must be one of {', '.join(PREEMPTION_MODES)}"
                                       f", got {self.preemption!r}")
        if isinstance(self.block_size, bool) or not isinstance(
                self.block_size, (int, np.integer)) or self.block_size < 1:
            raise InvalidScheduleError("block_size", f"must be an integer >= 1, got "
                                       f"{self.block_size!r}")
        set_(self, "block_size", int(self.block_size))
        if self.host_memory is not None:
            if isinstance(self.host_memory, bool) or not isinstance(
                    self.host_memory, (int, np.integer)) or self.host_memory < 0:
                raise InvalidScheduleError("host_memory", f"must be an integer >= 0 or null, "
                                           f"got {self.host_memory!r}")
            set_(self, "host_memory", int(self.host_memory))

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
        """Completion slot ``c_i = k_i + L_i`` of each request's final run (``k_i + o_i`` in
        the seed convention); ``-1 + o_i`` for a request without one (invalid schedules)."""
        if self.is_seed_convention:
            return self.final_start(instance) + instance.output
        out = instance.output - 1
        done = self.run_completed
        out[self.run_request[done]] = (self.run_start + self.run_length)[done]
        return out

    @property
    def is_seed_convention(self) -> bool:
        """True if the schedule uses none of the preemption-mode and serving-engine fields
        (restart, token-exact memory, no offsets, chunks, swaps or pauses): a version-1
        schedule."""
        return (self.preemption == "restart" and self.block_size == 1
                and self.host_memory is None and self.paused.shape[0] == 0
                and not self.run_offset.any() and not self.run_prefill.any()
                and not self.run_swapped.any())

    def clock(self, slots: ArrayLike) -> NDArray[np.int64]:
        """The progress clock ``E(tau) = tau - #{paused slots <= tau}`` (identity without
        pauses).

        Examples
        --------
        >>> from kvopt import Instance
        >>> inst = Instance(memory=10, arrival=[0], prompt=[1], output=[2])
        >>> Schedule.from_starts(inst, [0]).replace(paused=[3, 4]).clock([2, 3, 4, 5]).tolist()
        [2, 2, 2, 3]
        """
        tau = np.asarray(slots, dtype=np.int64)
        if not self.paused.shape[0]:
            return tau
        return tau - np.searchsorted(self.paused, tau, side="right")

    def run_tokens(self) -> NDArray[np.int64]:
        """Tokens each run produced: ``1 + E(k + L) - E(k + P + 1)`` (0 if ``L <= P``);
        ``run_length`` in the seed convention."""
        k, L, P = self.run_start, self.run_length, self.run_prefill
        if not self.paused.shape[0]:
            return np.maximum(L - P, 0)
        first = k + P + 1
        tok = 1 + self.clock(k + L) - self.clock(first)
        return np.where(L > P, tok, 0)

    def first_token(self, instance: Instance) -> NDArray[np.int64]:
        """Slot of each request's first output token: its first run's ``k + P + 1`` (``k + 1``
        in the seed convention; ``0`` for a request without a run)."""
        out = np.full(instance.n, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(out, self.run_request, self.run_start)
        first = out.copy()
        # the first run of each request (smallest start; ties impossible in a valid schedule)
        is_first = self.run_start == first[self.run_request]
        tok = np.full(instance.n, 0, dtype=np.int64)
        tok[self.run_request[is_first]] = (self.run_start + self.run_prefill + 1)[is_first]
        return tok

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
                          s.run_completed.astype(np.int64), s.run_offset, s.run_prefill,
                          s.run_swapped.astype(np.int64)], axis=1)
            return a[np.lexsort(a.T[::-1])]
        if self.num_runs != other.num_runs or not np.array_equal(key(self), key(other)):
            return False
        if (self.preemption, self.block_size, self.host_memory) != (
                other.preemption, other.block_size, other.host_memory) or not np.array_equal(
                    self.paused, other.paused):
            return False
        if (self.times is None) != (other.times is None):
            return False
        return self.times is None or (other.times is not None
                                      and np.array_equal(self.times, other.times))

    # ------------------------------------------------------------ file I/O
    def to_dict(self) -> dict[str, Any]:
        """The ``kvopt.schedule`` JSON document: version 1 for a seed-convention schedule
        (:attr:`is_seed_convention`), else version 2 with the extra fields."""
        v1 = self.is_seed_convention
        runs: dict[str, Any] = {
            "request": self.run_request.tolist(),
            "start": self.run_start.tolist(),
            "length": self.run_length.tolist(),
            "completed": self.run_completed.tolist(),
        }
        doc: dict[str, Any] = {
            "schema": SCHEMA,
            "schema_version": 1 if v1 else SCHEMA_VERSION,
            "instance_sha256": self.instance_sha256,
            "source": self.source,
            "runs": runs,
        }
        if not v1:
            runs.update(offset=self.run_offset.tolist(), prefill=self.run_prefill.tolist(),
                        swapped=self.run_swapped.tolist())
            doc.update(preemption=self.preemption, block_size=self.block_size,
                       host_memory=self.host_memory, paused=self.paused.tolist())
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
        version = doc.get("schema_version")
        if version not in SCHEMA_VERSIONS or isinstance(version, bool):
            raise InvalidScheduleError(
                "schema_version", f"unsupported version {doc.get('schema_version')!r}"
            )
        runs = doc.get("runs")
        if not isinstance(runs, dict):
            raise InvalidScheduleError("runs", "missing or not an object")
        arrays = {}
        v2_runs = ("offset", "prefill", "swapped") if version >= 2 else ()
        for key in ("request", "start", "length", "completed", *v2_runs):
            if not isinstance(runs.get(key), list):
                raise InvalidScheduleError(f"runs.{key}", "missing or not a list")
            arrays[key] = runs[key]
        for key in ("request", "start", "length", *v2_runs[:2]):
            for j, v in enumerate(arrays[key]):
                if isinstance(v, bool) or not isinstance(v, int):
                    raise InvalidScheduleError(f"runs.{key}[{j}]", f"must be an integer, got {v!r}")
        extra = _v2_fields(doc, arrays) if version >= 2 else {}
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
            **extra,
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the schedule as JSON, atomically."""
        from kvopt.core.io import atomic_write_text

        atomic_write_text(path, json.dumps(self.to_dict()) + "\n")

    def __repr__(self) -> str:
        mode = "" if self.preemption == "restart" else f" preemption={self.preemption}"
        return (f"<Schedule source={self.source!r} runs={self.num_runs} "
                f"evictions={self.num_evictions} horizon={self.horizon}{mode}>")


def _v2_fields(doc: dict[str, Any], arrays: dict[str, Any]) -> dict[str, Any]:
    """The version-2 fields of a schedule document (errors name the field)."""
    paused = doc.get("paused", [])
    if not isinstance(paused, list) or any(isinstance(v, bool) or not isinstance(v, int)
                                           for v in paused):
        raise InvalidScheduleError("paused", "must be a list of integers")
    for key in ("preemption", "block_size", "host_memory"):
        if key not in doc:
            raise InvalidScheduleError(key, "missing (schema_version 2)")
    return {"run_offset": arrays["offset"], "run_prefill": arrays["prefill"],
            "run_swapped": np.array([bool(v) for v in arrays["swapped"]], dtype=bool),
            "preemption": doc["preemption"], "block_size": doc["block_size"],
            "host_memory": doc["host_memory"], "paused": paused}


def load_schedule(path: str | os.PathLike[str]) -> Schedule:
    """Read a schedule JSON file written by :meth:`Schedule.save`.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from kvopt.core.instance import load_instance
    >>> inst = load_instance("instances/tiny/a2-example.json")
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "sched.json"
    ...     Schedule.from_starts(inst, [0, 0], source="hand").save(path)
    ...     back = load_schedule(path)
    >>> back, back.run_start.tolist(), back.instance_sha256 == inst.sha256()
    (<Schedule source='hand' runs=2 evictions=0 horizon=8>, [0, 0], True)
    >>> try:
    ...     load_schedule("instances/tiny/a2-example.json")   # an instance, not a schedule
    ... except InvalidScheduleError as exc:
    ...     print(exc)
    invalid schedule field 'schema': expected 'kvopt.schedule', got 'kvopt.instance'
    """
    p = Path(path)
    try:
        doc = json.loads(p.read_text())
    except OSError as exc:
        raise InvalidScheduleError("path", f"cannot read {p}: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise InvalidScheduleError("path", f"{p} is not valid JSON: {exc}") from exc
    return Schedule.from_dict(doc)
