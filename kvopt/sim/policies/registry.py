"""The policy registry :data:`POLICIES` (name -> factory), the options each policy takes and
its metadata (:class:`PolicyInfo`)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import UsageError, UsageTypeError
from kvopt.core.instance import Instance
from kvopt.core.schedule import PREEMPTION_MODES, PreemptionMode, Schedule
from kvopt.sim.gmax import GmaxPolicy
from kvopt.sim.policies.base import (
    Policy,
    ReplayPolicy,
    _count,
    _flag,
    _number,
)
from kvopt.sim.policies.future_memory import FutureMemoryPolicy
from kvopt.sim.policies.greedy import GreedyPolicy
from kvopt.sim.predicted_lengths import Predictions, buckets


def _need(arr: NDArray[np.int64] | None, what: str, policy: str) -> NDArray[np.int64]:
    if arr is None:
        raise UsageError("predictions", f"{policy} needs {what} predictions, and the instance "
                         "has none (no pred_lower/pred_upper) and no prediction model was given")
    return np.asarray(arr, dtype=np.int64)


def _mcsf(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    pred = pr.point if pr.point is not None else inst.output
    return FutureMemoryPolicy("mcsf", pred, **kw)


def _mc_benchmark(inst: Instance, pr: Predictions, *, use_predictions: bool = False,
                  **kw: Any) -> Policy:
    use_predictions = _flag("use_predictions", use_predictions)
    pred = pr.point if (use_predictions and pr.point is not None) else inst.output
    return FutureMemoryPolicy("mc-benchmark", pred, order="arrival", **kw)


def _hsf(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    return FutureMemoryPolicy("hsf", inst.output, **kw)


def _amax(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    kw.setdefault("ties", "random")
    return FutureMemoryPolicy("amax", _need(pr.upper, "upper-bound", "amax"), **kw)


def _amin(inst: Instance, pr: Predictions, *, lower: int | None = None, **kw: Any) -> Policy:
    kw.setdefault("ties", "random")
    if lower is not None:
        pred = np.full(inst.n, _count("lower", lower), dtype=np.int64)
    elif pr.lower is not None:
        pred = pr.lower
    else:
        pred = np.ones(inst.n, dtype=np.int64)  # no bound known: l = 1 (seed 000 Exp. 1)
    return FutureMemoryPolicy("amin", pred, overflow="evict-smallest", raise_on_evict=True, **kw)


def _amin_multi(inst: Instance, pr: Predictions, *, width: int = 100, **kw: Any) -> Policy:
    kw.setdefault("ties", "random")
    lo, _ = buckets(inst.output, _count("width", width))
    return FutureMemoryPolicy("amin-multi", lo, overflow="evict-smallest", raise_on_evict=True,
                              **kw)


def _a_l(inst: Instance, pr: Predictions, *, ell: int | None = None, u: int | None = None,
         **kw: Any) -> Policy:
    if ell is not None:
        ell = _count("ell", ell)
    if u is not None:
        u = _count("u", u, 1 if ell is None else ell)
    if ell is None:
        ell = int(_need(pr.lower, "lower-bound", "a-l").min()) if pr.lower is not None else int(
            inst.output.min())
    if u is None:
        u = int(pr.upper.max()) if pr.upper is not None else int(inst.output.max())
    pred = np.full(inst.n, int(ell), dtype=np.int64)
    return FutureMemoryPolicy("a-l", pred, order="fifo", promote=(int(ell), int(u)),
                              overflow="evict-smallest", **kw)


def _mcsf_margin(inst: Instance, pr: Predictions, *, alpha: float = 0.1, **kw: Any) -> Policy:
    alpha = _number("alpha", alpha, 0.0, 1.0, hi_open=True)
    pred = pr.point if pr.point is not None else inst.output
    return FutureMemoryPolicy("mcsf-margin", pred, margin=alpha, **kw)


def _fcfs(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    return GreedyPolicy("fcfs", **kw)


def _sjf(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    return GreedyPolicy("sjf", order="length", **kw)


def _edf(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    return GreedyPolicy("edf", order="deadline", **kw)


def _gmax(inst: Instance, pr: Predictions, **kw: Any) -> Policy:
    median = pr.point if pr.point is not None else inst.output
    return GmaxPolicy("gmax", median, **kw)  # type: ignore[return-value]


def _alpha(inst: Instance, pr: Predictions, *, alpha: float = 0.25, **kw: Any) -> Policy:
    return GreedyPolicy("alpha-protection", alpha=alpha, overflow="clear-all", **kw)


def _alpha_beta(inst: Instance, pr: Predictions, *, alpha: float = 0.2, beta: float = 0.1,
                **kw: Any) -> Policy:
    return GreedyPolicy("alpha-beta-clearing", alpha=alpha, overflow="beta", beta=beta, **kw)


def _replay(inst: Instance, pr: Predictions, *, schedule: Schedule | None = None,
            **kw: Any) -> Policy:
    if schedule is None:
        raise UsageError("schedule", "replay needs the schedule to replay")
    if kw:
        raise UsageTypeError("options", f"replay: unknown option(s) {sorted(kw)}")
    return ReplayPolicy(schedule)


#: Registry: name -> factory ``(instance, predictions, **options) -> policy``.
POLICIES: dict[str, Callable[..., Policy]] = {
    "mcsf": _mcsf,
    "mc-benchmark": _mc_benchmark,
    "hsf": _hsf,
    "amax": _amax,
    "amin": _amin,
    "amin-multi": _amin_multi,
    "a-l": _a_l,
    "mcsf-margin": _mcsf_margin,
    "fcfs": _fcfs,
    "sjf": _sjf,
    "edf": _edf,
    "gmax": _gmax,
    "alpha-protection": _alpha,
    "alpha-beta-clearing": _alpha_beta,
    "replay": _replay,
}


#: For each registry factory: the constructor its extra ``**options`` go to, and the keywords
#: of that constructor the factory sets itself (so they are not user options).
_FORWARDS: dict[str, tuple[Callable[..., Any] | None, tuple[str, ...]]] = {
    "mcsf": (FutureMemoryPolicy, ()),
    "mc-benchmark": (FutureMemoryPolicy, ("order",)),
    "hsf": (FutureMemoryPolicy, ()),
    "amax": (FutureMemoryPolicy, ()),
    "amin": (FutureMemoryPolicy, ("overflow", "raise_on_evict")),
    "amin-multi": (FutureMemoryPolicy, ("overflow", "raise_on_evict")),
    "a-l": (FutureMemoryPolicy, ("order", "promote", "overflow")),
    "mcsf-margin": (FutureMemoryPolicy, ("margin",)),
    "fcfs": (GreedyPolicy, ()),
    "sjf": (GreedyPolicy, ("order",)),
    "edf": (GreedyPolicy, ("order",)),
    "gmax": (GmaxPolicy, ()),
    "alpha-protection": (GreedyPolicy, ("alpha", "overflow")),
    "alpha-beta-clearing": (GreedyPolicy, ("alpha", "overflow", "beta")),
    "replay": (None, ()),
}


def _keywords(fn: Callable[..., Any]) -> tuple[dict[str, Any], bool]:
    """Keyword-only parameters of ``fn`` with defaults, and whether it takes ``**kwargs``."""
    params = inspect.signature(fn).parameters.values()
    kw = {p.name: p.default for p in params if p.kind is p.KEYWORD_ONLY}
    return kw, any(p.kind is p.VAR_KEYWORD for p in params)


def declare_policy_options(name: str, target: Callable[..., Policy],
                           fixed: tuple[str, ...] = ()) -> None:
    """Say where policy ``name``'s factory forwards its ``**options`` (``target``, a policy
    class or function) and which of ``target``'s keywords it sets itself, so that
    :func:`policy_options` (and the CLI's checks) see through the ``**kwargs``.

    Examples
    --------
    >>> from kvopt.sim.policies.greedy import GreedyPolicy
    >>> def half_memory(inst, predictions, **options):
    ...     return GreedyPolicy("half-memory", alpha=0.5, **options)
    >>> register_policy("half-memory", half_memory)
    >>> policy_options("half-memory") is None          # hidden behind **options
    True
    >>> declare_policy_options("half-memory", GreedyPolicy, fixed=("alpha",))
    >>> sorted(policy_options("half-memory"))
    ['beta', 'order', 'overflow', 'stall']
    >>> del POLICIES["half-memory"], _FORWARDS["half-memory"]   # leave the registry as it was
    """
    _FORWARDS[name] = (target, tuple(fixed))


def _target_keywords(target: Callable[..., Any]) -> dict[str, Any]:
    """Keyword-only parameters of ``target`` (a class: its ``__init__`` chain through
    ``**kwargs`` up the MRO)."""
    if not isinstance(target, type):
        return _keywords(target)[0]
    out: dict[str, Any] = {}
    for klass in target.__mro__:
        if "__init__" not in vars(klass) or klass is object:
            continue
        kw, var = _keywords(vars(klass)["__init__"])
        out = {**kw, **out}
        if not var:
            break
    return out


def policy_options(name: str) -> dict[str, Any] | None:
    """The options policy ``name`` accepts (``simulate(..., **options)``), with defaults.

    ``None`` for a policy registered with a factory taking ``**kwargs`` that kvopt cannot
    see through (every option is then passed on unchecked).

    Examples
    --------
    >>> sorted(policy_options("alpha-protection"))
    ['alpha', 'beta', 'order', 'stall']
    >>> policy_options("amin")["lower"] is None
    True
    """
    if name not in POLICIES:
        raise UsageError("policy", f"unknown policy {name!r}; choose from {sorted(POLICIES)}")
    factory = POLICIES[name]
    own, var = _keywords(factory)
    if not var:
        return own
    if name not in _FORWARDS or _FORWARDS[name][0] is None:
        return None if name not in _FORWARDS else own
    target, fixed = _FORWARDS[name]
    assert target is not None
    forwarded = _target_keywords(target)
    return {**{k: v for k, v in forwarded.items() if k not in fixed}, **own}


@dataclass(frozen=True)
class PolicyInfo:
    """What callers need to know about a policy before running it.

    Attributes
    ----------
    randomized
        Its schedule depends on the seed (random tie-breaks or random clearing), so a
        measurement averages over seeds.
    may_livelock
        It can loop forever on some instances (the engine then raises
        :class:`~kvopt.sim.engine.LivelockError`; seed 001 Sec. 5.2).
    needs
        Predictions it cannot run without: ``"interval-upper"`` (``pred_upper``), or ``None``.
    offline
        Uses hindsight knowledge of the true lengths (a benchmark, not an online policy).
    modes
        Preemption modes it supports (:mod:`kvopt.core.schedule`); the first is its default.
        Every policy defaults to ``"restart"`` (the seed convention of the papers it comes
        from) except ``vllm`` (``"recompute"``, vLLM's default). The future-memory family
        (MC-SF, Amax, Amin, ...) and GMAX are restart-only: their admission checks and
        goodput estimates model a run from its prompt.

    Examples
    --------
    >>> info = policy_info("alpha-beta-clearing")
    >>> info.randomized, info.may_livelock, info.modes
    (True, True, ('restart', 'recompute', 'swap'))
    >>> policy_info("hsf").offline, policy_info("amax").needs
    (True, 'interval-upper')
    """

    randomized: bool = False
    may_livelock: bool = False
    needs: str | None = None
    offline: bool = False
    modes: tuple[PreemptionMode, ...] = ("restart",)


#: Every preemption mode, the seed convention first.
ALL_MODES = PREEMPTION_MODES


#: Metadata of the registered policies (a name missing here has the defaults).
POLICY_INFO: dict[str, PolicyInfo] = {
    "hsf": PolicyInfo(offline=True),
    "mc-benchmark": PolicyInfo(),
    "amax": PolicyInfo(randomized=True, needs="interval-upper"),
    "amin": PolicyInfo(randomized=True),
    "amin-multi": PolicyInfo(randomized=True),
    "fcfs": PolicyInfo(modes=ALL_MODES),
    "sjf": PolicyInfo(modes=ALL_MODES),
    "edf": PolicyInfo(modes=ALL_MODES),
    "alpha-protection": PolicyInfo(may_livelock=True, modes=ALL_MODES),
    "alpha-beta-clearing": PolicyInfo(randomized=True, may_livelock=True, modes=ALL_MODES),
    "replay": PolicyInfo(offline=True, modes=ALL_MODES),
}


def policy_info(name: str) -> PolicyInfo:
    """Metadata of policy ``name`` (:class:`PolicyInfo`).

    Examples
    --------
    >>> policy_info("amax").randomized, policy_info("alpha-protection").may_livelock
    (True, True)
    >>> policy_info("mcsf")
    PolicyInfo(randomized=False, may_livelock=False, needs=None, offline=False, \
modes=('restart',))
    """
    if name not in POLICIES:
        raise UsageError("policy", f"unknown policy {name!r}; choose from {sorted(POLICIES)}")
    return POLICY_INFO.get(name, PolicyInfo())


def register_policy(name: str, factory: Callable[..., Policy],
                    info: PolicyInfo | None = None) -> None:
    """Add a policy factory ``(instance, predictions, **options) -> policy`` to the registry,
    with its metadata.

    Examples
    --------
    >>> from kvopt import Instance
    >>> from kvopt.sim import simulate
    >>> from kvopt.sim.policies.greedy import GreedyPolicy
    >>> def half_memory(inst, predictions, **options):   # FCFS within half of M
    ...     return GreedyPolicy("half-memory", alpha=0.5, **options)
    >>> register_policy("half-memory", half_memory, PolicyInfo(modes=ALL_MODES))
    >>> tight = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> simulate(tight, "half-memory").schedule.final_start(tight).tolist()
    [0, 3]
    >>> policy_info("half-memory").modes
    ('restart', 'recompute', 'swap')
    >>> del POLICIES["half-memory"], POLICY_INFO["half-memory"]  # leave the registry as it was
    """
    POLICIES[name] = factory
    if info is not None:
        POLICY_INFO[name] = info
