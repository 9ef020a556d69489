"""Per-request SLOs and service goodput (seed 003, JITServe) in the common timing convention.

Instances may carry optional per-request SLO arrays (see :class:`kvopt.Instance`):
``slo_kind`` (``"none"``, ``"stream"``, ``"deadline"``, ``"compound"``), ``ttft_slo``,
``tbt_slo``, ``deadline``, ``group`` and ``stage`` (compound structure) and ``value``; and a
top-level ``goodput`` rule (:class:`GoodputRule`). All SLO times are in the instance's unit:
slots for ``time_unit="step"`` (also when a schedule carries wall-clock ``times``, like the
validator's objective), seconds for ``time_unit="second"``.

Timing (notes/seed-001 §1): the completing run of request ``i`` starts at slot ``k``; its
output token ``j = 1..o`` is emitted at decision point ``k + j`` (time ``E_ij = k + j``, or
``times[k + j]``) and the request completes at ``C_i = k + o``. Arrival ``a_i``.

SLO satisfaction (*met*):

- ``deadline``: ``C_i - a_i <= deadline_i`` (the E2EL deadline, relative to the arrival);
- ``stream``: token ``j`` is on time iff ``E_ij - a_i <= ttft_i + (j - 1) tbt_i`` (the first
  token is due at the TTFT, then one every TBT); the request is met iff every token is on
  time;
- ``compound``: the requests sharing a ``group`` id form one compound request with arrival
  ``a_g = min a_i`` and one common ``deadline``; it is met iff ``max_i C_i - a_g <= deadline``
  (the final generation meets the E2EL). ``stage`` numbers the calls (0, 1, ...) and is used
  by policies (the current stage); stage precedence is *not* a scheduling constraint here:
  the later calls are released by their arrivals, as in a replayed trace;
- ``none``: best effort, never met, no goodput.

Names: ``deadline`` is always the SLO field above, a latency bound *relative to the arrival*;
the absolute time by which a request must complete is its *due time* (:func:`due_time`,
EDF's order). The time budget of a computation is a different thing,
:class:`kvopt.core.limits.Deadline`.

Base goodput of a request: ``R_i = value_i`` if given, else ``w_in s_i + w_out o_i``
(:class:`GoodputRule` weights, default 1 and 1: "number of tokens").

Goodput, ``rule="binary"`` (the paper's definition, App. C eq. 3, §3):

- ``deadline``: ``R_i`` if met, else 0;
- ``compound``: ``sum_{i in g} R_i`` if the group is met, else 0;
- ``stream`` (per token): ``w_in s_i [token 1 on time] + w_out #(on-time tokens)``; with a
  ``value``: ``value_i #(on-time tokens) / o_i``.

Goodput, ``rule="soft"`` (the released code's tracker, notes §1.3; factor
``f(x) = min(1, x) ** penalty``):

- ``deadline``: ``R_i f(deadline_i / (C_i - a_i))``;
- ``compound``: ``sum R_i f(D_g / (max C - a_g))``;
- ``stream``: ``w_in s_i f(ttft_i / TTFT_i) + w_out o_i f(o_i / desired_i)`` with
  ``TTFT_i = E_i1 - a_i`` and ``desired_i = (C_i - a_i - min(TTFT_i, ttft_i)) / tbt_i`` (factor 1
  when ``desired_i <= 0``); with a ``value``: ``value_i f(o_i / desired_i)``.

Tokens are those of the completing run: an evicted run restarts from scratch (recompute
preemption) and its emissions are not counted.

Request goodput counts met requests (a compound group counts once); SLO attainment per kind
is the fraction of met requests (groups) of that kind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.arrays import ragged_arange
from kvopt.core.deprecation import renamed_names
from kvopt.core.errors import InvalidInstanceError

#: SLO kinds; their integer codes are the positions in this tuple.
SLO_KINDS = ("none", "stream", "deadline", "compound")
NONE, STREAM, DEADLINE, COMPOUND = range(4)
#: Goodput rules: the paper's all-or-nothing (``binary``) and the released code's ``soft``.
GOODPUT_RULES = ("binary", "soft")
#: Per-request SLO arrays accepted in ``requests``.
SLO_ARRAYS = ("slo_kind", "ttft_slo", "tbt_slo", "deadline", "group", "stage", "value")


@dataclass(frozen=True)
class GoodputRule:
    """How goodput is counted: rule and token weights.

    Parameters
    ----------
    rule
        ``"binary"`` (paper, default) or ``"soft"`` (released code).
    input_weight, output_weight
        ``w_in`` and ``w_out`` of the base goodput ``w_in s + w_out o`` (the paper leaves them
        open; the code uses 1 and 8).
    penalty
        Exponent of the soft rule's factor ``min(1, SLO / actual) ** penalty``.

    Examples
    --------
    >>> GoodputRule.from_dict({"rule": "soft", "output_weight": 8}).output_weight
    8.0
    >>> GoodputRule.from_dict({"rule": "graded"})
    Traceback (most recent call last):
    ...
    kvopt.core.errors.InvalidInstanceError: invalid field 'goodput.rule': ...
    """

    rule: str = "binary"
    input_weight: float = 1.0
    output_weight: float = 1.0
    penalty: float = 1.0

    def __post_init__(self) -> None:
        if self.rule not in GOODPUT_RULES:
            raise InvalidInstanceError("goodput.rule",
                                       f"must be one of {GOODPUT_RULES}, got {self.rule!r}")
        for key in ("input_weight", "output_weight", "penalty"):
            v = getattr(self, key)
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise InvalidInstanceError(f"goodput.{key}", f"must be a number, got {v!r}")
            if not np.isfinite(v) or v < 0:
                raise InvalidInstanceError(f"goodput.{key}", f"must be finite and >= 0, got {v}")
            object.__setattr__(self, key, float(v))

    @classmethod
    def from_dict(cls, doc: Any) -> GoodputRule:
        """Parse the instance's top-level ``goodput`` object."""
        if not isinstance(doc, dict):
            raise InvalidInstanceError("goodput", "must be a JSON object")
        unknown = sorted(set(doc) - {"rule", "input_weight", "output_weight", "penalty"})
        if unknown:
            raise InvalidInstanceError(f"goodput.{unknown[0]}", "unknown field")
        return cls(**doc)

    def to_dict(self) -> dict[str, Any]:
        """JSON form."""
        return {"rule": self.rule, "input_weight": self.input_weight,
                "output_weight": self.output_weight, "penalty": self.penalty}


