"""Job-size distributions for M/G/1 analysis and simulation.

Every distribution exposes the same small interface:

* a continuous part (``pdf`` on ``panel_points``) and a list of ``atoms``;
* exact partial moments ``partial_moment(k, x) = E[X^k; X <= x]`` (``inclusive=False`` gives
  ``X < x``), used by the classical oracles in :mod:`kvopt.queueing.classical`;
* ``sample(n, rng)`` with an explicit :class:`numpy.random.Generator`.

Use :func:`parse_sizes` to build one from a command-line spec such as ``"exp:1"``.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from scipy import special

from kvopt.core.errors import UsageError
from kvopt.predictions.distributions import LogT as PredLogT

__all__ = [
    "BoundedPareto",
    "Deterministic",
    "Empirical",
    "Exponential",
    "HyperExponential",
    "LogT",
    "SizeDistribution",
    "Uniform",
    "expect_size",
    "parse_sizes",
]

_EXP_GRID = np.array([0.0, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 40, 48])


class SizeDistribution:
    """Base class: a distribution on ``(0, inf)`` with a continuous part and atoms.

    Examples
    --------
    A concrete subclass, built from a command-line spec:

    >>> d = parse_sizes("exp:2")
    >>> isinstance(d, SizeDistribution), d
    (True, Exponential('exp:2'))
    >>> d.mean, d.moment(2), round(float(d.cdf(2.0)), 6)     # P(X <= 2) = 1 - e^-1
    (2.0, 8.0, 0.632121)
    >>> d.sample(3, np.random.default_rng(0)).round(3).tolist()
    [1.36, 2.039, 0.04]
    """

    spec: str = ""

    # --- continuous part -------------------------------------------------------------
    def pdf(self, x: np.ndarray) -> np.ndarray:
        """Density of the continuous part (zero for purely discrete distributions)."""
        return np.zeros_like(np.asarray(x, dtype=float))

    @property
    def panel_points(self) -> np.ndarray | None:
        """Sorted quadrature panel end points covering the continuous part, or ``None``."""
        return None

    # --- atoms -------------------------------------------------------------------------
    @property
    def atoms(self) -> tuple[np.ndarray, np.ndarray]:
        """``(values, probabilities)`` of the point masses."""
        return np.empty(0), np.empty(0)

    # --- moments -----------------------------------------------------------------------
    def partial_moment(self, k: int, x: np.ndarray | float, inclusive: bool = True) -> np.ndarray:
        """Return ``E[X^k 1(X <= x)]`` (``X < x`` if not ``inclusive``), exactly."""
        raise NotImplementedError

    def moment(self, k: int) -> float:
        """Return ``E[X^k]``."""
        return float(self.partial_moment(k, np.inf))

    @property
    def mean(self) -> float:
        """Mean job size ``E[X]``."""
        return self.moment(1)

    def cdf(self, x: np.ndarray | float) -> np.ndarray:
        """``P(X <= x)``."""
        return self.partial_moment(0, x)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Draw ``n`` i.i.d. sizes using ``rng``."""
        raise NotImplementedError

    @property
    def upper(self) -> float:
        """A point beyond which the remaining mass is negligible (< 1e-18 relative)."""
        pts = self.panel_points
        hi = pts[-1] if pts is not None else 0.0
        av = self.atoms[0]
        return float(max(hi, av.max() if av.size else 0.0))

    @property
    def breakpoints(self) -> np.ndarray:
        """Panel points and atoms: where functions of a rank threshold may kink."""
        pts = self.panel_points
        parts = [self.atoms[0]] + ([pts] if pts is not None else [])
        return np.unique(np.concatenate(parts))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.spec!r})"


def expect_size(
    dist: SizeDistribution, h: Callable[[np.ndarray], np.ndarray],
    kinks: np.ndarray | None = None, n: int = 16, m: int = 1,
) -> np.ndarray:
    """Vector of expectations ``E[h(X)]``, one per row.

    Parameters
    ----------
    dist : SizeDistribution
    h : callable
        ``h(x)`` for ``x`` of shape ``(m, N)``; row ``i`` may use row parameters
        broadcast as ``(m, 1)`` arrays.  Must return shape ``(m, N)``.
    kinks : ndarray, shape (m, k), optional
        Row-dependent points where ``h`` has kinks or jumps (added as panel ends).
    n : int
        Gauss-Legendre nodes per panel.
    m : int
        Number of rows when ``kinks`` is ``None``.

    Examples
    --------
    >>> d = Exponential(2.0)
    >>> round(float(expect_size(d, lambda x: x)[0]), 12)
    2.0
    """
    from kvopt.queueing._quad import panel_nodes

    rows = m if kinks is None else np.atleast_2d(kinks).shape[0]
    total = np.zeros(rows)
    pts = dist.panel_points
    if pts is not None:
        x, w = panel_nodes(pts, kinks, n)
        if x.shape[0] != rows:
            x = np.broadcast_to(x, (rows, x.shape[1]))
            w = np.broadcast_to(w, (rows, w.shape[1]))
        total = total + (w * dist.pdf(x) * h(x)).sum(axis=1)
    av, ap = dist.atoms
    if av.size:
        xa = np.broadcast_to(av, (rows, av.size))
        total = total + (ap * h(xa)).sum(axis=1)
    return total


