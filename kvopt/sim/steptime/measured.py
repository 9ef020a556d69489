"""Step-time models against measured GPU step times: measurement sets, validation, fitting.

A *measured step* is one batch with its statistics and its measured duration (ms), the same
five numbers the engine gives a step-time model (:mod:`kvopt.sim.steptime`):

===============  ============================================================================
column           meaning
===============  ============================================================================
``prefill``      prompt tokens prefilled in the batch (``sum s_i``)
``decode``       decoding sequences, one new token each (alias ``batch``)
``kv``           KV tokens those decodes read (``sum_j (context_j + 1)``)
``prefill_sq``   ``sum s_i**2`` over the batch's prompts (optional: ``prefill**2``, one prompt)
``ms``           measured duration in milliseconds (alias ``ms_median``)
``kind``         optional: ``prefill``, ``decode``, ``mixed`` (derived from the counts if
                 absent) or ``prefill-batch`` (below)
``steps``        optional: the measurement is the total of ``steps`` identical iterations
                 (default 1)
===============  ============================================================================

That is the CSV :func:`read_steps_csv` reads (``kvopt steptime fit``) and the profiler
(:mod:`kvopt.sim.steptime.gpu_profile`) writes; other columns are kept and can select rows
(``where={"model": "llama-2-7b"}``).

Shipped measurement sets (:data:`MEASUREMENT_SETS`, files in ``kvopt/data/measured``):

- ``h100-steps``: ``h100_llama_steps.csv``, GPU times of single forward passes (one batch
  each) -- compared row by row. The Llama-2-70B rows are one TP-2 shard *without* the
  all-reduce, so the models are evaluated with ``interconnect="none"`` (profiled) /
  ``all_reduce=False`` (roofline).
- ``splitwise-a100``, ``splitwise-h100``, ``splitwise-h100-pcap`` (power-capped):
  ``splitwise_perf_model.csv``, Llama-2-70B serving runs at TP 2, 4, 8 (BLOOM-176B rows
  are skipped: kvopt has no BLOOM model). A run of ``B`` prompts of ``s`` tokens generating
  ``n`` tokens each gives two comparable measurements, compared like with like:

  * ``prompt_time`` at ``B = 1`` -> one **prefill** iteration of ``s`` tokens;
  * ``prompt_time`` at ``B > 1`` (kind **prefill-batch**) -> ``B`` prefill iterations of one
    ``s``-token prompt each (``steps = B``). The engine prefilled the prompts one at a time:
    at TP 2, ``B = 2`` takes 2.1x the time of ``B = 1``, while one prompt of ``2 s`` tokens
    takes 1.9x; so the batch is not one ``B * s``-token iteration. The totals grow faster
    than ``B`` (up to 1.35x of ``B`` single prefills at TP 4 and 8): the engine runs other
    iterations between the prompts, which no step model describes, so this kind is reported
    apart from the single-iteration ``prefill`` rows;
  * ``token_time`` is the *mean* decode iteration of the run -> one **decode** batch of
    ``B`` sequences at the run's mean KV read ``kv = B * (s + (m + 1) / 2)``: iteration
    ``i = 1..m`` reads ``s + i`` KV tokens per sequence (the first output token comes from
    the prefill), and every model is affine in ``kv`` at fixed ``B``, so its mean over the
    run equals its value at the mean ``kv`` exactly. ``m`` is the number of decode
    iterations the run really made, ``(e2e_time - prompt_time) / token_time``, capped at
    ``token_size - 1`` (runs asked for 1024+ tokens stop after about 320-580).

  Repeated runs of the same configuration are reduced to their median. A row whose
  measured time is below the physical floor of its batch (``2 * params * tokens`` FLOPs at
  the GPUs' peak, or one read of the weights at full HBM bandwidth) cannot be right and is
  excluded, with the reason, in :attr:`StepSet.excluded` (one row: A100 TP 2, 64 x 512
  prompt tokens "prefilled" in 0.79 s, 9x above the two GPUs' peak FLOP rate).

Errors are relative, ``predicted / measured - 1``; a summary gives the median absolute
error, the worst (signed) error and the mean signed error per kind.

Fitting (:func:`fit_step_time`) is least squares on *relative* residuals over the model's free
constants, within physical bounds, with a weak pull towards the base model's values (relative
deviations weighted 1e-4 against the relative residuals) so constants the data cannot
identify stay where they were:

- profiled model: ``overhead``, ``profile_scale``, ``1 / bw_eff``, ``1 / mfu``, ``c_seq``
  (the model is linear in these, so the fit is a bounded linear least squares,
  :func:`scipy.optimize.lsq_linear`);
- roofline model: ``t0``, ``c_seq``, ``1 / mfu``, ``1 / bw_eff`` (non-linear through the
  ``max``, :func:`scipy.optimize.least_squares`).

Every fit reports the error on rows it did not see: a seeded split stratified by kind
(:func:`split_rows`), or seeded k-fold cross validation (:func:`cross_validate`).
"""

