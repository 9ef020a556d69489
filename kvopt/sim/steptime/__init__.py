"""Step-time models: how long one batch (iteration) takes.

The engine describes each batch by five numbers (all vectorized over a run of slots):

``prefill``
    prompt tokens of the requests started in this batch (``sum s_i``);
``prefill_sq``
    ``sum s_i**2`` of those prompts (causal prefill attention is quadratic);
``decode``
    number of running requests that generate one token from their KV cache;
``kv``
    KV tokens those decode steps read (``sum_j (s_j + progress_j)``);
``tokens``
    ``prefill + decode``, the token count the linear layers process.

Models (see :data:`STEP_TIME_MODELS`):

- ``unit``: every batch takes 1 (the theory model; MIP-comparable slots).
- ``a100-llama2-70b-tp{2,4,8}``, ``a100-llama2-7b-tp{1,2}``, ``h100-llama2-7b-tp1``,
  ``h100-llama2-70b-tp{2,4,8}``: :class:`ProfiledStepTime`, Vidur's measured A100 / H100
  operator profiles + measured all-reduce + analytic attention. Interconnect: a TP-2 pair
  uses the pairwise-NVLink table, TP 4 and 8 the single-node NVSwitch (DGX/HGX) table;
  ``a100-llama2-70b-tp4-pairwise`` keeps the pairwise-NVLink table as an explicit option.
- ``roofline-<same names>``: :class:`RooflineStepTime`, a first-principles roofline
  parameterised by GPU and model config.
- Llama-2-70B names (``<gpu>-llama2-70b-tp<N>``, ``roofline-...``) are *serving-engine*
  models: the GPU-time model plus :class:`EngineCosts` (per step, per decoding sequence, per
  all-reduce and extra rank) calibrated on Splitwise's H100 serving runs
  (:data:`ENGINE_CALIBRATION`, ``kvopt/data/engine``); the same names with ``-gpu`` are the
  GPU-time models (operator profiles / roofline only: what a CUDA-graph GPU timing measures).
  The 7B names have no engine calibration and are GPU-time models (``-gpu`` is an alias).
- a path to a fitted-model JSON file (``kvopt steptime fit``; :func:`load_step_time`).
- ``affine``: :class:`AffineStepTime`, the digest's surrogate ``c0 + c_p P + c_d D + c_kv K``.

Every model exposes ``coefficients()`` (a JSON-ready dict) so the numbers are inspectable.
Empty batches (no request running) take 0 seconds in the real-time models, 1 in ``unit``.

Modules: :mod:`~kvopt.sim.steptime.models` (the protocol, GPU and model shapes, ``unit``,
``affine``), :mod:`~kvopt.sim.steptime.profiled` (profiled and roofline GPU-time models),
:mod:`~kvopt.sim.steptime.engine_costs` (serving-engine costs),
:mod:`~kvopt.sim.steptime.registry` (named models, JSON files); against measurements:
:mod:`~kvopt.sim.steptime.measured` (measured steps, shipped sets),
:mod:`~kvopt.sim.steptime.fit` (fitting, engine calibration, validation) and
:mod:`~kvopt.sim.steptime.gpu_profile` (profile your own GPU). This package exports the
models and the registry; import the last three by their module names.

Spelling: module, package, command and report folder names write ``steptime``
(``kvopt.sim.steptime``, ``kvopt steptime``, ``reports/steptime``); identifiers and flags write
``step_time`` / ``StepTime`` / ``--step-time`` (``get_step_time``, ``StepTimeModel``,
``simulate(..., step_time=...)``); prose says "step time".
"""

from __future__ import annotations

from kvopt.sim.steptime.engine_costs import (
    ENGINE_CALIBRATION,
    ENGINE_COSTS_SCHEMA,
    EngineCosts,
    load_engine_costs,
)
from kvopt.sim.steptime.models import (
    A100,
    GPUS,
    H100,
    LLAMA2_7B,
    LLAMA2_70B,
    MODEL_CONFIGS,
    NON_ATTENTION_OPS,
    AffineStepTime,
    GPUSpec,
    ModelConfig,
    StepTimeModel,
    UnitStepTime,
    batch_time,
    isotonic_increasing,
    read_csv_rows,
)
from kvopt.sim.steptime.profiled import (
    INTERCONNECTS,
    ProfiledStepTime,
    RooflineStepTime,
    load_all_reduce_profile,
    load_operator_profile,
    resolve_interconnect,
)
from kvopt.sim.steptime.registry import (
    ENGINE_SETUPS,
    REGISTERED_SETUPS,
    STEP_TIME_DESCRIPTIONS,
    STEP_TIME_MODELS,
    STEP_TIME_SCHEMA,
    get_step_time,
    load_step_time,
    model_from_dict,
    save_step_time,
    setup_name,
)

__all__ = [
    "A100",
    "AffineStepTime",
    "ENGINE_CALIBRATION",
    "ENGINE_COSTS_SCHEMA",
    "ENGINE_SETUPS",
    "EngineCosts",
    "GPUS",
    "GPUSpec",
    "H100",
    "INTERCONNECTS",
    "LLAMA2_70B",
    "LLAMA2_7B",
    "MODEL_CONFIGS",
    "ModelConfig",
    "NON_ATTENTION_OPS",
    "ProfiledStepTime",
    "REGISTERED_SETUPS",
    "RooflineStepTime",
    "STEP_TIME_DESCRIPTIONS",
    "STEP_TIME_MODELS",
    "STEP_TIME_SCHEMA",
    "StepTimeModel",
    "UnitStepTime",
    "batch_time",
    "get_step_time",
    "isotonic_increasing",
    "load_all_reduce_profile",
    "load_engine_costs",
    "load_operator_profile",
    "load_step_time",
    "model_from_dict",
    "read_csv_rows",
    "resolve_interconnect",
    "save_step_time",
    "setup_name",
]