# ------------------------------------------------------------------------------------------
@dataclass(frozen=True, repr=False)
class Exponential(SizeDistribution):
    """Exponential sizes with the given ``mean``.

    Examples
    --------
    >>> Exponential(1.0).moment(2)
    2.0
    """

    mean_: float = 1.0

    def __post_init__(self) -> None:
        if not (self.mean_ > 0 and math.isfinite(self.mean_)):
            raise UsageError("sizes", "the mean of exp must be positive and finite")
        object.__setattr__(self, "spec", f"exp:{self.mean_:g}")

    def pdf(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.where(x >= 0, np.exp(-x / self.mean_) / self.mean_, 0.0)

    @property
    def panel_points(self) -> np.ndarray | None:
        return _EXP_GRID * self.mean_

    def partial_moment(self, k: int, x: np.ndarray | float, inclusive: bool = True,
                       ) -> np.ndarray:
        x = np.maximum(np.asarray(x, dtype=float), 0.0)
        return self.mean_**k * math.factorial(k) * special.gammainc(k + 1, x / self.mean_)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.exponential(self.mean_, n)


@dataclass(frozen=True, repr=False)
class Deterministic(SizeDistribution):
    """All jobs have size ``value``.

    Examples
    --------
    >>> Deterministic(2.0).moment(2)
    4.0
    """

    value: float = 1.0

    def __post_init__(self) -> None:
        if not (self.value > 0 and math.isfinite(self.value)):
            raise UsageError("sizes", "the value of det must be positive and finite")
        object.__setattr__(self, "spec", f"det:{self.value:g}")

    @property
    def atoms(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array([self.value]), np.array([1.0])

    def partial_moment(self, k: int, x: np.ndarray | float, inclusive: bool = True,
                       ) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        hit = x >= self.value if inclusive else x > self.value
        return np.where(hit, self.value**k, 0.0)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.full(n, self.value)


@dataclass(frozen=True, repr=False)
class Uniform(SizeDistribution):
    """Uniform sizes on ``[lo, hi]``.

    Examples
    --------
    >>> Uniform(0.0, 2.0).mean
    1.0
    """

    lo: float = 0.0
    hi: float = 2.0

    def __post_init__(self) -> None:
        if not (0 <= self.lo < self.hi < math.inf):
            raise UsageError("sizes", "uniform needs 0 <= lo < hi < inf")
        object.__setattr__(self, "spec", f"uniform:{self.lo:g},{self.hi:g}")

    def pdf(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        return np.where((x >= self.lo) & (x <= self.hi), 1.0 / (self.hi - self.lo), 0.0)

    @property
    def panel_points(self) -> np.ndarray | None:
        # graded towards the top, where 1 / (1 - rho(x)) is steepest at high load
        g = 1 - np.concatenate([[1.0, 0.75], 2.0 ** -np.arange(1, 11), [0.0]])
        return self.lo + (self.hi - self.lo) * g

    def partial_moment(self, k: int, x: np.ndarray | float, inclusive: bool = True,
                       ) -> np.ndarray:
        u = np.clip(np.asarray(x, dtype=float), self.lo, self.hi)
        return (u ** (k + 1) - self.lo ** (k + 1)) / ((k + 1) * (self.hi - self.lo))

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.uniform(self.lo, self.hi, n)


@dataclass(frozen=True, repr=False)
class HyperExponential(SizeDistribution):
    """Mixture of exponentials: with probability ``probs[i]`` the size is Exp(mean ``means[i]``).

    Examples
    --------
    >>> h = HyperExponential((0.5, 0.5), (0.5, 1.5))
    >>> h.mean
    1.0
    """

    probs: tuple[float, ...] = (0.5, 0.5)
    means: tuple[float, ...] = (0.5, 1.5)

    def __post_init__(self) -> None:
        p = np.asarray(self.probs, float)
        mu = np.asarray(self.means, float)
        if p.size == 0 or p.size != mu.size:
            raise UsageError("sizes", "hyperexp needs pairs prob,mean")
        if np.any(p <= 0) or abs(p.sum() - 1) > 1e-9:
            raise UsageError("sizes", "hyperexp probabilities must be positive and sum to 1")
        if np.any(mu <= 0) or not np.all(np.isfinite(mu)):
            raise UsageError("sizes", "hyperexp means must be positive and finite")
        spec = ",".join(f"{a:g},{b:g}" for a, b in zip(p, mu, strict=True))
        object.__setattr__(self, "spec", f"hyperexp:{spec}")

    def pdf(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        out = np.zeros_like(x)
        for p, m in zip(self.probs, self.means, strict=True):
            out = out + p * np.exp(-x / m) / m
        return np.where(x >= 0, out, 0.0)

    @property
    def panel_points(self) -> np.ndarray | None:
        return np.unique(np.concatenate([_EXP_GRID * m for m in self.means]))

    def partial_moment(self, k: int, x: np.ndarray | float, inclusive: bool = True,
                       ) -> np.ndarray:
        x = np.maximum(np.asarray(x, dtype=float), 0.0)
        out = 0.0
        for p, m in zip(self.probs, self.means, strict=True):
            out = out + p * m**k * math.factorial(k) * special.gammainc(k + 1, x / m)
        return np.asarray(out)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        comp = rng.choice(len(self.probs), size=n, p=np.asarray(self.probs))
        return rng.exponential(1.0, n) * np.asarray(self.means)[comp]


@dataclass(frozen=True, repr=False)
class BoundedPareto(SizeDistribution):
    """Bounded Pareto with shape ``alpha`` on ``[lo, hi]``: density ``∝ x^(-alpha-1)``.

    Examples
    --------
    >>> round(BoundedPareto(1.5, 1.0, 100.0).cdf(100.0).item(), 12)
    1.0
    """

    alpha: float = 1.5
    lo: float = 1.0
    hi: float = 100.0

    def __post_init__(self) -> None:
        if not (self.alpha > 0 and 0 < self.lo < self.hi < math.inf):
            raise UsageError("sizes", "bpareto needs alpha > 0 and 0 < lo < hi < inf")
        object.__setattr__(self, "spec", f"bpareto:{self.alpha:g},{self.lo:g},{self.hi:g}")

    @property
    def _norm(self) -> float:
        return self.alpha * self.lo**self.alpha / (1 - (self.lo / self.hi) ** self.alpha)

    def pdf(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        inside = (x >= self.lo) & (x <= self.hi)
        return np.where(inside, self._norm * np.where(inside, x, 1.0) ** (-self.alpha - 1), 0.0)

    @property
    def panel_points(self) -> np.ndarray | None:
        k = max(4, int(np.ceil(np.log2(self.hi / self.lo))))
        top = self.hi - (self.hi - self.hi / 2) * 2.0 ** -np.arange(1, 9)
        return np.unique(np.concatenate([np.geomspace(self.lo, self.hi, k + 1), top]))

    def partial_moment(self, k: int, x: np.ndarray | float, inclusive: bool = True,
                       ) -> np.ndarray:
        u = np.clip(np.asarray(x, dtype=float), self.lo, self.hi)
        e = k - self.alpha
        if abs(e) < 1e-12:
            val = np.log(u / self.lo)
        else:
            val = (u**e - self.lo**e) / e
        return self._norm * val

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        u = rng.uniform(size=n)
        a, lo, hi = self.alpha, self.lo, self.hi
        return lo * (1 - u * (1 - (lo / hi) ** a)) ** (-1 / a)


@dataclass(frozen=True, repr=False)
class LogT(SizeDistribution):
    """Log-t sizes ``X = exp(mu + sigma T)``, ``T ~ t_nu``, limited to ``(0, xmax]``.

    ``mode="censor"`` (default) uses ``min(X, xmax)`` -- an atom at ``xmax``, the physical
    effect of a ``max_tokens`` cap; ``mode="truncate"`` conditions on ``X <= xmax``.
    The untruncated distribution has no finite moments, hence the limit is mandatory.
    The distribution itself (density, CDF, quantiles, sampling, the quadrature of partial
    moments) is :class:`kvopt.predictions.LogT`; this class adds the queueing interface
    (panels, atoms, partial moments).

    Examples
    --------
    >>> d = LogT(0.0, 0.5, 20.0)
    >>> bool(abs(d.cdf(20.0).item() - 1) < 1e-12)
    True
    """

    mu: float = 0.0
    sigma: float = 0.5
    xmax: float = 20.0
    nu: float = 3.5
    mode: Literal["censor", "truncate"] = "censor"
    _lo: float = field(default=0.0, init=False)
    _d: Any = field(default=None, init=False)

    def __post_init__(self) -> None:
        if not (self.sigma > 0 and self.nu > 0 and self.xmax > 0):
            raise UsageError("logt", "needs sigma > 0, nu > 0 and xmax > 0")
        if self.mode not in ("censor", "truncate"):
            raise UsageError("mode", "must be 'censor' or 'truncate'")
        d = PredLogT(self.mu, self.sigma, self.nu)
        object.__setattr__(self, "_d", d)
        zmax = float(self._z(self.xmax))
        zlo = min(max(float(d.std_ppf(1e-14)), -12 * math.log(10) / self.sigma), zmax - 1.0)
        object.__setattr__(self, "_lo", float(np.exp(self.mu + self.sigma * zlo)))
        tag = "logt" if self.mode == "censor" else "logtt"
        spec = f"{tag}:{self.mu:g},{self.sigma:g},{self.xmax:g},{self.nu:g}"
        object.__setattr__(self, "spec", spec)

    def _z(self, x: np.ndarray | float) -> np.ndarray:
        return (np.log(x) - self.mu) / self.sigma

    @property
    def _tail(self) -> float:
        return float(self._d.std_sf(self._z(self.xmax)))

    @property
    def _scale(self) -> float:
        return 1.0 if self.mode == "censor" else 1.0 / (1.0 - self._tail)

    def pdf(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        ok = (x >= self._lo) & (x < self.xmax)
        xs = np.where(ok, x, 1.0)
        return np.where(ok, self._d.pdf(xs) * self._scale, 0.0)

    @property
    def panel_points(self) -> np.ndarray | None:
        q = np.concatenate([np.logspace(-14, -1, 14), np.linspace(0.2, 0.8, 4),
                            1 - np.logspace(-1, -14, 14)])
        z = np.clip(self._d.std_ppf(q), self._z(self._lo), self._z(self.xmax))
        x = np.exp(self.mu + self.sigma * z)
        x = x[(x > self._lo) & (x < self.xmax)]
        decades = max(2, int(np.ceil(2 * np.log10(self.xmax / self._lo))))
        geo = np.geomspace(self._lo, self.xmax, decades + 1)
        return np.unique(np.concatenate([geo, x]))

    @property
    def atoms(self) -> tuple[np.ndarray, np.ndarray]:
        # the (tiny) mass below the lower cut-off is lumped at the cut-off
        below = float(self._d.std_cdf(self._z(self._lo))) * self._scale
        if self.mode == "censor":
            return np.array([self._lo, self.xmax]), np.array([below, self._tail])
        return np.array([self._lo]), np.array([below])

    def partial_moment(self, k: int, x: np.ndarray | float, inclusive: bool = True,
                       ) -> np.ndarray:
        x = np.atleast_1d(np.asarray(x, dtype=float))
        out = np.empty_like(x)
        av, ap = self.atoms
        for i, xi in enumerate(x):
            u = min(xi, self.xmax)
            acc = 0.0
            if u > self._lo:
                zs = self._z(np.array([self._lo, u]))
                acc = self._d.partial_expectation_quad(k, float(zs[0]), float(zs[1]))
                acc *= self._scale
            hit = av <= xi if inclusive else av < xi
            out[i] = acc + float((ap * av**k * hit).sum())
        return out if out.size > 1 else out.reshape(np.shape(xi) if x.size == 1 else x.shape)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        if self.mode == "censor":
            return self._d.sample_capped(n, rng, self.xmax, "censor")
        out = np.empty(0)
        while out.size < n:
            z = self._d.sample(2 * n, rng)
            out = np.concatenate([out, z[z <= self.xmax]])
        return out[:n]


@dataclass(frozen=True, repr=False, eq=False)
class Empirical(SizeDistribution):
    """Discrete distribution of the positive ``values`` (e.g. output lengths of a trace).

    Examples
    --------
    >>> Empirical(np.array([1.0, 1.0, 4.0])).mean
    2.0
    """

    values: np.ndarray = field(default_factory=lambda: np.array([1.0]))
    label: str = "array"
    _u: np.ndarray = field(default_factory=lambda: np.zeros(0), init=False)
    _p: np.ndarray = field(default_factory=lambda: np.zeros(0), init=False)

    def __post_init__(self) -> None:
        v = np.asarray(self.values, dtype=float).ravel()
        if v.size == 0 or np.any(~np.isfinite(v)) or np.any(v <= 0):
            raise UsageError("sizes",
                             "empirical values must be finite and positive (and not empty)")
        u, c = np.unique(v, return_counts=True)
        object.__setattr__(self, "values", v)
        object.__setattr__(self, "_u", u)
        object.__setattr__(self, "_p", c / v.size)
        object.__setattr__(self, "spec", f"empirical:{self.label}")

    @property
    def atoms(self) -> tuple[np.ndarray, np.ndarray]:
        return self._u, self._p

    def partial_moment(self, k: int, x: np.ndarray | float, inclusive: bool = True,
                       ) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        hit = self._u <= x[..., None] if inclusive else self._u < x[..., None]
        return (hit * self._p * self._u**k).sum(axis=-1)

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        return rng.choice(self.values, size=n, replace=True)


# ------------------------------------------------------------------------------------------
def _floats(body: str, field_name: str) -> list[float]:
    try:
        return [float(t) for t in body.split(",") if t.strip() != ""]
    except ValueError:
        raise UsageError(field_name, f"cannot parse numbers in {body!r}") from None


def _read_trace(path: str, column: str | None) -> np.ndarray:
    p = Path(path)
    if not p.is_file():
        raise UsageError("sizes", f"trace file {path!r} not found")
    with p.open(newline="") as fh:
        rows = list(csv.reader(fh))
    if not rows:
        raise UsageError("sizes", f"trace file {path!r} is empty")
    header = rows[0]
    try:
        float(header[0])
        data, names = rows, None
    except ValueError:
        data, names = rows[1:], header
    if names is None:
        j = 0 if column is None else int(column)
    elif column is None:
        j = names.index("num_decode_tokens") if "num_decode_tokens" in names else 0
    elif column in names:
        j = names.index(column)
    else:
        raise UsageError("sizes", f"column {column!r} not in {names}")
    return np.array([float(r[j]) for r in data if r and r[j].strip()])


def parse_sizes(spec: str) -> SizeDistribution:
    """Build a size distribution from a spec string.

    Specs: ``exp:MEAN``, ``det:VALUE``, ``uniform:LO,HI``, ``hyperexp:P1,M1,P2,M2,...``,
    ``bpareto:ALPHA,LO,HI``, ``logt:MU,SIGMA,XMAX[,NU]`` (censored at XMAX),
    ``logtt:MU,SIGMA,XMAX[,NU]`` (truncated), ``empirical:PATH[,COLUMN]`` (a CSV trace; by
    default the ``num_decode_tokens`` column, else the first).

    Raises
    ------
    UsageError
        Naming the ``sizes`` field (a :class:`ValueError` too).

    Examples
    --------
    >>> parse_sizes("uniform:0,2").mean
    1.0
    >>> parse_sizes("hyperexp:0.5,0.5,0.5,1.5").spec
    'hyperexp:0.5,0.5,0.5,1.5'
    """
    if not isinstance(spec, str) or ":" not in spec:
        raise UsageError("sizes", f"expected KIND:PARAMS, got {spec!r}")
    kind, body = spec.split(":", 1)
    kind = kind.strip().lower()
    try:
        if kind == "empirical":
            path, _, col = body.partition(",")
            return Empirical(_read_trace(path, col or None), label=Path(path).name)
        v = _floats(body, "sizes")
        if kind in ("exp", "exponential") and len(v) == 1:
            return Exponential(v[0])
        if kind in ("det", "deterministic") and len(v) == 1:
            return Deterministic(v[0])
        if kind in ("uniform", "unif") and len(v) == 2:
            return Uniform(v[0], v[1])
        if kind == "hyperexp" and len(v) >= 2 and len(v) % 2 == 0:
            return HyperExponential(tuple(v[0::2]), tuple(v[1::2]))
        if kind == "bpareto" and len(v) == 3:
            return BoundedPareto(*v)
        if kind in ("logt", "logtt") and len(v) in (3, 4):
            return LogT(v[0], v[1], v[2], v[3] if len(v) == 4 else 3.5,
                        "censor" if kind == "logt" else "truncate")
    except ValueError as exc:  # UsageError of a constructor, or a ValueError of LogT
        raise UsageError("sizes", exc.reason if isinstance(exc, UsageError) else str(exc)
                         ) from None
    raise UsageError(
        "sizes", f"unknown or malformed spec {spec!r}; expected exp:M, det:V, uniform:A,B, "
        "hyperexp:P1,M1,..., bpareto:ALPHA,LO,HI, logt:MU,SIGMA,XMAX[,NU], logtt:..., "
        "empirical:PATH[,COLUMN]"
    )