from __future__ import annotations

import csv
import io
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.abc import Traversable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError
from kvopt.core.io import data_file
from kvopt.sim.steptime import (
    GPUS,
    LLAMA2_7B,
    LLAMA2_70B,
    ModelConfig,
    ProfiledStepTime,
    RooflineStepTime,
    StepTimeModel,
    get_step_time,
    read_csv_rows,
)

KINDS = ("prefill", "decode", "mixed", "prefill-batch")
REQUIRED_COLUMNS = ("prefill", "decode", "kv", "ms")
COLUMN_ALIASES = {"batch": "decode", "ms_median": "ms"}


@dataclass(frozen=True)
class StepRows:
    """Measured steps, struct-of-arrays (one entry per batch); ``ms`` is the measurement.

    Examples
    --------
    >>> rows = StepRows.from_arrays(prefill=[512, 0], decode=[0, 8], kv=[0, 8 * 600],
    ...                             ms=[120.0, 45.0])
    >>> rows.kind.tolist(), len(rows)
    (['prefill', 'decode'], 2)
    >>> [round(v, 1) for v in rows.predict_ms(get_step_time("affine")).tolist()]
    [193.6, 40.6]
    """

    kind: NDArray[np.str_]
    prefill: NDArray[np.int64]
    decode: NDArray[np.int64]
    kv: NDArray[np.float64]
    prefill_sq: NDArray[np.float64]
    ms: NDArray[np.float64]
    extra: dict[str, NDArray[Any]] = field(default_factory=dict)
    steps: NDArray[np.float64] | None = None

    @classmethod
    def from_arrays(cls, *, prefill: Any, decode: Any, kv: Any, ms: Any,
                    prefill_sq: Any = None, kind: Any = None,
                    extra: Mapping[str, Any] | None = None, steps: Any = None) -> StepRows:
        """Build from array-likes; ``prefill_sq`` defaults to ``prefill**2`` (one prompt) and
        ``kind`` to prefill / decode / mixed by which counts are non-zero."""
        p = np.asarray(prefill, dtype=np.int64)
        d = np.asarray(decode, dtype=np.int64)
        psq = p.astype(np.float64) ** 2 if prefill_sq is None else np.asarray(
            prefill_sq, dtype=np.float64)
        if kind is None:
            kind = np.where(d == 0, "prefill", np.where(p == 0, "decode", "mixed"))
        return cls(np.asarray(kind, dtype=str), p, d, np.asarray(kv, dtype=np.float64), psq,
                   np.asarray(ms, dtype=np.float64),
                   {k: np.asarray(v) for k, v in (extra or {}).items()},
                   np.ones(len(p)) if steps is None else np.asarray(steps, dtype=np.float64))

    def __len__(self) -> int:
        return int(self.ms.shape[0])

    def take(self, idx: Any) -> StepRows:
        """The rows at ``idx`` (indices or a boolean mask)."""
        return StepRows(self.kind[idx], self.prefill[idx], self.decode[idx], self.kv[idx],
                        self.prefill_sq[idx], self.ms[idx],
                        {k: v[idx] for k, v in self.extra.items()}, self.nsteps[idx])

    @property
    def nsteps(self) -> NDArray[np.float64]:
        """Iterations each measurement totals (ones unless given)."""
        return np.ones(len(self.ms)) if self.steps is None else self.steps

    def predict_ms(self, model: StepTimeModel) -> NDArray[np.float64]:
        """The model's duration of every row, in ms."""
        tokens = self.prefill + self.decode
        return model.durations(tokens, self.decode, self.kv,  # type: ignore[arg-type]
                               self.prefill, self.prefill_sq) * 1e3 * self.nsteps


