"""A general (numerical) SOAP evaluator: new policies need only a rank function.

``rank(x, y, a)`` must be vectorized over numpy arrays (size ``x``, prediction ``y``, age ``a``)
and may return ``-inf``/``inf``; lower rank is served first, ties go to the earlier arrival.
The evaluator applies SOAP (Scully, Harchol-Balter & Scheller-Wolf, POMACS 2018, Thm 5.5):

``E[T(x, y)] = lam sum_i E[X_i^old[q]^2] / (2 (1 - lam E[X_0^old[q]]) (1 - lam E[X^new[q]]))
+ int_0^x da / (1 - lam E[X^new[r_w(a)]])``

with ``q = r_w(0)`` and the worst future rank ``r_w(a) = sup_{a <= b < x} rank(x, y, b)``.

Numerics: the job population is a product quadrature over sizes and prediction noise; each
job's age range ``[0, x]`` is cut into ``n_age`` equal cells (plus a zero-width cell at age 0
so that non-preemptive ranks are seen) and the rank is sampled at cell midpoints.  The
error is ``O(1 / n_age)`` -- typically 1e-3 relative with the defaults -- so use the closed
formulas in :mod:`kvopt.queueing.soap` where they exist; this module is for new policies and
as an independent cross-check.

Examples
--------
>>> import numpy as np
>>> from kvopt.queueing.distributions import Exponential
>>> srpt = lambda x, y, a: x - a
>>> t = soap_mean_response(srpt, 0.5, Exponential(1.0))
>>> abs(t - 1.4254) < 5e-3
True
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from kvopt.core.errors import UsageError
from kvopt.queueing._quad import panel_nodes
from kvopt.queueing.distributions import SizeDistribution
from kvopt.queueing.predictions import Perfect, PredictionModel

__all__ = ["soap_mean_response", "RANKS"]

RankFn = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _trail(C: float) -> RankFn:
    return lambda x, y, a: np.where(a < C * y, y - a, -np.inf)


RANKS: dict[str, Callable[..., RankFn]] = {
    "fcfs": lambda: (lambda x, y, a: np.zeros_like(a)),
    "spjf": lambda: (lambda x, y, a: np.where(a > 0, -np.inf, y)),
    "pspjf": lambda: (lambda x, y, a: y + 0 * a),
    "sprpt": lambda: (lambda x, y, a: y - a),
    "trail": _trail,
    "las": lambda: (lambda x, y, a: a + 0 * y),  # foreground-background, rank = age
}
"""Rank functions of the built-in policies (``RANKS["trail"](0.8)`` etc.)."""


def _population(sizes: SizeDistribution, preds: PredictionModel, n: int,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xs, ws = [], []
    pts = sizes.panel_points
    if pts is not None:
        x, w = panel_nodes(pts, None, n)
        xs.append(x[0])
        ws.append(w[0] * sizes.pdf(x[0]))
    av, ap = sizes.atoms
    xs.append(av)
    ws.append(ap)
    x, w = np.concatenate(xs), np.concatenate(ws)
    keep = w > 0
    x, w = x[keep], w[keep]
    if preds.is_atom:
        return x, x.copy(), w
    z, wz = panel_nodes(preds.panel_points, None, n)
    z, wz = z[0], wz[0] * preds.pdf(z[0])
    X = np.repeat(x, z.size)
    return X, X * np.tile(z, x.size), np.repeat(w, z.size) * np.tile(wz, x.size)


class _Tables:
    """Per-threshold SOAP quantities over the job population."""

    def __init__(self, x: np.ndarray, y: np.ndarray, w: np.ndarray, rank: RankFn,
                 n_age: int) -> None:
        M = n_age
        frac = np.concatenate([[0.0], (np.arange(M) + 0.5) / M])
        ages = x[:, None] * frac[None, :]
        self.R = np.asarray(rank(x[:, None], y[:, None], ages), dtype=float)
        cells = np.broadcast_to(x[:, None] / M, (x.size, M))
        self.L = np.concatenate([np.zeros((x.size, 1)), cells], axis=1)  # cell lengths
        self.w = w
        # running max: X^new[q] = service before the running max first reaches >= q
        self.runmax = np.maximum.accumulate(self.R, axis=1)

    def at(self, q: float) -> tuple[float, float, float, float]:
        """``(E[X^new[q]], E[X_0^old[q]], E[X_0^old[q]^2], sum_i>=1 E[X_i^old[q]^2])``."""
        L, w = self.L, self.w
        new = ((self.runmax < q) * L).sum(axis=1)
        ok = q >= self.R
        first = np.cumprod(ok, axis=1).astype(bool)  # before the first exceedance
        x0 = (first * L).sum(axis=1)
        rec = ok & ~first
        # squared lengths of the maximal runs of `rec`
        flat = rec.ravel()
        starts = flat & ~np.concatenate([[False], flat[:-1]])
        starts = starts.reshape(rec.shape)
        starts[:, 0] = rec[:, 0]
        run_id = np.cumsum(starts.ravel()) * flat
        lengths = np.bincount(run_id, weights=L.ravel() * flat)
        row_of_run = np.zeros(lengths.size, dtype=int)
        row_of_run[run_id[flat]] = np.repeat(np.arange(rec.shape[0]), rec.shape[1])[flat]
        rec2 = np.bincount(row_of_run[1:], weights=lengths[1:] ** 2, minlength=rec.shape[0])
        return (float((w * new).sum()), float((w * x0).sum()), float((w * x0**2).sum()),
                float((w * rec2).sum()))

    def new_cdf(self) -> tuple[np.ndarray, np.ndarray]:
        """``q -> E[X^new[q]]`` as sorted break points and cumulative weights."""
        v = self.runmax.ravel()
        wt = (self.L * self.w[:, None]).ravel()
        order = np.argsort(v, kind="stable")
        return v[order], np.cumsum(wt[order])


def soap_mean_response(rank: RankFn | str, lam: float, sizes: SizeDistribution,
                       predictions: PredictionModel | None = None, C: float | None = None,
                       n_nodes: int = 6, n_age: int = 200, n_q: int = 48) -> float:
    """Overall mean response time of a SOAP policy given only its rank function.

    Parameters
    ----------
    rank : callable or str
        ``rank(x, y, a)`` or a key of :data:`RANKS` (``"trail"`` uses ``C``).
    lam : float
        Arrival rate.
    sizes, predictions :
        Job-size distribution and prediction model (default perfect).
    n_nodes : int
        Gauss-Legendre nodes per panel of the population quadrature.
    n_age : int
        Age cells per job.
    n_q : int
        Thresholds at which the old-job terms are tabulated (then interpolated).

    Returns
    -------
    float

    Examples
    --------
    >>> from kvopt.queueing.distributions import Exponential
    >>> [round(soap_mean_response(p, 0.5, Exponential(1.0)), 3) for p in ("fcfs", "sprpt")]
    [2.0, 1.425]
    >>> round(soap_mean_response("trail", 0.5, Exponential(1.0), C=0.8), 3)
    1.429
    """
    if isinstance(rank, str):
        if rank not in RANKS:
            raise UsageError("policy", f"no built-in rank {rank!r}; choose from {sorted(RANKS)}")
        rank = RANKS[rank](C) if rank == "trail" else RANKS[rank]()
    if not (lam > 0 and lam * sizes.mean < 1):
        raise UsageError("load", "need 0 < rho < 1")
    predictions = predictions or Perfect()
    x, y, w = _population(sizes, predictions, n_nodes)
    tab = _Tables(x, y, w, rank, n_age)
    # worst future rank along each tagged job's age: suffix max over cells (incl. current)
    suf = np.maximum.accumulate(tab.R[:, ::-1], axis=1)[:, ::-1]
    q0 = suf[:, 0]
    vals, cum = tab.new_cdf()

    c0 = np.concatenate([[0.0], cum])
    # ties between different quadrature nodes are artefacts when Y has no atoms and the
    # policy's ranks are not constant; count them at half weight (midpoint rule)
    half = sizes.atoms[0].size == 0 and np.unique(vals[np.isfinite(vals)]).size > 1

    def e_new(q: np.ndarray) -> np.ndarray:
        v = c0[np.searchsorted(vals, q, side="left")]
        if half:
            v = 0.5 * (v + c0[np.searchsorted(vals, q, side="right")])
        return np.where(np.isfinite(q) | (q > 0), v, 0.0)

    # old-job terms at the tagged jobs' r_worst (exactly at up to n_q distinct values)
    fin = np.isfinite(q0)
    uq = np.unique(q0[fin])
    grid = uq if uq.size <= n_q else np.quantile(uq, np.linspace(0, 1, n_q))
    special = [v for v in (-np.inf, np.inf) if np.any(q0 == v)]
    table = {v: tab.at(v) for v in special}
    rows = np.array([tab.at(v) for v in grid]) if grid.size else np.zeros((0, 4))

    def old_terms(q: np.ndarray) -> np.ndarray:
        out = np.empty((q.size, 4))
        for v in special:
            out[q == v] = table[v]
        f = np.isfinite(q)
        for k in range(4):
            out[f, k] = np.interp(q[f], grid, rows[:, k]) if grid.size else 0.0
        return out

    ot = old_terms(q0)
    enew0 = e_new(q0)
    wait = lam * (ot[:, 2] + ot[:, 3]) / (2 * (1 - lam * ot[:, 1]) * (1 - lam * enew0))
    res = (tab.L[:, 1:] / (1 - lam * e_new(suf[:, 1:]))).sum(axis=1)
    return float((w * (wait + res)).sum())
