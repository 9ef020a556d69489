"""Fitting step-time models to measured steps, engine-cost calibration and validation
(the measurements: :mod:`kvopt.sim.steptime.measured`)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError
from kvopt.core.io import data_file
from kvopt.sim.steptime import (
    ENGINE_CALIBRATION,
    ENGINE_COSTS_SCHEMA,
    EngineCosts,
    ModelConfig,
    ProfiledStepTime,
    RooflineStepTime,
    StepTimeModel,
    get_step_time,
)
from kvopt.sim.steptime.measured import (
    KINDS,
    MEASUREMENT_SETS,
    Setup,
    StepRows,
    _by_kind,
    _family,
)

# --- fitting --------------------------------------------------------------------------------

#: Free constants per model type: (name, lower, upper); ``inv_`` constants are fitted as
#: reciprocals (the models are linear in them).
FIT_PARAMS: dict[type, tuple[tuple[str, float, float], ...]] = {
    ProfiledStepTime: (("overhead", 0.0, 1.0), ("profile_scale", 0.2, 5.0),
                       ("inv_bw_eff", 1.0, 20.0), ("inv_mfu", 1.0, 20.0),
                       ("c_seq", 0.0, 0.01)),
    RooflineStepTime: (("t0", 0.0, 1.0), ("c_seq", 0.0, 0.01), ("inv_mfu", 1.0, 50.0),
                       ("inv_bw_eff", 1.0, 20.0)),
}


def _get(model: Any, name: str) -> float:
    return 1.0 / float(getattr(model, name[4:])) if name.startswith("inv_") else float(
        getattr(model, name))


def _with(model: Any, x: Sequence[float] | NDArray[np.float64], names: Sequence[str],
          suffix: str) -> Any:
    kw = {(n[4:] if n.startswith("inv_") else n): float(1.0 / v if n.startswith("inv_") else v)
          for n, v in zip(names, x, strict=True)}
    name = model.name if model.name.endswith(suffix) else f"{model.name}{suffix}"
    return dataclasses.replace(model, name=name, **kw)


def fit_constants(rows: StepRows, base: StepTimeModel, *, suffix: str = "-fit",
                  prior: float = 1e-4) -> StepTimeModel:
    """Least-squares fit of ``base``'s free constants (:data:`FIT_PARAMS`) to ``rows``
    (relative residuals, bounded, weak pull towards ``base``); returns the fitted model.

    Examples
    --------
    >>> from kvopt.sim.steptime import LLAMA2_70B
    >>> truth = ProfiledStepTime(LLAMA2_70B, tp=4, overhead=5e-3, c_seq=2e-4, bw_eff=0.5)
    >>> rows = StepRows.from_arrays(prefill=[512, 2048, 0, 0, 0, 300],
    ...                             decode=[0, 0, 1, 32, 32, 16],
    ...                             kv=[0, 0, 600, 32 * 600, 32 * 4000, 16 * 900], ms=[1] * 6)
    >>> rows = dataclasses.replace(rows, ms=rows.predict_ms(truth))
    >>> fit = fit_constants(rows, get_step_time("a100-llama2-70b-tp4-gpu"))
    >>> round(fit.overhead * 1e3, 3), round(fit.c_seq * 1e3, 3), round(fit.bw_eff, 3)
    (5.0, 0.2, 0.5)
    """
    from scipy.optimize import least_squares, lsq_linear  # type: ignore[import-untyped]

    spec = FIT_PARAMS.get(type(base))
    if spec is None:
        raise UsageError("--base", f"{type(base).__name__} has no free constants to fit "
                                   f"(use a profiled or roofline model)")
    if len(rows) == 0:
        raise UsageError("MEASUREMENTS", "no rows to fit")
    names = [s[0] for s in spec]
    lo = np.array([s[1] for s in spec])
    hi = np.array([s[2] for s in spec])
    x0 = np.clip([_get(base, n) for n in names], lo, hi)
    # the pull towards x0 is on relative deviations (a parameter at 0 uses 1% of its range)
    typical = np.maximum(np.abs(x0), 0.01 * (hi - lo))
    meas = rows.ms * 1e-3
    if isinstance(base, ProfiledStepTime):
        # t = overhead + scale * prof(T) + inv_bw * K1 + inv_mfu * S1 + c_seq * D  (linear)
        unit = dataclasses.replace(base, overhead=0.0, profile_scale=1.0, bw_eff=1.0, mfu=1.0,
                                   c_seq=0.0)
        T = rows.prefill + rows.decode
        A = np.column_stack([np.ones(len(rows)), unit.token_time(T),
                             unit.decode_attention(rows.decode, rows.kv),
                             unit.prefill_attention(rows.prefill, rows.prefill_sq),
                             rows.decode.astype(np.float64)]) * (rows.nsteps / meas)[:, None]
        scale = prior * np.sqrt(len(rows)) / typical
        A_aug = np.vstack([A, np.diag(scale)])
        # the engine's all-reduce latency (not fitted) is a fixed offset per step
        b_aug = np.concatenate([1.0 - base.ar_extra * rows.nsteps / meas, scale * x0])
        x = lsq_linear(A_aug, b_aug, bounds=(lo, hi), method="bvls").x
    else:
        def resid(x: NDArray[np.float64]) -> NDArray[np.float64]:
            m = _with(base, x, names, suffix)
            r = rows.predict_ms(m) / rows.ms - 1.0
            return np.concatenate([r, prior * (x - x0) / typical])

        x = least_squares(resid, x0, bounds=(lo, hi), xtol=1e-12, ftol=1e-12, gtol=1e-12).x
    return _with(base, x, names, suffix)  # type: ignore[no-any-return]


def fitted_constants(model: StepTimeModel) -> dict[str, float]:
    """The free constants of a profiled / roofline model (physical form: ``bw_eff``, ``mfu``).

    Examples
    --------
    >>> fitted_constants(get_step_time("roofline-h100-llama2-7b-tp1"))
    {'t0': 0.0005, 'c_seq': 0.0, 'mfu': 0.65, 'bw_eff': 0.7}
    >>> fitted_constants(get_step_time("affine"))          # nothing to fit
    {}
    """
    spec = FIT_PARAMS.get(type(model), ())
    return {(n[4:] if n.startswith("inv_") else n): float(getattr(model, n[4:] if
                                                                  n.startswith("inv_") else n))
            for n, _, _ in spec}


def split_rows(rows: StepRows, holdout: float, seed: int) -> tuple[NDArray[np.int64],
                                                                     NDArray[np.int64]]:
    """Seeded train / held-out split, stratified by kind (every kind with >= 2 rows keeps at
    least one row on each side).

    Examples
    --------
    >>> rows = StepRows.from_arrays(prefill=[1, 2, 3, 0, 0, 0, 0, 0], decode=[0, 0, 0, 1, 2, 3,
    ...                             4, 5], kv=[0] * 8, ms=[1.0] * 8)
    >>> train, test = split_rows(rows, 0.25, seed=0)
    >>> len(train), len(test), sorted(set(rows.kind[test].tolist()))
    (6, 2, ['decode', 'prefill'])
    """
    if not 0.0 < holdout < 1.0:
        raise UsageError("--holdout", f"must be in (0, 1), got {holdout}")
    rng = np.random.default_rng(seed)
    test: list[int] = []
    for k in KINDS:
        idx = np.flatnonzero(rows.kind == k)
        if len(idx) < 2:
            continue
        n_test = min(len(idx) - 1, max(1, round(holdout * len(idx))))
        test.extend(rng.permutation(idx)[:n_test].tolist())
    mask = np.zeros(len(rows), dtype=bool)
    mask[test] = True
    return np.flatnonzero(~mask), np.flatnonzero(mask)


@dataclass
class FitResult:
    """A fitted model with its errors on training and held-out rows.

    Examples
    --------
    >>> from kvopt.sim.steptime.measured import read_steps_csv
    >>> rows = read_steps_csv(data_file("measured", "h100_llama_steps.csv"),
    ...                       where={"model": "llama-2-7b"})
    >>> res = fit_step_time(rows, "h100-llama2-7b-tp1-gpu", seed=0)
    >>> res.base, res.model.name, res.train["all"]["n"], res.heldout["all"]["n"]
    ('h100-llama2-7b-tp1-gpu', 'h100-llama2-7b-tp1-gpu-fit', 40, 13)
    >>> {k: round(v, 3) for k, v in res.constants.items()}
    {'overhead': 0.002, 'profile_scale': 0.971, 'bw_eff': 0.915, 'mfu': 0.208, 'c_seq': 0.0}
    >>> sorted(res.to_dict())
    ['base', 'base_heldout_error', 'constants', 'heldout_error', 'holdout', 'seed', 'train_error']
    """

    model: StepTimeModel
    base: str
    constants: dict[str, float]
    train: dict[str, Any]
    heldout: dict[str, Any]
    base_heldout: dict[str, Any]
    holdout: float
    seed: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (stored beside the model by ``kvopt steptime fit --out``)."""
        return {"base": self.base, "constants": self.constants, "holdout": self.holdout,
                "seed": self.seed, "train_error": self.train, "heldout_error": self.heldout,
                "base_heldout_error": self.base_heldout}


