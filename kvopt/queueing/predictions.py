"""Prediction models: the prediction of a job of size ``x`` is ``Y = x * Z``.

``Z`` is independent of the size, so the joint density is ``g(x, y) = f(x) q(y / x) / x``
with ``q`` the density of ``Z``.  The three models of the issue are all of this form:

* ``perfect``: ``Z = 1`` (``g(x, y) = f(x) delta(y - x)``);
* ``exp``: ``Z ~ Exp(1)``, i.e. Mitzenmacher's exponential predictions
  ``g(x, y) = f(x) e^(-y/x) / x`` (for Exp(1) sizes ``e^(-x - y/x) / x``);
* ``lognormal:SIGMA``: multiplicative log-normal noise with ``E[Z] = 1``;
* ``unifnoise:EPS``: multiplicative uniform noise ``Z ~ U[1 - EPS, 1 + EPS]``.

Each model gives closed-form partial moments ``E[Z^k 1(lo < Z <= hi)]`` for ``k = 0, 1, 2``
which is what the SOAP formulas need.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from kvopt.core.errors import UsageError

__all__ = [
    "PredictionModel",
    "Perfect",
    "ExpPredictions",
    "LogNormalNoise",
    "UniformNoise",
    "parse_predictions",
]


class PredictionModel:
    """Distribution of the multiplicative factor ``Z`` in ``Y = X Z``.

    Examples
    --------
    A concrete model, ``Z ~ U[0.5, 1.5]``:

    >>> m = parse_predictions("unifnoise:0.5")
    >>> isinstance(m, PredictionModel), m
    (True, UniformNoise('unifnoise:0.5'))
    >>> [round(float(v), 6) for v in m.partials(np.array(0.0), np.array(np.inf))]  # 1, E[Z], E[Z^2]
    [1.0, 1.0, 1.083333]
    >>> round(float(m.cdf(np.array(1.25))), 6)
    0.75
    """

    spec: str = ""
    is_atom: bool = False  # True when Z is a point mass (perfect predictions)

    def pdf(self, z: np.ndarray) -> np.ndarray:
        """Density of ``Z`` (only for continuous models)."""
        raise NotImplementedError

    def cdf(self, z: np.ndarray, inclusive: bool = True) -> np.ndarray:
        """``P(Z <= z)`` (``P(Z < z)`` if not ``inclusive``)."""
        raise NotImplementedError

    def partial(self, k: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """``E[Z^k 1(lo < Z <= hi)]`` (zero when ``hi <= lo``)."""
        raise NotImplementedError

    def partials(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(E[1; A], E[Z; A], E[Z^2; A])`` with ``A = {lo < Z <= hi}``."""
        return self.partial(0, lo, hi), self.partial(1, lo, hi), self.partial(2, lo, hi)

    @property
    def panel_points(self) -> np.ndarray:
        """Quadrature panel end points for ``Z`` (a single point for an atom)."""
        raise NotImplementedError

    def sample(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Predictions for sizes ``x``."""
        return x * self.sample_z(x.size, rng)

    def sample_z(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` draws of ``Z``."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"


@dataclass(frozen=True, repr=False)
class Perfect(PredictionModel):
    """Exact predictions, ``Y = X``.

    Examples
    --------
    >>> float(Perfect().partial(2, np.array(0.5), np.array(1.0)))
    1.0
    """

    spec: str = "perfect"
    is_atom: bool = True

    def cdf(self, z: np.ndarray, inclusive: bool = True) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        return (z >= 1.0 if inclusive else z > 1.0).astype(float)

    def partial(self, k: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        lo, hi = np.asarray(lo, float), np.asarray(hi, float)
        return ((lo < 1.0) & (hi >= 1.0)).astype(float)

    @property
    def panel_points(self) -> np.ndarray:
        return np.array([1.0])

    def sample_z(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.ones(n)


@dataclass(frozen=True, repr=False)
class ExpPredictions(PredictionModel):
    """Exponential predictions with mean equal to the true size (Mitzenmacher 2019).

    Examples
    --------
    >>> m = ExpPredictions()
    >>> float(m.partial(1, np.array(0.0), np.array(np.inf)))
    1.0
    """

    spec: str = "exp"

    def pdf(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        return np.where(z >= 0, np.exp(-np.maximum(z, 0.0)), 0.0)

    def cdf(self, z: np.ndarray, inclusive: bool = True) -> np.ndarray:
        z = np.maximum(np.asarray(z, dtype=float), 0.0)
        return -np.expm1(-z)

    def partial(self, k: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        lo = np.maximum(np.asarray(lo, dtype=float), 0.0)
        hi = np.maximum(np.asarray(hi, dtype=float), lo)
        # upper incomplete gamma: Gamma(k+1, lo) - Gamma(k+1, hi), no cancellation in tails
        return math.factorial(k) * (special.gammaincc(k + 1, lo) - special.gammaincc(k + 1, hi))

    def partials(self, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, ...]:
        lo = np.maximum(np.asarray(lo, dtype=float), 0.0)
        hi = np.maximum(np.asarray(hi, dtype=float), lo)
        ea, eb = np.exp(-lo), np.exp(-hi)
        hf = np.where(np.isfinite(hi), hi, 0.0)
        m0 = ea - eb
        m1 = (1 + lo) * ea - (1 + hf) * eb
        m2 = (lo * lo + 2 * lo + 2) * ea - (hf * hf + 2 * hf + 2) * eb
        return m0, m1, m2

    @property
    def panel_points(self) -> np.ndarray:
        return np.array([0.0, 1 / 64, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1, 2, 3, 4, 6, 8, 12, 16,
                         24, 32, 40, 48])

    def sample_z(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.exponential(1.0, n)


@dataclass(frozen=True, repr=False)
class LogNormalNoise(PredictionModel):
    """Multiplicative log-normal noise ``Z = exp(sigma N - sigma^2 / 2)``, so ``E[Z] = 1``.

    Examples
    --------
    >>> m = LogNormalNoise(0.5)
    >>> round(float(m.partial(1, np.array(0.0), np.array(np.inf))), 12)
    1.0
    """

    sigma: float = 0.5
    spec: str = ""

    def __post_init__(self) -> None:
        if not (self.sigma > 0 and math.isfinite(self.sigma)):
            raise UsageError("predictions", "lognormal sigma must be positive")
        object.__setattr__(self, "spec", f"lognormal:{self.sigma:g}")

    @property
    def _mu(self) -> float:
        return -0.5 * self.sigma**2

    def pdf(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        zs = np.where(z > 0, z, 1.0)
        d = np.exp(-((np.log(zs) - self._mu) ** 2) / (2 * self.sigma**2)) / (
            zs * self.sigma * math.sqrt(2 * math.pi)
        )
        return np.where(z > 0, d, 0.0)

    def cdf(self, z: np.ndarray, inclusive: bool = True) -> np.ndarray:
        return self.partial(0, np.zeros_like(np.asarray(z, float)), z)

    def partial(self, k: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        lo = np.maximum(np.asarray(lo, dtype=float), 0.0)
        hi = np.maximum(np.asarray(hi, dtype=float), lo)
        s, mu = self.sigma, self._mu
        with np.errstate(divide="ignore"):
            a = (np.log(lo) - mu - k * s * s) / s
            b = (np.log(hi) - mu - k * s * s) / s
        # P(a < N <= b) computed on the side with no cancellation
        pr = np.where(a > 0, special.ndtr(-a) - special.ndtr(-b), special.ndtr(b) - special.ndtr(a))
        return math.exp(k * mu + 0.5 * k * k * s * s) * pr

    @property
    def panel_points(self) -> np.ndarray:
        z = np.linspace(-9, 9, 19)
        return np.concatenate([[0.0], np.exp(self._mu + self.sigma * z)])

    def sample_z(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.exp(self._mu + self.sigma * rng.standard_normal(n))


@dataclass(frozen=True, repr=False)
class UniformNoise(PredictionModel):
    """Multiplicative uniform noise ``Z ~ U[1 - eps, 1 + eps]`` with ``0 < eps < 1``.

    Examples
    --------
    >>> round(float(UniformNoise(0.5).partial(2, np.array(0.0), np.array(9.0))), 12)
    1.083333333333
    """

    eps: float = 0.5
    spec: str = ""

    def __post_init__(self) -> None:
        if not (0 < self.eps < 1):
            raise UsageError("predictions", "unifnoise eps must be in (0, 1)")
        object.__setattr__(self, "spec", f"unifnoise:{self.eps:g}")

    def pdf(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        return np.where(np.abs(z - 1) <= self.eps, 0.5 / self.eps, 0.0)

    def cdf(self, z: np.ndarray, inclusive: bool = True) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        return np.clip((z - 1 + self.eps) / (2 * self.eps), 0.0, 1.0)

    def partial(self, k: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        a, b = 1 - self.eps, 1 + self.eps
        lo = np.clip(np.asarray(lo, dtype=float), a, b)
        hi = np.clip(np.asarray(hi, dtype=float), lo, b)
        return (hi ** (k + 1) - lo ** (k + 1)) / ((k + 1) * 2 * self.eps)

    @property
    def panel_points(self) -> np.ndarray:
        return np.linspace(1 - self.eps, 1 + self.eps, 5)

    def sample_z(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(1 - self.eps, 1 + self.eps, n)


def parse_predictions(spec: str | None) -> PredictionModel:
    """Build a prediction model from ``perfect``, ``exp``, ``lognormal:SIGMA`` or ``unifnoise:EPS``.

    Examples
    --------
    >>> parse_predictions("lognormal:0.3").spec
    'lognormal:0.3'
    >>> parse_predictions(None).spec
    'perfect'
    """
    if spec is None or spec.strip().lower() in ("perfect", "none", ""):
        return Perfect()
    kind, _, body = spec.strip().lower().partition(":")
    try:
        if kind in ("exp", "exponential") and body in ("", "1"):
            return ExpPredictions()
        if kind == "lognormal" and body:
            return LogNormalNoise(float(body))
        if kind == "unifnoise" and body:
            return UniformNoise(float(body))
    except ValueError as exc:
        raise UsageError("predictions", exc.reason if isinstance(exc, UsageError) else str(exc)
                         ) from None
    raise UsageError(
        "predictions", f"unknown spec {spec!r}; expected perfect, exp, lognormal:SIGMA "
        "or unifnoise:EPS"
    )
