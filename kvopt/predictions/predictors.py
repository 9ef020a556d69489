"""Predictors of output length and their noise models (used by :mod:`kvopt.sim` policies).

Three kinds, matching the seeds:

- **point** (SSJF / MC-SF): one number per request, drawn once --
  :func:`noisy_point` (seed 001's uniform multiplicative noise) and :func:`lognormal_point`;
- **refined** (TRAIL, seed 004): :class:`RefinedPredictor` re-predicts the *remaining* length
  every ``every`` generated tokens; its error shrinks as the request progresses and its output
  is the midpoint of one of ``bins`` equal-width bins over ``[0, max_len]``, like TRAIL's
  10-bin probe over 0-512 tokens;
- **distributional** (TIE, seed 002): :class:`LogTPredictor` gives per-request log-t
  parameters ``(mu_hat, sigma_hat)`` (``nu`` fixed), either as noisy copies of a workload's
  true per-prompt parameters or, for a trace without prompts, a calibrated posterior built
  from the true length.

Error model of :class:`RefinedPredictor` (a modelling choice; the paper gives the probe's MAE
only in a figure): at a refresh with ``a`` tokens generated and ``R = o - a`` left, the raw
estimate is ``R exp(sigma_a Z)`` with ``sigma_a = sigma0 (1 - a / o)`` and
``Z = sqrt(rho) B_i + sqrt(1 - rho) E_{i,j}`` (``B_i`` a persistent per-request error, the
prompt being systematically hard; ``E_{i,j}`` fresh per refresh ``j``, all standard normal).
The log-error thus shrinks linearly to 0 at completion (the embedding "sees" the answer
being written), is multiplicative (errors scale with length, as bins of equal width make
them for the probe) and is partly persistent (successive probe outputs are correlated
through the Bayesian filter). The estimate is then binned. Noise values are a hash of
``(seed, request, refresh)``, so a prediction does not depend on when it is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from kvopt.core.errors import UsageError

__all__ = [
    "LogTPredictor",
    "PredictionCost",
    "RefinedPredictor",
    "RefreshCache",
    "hash_normal",
    "lognormal_point",
    "noisy_point",
]

Float = NDArray[np.float64]
# the hash's constants, made once (a numpy scalar built per call costs as much as an add)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MUL1 = np.uint64(0xBF58476D1CE4E5B9)
_MUL2 = np.uint64(0x94D049BB133111EB)
_SEED_MUL = np.uint64(0x100000001B3)
_J_MUL = np.uint64(0xD6E8FEB86659FD93)
_S11, _S27, _S30, _S31 = np.uint64(11), np.uint64(27), np.uint64(30), np.uint64(31)


def _mix_inplace(z: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """SplitMix64's finaliser of ``z + golden`` (wrapping uint64 arithmetic), overwriting ``z``
    (a fresh array) instead of making a temporary per operation; the caller holds
    ``np.errstate(over="ignore")``."""
    z += _GOLDEN
    z ^= z >> _S30
    z *= _MUL1
    z ^= z >> _S27
    z *= _MUL2
    z ^= z >> _S31
    return z


def hash_normal(seed: int, i: ArrayLike, j: ArrayLike) -> Float:
    """Standard normal values that are a deterministic function of ``(seed, i, j)``.

    Computed as ``ndtri(u)`` of ``u = (h >> 11 + 1/2) / 2^53``, ``h`` the SplitMix64 hash
    ``mix(mix(seed * F + mix(i)) ^ (j + 2) * J)``; ``i`` and ``j`` broadcast.

    Examples
    --------
    >>> a = hash_normal(1, [0, 1, 2], [5, 5, 5])
    >>> bool(np.array_equal(a, hash_normal(1, [0, 1, 2], [5, 5, 5]))), a.shape
    (True, (3,))
    """
    ii = np.asarray(i, dtype=np.int64).astype(np.uint64)
    jj = (np.asarray(j, dtype=np.int64) + 2).astype(np.uint64)
    with np.errstate(over="ignore"):
        h = _mix_inplace(ii)  # ii is a fresh array (astype copies)
        h += np.uint64(seed & 0xFFFFFFFF) * _SEED_MUL
        h = _mix_inplace(h)
        h = h ^ (jj * _J_MUL)  # (not in place: j may broadcast i to a larger shape)
        h = _mix_inplace(h)
    u = ((h >> _S11).astype(np.float64) + 0.5) / float(1 << 53)
    from scipy import special  # on first use: importing the simulator loads no scipy

    return special.ndtri(u)


def noisy_point(output: ArrayLike, eps: float, rng: np.random.Generator) -> NDArray[np.int64]:
    """Seed 001 noise: ``round(U((1-eps) o, (1+eps) o))``, at least 1.

    Examples
    --------
    >>> p = noisy_point([100, 100], 0.2, np.random.default_rng(0))
    >>> bool(((p >= 80) & (p <= 120)).all())
    True
    """
    o = np.asarray(output, dtype=np.float64)
    x = rng.uniform((1 - eps) * o, (1 + eps) * o)
    return np.maximum(np.rint(x), 1).astype(np.int64)


def lognormal_point(output: ArrayLike, sigma: float, rng: np.random.Generator
                    ) -> NDArray[np.int64]:
    """Multiplicative log-normal noise ``round(o exp(sigma N(0,1)))``, at least 1.

    Examples
    --------
    >>> lognormal_point([10, 20], 0.0, np.random.default_rng(0)).tolist()
    [10, 20]
    """
    o = np.asarray(output, dtype=np.float64)
    x = o * np.exp(sigma * rng.standard_normal(o.shape))
    return np.maximum(np.rint(x), 1).astype(np.int64)


@dataclass(frozen=True)
class RefinedPredictor:
    """TRAIL-like refined predictions of the remaining length (error model: module docstring).

    Parameters
    ----------
    sigma0
        Log-scale error of the prediction at age 0 (the prompt-only prediction).
    rho
        Share of the error variance that is persistent per request.
    every
        Re-predict every ``every`` generated tokens (TRAIL: 1).
    bins, max_len
        Output is the midpoint of the bin of width ``max_len / bins`` holding the estimate
        (estimates above ``max_len`` get the last bin); ``bins=0`` gives the raw estimate.
    seed
        Seed of the noise hash.

    Examples
    --------
    >>> p = RefinedPredictor(sigma0=0.0, bins=10, max_len=512)
    >>> p.remaining(np.array([0, 1]), np.array([100, 600]), np.array([0, 0])).tolist()
    [76.8, 486.4]
    >>> RefinedPredictor(sigma0=0.0, bins=0).remaining([0], [100], [40]).tolist()
    [60.0]
    """

    sigma0: float = 0.5
    rho: float = 0.5
    every: int = 1
    bins: int = 10
    max_len: float = 512.0
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.sigma0 >= 0:
            raise UsageError("sigma0", f"must be >= 0, got {self.sigma0}")
        if not 0 <= self.rho <= 1:
            raise UsageError("rho", f"must be in [0, 1], got {self.rho}")
        if int(self.every) < 1:
            raise UsageError("every", f"must be >= 1, got {self.every}")
        if int(self.bins) < 0 or not self.max_len > 0:
            raise UsageError("bins", "bins must be >= 0 and max_len > 0")

    def refresh_age(self, age: ArrayLike) -> NDArray[np.int64]:
        """Age at the latest refresh: ``every * floor(age / every)``."""
        k = int(self.every)
        return (np.asarray(age, dtype=np.int64) // k) * k

    def persistent(self, ids: ArrayLike) -> Float:
        """The persistent per-request errors ``B_i`` (standard normal) of ``ids``.

        Examples
        --------
        >>> p = RefinedPredictor(seed=3)
        >>> bool(np.array_equal(p.persistent([4, 9]), hash_normal(3, [4, 9], [-1, -1])))
        True
        """
        ids = np.asarray(ids, dtype=np.int64)
        return hash_normal(self.seed, ids, np.full(ids.shape, -1))

    def estimate(self, ids: ArrayLike, output: ArrayLike, age: ArrayLike,
                 persistent: Float | None = None) -> Float:
        """The prediction made at age ``age`` (a refresh point) of the remaining length.

        ``persistent``, when given, is :meth:`persistent` of ``ids`` (computed once by a
        caller that asks for the same requests again, :class:`RefreshCache`)."""
        ids = np.asarray(ids, dtype=np.int64)
        o = np.asarray(output, dtype=np.float64)
        a = np.asarray(age, dtype=np.float64)
        rem = np.maximum(o - a, 0.0)
        if self.sigma0 > 0:
            j = np.asarray(age, dtype=np.int64) // int(self.every)
            b = self.persistent(ids) if persistent is None else persistent
            z = (np.sqrt(self.rho) * b + np.sqrt(1 - self.rho) * hash_normal(self.seed, ids, j))
            sig = self.sigma0 * np.clip(1.0 - a / np.maximum(o, 1.0), 0.0, 1.0)
            rem = rem * np.exp(sig * z)
        if self.bins:
            w = self.max_len / self.bins
            b = np.minimum(np.floor(rem / w), self.bins - 1)
            rem = self.max_len * (2 * b + 1) / (2 * self.bins)
        return rem

    def remaining(self, ids: ArrayLike, output: ArrayLike, age: ArrayLike) -> Float:
        """Predicted remaining length at ``age``: the latest refresh's estimate minus the
        tokens generated since (not below 0)."""
        a = np.asarray(age, dtype=np.int64)
        ra = self.refresh_age(a)
        return np.maximum(self.estimate(ids, output, ra) - (a - ra), 0.0)

    def initial(self, ids: ArrayLike, output: ArrayLike) -> Float:
        """Prediction at age 0 (TRAIL's ``r``, the midpoint of the predicted bin)."""
        ids = np.asarray(ids, dtype=np.int64)
        return self.estimate(ids, output, np.zeros(ids.shape, dtype=np.int64))

    def label(self) -> str:
        """Short description."""
        return (f"refined(sigma0={self.sigma0:g},rho={self.rho:g},every={self.every},"
                f"bins={self.bins},max_len={self.max_len:g})")


class RefreshCache:
    """A :class:`RefinedPredictor`'s estimates at the next refreshes of each request, kept in
    per-request arrays.

    A prediction changes only at a refresh (every ``every`` tokens); between refreshes
    :meth:`RefinedPredictor.remaining` counts the estimate down. A simulation asks for the
    remaining lengths of the running requests at every decision, and at almost every one some
    running request has reached a new refresh. :meth:`remaining` therefore computes, for a
    request whose refresh is not in the table, the estimates of its next ``ahead`` refreshes
    in one vectorized call (and the persistent errors once per request), so that a request
    costs one call per ``ahead`` refreshes instead of one per decision. Its values equal
    :meth:`RefinedPredictor.remaining`'s bit for bit (an estimate is a function of the
    request, its output and the refresh age only).

    Parameters
    ----------
    predictor
        The predictor.
    output
        True output length of every request (indexed by request id).
    ahead
        Refreshes computed per request at a time (the table holds ``n * ahead`` floats;
        default: 256, fewer for more than 2^13 requests, so that the table holds at most 2^21
        floats, 16 MB; at least 1). A call for one request costs about as much for 256
        refreshes as for 32, so a longer table means fewer calls.

    Examples
    --------
    >>> p = RefinedPredictor(sigma0=0.5, every=4, bins=0, seed=1)
    >>> o = np.array([40, 90, 7])
    >>> c = RefreshCache(p, o)
    >>> ids, age = np.array([0, 2]), np.array([5, 6])
    >>> bool(np.array_equal(c.remaining(ids, age), p.remaining(ids, o[ids], age)))
    True
    """

    def __init__(self, predictor: RefinedPredictor, output: ArrayLike,
                 ahead: int | None = None) -> None:
        self.predictor = predictor
        self.output = np.asarray(output)
        n = self.output.shape[0]
        self.every = int(predictor.every)
        self.ahead = (max(1, min(256, (1 << 21) // max(n, 1))) if ahead is None
                      else int(ahead))
        if self.ahead < 1:
            raise UsageError("ahead", f"must be >= 1, got {ahead}")
        # refresh index (age // every) of each row's first column; far below 0 = no row yet
        self.first = np.full(n, np.iinfo(np.int64).min // 2, dtype=np.int64)
        self.table = np.zeros((n, self.ahead), dtype=np.float64)
        self.persist = (predictor.persistent(np.arange(n)) if predictor.sigma0 > 0
                        else None)
        self.steps = np.arange(self.ahead, dtype=np.int64)

    def remaining(self, ids: NDArray[np.int64], age: NDArray[np.int64]) -> Float:
        """``predictor.remaining(ids, output[ids], age)`` for distinct ``ids``."""
        a = np.asarray(age, dtype=np.int64)
        j = a // self.every  # the latest refresh's index; its age is j * every
        col = j - self.first[ids]
        stale = (col < 0) | (col >= self.ahead)
        if stale.any():
            sid, js = ids[stale], j[stale]
            grid = js[:, None] + self.steps  # refresh indices j .. j + ahead - 1
            rows = np.repeat(sid, self.ahead)
            est = self.predictor.estimate(
                rows, self.output[rows], grid.reshape(-1) * self.every,
                persistent=None if self.persist is None else self.persist[rows])
            self.table[sid] = est.reshape(sid.shape[0], self.ahead)
            self.first[sid] = js
        return self.tabled(ids, a)

    def reach(self, ids: NDArray[np.int64]) -> NDArray[np.int64]:
        """The first age of each request whose refresh is past its table row (``ages <
        reach`` can be read with :meth:`tabled`)."""
        return (self.first[ids] + self.ahead) * self.every

    def tabled(self, ids: NDArray[np.int64], age: NDArray[np.int64]) -> Float:
        """:meth:`remaining` read from the table alone, for ages whose refresh the table
        holds (below :meth:`reach`, at or after the row's first refresh); ``ids`` and ``age``
        broadcast (one row of requests against several rows of ages, say), and nothing is
        refilled.

        Examples
        --------
        >>> p = RefinedPredictor(sigma0=0.5, every=4, bins=0, seed=1)
        >>> c = RefreshCache(p, np.array([40, 90]))
        >>> ids = np.array([0, 1])
        >>> now = c.remaining(ids, np.array([5, 6]))
        >>> ahead = c.tabled(ids[None, :], np.array([[5, 6], [6, 7]]))
        >>> bool(np.array_equal(ahead[0], now)), ahead.shape
        (True, (2, 2))
        """
        a = np.asarray(age, dtype=np.int64)
        j = a // self.every  # the latest refresh's index; its age is j * every
        return np.maximum(self.table[ids, j - self.first[ids]] - (a - j * self.every), 0.0)


@dataclass(frozen=True)
class LogTPredictor:
    """Distributional predictions ``(mu_hat, sigma_hat)`` of a log-t with fixed ``nu``.

    Parameters
    ----------
    nu
        Degrees of freedom the predictor assumes (TIE: 3.5).
    mu_noise
        Standard deviation of the error of ``mu_hat`` (TIE reports R^2 = 0.82 for mu).
    sigma_noise
        Log-scale error of ``sigma_hat``.
    trace_scale
        For :meth:`from_lengths`: the predictor's spread on a trace without prompts.

    Examples
    --------
    >>> p = LogTPredictor(mu_noise=0.0, sigma_noise=0.0)
    >>> mu, s = p.predict(np.array([5.0]), np.array([0.6]), np.random.default_rng(0))
    >>> (mu.tolist(), s.tolist())
    ([5.0], [0.6])
    """

    nu: float = 3.5
    mu_noise: float = 0.3
    sigma_noise: float = 0.2
    trace_scale: float = 0.5

    def __post_init__(self) -> None:
        for name in ("mu_noise", "sigma_noise"):
            if not getattr(self, name) >= 0:
                raise UsageError(name, "must be >= 0")
        if not (self.nu > 0 and self.trace_scale > 0):
            raise UsageError("nu", "nu and trace_scale must be > 0")

    def predict(self, mu: ArrayLike, sigma: ArrayLike, rng: np.random.Generator
                ) -> tuple[Float, Float]:
        """Noisy copies of the true per-request parameters."""
        mu = np.asarray(mu, dtype=np.float64)
        sigma = np.asarray(sigma, dtype=np.float64)
        e1 = rng.standard_normal(mu.shape)
        e2 = rng.standard_normal(mu.shape)
        return mu + self.mu_noise * e1, sigma * np.exp(self.sigma_noise * e2)

    def from_lengths(self, output: ArrayLike, rng: np.random.Generator) -> tuple[Float, Float]:
        """For a trace (no prompt, one length per request): ``mu_hat = ln o - s T``,
        ``T ~ t_nu``, ``sigma_hat = s`` (``s = trace_scale``). Under a flat prior on
        ``ln o`` the length given ``mu_hat`` is then log-t(``mu_hat``, ``s``, ``nu``): the
        prediction is calibrated, with error of scale ``s``."""
        o = np.asarray(output, dtype=np.float64)
        s = self.trace_scale
        mu = np.log(o) - s * rng.standard_t(self.nu, o.shape)
        return mu, np.full(o.shape, s)

    def label(self) -> str:
        """Short description."""
        return f"logt(nu={self.nu:g},mu_noise={self.mu_noise:g},sigma_noise={self.sigma_noise:g})"


@dataclass(frozen=True)
class PredictionCost:
    """Latency of one prediction batch: ``per_batch + per_item * size`` seconds (or slots).

    TRAIL's probe takes 0.43-9.43 us per sample (notes/seed-004-002 §1.2 Table 1); a BERT-
    or DeBERTa-size predictor costs milliseconds per batch.

    Examples
    --------
    >>> PredictionCost(1e-3, 1e-6).seconds(np.array([0, 10])).tolist()
    [0.0, 0.00101]
    """

    per_batch: float = 0.0
    per_item: float = 0.0

    def __post_init__(self) -> None:
        if not (self.per_batch >= 0 and self.per_item >= 0):
            raise UsageError("prediction_cost", "per_batch and per_item must be >= 0")

    def seconds(self, size: Any) -> Any:
        """Cost of batches of ``size`` predictions (0 for an empty batch)."""
        s = np.asarray(size)
        return np.where(s > 0, self.per_batch + self.per_item * s, 0.0)