def _float_or_null(name: str, values: Any, n: int) -> NDArray[np.float64]:
    if values is None:
        return np.full(n, np.nan)
    if not isinstance(values, (list, tuple, np.ndarray)):
        raise InvalidInstanceError(name, "must be a list")
    out = np.full(n, np.nan)
    if len(values) != n:
        raise InvalidInstanceError(name, f"has length {len(values)} but arrival has length {n}")
    for j, v in enumerate(values):
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
            raise InvalidInstanceError(f"{name}[{j}]", f"must be a number or null, got {v!r}")
        if not np.isfinite(v):  # NaN stands for null in arrays given from Python
            if np.isnan(v):
                continue
            raise InvalidInstanceError(f"{name}[{j}]", f"must be finite, got {v}")
        out[j] = float(v)
    return out


def _int_or_null(name: str, values: Any, n: int, null: int) -> NDArray[np.int64]:
    f = _float_or_null(name, values, n)
    f[f == null] = np.nan  # the stored form of "not applicable" reads back as null
    ok = ~np.isnan(f)
    frac = ok & (f != np.round(np.where(ok, f, 0)))
    if frac.any():
        j = int(np.flatnonzero(frac)[0])
        raise InvalidInstanceError(f"{name}[{j}]", f"must be an integer, got {f[j]}")
    neg = ok & (f < 0)
    if neg.any():
        j = int(np.flatnonzero(neg)[0])
        raise InvalidInstanceError(f"{name}[{j}]", f"must be >= 0, got {f[j]}")
    return np.where(ok, f, null).astype(np.int64)


