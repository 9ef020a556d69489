"""The registry of named step-time models; fitted models to and from JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kvopt.core.errors import UsageError, UsageTypeError
from kvopt.sim.steptime.engine_costs import (
    ENGINE_CALIBRATION,
    load_engine_costs,
)
from kvopt.sim.steptime.models import (
    A100,
    H100,
    LLAMA2_7B,
    LLAMA2_70B,
    AffineStepTime,
    GPUSpec,
    ModelConfig,
    StepTimeModel,
    UnitStepTime,
)
from kvopt.sim.steptime.profiled import Interconnect, ProfiledStepTime, RooflineStepTime


def _profiled(config: ModelConfig, tp: int, gpu: GPUSpec = A100,
              interconnect: Interconnect = "auto",
              name: str = "", engine: bool = False) -> Any:
    def make() -> ProfiledStepTime:
        m = ProfiledStepTime(config, tp=tp, gpu=gpu, interconnect=interconnect, name=name)
        return load_engine_costs(ENGINE_CALIBRATION, "profiled").apply(m) if engine else m
    return make


def _roofline(config: ModelConfig, tp: int, gpu: GPUSpec, name: str,
              engine: bool = False) -> Any:
    def make() -> RooflineStepTime:
        m = RooflineStepTime(config, tp=tp, gpu=gpu, name=name)
        return load_engine_costs(ENGINE_CALIBRATION, "roofline").apply(m) if engine else m
    return make


#: (GPU, model, TP) combinations with a registry entry: ``<gpu>-llama2-<size>-tp<N>``
#: (profiled) and ``roofline-<gpu>-llama2-<size>-tp<N>``.
REGISTERED_SETUPS = (
    (A100, LLAMA2_70B, 2), (A100, LLAMA2_70B, 4), (A100, LLAMA2_70B, 8),
    (A100, LLAMA2_7B, 1), (A100, LLAMA2_7B, 2),
    (H100, LLAMA2_7B, 1), (H100, LLAMA2_70B, 2), (H100, LLAMA2_70B, 4), (H100, LLAMA2_70B, 8),
)
#: Setups whose unsuffixed names are serving-engine models (:class:`EngineCosts` calibrated
#: on Llama-2-70B serving runs); ``-gpu`` names are always the GPU-time models.
ENGINE_SETUPS = frozenset((LLAMA2_70B.name,))


def setup_name(gpu: GPUSpec, config: ModelConfig, tp: int) -> str:
    """Registry name of a profiled setup, e.g. ``a100-llama2-70b-tp2``.

    Examples
    --------
    >>> setup_name(H100, LLAMA2_7B, 1)
    'h100-llama2-7b-tp1'
    """
    return f"{gpu.family}-{config.name.replace('-2-', '2-')}-tp{tp}"


#: Registry of named step-time models (factories; CLI ``--step-time`` choices). For
#: Llama-2-70B, ``<gpu>-llama2-70b-tp<N>`` and ``roofline-...`` include the serving-engine
#: costs (:data:`ENGINE_CALIBRATION`), ``...-gpu`` are the GPU-time models; the 7B names (no
#: engine calibration) are GPU-time models under both names. :data:`STEP_TIME_DESCRIPTIONS`
#: says which is which.
STEP_TIME_MODELS: dict[str, Any] = {"unit": UnitStepTime, "affine": AffineStepTime}
STEP_TIME_DESCRIPTIONS: dict[str, str] = {"unit": "every batch takes 1 slot (theory)",
                                          "affine": "affine surrogate c0 + c_p P + c_d D + c_kv K"}
_ENGINE_NOTE = f" + serving-engine costs (calibration {ENGINE_CALIBRATION})"
for _gpu, _cfg, _tp in REGISTERED_SETUPS:
    _name = setup_name(_gpu, _cfg, _tp)
    _eng = _cfg.name in ENGINE_SETUPS
    STEP_TIME_MODELS[_name] = _profiled(_cfg, _tp, _gpu, name=_name, engine=_eng)
    STEP_TIME_MODELS[f"{_name}-gpu"] = _profiled(_cfg, _tp, _gpu, name=f"{_name}-gpu")
    STEP_TIME_MODELS[f"roofline-{_name}"] = _roofline(_cfg, _tp, _gpu, f"roofline-{_name}",
                                                      engine=_eng)
    STEP_TIME_MODELS[f"roofline-{_name}-gpu"] = _roofline(_cfg, _tp, _gpu,
                                                          f"roofline-{_name}-gpu")
    for _fam, _pre in (("profiled", ""), ("roofline", "roofline-")):
        STEP_TIME_DESCRIPTIONS[f"{_pre}{_name}"] = f"{_fam} GPU time" + (
            _ENGINE_NOTE if _eng else "")
        STEP_TIME_DESCRIPTIONS[f"{_pre}{_name}-gpu"] = f"{_fam} GPU time"
STEP_TIME_MODELS["a100-llama2-70b-tp4-pairwise"] = _profiled(
    LLAMA2_70B, 4, A100, "pairwise", name="a100-llama2-70b-tp4-pairwise")
STEP_TIME_DESCRIPTIONS["a100-llama2-70b-tp4-pairwise"] = (
    "profiled GPU time, pairwise-NVLink all-reduce")


STEP_TIME_SCHEMA = "kvopt.steptime"


def model_from_dict(doc: dict[str, Any]) -> StepTimeModel:
    """Rebuild a model from :meth:`ProfiledStepTime.to_dict` / :meth:`RooflineStepTime.to_dict`
    (or ``{"type": "affine", ...}``); raises :class:`UsageError` naming the bad key.

    Examples
    --------
    >>> import numpy as np
    >>> from kvopt.sim.steptime import batch_time
    >>> m = get_step_time("h100-llama2-70b-tp4")
    >>> m2 = model_from_dict(json.loads(json.dumps(m.to_dict())))
    >>> bool(np.allclose(batch_time(m, decode=[1, 64], kv=[500, 32000]),
    ...                  batch_time(m2, decode=[1, 64], kv=[500, 32000])))
    True
    """
    try:
        kind = doc["type"]
        params: dict[str, Any] = {k: float(v) for k, v in doc.get("params", {}).items()}
        if kind == "affine":
            return AffineStepTime(**params, name=str(doc.get("name", "affine")))
        config = ModelConfig(**doc["config"])
        gpu = GPUSpec(**doc["gpu"])
        tp = int(doc["tp"])
        if kind == "profiled":
            return ProfiledStepTime(config, tp=tp, gpu=gpu, name=str(doc.get("name", "")),
                                    interconnect=doc.get("interconnect", "auto"),
                                    profile_model=doc.get("profile_model"),
                                    engine=str(doc.get("engine", "")),
                                    # files written before attention profiles: analytic
                                    attention=str(doc.get("attention", "analytic")), **params)
        if kind == "roofline":
            return RooflineStepTime(config, tp=tp, gpu=gpu, name=str(doc.get("name", "roofline")),
                                    all_reduce=bool(doc.get("all_reduce", True)),
                                    engine=str(doc.get("engine", "")), **params)
    except KeyError as exc:
        raise UsageError("step_time", f"model document lacks key {exc}") from None
    except (TypeError, ValueError) as exc:
        if isinstance(exc, UsageError):
            raise
        raise UsageError("step_time", f"bad model document: {exc}") from None
    raise UsageError("step_time", f"unknown model type {kind!r} (profiled, roofline, affine)")


def save_step_time(model: StepTimeModel, path: str | os.PathLike[str],
                   extra: dict[str, Any] | None = None) -> None:
    """Write ``model`` as a ``kvopt.steptime`` JSON file (atomically); ``extra`` (e.g. the fit
    report) is stored beside it under ``"fit"``.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = Path(d) / "model.json"
    ...     save_step_time(AffineStepTime(c0=0.03), path, extra={"note": "demo"})
    ...     doc = json.loads(path.read_text())
    >>> doc["schema"], doc["model"]["type"], doc["model"]["params"]["c0"], doc["fit"]
    ('kvopt.steptime', 'affine', 0.03, {'note': 'demo'})
    """
    from kvopt.core.io import write_json

    to_dict = getattr(model, "to_dict", None)
    if to_dict is None:
        raise UsageError("model", f"{type(model).__name__} cannot be saved")
    doc = {"schema": STEP_TIME_SCHEMA, "schema_version": 1, "model": to_dict()}
    if extra is not None:
        doc["fit"] = extra
    write_json(path, doc)


def load_step_time(path: str | os.PathLike[str]) -> StepTimeModel:
    """Read a model written by :func:`save_step_time` (``kvopt steptime fit --out``).

    Examples
    --------
    >>> import tempfile
    >>> from kvopt.sim.steptime import batch_time
    >>> m = get_step_time("h100-llama2-7b-tp1-gpu")
    >>> with tempfile.TemporaryDirectory() as d:
    ...     save_step_time(m, Path(d) / "m.json")
    ...     m2 = load_step_time(Path(d) / "m.json")
    >>> same = batch_time(m2, decode=8, kv=8000) == batch_time(m, decode=8, kv=8000)
    >>> m2.name, type(m2).__name__, bool(same.all())
    ('h100-llama2-7b-tp1-gpu', 'ProfiledStepTime', True)
    """
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as exc:
        raise UsageError("step_time", f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise UsageError("step_time", f"{path} is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("schema") != STEP_TIME_SCHEMA:
        raise UsageError("step_time", f"{path} is not a {STEP_TIME_SCHEMA} file")
    if doc.get("schema_version") != 1:
        raise UsageError("step_time", f"{path}: unsupported schema_version "
                                      f"{doc.get('schema_version')!r}")
    if not isinstance(doc.get("model"), dict):
        raise UsageError("step_time", f"{path} has no model object")
    return model_from_dict(doc["model"])


def get_step_time(spec: str | os.PathLike[str] | StepTimeModel) -> StepTimeModel:
    """A step-time model from a registry name, a fitted-model JSON path, or ``spec`` itself
    if it is a model.

    Examples
    --------
    >>> get_step_time("unit").name
    'unit'
    >>> get_step_time("a100-llama2-70b-tp2").name
    'a100-llama2-70b-tp2'
    """
    if isinstance(spec, str) and spec in STEP_TIME_MODELS:
        return STEP_TIME_MODELS[spec]()  # type: ignore[no-any-return]
    if isinstance(spec, (str, os.PathLike)):
        if str(spec).endswith(".json") or Path(spec).is_file():
            return load_step_time(spec)
        raise UsageError("step_time", f"unknown step-time model {str(spec)!r}; choose from "
                                      f"{sorted(STEP_TIME_MODELS)} or give a fitted-model "
                                      f"JSON file")
    if not hasattr(spec, "durations"):
        raise UsageTypeError("step_time", "a step-time model needs a durations(...) method")
    return spec
