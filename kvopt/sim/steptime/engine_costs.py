"""Serving-engine costs that GPU-time models leave out, and the shipped calibration."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeVar

from kvopt.core.errors import UsageError
from kvopt.core.io import data_file
from kvopt.sim.steptime.profiled import ProfiledStepTime, RooflineStepTime

ENGINE_COSTS_SCHEMA = "kvopt.engine_costs"
_GpuModel = TypeVar("_GpuModel", "ProfiledStepTime", "RooflineStepTime")
#: Calibration the engine-inclusive registry models use (``kvopt/data/engine/<name>.json``).
ENGINE_CALIBRATION = "splitwise-h100"


@dataclass(frozen=True)
class EngineCosts:
    """Per-step costs of a serving engine that GPU-time models (operator profiles, roofline)
    do not contain, shared across GPUs and TP degrees. For a non-empty batch with ``D``
    decoding sequences at tensor-parallel degree ``tp`` (``L`` layers)::

        t_engine = t_gpu + step + seq * D + 2 * L * (tp - 1) * ar_rank_latency

    ``step``: host work once per iteration (scheduling, input preparation, launching the
    sampler); ``seq``: per decoding sequence (logits processing, sampling, block tables,
    detokenisation); ``ar_rank_latency``: latency each of the ``2 L`` all-reduces per step
    adds per additional rank (ring latency grows with ``tp - 1``; launch and synchronisation
    of NCCL without CUDA graphs, which the small-message all-reduce tables do not show).
    Calibrated by :func:`kvopt.sim.steptime.fit.calibrate_engine` (``kvopt steptime
    calibrate-engine``) on one measurement set and applied unchanged to other GPUs.

    Examples
    --------
    >>> from kvopt.sim.steptime import LLAMA2_70B, ProfiledStepTime, batch_time
    >>> c = EngineCosts(step=4e-3, seq=2e-4, ar_rank_latency=1e-5, calibration="demo")
    >>> gpu = ProfiledStepTime(LLAMA2_70B, tp=4)
    >>> eng = c.apply(gpu)
    >>> extra = batch_time(eng, decode=8, kv=8000) - batch_time(gpu, decode=8, kv=8000)
    >>> round(float(extra[0]) * 1e3, 3), eng.engine            # 4 + 8 * 0.2 + 160 * 3 * 0.01
    (10.4, 'demo')
    """

    step: float = 0.0
    seq: float = 0.0
    ar_rank_latency: float = 0.0
    calibration: str = ""

    def apply(self, model: _GpuModel, name: str | None = None) -> _GpuModel:
        """``model`` (a GPU-time model) with these costs added; ``engine`` names the
        calibration."""
        if model.engine:
            raise UsageError("model", f"{model.name} already includes engine costs "
                                      f"({model.engine})")
        first = "overhead" if isinstance(model, ProfiledStepTime) else "t0"
        kw: dict[str, Any] = {first: getattr(model, first) + self.step,
                              "c_seq": model.c_seq + self.seq,
                              "ar_rank_latency": model.ar_rank_latency + self.ar_rank_latency,
                              "engine": self.calibration or "engine"}
        if name is not None:
            kw["name"] = name
        return dataclasses.replace(model, **kw)

    def to_dict(self) -> dict[str, float]:
        """The three constants (seconds)."""
        return {"step": self.step, "seq": self.seq, "ar_rank_latency": self.ar_rank_latency}


@lru_cache(maxsize=8)
def load_engine_costs(calibration: str = ENGINE_CALIBRATION,
                      family: str = "profiled") -> EngineCosts:
    """Engine costs shipped in ``kvopt/data/engine/<calibration>.json`` (written by
    ``kvopt steptime calibrate-engine``) for the ``profiled`` or ``roofline`` GPU-time models.

    Examples
    --------
    >>> c = load_engine_costs()
    >>> c.calibration, 0 < c.step < 0.05 and 0 < c.seq < 1e-3
    ('splitwise-h100', True)
    """
    path = data_file("engine", f"{calibration}.json")
    if not path.is_file():
        raise UsageError("calibration", f"no shipped engine calibration {calibration!r}")
    doc = json.loads(path.read_text(encoding="utf-8"))
    if doc.get("schema") != ENGINE_COSTS_SCHEMA or family not in doc.get("families", {}):
        raise UsageError("calibration", f"{path.name}: not a {ENGINE_COSTS_SCHEMA} file with "
                                        f"family {family!r}")
    c = doc["families"][family]["costs"]
    return EngineCosts(float(c["step"]), float(c["seq"]), float(c["ar_rank_latency"]),
                       calibration)