def fit_step_time(rows: StepRows, base: StepTimeModel | str, *, holdout: float = 0.25,
                  seed: int = 0) -> FitResult:
    """Fit ``base``'s constants on a seeded split of ``rows``; errors on both sides.

    The returned model is the one fitted on the training rows only, so the held-out error is
    the error of that very model.

    Examples
    --------
    >>> from kvopt.sim.steptime.measured import read_steps_csv
    >>> rows = read_steps_csv(data_file("measured", "h100_llama_steps.csv"),
    ...                       where={"model": "llama-2-7b"})
    >>> res = fit_step_time(rows, "roofline-h100-llama2-7b-tp1-gpu", holdout=0.25, seed=0)
    >>> res.model.name, len(rows), res.heldout["all"]["n"]
    ('roofline-h100-llama2-7b-tp1-gpu-fit', 53, 13)
    >>> # median |error| on the held-out rows: the base model, then the fitted one
    >>> round(res.base_heldout["all"]["median_abs"], 2), round(res.heldout["all"]["median_abs"], 2)
    (0.12, 0.02)
    """
    model = get_step_time(base)
    train, test = split_rows(rows, holdout, seed)
    if len(test) == 0:
        raise UsageError("MEASUREMENTS", "too few rows for a held-out split (need >= 2 of a kind)")
    fit = fit_constants(rows.take(train), model)
    tr, te = rows.take(train), rows.take(test)
    return FitResult(fit, model.name, fitted_constants(fit),
                     _by_kind(tr.kind, tr.predict_ms(fit), tr.ms),
                     _by_kind(te.kind, te.predict_ms(fit), te.ms),
                     _by_kind(te.kind, te.predict_ms(model), te.ms), holdout, seed)