@dataclass(frozen=True, eq=False)
class SLOSpec:
    """Validated per-request SLO arrays (``NaN`` / ``-1`` where not applicable).

    Built by :meth:`from_arrays`, which raises :class:`InvalidInstanceError` naming the field.

    Examples
    --------
    >>> spec = SLOSpec.from_arrays(2, {"slo_kind": ["deadline", "stream"],
    ...                                "deadline": [5, None], "ttft_slo": [None, 2],
    ...                                "tbt_slo": [None, 1]})
    >>> spec.kind.tolist(), spec.deadline.tolist()[0]
    ([2, 1], 5.0)
    """

    kind: NDArray[np.int64]
    ttft: NDArray[np.float64]
    tbt: NDArray[np.float64]
    deadline: NDArray[np.float64]
    group: NDArray[np.int64]
    stage: NDArray[np.int64]
    value: NDArray[np.float64]
    given: tuple[str, ...] = field(default=())

    @classmethod
    def from_arrays(cls, n: int, arrays: dict[str, Any]) -> SLOSpec:
        """Validate the SLO arrays of ``requests`` (keys of :data:`SLO_ARRAYS`)."""
        given = tuple(k for k in SLO_ARRAYS if arrays.get(k) is not None)
        if "slo_kind" not in given:
            raise InvalidInstanceError("requests.slo_kind",
                                       f"missing (needed by requests.{given[0]})")
        raw = arrays["slo_kind"]
        if not isinstance(raw, (list, tuple, np.ndarray)):
            raise InvalidInstanceError("requests.slo_kind", "must be a list of strings")
        if len(raw) != n:
            raise InvalidInstanceError("requests.slo_kind",
                                       f"has length {len(raw)} but arrival has length {n}")
        kind = np.zeros(n, dtype=np.int64)
        for j, v in enumerate(raw):
            v = str(v) if isinstance(v, np.str_) else v
            if v not in SLO_KINDS:
                raise InvalidInstanceError(f"requests.slo_kind[{j}]",
                                           f"must be one of {SLO_KINDS}, got {v!r}")
            kind[j] = SLO_KINDS.index(v)
        ttft = _float_or_null("requests.ttft_slo", arrays.get("ttft_slo"), n)
        tbt = _float_or_null("requests.tbt_slo", arrays.get("tbt_slo"), n)
        dl = _float_or_null("requests.deadline", arrays.get("deadline"), n)
        value = _float_or_null("requests.value", arrays.get("value"), n)
        group = _int_or_null("requests.group", arrays.get("group"), n, -1)
        stage = _int_or_null("requests.stage", arrays.get("stage"), n, 0)
        stream, dead, comp = kind == STREAM, kind == DEADLINE, kind == COMPOUND
        # (field, values, needed-mask, allowed-mask, strictly positive)
        checks = (("ttft_slo", ttft, stream, stream, False), ("tbt_slo", tbt, stream, stream, True),
                  ("deadline", dl, dead | comp, dead | comp, True),
                  ("value", value, np.zeros(n, bool), kind != NONE, True))
        for key, arr, need, allowed, positive in checks:
            has = ~np.isnan(arr)
            miss = need & ~has
            if miss.any():
                j = int(np.flatnonzero(miss)[0])
                raise InvalidInstanceError(f"requests.{key}[{j}]",
                                           f"missing for a {SLO_KINDS[kind[j]]!r} request")
            extra = has & ~allowed
            if extra.any():
                j = int(np.flatnonzero(extra)[0])
                raise InvalidInstanceError(f"requests.{key}[{j}]", f"given for a "
                                           f"{SLO_KINDS[kind[j]]!r} request (must be null)")
            bad = has & ((arr <= 0) if positive else (arr < 0))
            if bad.any():
                j = int(np.flatnonzero(bad)[0])
                op = ">" if positive else ">="
                raise InvalidInstanceError(f"requests.{key}[{j}]", f"must be {op} 0, got {arr[j]}")
        has_g = group >= 0
        miss = comp & ~has_g
        if miss.any():
            j = int(np.flatnonzero(miss)[0])
            raise InvalidInstanceError(f"requests.group[{j}]", "missing for a 'compound' request")
        extra = has_g & ~comp
        if extra.any():
            j = int(np.flatnonzero(extra)[0])
            raise InvalidInstanceError(f"requests.group[{j}]",
                                       f"given for a {SLO_KINDS[kind[j]]!r} request (must be null)")
        extra = (stage > 0) & ~comp
        if extra.any():
            j = int(np.flatnonzero(extra)[0])
            raise InvalidInstanceError(f"requests.stage[{j}]", "only compound requests have stages")
        if comp.any():
            g = group[comp]
            d = dl[comp]
            ids = np.flatnonzero(comp)
            order = np.lexsort((ids, g))
            gs, ds = g[order], d[order]
            first = np.ones(gs.size, dtype=bool)
            first[1:] = gs[1:] != gs[:-1]
            ref = np.maximum.accumulate(np.where(first, np.arange(gs.size), 0))
            diff = ds != ds[ref]
            if diff.any():
                p = int(np.flatnonzero(diff)[0])
                j = int(ids[order][p])
                raise InvalidInstanceError(
                    f"requests.deadline[{j}]", f"compound group {gs[p]} has two deadlines "
                    f"({ds[ref[p]]} and {ds[p]}); a compound request has one E2EL deadline")
        spec = cls(kind, ttft, tbt, dl, group, stage, value, given)
        for a in (kind, ttft, tbt, dl, group, stage, value):
            a.setflags(write=False)
        return spec

    def take(self, idx: NDArray[Any]) -> dict[str, Any]:
        """The JSON-style arrays of the requests at ``idx`` (for :meth:`Instance.take`)."""
        return _arrays(self, idx)

    def to_arrays(self) -> dict[str, list[Any]]:
        """JSON form: the arrays that were given (``null`` where not applicable)."""
        return _arrays(self, slice(None))

    def base_value(self, prompt: NDArray[np.int64], output: NDArray[np.int64],
                   rule: GoodputRule) -> NDArray[np.float64]:
        """``R_i``: ``value_i`` if given, else ``w_in s_i + w_out o_i`` (0 for kind ``none``)."""
        r = np.where(np.isnan(self.value),
                     rule.input_weight * prompt + rule.output_weight * output, self.value)
        return np.where(self.kind == NONE, 0.0, r)


