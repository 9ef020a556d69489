"""Output-length predictions for the policies: from the instance or from a noise model.

- point predictions (MC-SF): the instance's ``pred_point`` or seed 001's multiplicative
  uniform noise ``o_hat ~ U((1-eps) o, (1+eps) o)``, rounded to the nearest integer >= 1 and
  drawn once per request (notes/seed-001 §3.4, A17);
- interval predictions (Amax/Amin): the instance's ``pred_lower/pred_upper``, seed 000's
  Exp. 3 widths ``[max(1, floor((1-x) o)), ceil((1+x) o)]`` or its Exp. 2 buckets
  ``[100 k + 1, 100 (k+1)]`` (notes/seed-000 §4, §6.16d).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.predictions.predictors import LogTPredictor, lognormal_point, noisy_point

__all__ = ["LENGTH_SOURCES", "NOISE_FIELDS", "Predictions", "buckets", "check_noise",
           "describe_lengths", "interval_width", "length_source", "noisy_point",
           "resolve_predictions"]


@dataclass(frozen=True)
class Predictions:
    """Per-request predictions (``None`` = not available). Integer arrays, values >= 1.

    Examples
    --------
    >>> inst = Instance(memory=20, arrival=[0, 0, 0], prompt=[1, 1, 1], output=[6, 3, 4])
    >>> p = resolve_predictions(inst, {"kind": "uniform", "eps": 0.5}, np.random.default_rng(0))
    >>> p.label, p.point.tolist(), p.upper is None        # noisy point predictions only
    ('uniform(eps=0.5)', [7, 2, 2], True)
    >>> from kvopt.sim import simulate
    >>> own = Predictions(lower=np.array([4, 2, 3]), upper=np.array([8, 4, 5]), label="mine")
    >>> simulate(inst, "amax", predictions=own).stats["lengths"]
    'mine interval predictions'
    """

    point: NDArray[np.int64] | None = None
    lower: NDArray[np.int64] | None = None
    upper: NDArray[np.int64] | None = None
    label: str = "instance"
    mu: NDArray[np.float64] | None = None
    sigma: NDArray[np.float64] | None = None


def interval_width(output: ArrayLike, x: float) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Seed 000 Exp. 3 intervals ``[max(1, floor((1-x) o)), ceil((1+x) o)]``.

    Examples
    --------
    >>> [a.tolist() for a in interval_width([10, 3], 0.5)]
    [[5, 1], [15, 5]]
    """
    o = np.asarray(output, dtype=np.float64)
    lo = np.maximum(np.floor((1 - x) * o), 1).astype(np.int64)
    hi = np.ceil((1 + x) * o - 1e-9).astype(np.int64)
    return lo, np.maximum(hi, lo)


