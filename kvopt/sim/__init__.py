"""Vectorized continuous-batching simulator with the online policies of seeds 000/001.

Entry point :func:`simulate`; policies in :data:`POLICIES` (see :mod:`kvopt.sim.policies`),
step-time models in :data:`STEP_TIME_MODELS` (see :mod:`kvopt.sim.steptime`), the engine in
:mod:`kvopt.sim.engine`, MC-SF's admission rule in :mod:`kvopt.sim.admission`.

Examples
--------
>>> from kvopt import Instance
>>> from kvopt.sim import simulate
>>> inst = Instance(memory=10, arrival=[0] * 5, prompt=[1] * 5, output=[1] * 5,
...                 pred_lower=[1] * 5, pred_upper=[4] * 5)
>>> [simulate(inst, p, seed=0).metrics.total_latency for p in ("hsf", "amax", "amin")]
[5.0, 9.0, 5.0]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kvopt.core.errors import UsageError, UsageTypeError
from kvopt.core.instance import Instance
from kvopt.core.metrics import Metrics, compute_metrics
from kvopt.core.schedule import PreemptionMode, Schedule
from kvopt.core.stability import Headroom
from kvopt.core.validate import check_schedule
from kvopt.predictions.predictors import PredictionCost
from kvopt.sim import fluid as _fluid  # noqa: F401  (registers wait, nested-wait)
from kvopt.sim import geometric as _geometric  # noqa: F401  (registers gsa, gba)
from kvopt.sim.engine import (
    Decision,
    LivelockError,
    PolicyError,
    PolicyProtocol,
    SimState,
    SimulationError,
    run_engine,
)
from kvopt.sim.headroom import instance_headroom
from kvopt.sim.policies import (
    POLICIES,
    POLICY_INFO,
    FunctionPolicy,
    Policy,
    PolicyInfo,
    policy_info,
    policy_options,
    register_policy,
)
from kvopt.sim.policies.registry import ALL_MODES
from kvopt.sim.policies.vllm import VllmPolicy  # registers vllm
from kvopt.sim.predicted_lengths import (
    Predictions,
    check_noise,
    describe_lengths,
    resolve_predictions,
)
from kvopt.sim.prediction_policies import RankPolicy, TiePolicy  # registers trail, tie, ...
from kvopt.sim.serving import EngineConfig
from kvopt.sim.steptime import STEP_TIME_MODELS, StepTimeModel, get_step_time

__all__ = [
    "POLICIES",
    "POLICY_INFO",
    "PolicyInfo",
    "policy_info",
    "STEP_TIME_MODELS",
    "Decision",
    "EngineConfig",
    "LivelockError",
    "Policy",
    "PolicyError",
    "PolicyProtocol",
    "RankPolicy",
    "Headroom",
    "Predictions",
    "SimResult",
    "SimState",
    "SimulationError",
    "check_policy",
    "engine_config",
    "TiePolicy",
    "VllmPolicy",
    "get_step_time",
    "policy_options",
    "register_policy",
    "simulate",
]


@dataclass(frozen=True)
class SimResult:
    """Outcome of :func:`simulate`.

    Attributes
    ----------
    schedule
        The runs (evictions included) and, for real step times, the wall-clock ``times``;
        validated by :func:`kvopt.check_schedule` unless ``validate=False``.
    metrics
        :class:`kvopt.core.Metrics` of the schedule.
    policy, step_time, seed
        What was simulated.
    stats
        Engine counters (decision points visited, slots, evictions, wall seconds, ...).
    headroom
        Load vs capacity of the instance under the step-time model:
        ``headroom.load = lambda / mu`` with ``mu = M / (b E[g])``
        (:class:`kvopt.core.stability.Headroom`, :mod:`kvopt.sim.headroom`).

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=10, arrival=[0, 0, 1], prompt=[1, 1, 2], output=[4, 8, 3])
    >>> r = simulate(inst, "fcfs")
    >>> r.policy, r.step_time, r.seed, r.metrics.total_latency, r.stats["evictions"]
    ('fcfs', 'unit', 0, 22.0, 3)
    >>> r.stats["lengths"], round(r.headroom.load, 4)    # FCFS reads no lengths; overloaded
    ('no output lengths', 4.6667)
    """

    schedule: Schedule
    metrics: Metrics
    policy: str
    step_time: str
    seed: int | None
    stats: dict[str, Any] = field(default_factory=dict)
    headroom: Headroom | None = None


def make_policy(instance: Instance, policy: str | Callable[..., Any] | Policy,
                predictions: Predictions, **options: Any) -> Any:
    """Build a policy object from a registry name, a policy object or a plain function."""
    if isinstance(policy, str):
        try:
            factory = POLICIES[policy]
        except KeyError:
            raise UsageError("policy", f"unknown policy {policy!r}; choose from "
                             f"{sorted(POLICIES)}") from None
        return factory(instance, predictions, **options)
    if hasattr(policy, "decide"):
        return policy
    if callable(policy):
        return FunctionPolicy(policy)
    raise UsageTypeError("policy", f"must be a name, a policy object or a function, got "
                                   f"{policy!r}")


def engine_config(instance: Instance, policy: str | Any, pol: Any,
                  preemption: PreemptionMode | None = None, host_memory: int | None = None
                  ) -> EngineConfig:
    """The :class:`EngineConfig` of simulating ``pol`` (built from ``policy``): the
    preemption mode (``preemption``, else the policy's default: the first of its
    :attr:`PolicyInfo.modes`, or the mode of the schedule a replay replays), the policy's
    serving settings (its ``serving`` attribute: block size, batching, chunk budget) and the
    host memory. Raises :class:`UsageError` naming ``preemption`` for a mode the policy does
    not support and ``block_size`` for a block size that does not divide ``M``.

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> engine_config(inst, "fcfs", None, "recompute").preemption
    'recompute'
    >>> engine_config(inst, "mcsf", None, "swap")
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid preemption: mcsf supports restart, got 'swap'
    """
    if isinstance(policy, str):
        modes = policy_info(policy).modes
        name = policy
    else:
        modes = tuple(getattr(pol, "preemption_modes", ALL_MODES))
        name = str(getattr(pol, "name", "policy"))
    default = getattr(pol, "preemption", None) or modes[0]
    mode = default if preemption is None else preemption
    if mode not in modes:
        raise UsageError("preemption", f"{name} supports {', '.join(modes)}, got {mode!r}")
    serving = dict(getattr(pol, "serving", None) or {})
    cfg = EngineConfig(preemption=mode, host_memory=host_memory, **serving)
    cfg.check(instance.memory)
    return cfg


def check_policy(instance: Instance, policy: str, *, predictions: Any = None,
                 preemption: PreemptionMode | None = None, host_memory: int | None = None,
                 **options: Any) -> None:
    """Check the arguments of ``simulate(instance, policy, predictions=..., **options)``
    without running anything: the policy name, every option name (against
    :func:`~kvopt.sim.policies.policy_options`), the option values, the predictions the
    policy needs and the engine settings (preemption mode, block size, host memory). Raises
    :class:`~kvopt.core.errors.UsageError` naming the argument (the option's name,
    ``"policy"``, ``"predictions"``, ``"noise"`` -- a noise model the policy would not read,
    :func:`~kvopt.sim.predicted_lengths.check_noise` --, ``"preemption"`` or
    ``"host_memory"``).

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> check_policy(inst, "alpha-protection", alpha=0.1)
    >>> check_policy(inst, "amax")
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid predictions: amax needs upper-bound predictions, \
and the instance has none (no pred_lower/pred_upper) and no prediction model was given
    >>> check_policy(inst, "mcsf", bogus=1)
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid bogus: not an option of mcsf (it takes margin, \
order, overflow, overrun, promote, raise_on_evict, tie_order, ties)
    """
    accepted = policy_options(policy)  # raises UsageError("policy", ...) for unknown names
    if accepted is not None:
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            takes = ", ".join(sorted(accepted)) or "no options"
            raise UsageError(unknown[0], f"not an option of {policy} (it takes {takes})")
    if isinstance(predictions, dict):
        check_noise(policy, options, str(predictions.get("kind", "uniform")))
    preds = resolve_predictions(instance, predictions, np.random.default_rng(0))
    try:
        pol = make_policy(instance, policy, preds, **options)
    except UsageError:
        raise
    except (TypeError, ValueError) as exc:  # building a policy runs nothing: its arguments
        raise UsageError("options", f"{policy} rejected its options: {exc}") from exc
    engine_config(instance, policy, pol, preemption, host_memory)


def simulate(
    instance: Instance,
    policy: str | Callable[..., Any] | Policy,
    *,
    step_time: str | StepTimeModel = "unit",
    seed: int | None = 0,
    predictions: Any = None,
    progress: bool = False,
    validate: bool = True,
    max_batch: int | None = None,
    prediction_cost: Any = None,
    preemption: PreemptionMode | None = None,
    host_memory: int | None = None,
    **policy_options: Any,
) -> SimResult:
    """Simulate ``policy`` on ``instance``.

    Parameters
    ----------
    instance
        Slotted instance (arrivals are decision-point indices) or trace instance (seconds).
    policy
        A :data:`POLICIES` name (``"mcsf"``, ``"mc-benchmark"``, ``"hsf"``, ``"amax"``,
        ``"amin"``, ``"amin-multi"``, ``"a-l"``, ``"mcsf-margin"``, ``"fcfs"``, ``"sjf"``,
        ``"alpha-protection"``, ``"alpha-beta-clearing"``, ``"replay"``), a policy object, or
        a function ``f(state) -> admit ids | Decision``.
    step_time
        A :data:`STEP_TIME_MODELS` name or a model object (default ``"unit"``).
    seed
        Seeds random tie-breaks, beta-clearing and prediction noise (independent streams).
        Default 0: the same call gives the same result; ``None`` draws fresh OS entropy.
    predictions
        ``None`` (the instance's), ``"exact"``, an array of point predictions, a
        :class:`Predictions`, or a noise model dict (see
        :func:`kvopt.sim.predicted_lengths.resolve_predictions`).
    progress
        Show a tqdm progress bar.
    validate
        Check the schedule with the independent validator (raises
        :class:`kvopt.InfeasibleScheduleError` if it fails - an engine bug).
    max_batch
        Batch-size limit ``B`` (concurrent requests) beside ``M``; default the instance's
        ``max_batch`` (unlimited if unset).
    prediction_cost
        Latency of a prediction batch (:class:`kvopt.predictions.PredictionCost` or a pair
        ``(per_batch, per_item)``), added to the step time after every decision at which
        the policy predicted (TRAIL, TIE, SSJF).
    preemption
        What an evicted request keeps: ``"restart"`` (nothing; the seed convention),
        ``"recompute"`` (its generated tokens; it re-prefills them when it resumes) or
        ``"swap"`` (its KV, in host memory). Default: the policy's (``"restart"`` for every
        policy but ``vllm``, whose default is vLLM's ``"recompute"``); each policy lists the
        modes it supports in :attr:`PolicyInfo.modes`.
    host_memory
        Swap space in tokens (``preemption="swap"``; default: vLLM's 4 GiB per GPU of the
        step-time model's KV, or ``M``); see :mod:`kvopt.sim.serving`.
    **policy_options
        Passed to the policy factory (e.g. ``alpha=0.2``, ``beta=0.1``, ``ties="random"``,
        ``schedule=`` for ``"replay"``).

    Returns
    -------
    SimResult

    Raises
    ------
    LivelockError
        A clearing policy loops forever (seed 001's small-alpha "infinite processing loops").

    Examples
    --------
    >>> from kvopt import Instance
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> r = simulate(inst, "mcsf")
    >>> r.metrics.total_latency, r.schedule.final_start(inst).tolist()
    (12.0, [0, 0])
    >>> r.headroom.mean_g, r.headroom.load    # g = (4 + 10, 8 + 36); all arrive at once
    (29.0, None)
    """
    ss = np.random.SeedSequence(seed)
    pred_ss, pol_ss = ss.spawn(2)
    preds = resolve_predictions(instance, predictions, np.random.default_rng(pred_ss))
    pol = make_policy(instance, policy, preds, **policy_options)
    config = engine_config(instance, policy, pol, preemption, host_memory)
    model = get_step_time(step_time)
    name = getattr(pol, "name", "policy")
    meta: dict[str, Any] = {"policy": name, "options": getattr(pol, "options", {}),
                            "step_time": getattr(model, "name", "custom"), "seed": seed,
                            "predictions": preds.label}
    if not config.seed_convention:
        meta["engine"] = config.to_dict()
    if prediction_cost is not None and not hasattr(prediction_cost, "seconds"):
        prediction_cost = PredictionCost(*prediction_cost)
    if prediction_cost is not None:
        meta["prediction_cost"] = {"per_batch": prediction_cost.per_batch,
                                   "per_item": prediction_cost.per_item}
    res = run_engine(instance, pol, model, np.random.default_rng(pol_ss), progress=progress,
                     source=f"sim:{name}", meta=meta, max_batch=max_batch,
                     prediction_cost=prediction_cost, config=config)
    sched = res.schedule
    rep = None
    if validate:
        rep = check_schedule(instance, sched)
        rep.raise_if_invalid()
    # with the check's report: feasible, and its memory profile's peak (not computed again)
    metrics = compute_metrics(instance, sched, check=False, report=rep)
    # the validator's objective, in the instance's unit (slots even with times, else seconds)
    sched = sched.replace(claimed_objective=metrics.total_latency)
    stats = dict(res.stats)
    stats["wall_seconds"] = res.wall_seconds
    stats.update(getattr(pol, "stats", {}))
    if isinstance(policy, str):
        stats["lengths"] = describe_lengths(policy, policy_options, preds)
    return SimResult(sched, metrics, name, meta["step_time"], seed, stats,
                     instance_headroom(instance, model))