def cross_validate(rows: StepRows, base: StepTimeModel, folds: int = 5,
                   seed: int = 0) -> NDArray[np.float64]:
    """Seeded k-fold cross validation (folds stratified by kind): every row's prediction (ms)
    by a model fitted without it.

    Examples
    --------
    >>> from kvopt.sim.steptime.measured import error_summary, read_steps_csv
    >>> rows = read_steps_csv(data_file("measured", "h100_llama_steps.csv"),
    ...                       where={"model": "llama-2-7b"})
    >>> base = get_step_time("roofline-h100-llama2-7b-tp1-gpu")
    >>> cv = cross_validate(rows, base, folds=5, seed=0)
    >>> cv.shape, error_summary(rows.predict_ms(base), rows.ms)["median_abs"]
    ((53,), 0.0703)
    >>> round(error_summary(cv, rows.ms)["median_abs"], 2)      # every row predicted unseen
    0.02
    """
    rng = np.random.default_rng(seed)
    fold = np.zeros(len(rows), dtype=np.int64)
    for k in KINDS:
        idx = np.flatnonzero(rows.kind == k)
        fold[rng.permutation(idx)] = np.arange(len(idx)) % folds
    pred = np.empty(len(rows))
    for f in range(folds):
        te = fold == f
        if not np.any(te):
            continue
        pred[te] = rows.take(te).predict_ms(fit_constants(rows.take(~te), base))
    return pred


# --- serving-engine calibration -----------------------------------------------------------

#: Measurement sets of serving-engine runs (end-to-end iterations, not GPU time).
ENGINE_SETS = ("splitwise-a100", "splitwise-h100", "splitwise-h100-pcap")