def buckets(output: ArrayLike, width: int = 100) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Seed 000 Exp. 2 non-overlapping classes ``[width k + 1, width (k+1)]`` containing ``o``.

    Examples
    --------
    >>> [a.tolist() for a in buckets([1, 100, 101, 250])]
    [[1, 1, 101, 201], [100, 100, 200, 300]]
    """
    o = np.asarray(output, dtype=np.int64)
    k = (o - 1) // width
    return k * width + 1, (k + 1) * width


def resolve_predictions(instance: Instance, spec: Any, rng: np.random.Generator) -> Predictions:
    """Turn ``simulate(predictions=...)`` into :class:`Predictions`.

    ``spec`` may be ``None`` (the instance's own predictions), ``"exact"`` (``o`` for all),
    an array (point predictions), a :class:`Predictions`, or a dict naming a noise model:
    ``{"kind": "uniform", "eps": 0.5}``, ``{"kind": "interval", "x": 0.5}``,
    ``{"kind": "buckets", "width": 100}``, ``{"kind": "lognormal", "sigma": 0.5}`` (point),
    ``{"kind": "logt", "scale": 0.5, "nu": 3.5}`` (distributional ``mu``/``sigma`` for TIE,
    :meth:`kvopt.predictions.LogTPredictor.from_lengths`, with the median as point).

    Examples
    --------
    >>> inst = Instance(memory=50, arrival=[0], prompt=[1], output=[10])
    >>> resolve_predictions(inst, {"kind": "interval", "x": 0.5}, np.random.default_rng()).upper
    array([15])
    """
    o = instance.output
    if spec is None:
        point = None
        if instance.pred_point is not None:
            point = np.maximum(np.rint(instance.pred_point), 1).astype(np.int64)
        return Predictions(point, instance.pred_lower, instance.pred_upper, "instance")
    if isinstance(spec, Predictions):
        return spec
    if isinstance(spec, str):
        if spec == "exact":
            return Predictions(o.copy(), o.copy(), o.copy(), "exact")
        raise UsageError("predictions", f"unknown predictions {spec!r}")
    if isinstance(spec, dict):
        kind = spec.get("kind", "uniform")
        if kind == "uniform":
            eps = float(spec.get("eps", 0.5))
            return Predictions(noisy_point(o, eps, rng), instance.pred_lower, instance.pred_upper,
                               f"uniform(eps={eps})")
        if kind == "interval":
            lo, hi = interval_width(o, float(spec.get("x", 0.5)))
            return Predictions(None, lo, hi, f"interval(x={spec.get('x', 0.5)})")
        if kind == "logt":  # distributional (TIE): calibrated log-t around the true length
            pred = LogTPredictor(nu=float(spec.get("nu", 3.5)),
                                 trace_scale=float(spec.get("scale", 0.5)))
            mu, sg = pred.from_lengths(o, rng)
            return Predictions(np.maximum(np.rint(np.exp(mu)), 1).astype(np.int64), None, None,
                               f"logt(scale={pred.trace_scale:g},nu={pred.nu:g})", mu, sg)
        if kind == "lognormal":  # point: o exp(sigma N(0, 1))
            sig = float(spec.get("sigma", 0.5))
            return Predictions(lognormal_point(o, sig, rng), None, None,
                               f"lognormal(sigma={sig:g})")
        if kind == "buckets":
            lo, hi = buckets(o, int(spec.get("width", 100)))
            return Predictions(None, lo, hi, f"buckets(width={spec.get('width', 100)})")
        raise UsageError("predictions", f"unknown prediction noise kind {kind!r}")
    arr = np.asarray(spec)
    if arr.shape != (instance.n,):
        raise UsageError("predictions", f"point predictions need shape ({instance.n},), got "
                                        f"{arr.shape}")
    return Predictions(np.maximum(np.rint(arr), 1).astype(np.int64), None, None, "array")


#: What each registered policy knows of the output lengths: the :class:`Predictions` fields it
#: reads when they are there, and what it uses without them: ``"true"`` (the true lengths: an
#: oracle), ``"none"`` (no lengths at all), ``"own"`` (TRAIL: its own refined predictor, from
#: the true lengths with its noise), ``"one"`` (Amin: lower bound 1), ``"required"`` (it
#: refuses to run). Every policy of ``kvopt.sim.POLICIES`` has an entry (a test checks).
LENGTH_SOURCES: dict[str, tuple[tuple[str, ...], str]] = {
    "mcsf": (("point",), "true"), "mcsf-margin": (("point",), "true"),
    "mc-benchmark": ((), "true"), "hsf": ((), "true"), "amax": (("upper",), "required"),
    "amin": (("lower",), "one"), "amin-multi": ((), "true"), "a-l": (("lower", "upper"), "true"),
    "fcfs": ((), "none"), "sjf": ((), "true"), "edf": ((), "none"), "gmax": (("point",), "true"),
    "alpha-protection": ((), "none"), "alpha-beta-clearing": ((), "none"),
    "replay": ((), "none"), "trail": ((), "own"), "sprpt": (("point",), "true"),
    "srpt": ((), "true"), "spjf": (("point",), "true"), "ssjf": (("point",), "true"),
    "tie": (("mu", "sigma", "point"), "true"),
    "vllm": ((), "none"), "gsa": ((), "none"), "gba": ((), "true"), "wait": ((), "true"),
    "nested-wait": ((), "true"),
}

#: The :class:`Predictions` fields each noise model of :func:`resolve_predictions` draws.
NOISE_FIELDS: dict[str, tuple[str, ...]] = {
    "uniform": ("point",), "lognormal": ("point",), "logt": ("point", "mu", "sigma"),
    "interval": ("lower", "upper"), "buckets": ("lower", "upper")}

_WITHOUT = {"true": "the true output lengths (an oracle)", "none": "no output lengths",
            "own": "its own refined predictions (from the true lengths, with its noise)",
            "one": "no predictions (lower bound 1)", "required": "nothing (it needs them)"}


def length_source(policy: str, options: dict[str, Any]) -> tuple[tuple[str, ...], str] | None:
    """``(fields read, without them)`` of :data:`LENGTH_SOURCES` for ``policy`` with its
    ``options`` (``None`` for a policy not in the table).

    Examples
    --------
    >>> length_source("trail", {}), length_source("trail", {"refine": False})
    (((), 'own'), (('point',), 'true'))
    """
    if policy not in LENGTH_SOURCES:
        return None
    reads, without = LENGTH_SOURCES[policy]
    if policy == "mc-benchmark" and options.get("use_predictions"):
        reads = ("point",)
    if policy == "trail" and options.get("refine") is False:
        reads, without = ("point",), "true"
    return reads, without


def describe_lengths(policy: str, options: dict[str, Any], preds: Predictions) -> str | None:
    """What ``policy`` used for the output lengths, in words (``None`` if unknown).

    Examples
    --------
    >>> describe_lengths("ssjf", {}, Predictions())
    'the true output lengths (an oracle)'
    >>> describe_lengths("ssjf", {}, Predictions(point=np.array([3]), label="uniform(eps=0.5)"))
    'uniform(eps=0.5) point predictions'
    """
    src = length_source(policy, options)
    if src is None:
        return None
    reads, without = src
    given = [f for f in reads if getattr(preds, f) is not None]
    if not given:
        return _WITHOUT[without]
    kinds = "/".join(dict.fromkeys({"mu": "distributional", "sigma": "distributional",
                                    "lower": "interval", "upper": "interval"}.get(f, f)
                                   for f in given))
    return f"{preds.label} {kinds} predictions"


def check_noise(policy: str, options: dict[str, Any], kind: str) -> None:
    """Refuse a noise model that ``policy`` would not read (the noise would silently not
    apply), naming ``noise``.

    Examples
    --------
    >>> check_noise("mcsf", {}, "uniform")
    >>> check_noise("trail", {}, "uniform")
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid noise: trail does not read uniform predictions \
(point); it uses its own refined predictions (from the true lengths, with its noise) \
(refine=false: point predictions)
    """
    src = length_source(policy, options)
    if src is None or kind not in NOISE_FIELDS:
        return
    reads, without = src
    if set(reads) & set(NOISE_FIELDS[kind]):
        return
    uses = f"{'/'.join(reads)} predictions" if reads else _WITHOUT[without]
    hint = (" (refine=false: point predictions)" if policy == "trail" else
            " (use_predictions=true: point predictions)" if policy == "mc-benchmark" else "")
    raise UsageError("noise", f"{policy} does not read {kind} predictions "
                     f"({'/'.join(NOISE_FIELDS[kind])}); it uses {uses}{hint}")
