"""The :class:`Instance` type and its file format (``kvopt.instance`` v1).

An instance is one GPU worker with a KV cache of ``memory`` tokens and ``n``
requests, each with an arrival, a prompt size ``s`` and an output length ``o``
(all in tokens, arrival in slots or seconds). The timing convention used by
every part of kvopt (seed 001, notes §1): a request started at slot ``k`` holds
``s + (tau - k)`` tokens at ``tau = k+1 .. k+o`` and completes at ``c = k + o``.

File format v1 (JSON, columnar)::

    {"schema": "kvopt.instance", "schema_version": 1, "memory": 40,
     "requests": {"arrival": [0, 0, 3], "prompt": [2, 1, 4], "output": [5, 3, 2]}}

Optional per-request arrays ``pred_lower``, ``pred_upper`` (interval
predictions) and ``pred_point``; optional top-level ``time_unit`` (``"step"``,
the default, or ``"second"``), ``name``, ``source`` and ``expected``.
Trace CSV files with the columns ``arrived_at,num_prefill_tokens,num_decode_tokens``
are read as ``time_unit="second"`` instances.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvopt.core.errors import InvalidInstanceError
from kvopt.core.slo import SLO_ARRAYS, GoodputRule, SLOSpec

SCHEMA = "kvopt.instance"
SCHEMA_VERSION = 1
#: Unit of the arrivals: decision-point (slot) indices or seconds (a trace).
TimeUnit = Literal["step", "second"]
TIME_UNITS: tuple[TimeUnit, ...] = get_args(TimeUnit)
#: KV capacity (tokens) of Llama-2-70B on 2xA100 used by seed 001 (Sec. 5.2); the default
#: memory when a trace CSV is read without an explicit ``memory``.
DEFAULT_TRACE_MEMORY = 16492
#: Largest memory, prompt, output and horizon (``max a + sum o`` slots) kvopt represents:
#: 2**53, the integers float64 holds exactly (bounds, LPs and metrics compute in float64).
MAX_REPRESENTABLE = 2**53
_REQUIRED_ARRAYS = ("arrival", "prompt", "output")
_OPTIONAL_ARRAYS = ("pred_lower", "pred_upper", "pred_point")
_TOP_LEVEL = {
    "schema", "schema_version", "memory", "requests", "time_unit", "name", "source", "expected",
    "max_batch", "goodput",
}


def longer_horizon_part(span: float, total: float) -> str:
    """The field that makes a horizon ``span + total`` long: ``requests.arrival`` when the
    arrival span (or the latest start) is larger than the sum of outputs ``total``, else
    ``requests.output``. The one rule behind every refusal of horizon-sized work
    (:func:`horizon_field`, the instance check, the validator's memory profile).

    Examples
    --------
    >>> longer_horizon_part(100.0, 12.0), longer_horizon_part(0.0, 12.0)
    ('requests.arrival', 'requests.output')
    """
    return "requests.arrival" if span > total else "requests.output"


def _check_horizon(arrival: NDArray[Any], output: NDArray[np.int64], time_unit: str) -> None:
    """Refuse an instance whose horizon (``max a + sum o`` slots) kvopt cannot represent,
    naming the field that makes it so (the arrival span or the outputs).

    Examples
    --------
    >>> _check_horizon(np.array([0, 2**60]), np.array([5, 5]), "step")
    Traceback (most recent call last):
    kvopt.core.errors.InvalidInstanceError: invalid field 'requests.arrival': the horizon \
max arrival + sum of outputs = 1.15e+18 slots is more than kvopt represents (2**53)
    """
    span = float(arrival.max()) if time_unit == "step" else 0.0
    total = float(output.sum(dtype=np.float64))
    if span + total > MAX_REPRESENTABLE:
        raise InvalidInstanceError(longer_horizon_part(span, total),
                                   f"the horizon max arrival + sum of outputs = "
                                   f"{span + total:.3g} slots is more than kvopt represents "
                                   "(2**53)")


def horizon_field(instance: Instance) -> str:
    """The field that makes an instance's horizon long: ``requests.arrival`` when the
    arrival span is larger than the sum of outputs, else ``requests.output`` (named by
    refusals of horizon-sized work).

    Examples
    --------
    >>> horizon_field(Instance(memory=9, arrival=[0, 100], prompt=[1, 1], output=[4, 8]))
    'requests.arrival'
    """
    span = float(instance.arrival.max()) if instance.is_slotted else 0.0
    return longer_horizon_part(span, float(instance.output.sum()))


def _as_int_array(name: str, values: Any, *, minimum: int) -> NDArray[np.int64]:
    """Convert ``values`` to int64, rejecting NaN/inf, fractions, bools and values < minimum."""
    try:
        arr = np.asarray(values, dtype=object if isinstance(values, list) else None)
    except Exception as exc:  # pragma: no cover - defensive
        raise InvalidInstanceError(name, f"cannot be read as an array ({exc})") from exc
    if arr.ndim != 1:
        raise InvalidInstanceError(name, f"must be a 1-D list, got shape {arr.shape}")
    if arr.dtype == object:
        for j, v in enumerate(arr):
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise InvalidInstanceError(f"{name}[{j}]", f"must be an integer, got {v!r}")
        arr = arr.astype(np.float64) if arr.size else np.zeros(0)
    if arr.dtype.kind == "b":
        raise InvalidInstanceError(name, "must hold integers, got booleans")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr)
        if bad.any():
            j = int(np.flatnonzero(bad)[0])
            raise InvalidInstanceError(f"{name}[{j}]", f"must be finite, got {arr[j]}")
        frac = arr != np.round(arr)
        if frac.any():
            j = int(np.flatnonzero(frac)[0])
            raise InvalidInstanceError(f"{name}[{j}]", f"must be an integer, got {arr[j]}")
    elif arr.dtype.kind not in "iu":
        raise InvalidInstanceError(name, f"must hold integers, got dtype {arr.dtype}")
    out = arr.astype(np.int64)
    low = out < minimum
    if low.any():
        j = int(np.flatnonzero(low)[0])
        raise InvalidInstanceError(f"{name}[{j}]", f"must be >= {minimum}, got {out[j]}")
    return out


def _as_float_array(name: str, values: Any, *, positive: bool) -> NDArray[np.float64]:
    """Convert ``values`` to finite float64 (>= 0, or > 0 if ``positive``)."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInstanceError(name, f"must hold numbers ({exc})") from exc
    if arr.ndim != 1:
        raise InvalidInstanceError(name, f"must be a 1-D list, got shape {arr.shape}")
    bad = ~np.isfinite(arr)
    if bad.any():
        j = int(np.flatnonzero(bad)[0])
        raise InvalidInstanceError(f"{name}[{j}]", f"must be finite, got {arr[j]}")
    low = arr <= 0 if positive else arr < 0
    if low.any():
        j = int(np.flatnonzero(low)[0])
        op = ">" if positive else ">="
        raise InvalidInstanceError(f"{name}[{j}]", f"must be {op} 0, got {arr[j]}")
    return arr


def _readonly(a: NDArray[Any] | None) -> NDArray[Any] | None:
    if a is not None:
        a = np.array(a, copy=True)
        a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Instance:
    """A validated, immutable scheduling instance.

    Parameters
    ----------
    memory
        KV-cache capacity ``M`` in tokens.
    arrival, prompt, output
        Per-request arrival (slot index, or seconds if ``time_unit == "second"``),
        prompt size ``s`` and true output length ``o`` (``o >= 1``).
    pred_lower, pred_upper, pred_point
        Optional predictions: an interval ``[pred_lower, pred_upper]`` and a point value.
    time_unit
        ``"step"`` (slots of unit length) or ``"second"`` (real arrival times).
    name, source, expected
        Free metadata; ``expected`` holds known results such as ``{"opt_total_latency": 17}``.
    slo_kind, ttft_slo, tbt_slo, deadline, group, stage, value
        Optional per-request SLOs (``None`` entries, or NaN, where not applicable); see
        :mod:`kvopt.core.slo` for their meaning and :attr:`slo` for the validated view.
    max_batch
        Optional batch-size limit ``B`` (concurrent running requests), beside ``M``.
    goodput
        Optional :class:`kvopt.core.slo.GoodputRule` (or its dict) for goodput metrics.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> inst.n, inst.memory
    (2, 10)
    >>> Instance(memory=5, arrival=[0], prompt=[2], output=[4])
    Traceback (most recent call last):
    ...
    kvopt.core.errors.InvalidInstanceError: invalid field 'requests.output[0]': ...
    """

    memory: int
    arrival: NDArray[Any]
    prompt: NDArray[np.int64]
    output: NDArray[np.int64]
    pred_lower: NDArray[np.int64] | None = None
    pred_upper: NDArray[np.int64] | None = None
    pred_point: NDArray[np.float64] | None = None
    time_unit: TimeUnit = "step"
    name: str | None = None
    source: str | None = None
    expected: dict[str, Any] = field(default_factory=dict)
    slo_kind: Any = None
    ttft_slo: Any = None
    tbt_slo: Any = None
    deadline: Any = None
    group: Any = None
    stage: Any = None
    value: Any = None
    max_batch: int | None = None
    goodput: Any = None

    def __post_init__(self) -> None:
        memory = self.memory
        if isinstance(memory, bool) or not isinstance(memory, (int, np.integer, float)):
            raise InvalidInstanceError("memory", f"must be a positive integer, got {memory!r}")
        if isinstance(memory, float) and (not math.isfinite(memory) or memory != int(memory)):
            raise InvalidInstanceError("memory", f"must be a positive integer, got {memory!r}")
        memory = int(memory)
        if memory <= 0:
            raise InvalidInstanceError("memory", f"must be a positive integer, got {memory}")
        if memory > MAX_REPRESENTABLE:
            raise InvalidInstanceError("memory", f"must be at most 2**53 = {MAX_REPRESENTABLE} "
                                       f"tokens (what kvopt represents exactly), got {memory}")
        if self.time_unit not in TIME_UNITS:
            raise InvalidInstanceError(
                "time_unit", f"must be one of {TIME_UNITS}, got {self.time_unit!r}"
            )
        if self.arrival is None or self.prompt is None or self.output is None:
            missing = next(k for k in _REQUIRED_ARRAYS if getattr(self, k) is None)
            raise InvalidInstanceError(f"requests.{missing}", "missing")
        arrival: NDArray[Any]
        if self.time_unit == "step":
            arrival = _as_int_array("requests.arrival", self.arrival, minimum=0)
        else:
            arrival = _as_float_array("requests.arrival", self.arrival, positive=False)
        prompt = _as_int_array("requests.prompt", self.prompt, minimum=0)
        output = _as_int_array("requests.output", self.output, minimum=1)
        n = arrival.shape[0]
        if n == 0:
            raise InvalidInstanceError("requests", "empty instance: no requests")
        for key, arr in (("prompt", prompt), ("output", output)):
            if arr.shape[0] != n:
                raise InvalidInstanceError(
                    f"requests.{key}", f"has length {arr.shape[0]} but arrival has length {n}"
                )
        too_big = prompt + output > memory
        if too_big.any():
            j = int(np.flatnonzero(too_big)[0])
            raise InvalidInstanceError(
                f"requests.output[{j}]",
                f"impossible request: prompt + output = {prompt[j]} + {output[j]} = "
                f"{prompt[j] + output[j]} exceeds memory M = {memory}",
            )
        _check_horizon(arrival, output, self.time_unit)
        preds: dict[str, NDArray[Any] | None] = {}
        for key in ("pred_lower", "pred_upper"):
            v = getattr(self, key)
            preds[key] = None if v is None else _as_int_array(f"requests.{key}", v, minimum=1)
        v = self.pred_point
        preds["pred_point"] = None if v is None else _as_float_array(
            "requests.pred_point", v, positive=True
        )
        for key, parr in preds.items():
            if parr is not None and parr.shape[0] != n:
                raise InvalidInstanceError(
                    f"requests.{key}", f"has length {parr.shape[0]} but arrival has length {n}"
                )
        lo, hi = preds["pred_lower"], preds["pred_upper"]
        if (lo is None) != (hi is None):
            missing = "pred_upper" if hi is None else "pred_lower"
            raise InvalidInstanceError(
                f"requests.{missing}", "interval predictions need both pred_lower and pred_upper"
            )
        if lo is not None and hi is not None:
            bad = lo > hi
            if bad.any():
                j = int(np.flatnonzero(bad)[0])
                raise InvalidInstanceError(
                    f"requests.pred_lower[{j}]",
                    f"pred_lower = {lo[j]} is greater than pred_upper = {hi[j]}",
                )
        if not isinstance(self.expected, dict):
            raise InvalidInstanceError("expected", "must be a JSON object")
        set_ = object.__setattr__
        set_(self, "memory", memory)
        set_(self, "arrival", _readonly(arrival))
        set_(self, "prompt", _readonly(prompt))
        set_(self, "output", _readonly(output))
        for key, parr in preds.items():
            set_(self, key, _readonly(parr))
        set_(self, "expected", dict(self.expected))
        self._init_slo(n)

    def _init_slo(self, n: int) -> None:
        set_ = object.__setattr__
        b = self.max_batch
        if b is not None:
            if isinstance(b, bool) or not isinstance(b, (int, np.integer, float)) or (
                    isinstance(b, float) and (not math.isfinite(b) or b != int(b))) or b < 1:
                raise InvalidInstanceError("max_batch", f"must be a positive integer, got {b!r}")
            set_(self, "max_batch", int(b))
        rule = self.goodput
        if rule is None:
            rule = GoodputRule()
        elif isinstance(rule, dict):
            rule = GoodputRule.from_dict(rule)
        elif not isinstance(rule, GoodputRule):
            raise InvalidInstanceError("goodput", "must be a JSON object")
        set_(self, "goodput", rule)
        arrays = {k: getattr(self, k) for k in SLO_ARRAYS}
        spec = None
        if any(v is not None for v in arrays.values()):
            spec = SLOSpec.from_arrays(n, arrays)
            for k, v in (("slo_kind", np.array([str(x) for x in spec.to_arrays()["slo_kind"]])),
                         ("ttft_slo", spec.ttft), ("tbt_slo", spec.tbt),
                         ("deadline", spec.deadline), ("group", spec.group),
                         ("stage", spec.stage), ("value", spec.value)):
                set_(self, k, _readonly(v) if k in spec.given else None)
        set_(self, "_slo", spec)

    # ------------------------------------------------------------------ views
    @property
    def n(self) -> int:
        """Number of requests."""
        return int(self.arrival.shape[0])

    @property
    def peak(self) -> NDArray[np.int64]:
        """Peak memory ``s + o`` of each request."""
        return self.prompt + self.output

    @property
    def slo(self) -> SLOSpec | None:
        """Validated SLO arrays (:class:`kvopt.core.slo.SLOSpec`), ``None`` without SLOs."""
        return self._slo  # type: ignore[attr-defined, no-any-return]

    @property
    def has_slo(self) -> bool:
        """True when the instance carries per-request SLOs."""
        return self.slo is not None

    @property
    def is_slotted(self) -> bool:
        """True when arrivals are slot indices (``time_unit == "step"``)."""
        return self.time_unit == "step"

    def require_slotted(self) -> None:
        """Refuse an instance whose arrivals are in seconds (the MIP, its bounds and MC-SF's
        slotted rule work in slots).

        Raises
        ------
        InvalidInstanceError
            Naming ``time_unit`` for a ``time_unit="second"`` instance, with the explicit
            conversion (:func:`kvopt.mip.discretize`).

        Examples
        --------
        >>> Instance(memory=10, arrival=[0], prompt=[1], output=[4]).require_slotted()
        >>> try:
        ...     Instance(memory=10, arrival=[0.5], prompt=[1], output=[4],
        ...              time_unit="second").require_slotted()
        ... except InvalidInstanceError as exc:
        ...     print(exc.field)
        time_unit
        """
        if not self.is_slotted:
            raise InvalidInstanceError(
                "time_unit",
                "the MIP and its bounds need slot arrivals (time_unit='step'); convert a "
                "time_unit='second' trace explicitly with kvopt.mip.discretize(instance, "
                "slot_seconds)")

    @property
    def horizon(self) -> int:
        """``max a + sum o``: a slot by which every schedule that never idles with work
        waiting has finished, and the exact horizon of the time-indexed models (notes §2 (a)):
        every optimal schedule completes by it.

        Examples
        --------
        >>> Instance(memory=10, arrival=[0, 3], prompt=[1, 1], output=[4, 8]).horizon
        15
        """
        return int(self.arrival.max() + self.output.sum())

    def tel_of_starts(self, starts: ArrayLike) -> float:
        """Total end-to-end latency ``sum_i (k_i + o_i - a_i)`` of non-preemptive start slots.

        Examples
        --------
        >>> Instance(memory=10, arrival=[0, 1], prompt=[1, 1], output=[4, 8]).tel_of_starts([0, 2])
        13.0
        """
        k = np.asarray(starts, dtype=np.int64)
        return float((k + self.output - self.arrival).sum())

    def makespan_of_starts(self, starts: ArrayLike) -> int:
        """Last completion ``max_i (k_i + o_i)`` of non-preemptive start slots.

        Examples
        --------
        >>> Instance(memory=10, arrival=[0, 1], prompt=[1, 1], output=[4, 8]).makespan_of_starts(
        ...     [0, 2])
        10
        """
        k = np.asarray(starts, dtype=np.int64)
        return int((k + self.output.astype(np.int64)).max())

    def sha256(self) -> str:
        """Hash of the scheduling content (memory, time unit, arrival, prompt, output).

        Names, predictions, SLOs and ``expected`` are not part of the hash, so a schedule
        stays bound to its instance when only metadata or predictions change. ``max_batch``
        constrains schedules and is hashed when set.
        """
        content: dict[str, Any] = {
            "memory": self.memory,
            "time_unit": self.time_unit,
            "arrival": self.arrival.tolist(),
            "prompt": self.prompt.tolist(),
            "output": self.output.tolist(),
        }
        if self.max_batch is not None:
            content["max_batch"] = self.max_batch
        blob = json.dumps(content, sort_keys=True, separators=(",", ":")).encode()
        return hashlib.sha256(blob).hexdigest()

    def replace(self, **changes: Any) -> Instance:
        """Return a validated copy with some fields changed.

        Examples
        --------
        >>> inst = Instance(memory=10, arrival=[0], prompt=[1], output=[4])
        >>> inst.replace(pred_lower=[2], pred_upper=[6]).pred_upper.tolist()
        [6]
        """
        return replace(self, **changes)

    def take(self, index: ArrayLike, **changes: Any) -> Instance:
        """Return the sub-instance of the requests at ``index`` (predictions follow)."""
        idx = np.asarray(index)
        fields: dict[str, Any] = {
            k: (None if getattr(self, k) is None else getattr(self, k)[idx])
            for k in (*_REQUIRED_ARRAYS, *_OPTIONAL_ARRAYS)
        }
        fields.update(memory=self.memory, time_unit=self.time_unit, name=self.name,
                      source=self.source, max_batch=self.max_batch, goodput=self.goodput)
        if self.slo is not None:
            fields.update(self.slo.take(idx))
        fields.update(changes)
        return Instance(**fields)

    # ------------------------------------------------------------ conversion
    def to_dict(self) -> dict[str, Any]:
        """The v1 JSON document of this instance."""
        requests: dict[str, Any] = {k: getattr(self, k).tolist() for k in _REQUIRED_ARRAYS}
        for k in _OPTIONAL_ARRAYS:
            if getattr(self, k) is not None:
                requests[k] = getattr(self, k).tolist()
        if self.slo is not None:
            requests.update(self.slo.to_arrays())
        doc: dict[str, Any] = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION}
        if self.name is not None:
            doc["name"] = self.name
        if self.source is not None:
            doc["source"] = self.source
        doc["memory"] = self.memory
        if self.max_batch is not None:
            doc["max_batch"] = self.max_batch
        if self.goodput != GoodputRule():
            doc["goodput"] = self.goodput.to_dict()
        if self.time_unit != "step":
            doc["time_unit"] = self.time_unit
        doc["requests"] = requests
        if self.expected:
            doc["expected"] = self.expected
        return doc

    @classmethod
    def from_dict(cls, doc: Any) -> Instance:
        """Build and validate an instance from a v1 JSON document.

        Raises
        ------
        InvalidInstanceError
            Naming the first offending field.
        """
        if not isinstance(doc, dict):
            raise InvalidInstanceError("<root>", "an instance must be a JSON object")
        if "schema" not in doc:
            raise InvalidInstanceError("schema", f"missing (expected {SCHEMA!r})")
        if doc["schema"] != SCHEMA:
            raise InvalidInstanceError("schema", f"expected {SCHEMA!r}, got {doc['schema']!r}")
        if "schema_version" not in doc:
            raise InvalidInstanceError("schema_version", "missing")
        if doc["schema_version"] != SCHEMA_VERSION:
            raise InvalidInstanceError(
                "schema_version",
                f"unsupported version {doc['schema_version']!r}; this kvopt reads {SCHEMA_VERSION}",
            )
        unknown = sorted(set(doc) - _TOP_LEVEL)
        if unknown:
            raise InvalidInstanceError(unknown[0], "unknown top-level field")
        if "memory" not in doc:
            raise InvalidInstanceError("memory", "missing")
        req = doc.get("requests")
        if req is None:
            raise InvalidInstanceError("requests", "missing")
        if not isinstance(req, dict):
            raise InvalidInstanceError("requests", "must be an object of per-request arrays")
        for key in _REQUIRED_ARRAYS:
            if key not in req:
                raise InvalidInstanceError(f"requests.{key}", "missing")
            if not isinstance(req[key], list):
                raise InvalidInstanceError(f"requests.{key}", "must be a list")
        unknown = sorted(set(req) - set(_REQUIRED_ARRAYS) - set(_OPTIONAL_ARRAYS) - set(SLO_ARRAYS))
        if unknown:
            raise InvalidInstanceError(f"requests.{unknown[0]}", "unknown per-request field")
        for key in ("name", "source"):
            if key in doc and not isinstance(doc[key], str):
                raise InvalidInstanceError(key, "must be a string")
        return cls(
            memory=doc["memory"],
            arrival=req["arrival"],
            prompt=req["prompt"],
            output=req["output"],
            pred_lower=req.get("pred_lower"),
            pred_upper=req.get("pred_upper"),
            pred_point=req.get("pred_point"),
            time_unit=doc.get("time_unit", "step"),
            name=doc.get("name"),
            source=doc.get("source"),
            expected=doc.get("expected", {}),
            max_batch=doc.get("max_batch"),
            goodput=doc.get("goodput"),
            **{k: req.get(k) for k in SLO_ARRAYS},
        )

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the instance as JSON, atomically."""
        from kvopt.core.io import atomic_write_text

        atomic_write_text(path, json.dumps(self.to_dict(), indent=1) + "\n")

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"<Instance{label} n={self.n} M={self.memory} time_unit={self.time_unit}>"


def read_trace_csv(
    path: str | os.PathLike[str],
    *,
    memory: int = DEFAULT_TRACE_MEMORY,
    name: str | None = None,
    limit: int | None = None,
) -> Instance:
    """Read a trace CSV (``arrived_at,num_prefill_tokens,num_decode_tokens``).

    Parameters
    ----------
    path
        CSV file in the public Splitwise/Vidur trace format.
    memory
        KV capacity to attach (default: seed 001's M = 16492 for Llama-2-70B on 2xA100).
    name
        Instance name (default: the file stem).
    limit
        Keep only the first ``limit`` rows.

    Returns
    -------
    Instance
        With ``time_unit="second"``; arrivals are shifted so the first is 0.

    Examples
    --------
    >>> inst = read_trace_csv("instances/traces/azure_conv_2023.csv", limit=5)  # doctest: +SKIP
    """
    p = Path(path)
    try:
        with p.open(newline="") as fh:
            reader = csv.DictReader(fh)
            cols = ("arrived_at", "num_prefill_tokens", "num_decode_tokens")
            if reader.fieldnames is None or any(c not in reader.fieldnames for c in cols):
                missing = [c for c in cols if c not in (reader.fieldnames or [])]
                raise InvalidInstanceError(missing[0], f"missing column in trace CSV {p}")
            rows = []
            for k, row in enumerate(reader):
                if limit is not None and k >= limit:
                    break
                rows.append(tuple(row[c] for c in cols))
    except OSError as exc:
        raise InvalidInstanceError("path", f"cannot read {p}: {exc.strerror or exc}") from exc
    if not rows:
        raise InvalidInstanceError("requests", f"empty trace {p}")
    try:
        arr = np.array(rows, dtype=np.float64)
    except ValueError as exc:
        raise InvalidInstanceError("requests", f"non-numeric value in {p}: {exc}") from exc
    arrival = arr[:, 0] - arr[:, 0].min() if np.isfinite(arr[:, 0]).all() else arr[:, 0]
    return Instance(
        memory=memory,
        arrival=arrival,
        prompt=arr[:, 1],  # type: ignore[arg-type]  # validated as integers in __post_init__
        output=arr[:, 2],  # type: ignore[arg-type]
        time_unit="second",
        name=name or p.stem,
        source=str(p.name),
    )


def load_instance(path: str | os.PathLike[str], *, memory: int | None = None) -> Instance:
    """Load an instance from a v1 JSON file or a trace CSV file.

    Parameters
    ----------
    path
        ``*.json`` (format v1) or ``*.csv`` (trace format).
    memory
        For CSV traces: the KV capacity (default 16492); for JSON it overrides ``memory``.

    Raises
    ------
    InvalidInstanceError
        For an unreadable file or any malformed field.

    Examples
    --------
    >>> inst = load_instance("instances/tiny/a2-example.json")
    >>> inst, inst.output.tolist()
    (<Instance 'a2-example' n=2 M=10 time_unit=step>, [4, 8])
    >>> load_instance("instances/tiny/a2-example.json", memory=16).memory
    16
    """
    p = Path(path)
    if p.suffix.lower() == ".csv":
        return read_trace_csv(p, memory=DEFAULT_TRACE_MEMORY if memory is None else memory)
    try:
        text = p.read_text()
    except OSError as exc:
        raise InvalidInstanceError("path", f"cannot read {p}: {exc.strerror or exc}") from exc
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInstanceError("path", f"{p} is not valid JSON: {exc}") from exc
    inst = Instance.from_dict(doc)
    if memory is not None:
        inst = inst.replace(memory=memory)
    return inst


def instance_stats(inst: Instance) -> dict[str, object]:
    """Counts and load statistics of an instance (what ``kvopt info`` prints).

    Examples
    --------
    >>> st = instance_stats(Instance(memory=10, arrival=[0, 2], prompt=[1, 1], output=[4, 8]))
    >>> st["n"], st["arrival_span"], st["output"]["max"]
    (2, 2.0, 8.0)
    """

    def summary(x: NDArray[Any]) -> dict[str, float]:
        return {"min": float(x.min()), "mean": float(x.mean()), "median": float(np.median(x)),
                "p99": float(np.percentile(x, 99)), "max": float(x.max()), "sum": float(x.sum())}

    span = float(inst.arrival.max() - inst.arrival.min())
    volume = inst.prompt * inst.output + inst.output * (inst.output + 1) / 2  # memory x slots
    stats: dict[str, object] = {
        "name": inst.name, "n": inst.n, "memory": inst.memory, "time_unit": inst.time_unit,
        "sha256": inst.sha256(),
        "arrival": summary(inst.arrival.astype(float)), "arrival_span": span,
        "prompt": summary(inst.prompt.astype(float)), "output": summary(inst.output.astype(float)),
        "peak_over_memory_max": float(inst.peak.max() / inst.memory),
        "memory_slot_volume": float(volume.sum()),
        # slots of a full cache needed by the whole instance (memory-volume bound of seed 001)
        "volume_over_memory": float(volume.sum() / inst.memory),
        "has_interval_predictions": inst.pred_lower is not None,
        "has_point_predictions": inst.pred_point is not None,
    }
    if span > 0:
        stats["arrival_rate"] = float((inst.n - 1) / span)
    return stats