def read_steps_csv(path: str | os.PathLike[str] | Traversable,
                   where: Mapping[str, str] | None = None) -> StepRows:
    """Read measured steps (columns in the module docstring); ``where`` keeps the rows whose
    named columns equal the given values. Raises :class:`UsageError` naming the column.

    Examples
    --------
    >>> rows = read_steps_csv(data_file("measured", "h100_llama_steps.csv"),
    ...                       where={"model": "llama-2-7b"})
    >>> len(rows), sorted(set(rows.kind.tolist())), sorted(rows.extra)
    (53, ['decode', 'mixed', 'prefill'], ['context', 'model', 'ms_p10', 'ms_p90', 'tokens'])
    >>> rows.prefill[:3].tolist(), rows.ms[:3].tolist()       # prompts of 16, 64, 128 tokens
    ([16, 64, 128], [7.2751, 7.4328, 7.7495])
    """
    p = path if isinstance(path, Traversable) else Path(path)
    if not p.is_file():
        raise UsageError("MEASUREMENTS", f"no such file: {path}")
    try:
        reader = csv.DictReader(io.StringIO(p.read_text(encoding="utf-8"), newline=""))
        raw = list(reader)
    except (UnicodeDecodeError, OSError, csv.Error) as exc:
        raise UsageError("MEASUREMENTS", f"cannot read {path}: {exc}") from None
    cols = {COLUMN_ALIASES.get(k, k) for k in reader.fieldnames or []}
    for c in REQUIRED_COLUMNS:
        if c not in cols:
            raise UsageError(f"column {c!r}", f"{path} lacks it (needs {list(REQUIRED_COLUMNS)}"
                                              f", aliases {COLUMN_ALIASES})")
    rows = [{COLUMN_ALIASES.get(k, k): v for k, v in r.items() if k is not None} for r in raw]
    for key, val in (where or {}).items():
        if key not in cols:
            raise UsageError("--where", f"{path} has no column {key!r}")
        rows = [r for r in rows if r[key] == val]
    if not rows:
        raise UsageError("MEASUREMENTS", f"{path}: no rows" + (" match --where" if where else ""))

    def num(col: str, cast: Callable[[str], float]) -> NDArray[Any]:
        out = []
        for i, r in enumerate(rows):
            try:
                v = cast(r[col])
            except (TypeError, ValueError):
                raise UsageError(f"column {col!r}", f"row {i + 1}: not a number: "
                                                    f"{r[col]!r}") from None
            if not np.isfinite(v) or v < 0:
                raise UsageError(f"column {col!r}", f"row {i + 1}: must be finite and >= 0, "
                                                    f"got {r[col]!r}")
            out.append(v)
        return np.array(out)

    prefill = num("prefill", int)
    decode = num("decode", int)
    ms = num("ms", float)
    if np.any(ms <= 0):
        raise UsageError("column 'ms'", f"row {int(np.argmax(ms <= 0)) + 1}: must be > 0")
    if np.any(prefill + decode == 0):
        raise UsageError("column 'prefill'", f"row {int(np.argmax(prefill + decode == 0)) + 1}:"
                                             " an empty batch (prefill = decode = 0)")
    kind = None
    if "kind" in cols:
        kind = np.array([r["kind"] for r in rows])
        bad = ~np.isin(kind, KINDS)
        if np.any(bad):
            raise UsageError("column 'kind'", f"row {int(np.argmax(bad)) + 1}: must be one of "
                                              f"{list(KINDS)}, got {kind[bad][0]!r}")
    extra = {c: np.array([r[c] for r in rows]) for c in cols
             if c not in (*REQUIRED_COLUMNS, "prefill_sq", "kind", "steps")}
    steps = num("steps", float) if "steps" in cols else None
    if steps is not None and np.any(steps < 1):
        raise UsageError("column 'steps'", f"row {int(np.argmax(steps < 1)) + 1}: must be >= 1")
    return StepRows.from_arrays(prefill=prefill, decode=decode, kv=num("kv", float), ms=ms,
                                prefill_sq=num("prefill_sq", float) if "prefill_sq" in cols
                                else None, kind=kind, extra=extra, steps=steps)


# --- shipped measurement sets -------------------------------------------------------------

@dataclass
class Setup:
    """One measured configuration: its rows and the models compared with them.

    ``gpu_models`` are the GPU-time models per family (``profiled``, ``roofline``): the bases
    engine costs are calibrated against (:func:`calibrate_engine`); ``tp`` and ``config`` the
    measured setup.

    Examples
    --------
    >>> st = MEASUREMENT_SETS["h100-steps"]().setups[0]
    >>> st.label, st.tp, st.config.name, len(st.rows)
    ('h100 llama2-7b tp1', 1, 'llama-2-7b', 53)
    >>> sorted(st.models), sorted(st.gpu_models)
    (['h100-llama2-7b-tp1-gpu', 'roofline-h100-llama2-7b-tp1-gpu'], ['profiled', 'roofline'])
    """

    label: str
    rows: StepRows
    models: dict[str, Callable[[], StepTimeModel]]
    tp: int = 1
    config: ModelConfig = LLAMA2_70B
    gpu_models: dict[str, Callable[[], StepTimeModel]] = field(default_factory=dict)