def engine_features(rows: StepRows, tp: int, config: ModelConfig) -> NDArray[np.float64]:
    """Seconds each :class:`EngineCosts` constant adds to every row per unit of it: columns
    ``step`` (1 per iteration), ``seq`` (decoding sequences), ``ar_rank_latency``
    (``2 L (tp - 1)`` per iteration), times the iterations a row totals.

    Examples
    --------
    >>> from kvopt.sim.steptime import LLAMA2_70B
    >>> rows = StepRows.from_arrays(prefill=[512, 0], decode=[0, 8], kv=[0, 4800], ms=[1, 1],
    ...                             steps=[4, 1])
    >>> engine_features(rows, 4, LLAMA2_70B).tolist()
    [[4.0, 0.0, 1920.0], [1.0, 8.0, 480.0]]
    """
    n = len(rows)
    X = np.column_stack([np.ones(n), rows.decode.astype(np.float64),
                         np.full(n, 2.0 * config.n_layers * max(tp - 1, 0))])
    return X * rows.nsteps[:, None]  # type: ignore[no-any-return]


def fit_engine_costs(items: Sequence[tuple[StepRows, StepTimeModel, int, ModelConfig]],
                     calibration: str = "") -> EngineCosts:
    """Least squares on relative residuals of :class:`EngineCosts` (all >= 0) added to GPU-time
    models: ``items`` are ``(rows, gpu_model, tp, config)`` of one or more setups, and one set
    of constants is fitted for all of them. The GPU models' own constants stay as they are.

    Examples
    --------
    >>> from kvopt.sim.steptime import LLAMA2_70B
    >>> truth = EngineCosts(step=4e-3, seq=1.5e-4, ar_rank_latency=1.2e-5)
    >>> items = []
    >>> for tp in (2, 4, 8):
    ...     gpu = ProfiledStepTime(LLAMA2_70B, tp=tp)
    ...     rows = StepRows.from_arrays(prefill=[512, 2048, 0, 0], decode=[0, 0, 1, 32],
    ...                                 kv=[0, 0, 600, 32 * 600], ms=[1] * 4)
    ...     rows = dataclasses.replace(rows, ms=rows.predict_ms(truth.apply(gpu)))
    ...     items.append((rows, gpu, tp, LLAMA2_70B))
    >>> c = fit_engine_costs(items)
    >>> round(c.step * 1e3, 6), round(c.seq * 1e3, 6), round(c.ar_rank_latency * 1e6, 6)
    (4.0, 0.15, 12.0)
    """
    from scipy.optimize import lsq_linear

    if not items:
        raise UsageError("--set", "no rows to calibrate on")
    A, b = [], []
    for rows, gpu, tp, config in items:
        A.append(engine_features(rows, tp, config) * 1e3 / rows.ms[:, None])
        b.append(1.0 - rows.predict_ms(gpu) / rows.ms)
    M, y = np.vstack(A), np.concatenate(b)
    norm = np.linalg.norm(M, axis=0)
    norm[norm == 0] = 1.0
    x = lsq_linear(M / norm, y, bounds=(0.0, np.inf), method="bvls",
                   tol=1e-14).x / norm
    return EngineCosts(float(x[0]), float(x[1]), float(x[2]), calibration)


def _engine_items(set_names: Sequence[str], family: str) -> list[
        tuple[StepRows, StepTimeModel, int, ModelConfig, str]]:
    out = []
    for n in set_names:
        if n not in ENGINE_SETS:
            raise UsageError("--set", f"{n!r} is not a serving-engine measurement set; choose "
                                      f"from {list(ENGINE_SETS)}")
        for st in MEASUREMENT_SETS[n]().setups:
            out.append((st.rows, st.gpu_models[family](), st.tp, st.config, st.label))
    return out


def _engine_errors(items: Sequence[tuple[StepRows, StepTimeModel, int, ModelConfig, str]],
                   costs: EngineCosts) -> dict[str, Any]:
    """Errors of ``costs`` added to the GPU models of ``items``: per setup and pooled."""
    per: dict[str, Any] = {}
    kinds, preds, meas = [], [], []
    for rows, gpu, _tp, _cfg, label in items:
        pred = rows.predict_ms(costs.apply(gpu))  # type: ignore[type-var]
        per[label] = _by_kind(rows.kind, pred, rows.ms)
        kinds.append(rows.kind)
        preds.append(pred)
        meas.append(rows.ms)
    per["pooled"] = _by_kind(np.concatenate(kinds), np.concatenate(preds), np.concatenate(meas))
    return per