def _arrays(spec: SLOSpec, idx: Any) -> dict[str, Any]:
    def fl(a: NDArray[np.float64]) -> list[Any]:
        return [None if np.isnan(x) else (int(x) if float(x).is_integer() else float(x))
                for x in a[idx]]
    out: dict[str, Any] = {"slo_kind": [SLO_KINDS[k] for k in spec.kind[idx]]}
    for key, arr in (("ttft_slo", spec.ttft), ("tbt_slo", spec.tbt), ("deadline", spec.deadline),
                     ("value", spec.value)):
        if key in spec.given:
            out[key] = fl(arr)
    if "group" in spec.given:
        out["group"] = [None if g < 0 else int(g) for g in spec.group[idx]]
    if "stage" in spec.given:
        out["stage"] = [int(s) if k == COMPOUND else None
                        for s, k in zip(spec.stage[idx], spec.kind[idx], strict=True)]
    return out


@dataclass(frozen=True)
class GoodputReport:
    """Goodput of one schedule (see the module docstring for the definitions).

    Attributes
    ----------
    goodput
        Per-request goodput (a compound group's goodput is split over its members, each
        member carrying its own share ``R_i`` or ``R_i f``).
    met
        Per-request SLO satisfaction (a compound member carries its group's).
    on_time_tokens
        Per-request count of on-time output tokens (stream requests; ``o_i`` or 0 otherwise).
    token_goodput, request_goodput
        Totals: sum of ``goodput``; number of met requests (each compound group once).
    attainment
        Per kind (``stream``, ``deadline``, ``compound``) present: fraction met.
    rule
        The rule used.

    Examples
    --------
    A deadline request done in time, and a stream request whose first token only is on time:

    >>> spec = SLOSpec.from_arrays(2, {"slo_kind": ["deadline", "stream"],
    ...                                "deadline": [3, None], "ttft_slo": [None, 2],
    ...                                "tbt_slo": [None, 0.5]})
    >>> rep = evaluate_goodput(spec, GoodputRule(), np.array([0, 0]), np.array([1, 1]),
    ...                        np.array([2, 3]), np.array([0, 1]))
    >>> rep.met.tolist(), rep.on_time_tokens.tolist(), rep.goodput.tolist()
    ([True, False], [2, 1], [3.0, 2.0])
    >>> rep.token_goodput, rep.request_goodput, rep.attainment, rep.rule
    (5.0, 1, {'stream': 0.0, 'deadline': 1.0}, 'binary')
    """

    goodput: NDArray[np.float64]
    met: NDArray[np.bool_]
    on_time_tokens: NDArray[np.int64]
    token_goodput: float
    request_goodput: int
    attainment: dict[str, float]
    rule: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready totals."""
        return {"token_goodput": self.token_goodput, "request_goodput": self.request_goodput,
                "slo_attainment": self.attainment, "goodput_rule": self.rule}


def stream_tokens(
    start: NDArray[np.int64],
    arrival: NDArray[Any],
    output: NDArray[np.int64],
    ttft: NDArray[np.float64],
    tbt: NDArray[np.float64],
    times: NDArray[np.float64] | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.bool_], NDArray[np.float64]]:
    """On-time tokens of stream requests whose completing run starts at ``start``.

    Token ``j = 1..o`` is emitted at ``start + j`` (or ``times[start + j]``) and is on time
    iff ``emission - arrival <= ttft + (j - 1) tbt``.

    Returns
    -------
    (count, first_ok, ttft_actual)
        Number of on-time tokens, whether token 1 is on time, and the measured TTFT.

    Examples
    --------
    >>> c, f, t = stream_tokens(np.array([1]), np.array([0]), np.array([4]),
    ...                         np.array([2.0]), np.array([1.0]))
    >>> c.tolist(), f.tolist(), t.tolist()
    ([4], [True], [2.0])
    >>> stream_tokens(np.array([2]), np.array([0]), np.array([4]), np.array([2.0]),
    ...               np.array([1.0]))[0].tolist()
    [0]
    """
    start = np.asarray(start, dtype=np.int64)
    o = np.asarray(output, dtype=np.int64)
    m = start.shape[0]
    if m == 0:
        return np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0)
    rid = np.repeat(np.arange(m), o)
    j = ragged_arange(o) + 1
    slot = start[rid] + j
    emit = slot.astype(np.float64) if times is None else times[slot]
    due = np.asarray(arrival, dtype=np.float64)[rid] + ttft[rid] + (j - 1) * tbt[rid]
    ok = emit <= due + 1e-9
    count = np.bincount(rid, weights=ok, minlength=m).astype(np.int64)
    first = start + 1
    t_first = first.astype(np.float64) if times is None else times[first]
    ttft_actual = t_first - np.asarray(arrival, dtype=np.float64)
    return count, ttft_actual <= ttft + 1e-9, ttft_actual


def _soft(x: NDArray[np.float64], penalty: float) -> NDArray[np.float64]:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.minimum(1.0, np.nan_to_num(x, nan=1.0, posinf=1.0)) ** penalty


def evaluate_goodput(
    spec: SLOSpec,
    rule: GoodputRule,
    arrival: NDArray[Any],
    prompt: NDArray[np.int64],
    output: NDArray[np.int64],
    final_start: NDArray[np.int64],
    times: NDArray[np.float64] | None = None,
) -> GoodputReport:
    """Goodput of the runs completing at ``final_start + output`` (module docstring).

    Parameters
    ----------
    spec, rule
        The instance's SLOs and goodput rule.
    arrival, prompt, output
        The instance's arrays (arrival in the instance's unit).
    final_start
        Start slot of each request's completing run.
    times
        Wall-clock time of each decision point for ``time_unit="second"`` instances; ``None``
        for slotted instances (SLOs in slots).

    Examples
    --------
    >>> spec = SLOSpec.from_arrays(2, {"slo_kind": ["deadline", "deadline"],
    ...                                "deadline": [3, 3]})
    >>> rep = evaluate_goodput(spec, GoodputRule(), np.array([0, 0]), np.array([1, 0]),
    ...                        np.array([2, 2]), np.array([0, 2]))
    >>> rep.goodput.tolist(), rep.request_goodput, rep.attainment
    ([3.0, 0.0], 1, {'deadline': 0.5})
    """
    a = np.asarray(arrival, dtype=np.float64)
    s = np.asarray(prompt, dtype=np.int64)
    o = np.asarray(output, dtype=np.int64)
    k = np.asarray(final_start, dtype=np.int64)
    n = o.shape[0]
    c_slot = k + o
    c_time = c_slot.astype(np.float64) if times is None else times[c_slot]
    R = spec.base_value(s, o, rule)
    kind = spec.kind
    g = np.zeros(n)
    met = np.zeros(n, dtype=bool)
    tokens = np.where(kind == NONE, 0, o).astype(np.int64)
    soft = rule.rule == "soft"
    p = rule.penalty
    lat = c_time - a
    # deadline
    d = kind == DEADLINE
    met[d] = lat[d] <= spec.deadline[d] + 1e-9
    if soft:
        g[d] = R[d] * _soft(spec.deadline[d] / lat[d], p)
    else:
        g[d] = np.where(met[d], R[d], 0.0)
    tokens[d] = np.where(met[d], o[d], 0)
    # stream
    st = np.flatnonzero(kind == STREAM)
    if st.size:
        cnt, first_ok, t1 = stream_tokens(k[st], a[st], o[st], spec.ttft[st], spec.tbt[st], times)
        tokens[st] = cnt
        met[st] = cnt == o[st]
        has_v = ~np.isnan(spec.value[st])
        if soft:
            with np.errstate(divide="ignore", invalid="ignore"):
                desired = (lat[st] - np.minimum(t1, spec.ttft[st])) / spec.tbt[st]
                f_tok = np.where(desired > 0, _soft(o[st] / desired, p), 1.0)
            tok = rule.output_weight * o[st] * f_tok
            inp = rule.input_weight * s[st] * _soft(spec.ttft[st] / t1, p)
            g[st] = np.where(has_v, spec.value[st] * f_tok, inp + tok)
        else:
            tok = rule.output_weight * cnt + rule.input_weight * s[st] * first_ok
            g[st] = np.where(has_v, spec.value[st] * cnt / o[st], tok)
    # compound groups
    cm = np.flatnonzero(kind == COMPOUND)
    n_groups = 0
    n_groups_met = 0
    if cm.size:
        grp, inv = np.unique(spec.group[cm], return_inverse=True)
        inv = inv.reshape(-1)
        n_groups = grp.size
        a_g = np.full(grp.size, np.inf)
        np.minimum.at(a_g, inv, a[cm])
        c_g = np.full(grp.size, -np.inf)
        np.maximum.at(c_g, inv, c_time[cm])
        d_g = np.zeros(grp.size)
        d_g[inv] = spec.deadline[cm]
        lat_g = c_g - a_g
        met_g = lat_g <= d_g + 1e-9
        n_groups_met = int(met_g.sum())
        met[cm] = met_g[inv]
        tokens[cm] = np.where(met[cm], o[cm], 0)
        if soft:
            g[cm] = R[cm] * _soft(d_g / lat_g, p)[inv]
        else:
            g[cm] = np.where(met[cm], R[cm], 0.0)
    attainment: dict[str, float] = {}
    if st.size:
        attainment["stream"] = float(met[st].mean())
    if d.any():
        attainment["deadline"] = float(met[d].mean())
    if n_groups:
        attainment["compound"] = n_groups_met / n_groups
    request_goodput = int(met[st].sum()) + int(met[d].sum()) + n_groups_met
    return GoodputReport(g, met, tokens, float(g.sum()), request_goodput, attainment, rule.rule)


def start_goodput(
    spec: SLOSpec,
    rule: GoodputRule,
    arrival: NDArray[np.int64],
    prompt: NDArray[np.int64],
    output: NDArray[np.int64],
    req: NDArray[np.int64],
    start: NDArray[np.int64],
) -> NDArray[np.float64]:
    """Goodput of request ``req[j]`` if its only run starts at slot ``start[j]`` (slotted).

    Exact for ``stream``, ``deadline`` and ``none`` requests (their goodput depends on their
    own start only); for ``compound`` members this is the member's ``R_i`` when it alone is
    on time (``start + o - a_g <= deadline``), which the offline MIP combines per group.

    Examples
    --------
    >>> spec = SLOSpec.from_arrays(1, {"slo_kind": ["stream"], "ttft_slo": [2], "tbt_slo": [1]})
    >>> start_goodput(spec, GoodputRule(), np.array([0]), np.array([1]), np.array([3]),
    ...               np.array([0, 0]), np.array([1, 2])).tolist()
    [4.0, 0.0]
    """
    req = np.asarray(req, dtype=np.int64)
    k = np.asarray(start, dtype=np.int64)
    sub = SLOSpec(spec.kind[req], spec.ttft[req], spec.tbt[req], spec.deadline[req],
                  spec.group[req], spec.stage[req], spec.value[req], spec.given)
    a = np.asarray(arrival)[req]
    kind = sub.kind
    comp = kind == COMPOUND
    if comp.any():  # each member judged alone against its group's arrival
        a_g = group_arrival(spec, arrival)[req]
        a = np.where(comp, a_g, a)
        sub = SLOSpec(np.where(comp, DEADLINE, kind), sub.ttft, sub.tbt, sub.deadline,
                      np.full(req.size, -1), np.zeros(req.size, np.int64), sub.value, sub.given)
    rep = evaluate_goodput(sub, rule, a, np.asarray(prompt)[req], np.asarray(output)[req], k)
    return rep.goodput


def group_arrival(spec: SLOSpec, arrival: NDArray[Any]) -> NDArray[np.float64]:
    """Per request: its compound group's arrival ``min a`` (its own arrival otherwise).

    Examples
    --------
    >>> spec = SLOSpec.from_arrays(3, {"slo_kind": ["compound", "compound", "deadline"],
    ...                                "deadline": [6, 6, 4], "group": [0, 0, None],
    ...                                "stage": [0, 1, None]})
    >>> group_arrival(spec, np.array([0, 3, 2])).tolist()   # stage 1 counts from 0
    [0.0, 0.0, 2.0]
    """
    a = np.asarray(arrival, dtype=np.float64).copy()
    cm = np.flatnonzero(spec.kind == COMPOUND)
    if cm.size:
        _, inv = np.unique(spec.group[cm], return_inverse=True)
        inv = inv.reshape(-1)
        a_g = np.full(int(inv.max()) + 1, np.inf)
        np.minimum.at(a_g, inv, a[cm])
        a[cm] = a_g[inv]
    return a


def due_time(spec: SLOSpec, arrival: NDArray[Any],
             output: NDArray[np.int64]) -> NDArray[np.float64]:
    """The due time (latest on-time completion, absolute): ``a + deadline`` (compound:
    ``a_g + deadline``), stream: the last token's due time ``a + ttft + (o - 1) tbt``; ``inf``
    for ``none``. (Called ``absolute_deadline`` before, a name kept for one release.)

    Examples
    --------
    >>> spec = SLOSpec.from_arrays(2, {"slo_kind": ["stream", "none"], "ttft_slo": [2, None],
    ...                                "tbt_slo": [1, None]})
    >>> due_time(spec, np.array([1, 0]), np.array([3, 3])).tolist()
    [5.0, inf]
    """
    a = group_arrival(spec, arrival)
    o = np.asarray(output, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = np.where(spec.kind == STREAM, a + spec.ttft + (o - 1) * spec.tbt, a + spec.deadline)
    return np.where(spec.kind == NONE, np.inf, out)


#: Deprecated (one release): ``absolute_deadline``, now :func:`due_time` (``deadline`` means the
#: SLO's relative bound only).
__getattr__ = renamed_names(__name__, {"absolute_deadline": "due_time"})