@dataclass
class StepSet:
    """A shipped measurement set: setups plus the rows left out (with reasons).

    Examples
    --------
    >>> ss = MEASUREMENT_SETS["splitwise-a100"]()
    >>> ss.name, ss.source, [st.tp for st in ss.setups], len(ss.excluded)
    ('splitwise-a100', 'splitwise_perf_model.csv', [2, 4, 8], 1)
    >>> ss.excluded[0]["config"], ss.excluded[0]["reason"]
    ('prompt 512 x batch 64', 'below the physical floor (peak FLOPs / HBM)')
    """

    name: str
    source: str
    setups: list[Setup]
    excluded: list[dict[str, Any]] = field(default_factory=list)


def _models_for(family: str, config: ModelConfig, tp: int, shard: bool = False,
                engine: bool = False) -> dict[str, Callable[[], StepTimeModel]]:
    """Models compared with a setup: the GPU-time ``-gpu`` models, and with ``engine`` the
    serving-engine models of the same names without the suffix."""
    gpu = GPUS[family]
    short = config.name.replace("-2-", "2-")
    prof = f"{family}-{short}-tp{tp}"
    if shard:  # one tensor-parallel shard measured without its all-reduce
        return {f"{prof}-gpu": lambda: ProfiledStepTime(
                    config, tp=tp, gpu=gpu, interconnect="none",
                    name=f"{prof}-gpu (no all-reduce)"),
                f"roofline-{prof}-gpu": lambda: RooflineStepTime(
                    config, tp=tp, gpu=gpu, all_reduce=False,
                    name=f"roofline-{prof}-gpu (no all-reduce)")}
    names = [f"{prof}-gpu", f"roofline-{prof}-gpu"]
    if engine:
        names += [prof, f"roofline-{prof}"]
    def factory(n: str) -> Callable[[], StepTimeModel]:
        return lambda: get_step_time(n)

    return {n: factory(n) for n in names}


def _family(name: str) -> str:
    return "roofline" if name.startswith("roofline") else "profiled"


def physical_floor_ms(rows: StepRows, config: ModelConfig, tp: int,
                      family: str) -> NDArray[np.float64]:
    """Lower bound (ms) on any batch: ``2 * params * tokens`` FLOPs at peak, and one read of
    the weights at full HBM bandwidth, over ``tp`` GPUs.

    Examples
    --------
    >>> rows = StepRows.from_arrays(prefill=[512], decode=[0], kv=[0], ms=[794.2], steps=[64])
    >>> round(float(physical_floor_ms(rows, LLAMA2_70B, 2, "a100")[0]))   # > 794 ms measured
    7245
    """
    g = GPUS[family]
    tokens = (rows.prefill + rows.decode).astype(np.float64)
    compute = 2 * config.params * tokens / (tp * g.peak_flops)
    weights = config.params * config.dtype_bytes / (tp * g.hbm_bandwidth)
    return np.maximum(compute, weights) * 1e3 * rows.nsteps


def _h100_steps() -> StepSet:
    name = "h100_llama_steps.csv"
    rows_all = read_steps_csv(data_file("measured", name))
    setups = []
    for model, config, tp, shard in (("llama-2-7b", LLAMA2_7B, 1, False),
                                     ("llama-2-70b-tp2-shard", LLAMA2_70B, 2, True)):
        rows = rows_all.take(rows_all.extra["model"] == model)
        label = "h100 llama2-7b tp1" if not shard else "h100 llama2-70b tp2 shard"
        models = _models_for("h100", config, tp, shard)
        setups.append(Setup(label, rows, models, tp, config,
                            {_family(k): v for k, v in models.items()}))
    return StepSet("h100-steps", name, setups)