def calibrate_engine(sets: Sequence[str] = (ENGINE_CALIBRATION,),
                     families: Sequence[str] = ("profiled", "roofline"),
                     name: str | None = None) -> dict[str, Any]:
    """Calibrate :class:`EngineCosts` on the serving-engine measurement sets ``sets`` (against
    the GPU-time ``-gpu`` models of each family) and report the error on every serving-engine
    set: in-sample on ``sets``, out-of-sample on the others. Deterministic (no random
    choice). Returns the ``kvopt.engine_costs`` document that ``kvopt steptime
    calibrate-engine --out`` writes and :func:`kvopt.sim.steptime.load_engine_costs` reads.

    Examples
    --------
    >>> doc = calibrate_engine(["splitwise-a100"], ["roofline"])
    >>> c = doc["families"]["roofline"]["costs"]     # as in kvopt/data/engine/splitwise-a100.json
    >>> round(c["step"] * 1e3, 2), round(c["seq"] * 1e3, 3), round(c["ar_rank_latency"] * 1e6, 1)
    (3.22, 0.217, 24.2)
    >>> for n, e in doc["families"]["roofline"]["errors"].items():   # median |relative error|
    ...     print(n, e["in_sample"], round(e["pooled"]["all"]["median_abs"], 2))
    splitwise-a100 True 0.06
    splitwise-h100 False 0.18
    splitwise-h100-pcap False 0.29
    """
    sets = list(dict.fromkeys(sets))
    cal = name or "+".join(sets)
    doc: dict[str, Any] = {"schema": ENGINE_COSTS_SCHEMA, "schema_version": 1,
                           "calibration": cal, "calibrated_on": sets,
                           "model": "t = t_gpu + step + seq * D + 2 L (tp - 1) ar_rank_latency",
                           "method": "bounded (>= 0) linear least squares on relative errors "
                                     "of every row of the calibration sets; deterministic",
                           "families": {}}
    for fam in families:
        if fam not in ("profiled", "roofline"):
            raise UsageError("--family", f"must be profiled or roofline, got {fam!r}")
        train = _engine_items(sets, fam)
        costs = fit_engine_costs([t[:4] for t in train], cal)
        errors = {}
        for n in ENGINE_SETS:
            items = train if n in sets and len(sets) == 1 else _engine_items([n], fam)
            errors[n] = {"in_sample": n in sets, **_engine_errors(items, costs)}
        doc["families"][fam] = {"costs": costs.to_dict(), "rows": sum(len(t[0]) for t in train),
                                "errors": errors}
    return doc


def engine_transfer(family: str = "profiled",
                    sets: Sequence[str] = ENGINE_SETS) -> dict[str, Any]:
    """Calibrate on each serving-engine set alone and score every set (pooled and per setup
    median absolute error): the diagonal is in-sample, the rest out-of-sample.

    Examples
    --------
    >>> t = engine_transfer("roofline", ("splitwise-a100", "splitwise-h100"))
    >>> for row in t["rows"]:           # calibrated on, then median |error| on each set
    ...     print(row["calibrated_on"], {n: round(e["median_abs"], 2)
    ...                                  for n, e in row["tested"].items()})
    splitwise-a100 {'splitwise-a100': 0.06, 'splitwise-h100': 0.18}
    splitwise-h100 {'splitwise-a100': 0.12, 'splitwise-h100': 0.09}
    """
    out: dict[str, Any] = {"family": family, "rows": []}
    for cal in sets:
        doc = calibrate_engine([cal], [family])["families"][family]
        row = {"calibrated_on": cal, "costs": doc["costs"], "tested": {}}
        for n, e in doc["errors"].items():
            if n in sets:
                row["tested"][n] = {"in_sample": e["in_sample"],
                                    "median_abs": e["pooled"]["all"]["median_abs"],
                                    "per_setup": {k: v["all"]["median_abs"] for k, v in e.items()
                                                  if k not in ("in_sample", "pooled")}}
        out["rows"].append(row)
    return out


# --- validation -----------------------------------------------------------------------------

def validate(sets: Sequence[str] | None = None, *, fit: bool = False, folds: int = 5,
             seed: int = 0,
             models: Callable[[Setup], Mapping[str, Callable[[], StepTimeModel]]] | None = None,
             ) -> dict[str, Any]:
    """Predicted vs measured for the shipped measurement sets.

    For every set, setup and model: errors per kind out of the box; with ``fit`` also the
    errors of ``folds``-fold cross-validated fits (every row predicted by a model fitted
    without it). ``models`` overrides the models compared (used to score older versions).
    Models are pooled per family and variant: ``profiled-gpu``, ``roofline-gpu`` (GPU-time
    models) and ``profiled-engine``, ``roofline-engine`` (with the shipped serving-engine
    costs; ``engine_in_sample`` says whether the set is the one they were calibrated on).
    With any serving-engine set, ``engine_transfer`` holds :func:`engine_transfer` per family.
    Returns a JSON-ready dict with per-row predictions for plots.

    Examples
    --------
    >>> v = validate(["h100-steps"])
    >>> for st in v["sets"][0]["setups"]:
    ...     print(st["setup"], st["n"], [(m["family"], m["default"]["all"]["median_abs"])
    ...                                  for m in st["models"]])
    h100 llama2-7b tp1 53 [('profiled-gpu', 0.0149), ('roofline-gpu', 0.0703)]
    h100 llama2-70b tp2 shard 57 [('profiled-gpu', 0.0696), ('roofline-gpu', 0.0529)]
    """
    names = list(MEASUREMENT_SETS) if not sets else list(sets)
    for n in names:
        if n not in MEASUREMENT_SETS:
            raise UsageError("--set", f"unknown measurement set {n!r}; choose from "
                                      f"{list(MEASUREMENT_SETS)}")
    cal_path = data_file("engine", f"{ENGINE_CALIBRATION}.json")
    cal_doc = json.loads(cal_path.read_text(encoding="utf-8")) if cal_path.is_file() else {}
    cal_sets = list(cal_doc.get("calibrated_on", []))
    out: dict[str, Any] = {"seed": seed, "folds": folds if fit else None,
                           "engine_calibration": {"name": ENGINE_CALIBRATION,
                                                  "calibrated_on": cal_sets,
                                                  "command": cal_doc.get("command")},
                           "sets": []}
    for n in names:
        ss = MEASUREMENT_SETS[n]()
        doc: dict[str, Any] = {"set": n, "source": ss.source, "excluded": ss.excluded,
                               "engine_in_sample": n in cal_sets, "setups": [], "pooled": {}}
        pooled: dict[str, dict[str, list[Any]]] = {}
        for st in ss.setups:
            rows = st.rows
            sdoc: dict[str, Any] = {"setup": st.label, "n": len(rows), "models": []}
            for mname, factory in (models(st) if models else st.models).items():
                m = factory()
                family = _family(mname) + ("-engine" if getattr(m, "engine", "") else "-gpu")
                pred = rows.predict_ms(m)
                mdoc: dict[str, Any] = {"model": mname, "family": family,
                                        "default": _by_kind(rows.kind, pred, rows.ms),
                                        "rows": {"kind": rows.kind.tolist(),
                                                 "measured_ms": rows.ms.round(4).tolist(),
                                                 "default_ms": pred.round(4).tolist()}}
                acc = pooled.setdefault(family, {"kind": [], "meas": [], "pred": [], "cv": []})
                acc["kind"].append(rows.kind)
                acc["meas"].append(rows.ms)
                acc["pred"].append(pred)
                if fit:
                    cv = cross_validate(rows, m, folds, seed)
                    mdoc["fitted_heldout"] = _by_kind(rows.kind, cv, rows.ms)
                    mdoc["fitted_constants_all_rows"] = fitted_constants(fit_constants(rows, m))
                    mdoc["rows"]["heldout_fit_ms"] = cv.round(4).tolist()
                    acc["cv"].append(cv)
                sdoc["models"].append(mdoc)
            doc["setups"].append(sdoc)
        for family, acc in pooled.items():
            kind = np.concatenate(acc["kind"])
            meas = np.concatenate(acc["meas"])
            doc["pooled"][family] = {"default": _by_kind(kind, np.concatenate(acc["pred"]), meas)}
            if fit:
                doc["pooled"][family]["fitted_heldout"] = _by_kind(
                    kind, np.concatenate(acc["cv"]), meas)
        out["sets"].append(doc)
    if any(n in ENGINE_SETS for n in names) and models is None:
        out["engine_transfer"] = {fam: engine_transfer(fam) for fam in ("profiled", "roofline")}
    return out