def _splitwise(hardware: str, family: str, set_name: str) -> StepSet:
    name = "splitwise_perf_model.csv"
    raw = [r for r in read_csv_rows(data_file("measured", name))
           if r["model"] == "llama2-70b" and r["hardware"] == hardware]
    out = StepSet(set_name, name, [])
    for tp in sorted({int(r["tensor_parallel"]) for r in raw}):
        runs = [r for r in raw if int(r["tensor_parallel"]) == tp]
        pre: dict[tuple[int, int], list[float]] = {}
        dec: dict[tuple[int, int, int], list[tuple[float, float]]] = {}
        for r in runs:
            s, b, n = int(r["prompt_size"]), int(r["batch_size"]), int(r["token_size"])
            pt, tt, e2e = float(r["prompt_time"]), float(r["token_time"]), float(r["e2e_time"])
            pre.setdefault((s, b), []).append(pt)
            iters = min(n - 1.0, max(1.0, round((e2e - pt) / tt)))
            dec.setdefault((s, b, n), []).append((tt, iters))
        cols: dict[str, list[Any]] = {k: [] for k in ("kind", "prefill", "decode", "kv",
                                                      "prefill_sq", "ms", "steps", "config")}

        def add(kind: str, p: int, d: int, kv: float, ms: float, steps: int, cfg: str,
                c: dict[str, list[Any]] = cols) -> None:
            for k, v in zip(c, (kind, p, d, kv, float(p * p), ms, steps, cfg), strict=True):
                c[k].append(v)

        for (s, b), times in sorted(pre.items()):
            add("prefill" if b == 1 else "prefill-batch", s, 0, 0.0, float(np.median(times)), b,
                f"prompt {s} x batch {b}")
        for (s, b, n), reps in sorted(dec.items()):
            m = float(np.median([x[1] for x in reps]))
            add("decode", 0, b, b * (s + (m + 1) / 2), float(np.median([x[0] for x in reps])), 1,
                f"prompt {s} x batch {b}, {n} tokens ({m:.0f} iterations)")
        rows = StepRows.from_arrays(prefill=cols["prefill"], decode=cols["decode"], kv=cols["kv"],
                                    ms=cols["ms"], prefill_sq=cols["prefill_sq"],
                                    kind=cols["kind"], extra={"config": cols["config"]},
                                    steps=cols["steps"])
        floor = physical_floor_ms(rows, LLAMA2_70B, tp, family)
        bad = rows.ms < floor
        for i in np.flatnonzero(bad):
            out.excluded.append({"setup": f"tp{tp}", "kind": str(rows.kind[i]),
                                 "config": str(rows.extra["config"][i]),
                                 "ms": float(rows.ms[i]), "floor_ms": float(floor[i]),
                                 "reason": "below the physical floor (peak FLOPs / HBM)"})
        models = _models_for(family, LLAMA2_70B, tp, engine=True)
        out.setups.append(Setup(f"{family} llama2-70b tp{tp}", rows.take(~bad), models, tp,
                                LLAMA2_70B, {_family(k): v for k, v in models.items()
                                             if k.endswith("-gpu")}))
    return out


#: Shipped measurement sets (name -> loader).
MEASUREMENT_SETS: dict[str, Callable[[], StepSet]] = {
    "splitwise-a100": lambda: _splitwise("a100-80gb", "a100", "splitwise-a100"),
    "splitwise-h100": lambda: _splitwise("h100-80gb", "h100", "splitwise-h100"),
    "splitwise-h100-pcap": lambda: _splitwise("h100-80gb-pcap", "h100", "splitwise-h100-pcap"),
    "h100-steps": _h100_steps,
}


# --- errors ---------------------------------------------------------------------------------

def error_summary(pred_ms: NDArray[np.float64], meas_ms: NDArray[np.float64]) -> dict[str, Any]:
    """``n``, median absolute, worst (signed, largest magnitude) and mean signed relative error.

    Examples
    --------
    >>> error_summary(np.array([110.0, 95.0, 70.0]), np.array([100.0, 100.0, 100.0]))
    {'n': 3, 'median_abs': 0.1, 'worst': -0.3, 'mean': -0.0833}
    """
    if len(meas_ms) == 0:
        return {"n": 0, "median_abs": None, "worst": None, "mean": None}
    e = pred_ms / meas_ms - 1.0
    w = float(e[int(np.argmax(np.abs(e)))])
    return {"n": len(e), "median_abs": round(float(np.median(np.abs(e))), 4),
            "worst": round(w, 4), "mean": round(float(np.mean(e)), 4)}


def _by_kind(kind: NDArray[np.str_], pred: NDArray[np.float64],
             meas: NDArray[np.float64]) -> dict[str, Any]:
    out = {k: error_summary(pred[kind == k], meas[kind == k]) for k in KINDS if np.any(kind == k)}
    out["all"] = error_summary(pred, meas)
    return out
