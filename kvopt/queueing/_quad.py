"""Panel Gauss-Legendre quadrature and piecewise-Legendre interpolants (internal).

Every integral in :mod:`kvopt.queueing` is computed by Gauss-Legendre rules on panels
whose end points include every point where the integrand has a kink or a jump.  The
panel end points may differ from row to row, so a whole vector of integrals (one per
row) is evaluated with one numpy expression.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

import numpy as np
from numpy.polynomial import legendre as _leg

__all__ = ["PiecewiseLegendre", "gauss_legendre", "panel_nodes"]


@lru_cache(maxsize=32)
def gauss_legendre(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the ``n``-point Gauss-Legendre nodes and weights on ``[-1, 1]``.

    Examples
    --------
    >>> t, w = gauss_legendre(4)
    >>> float(w.sum())
    2.0
    """
    t, w = _leg.leggauss(n)
    t.setflags(write=False)
    w.setflags(write=False)
    return t, w


def panel_nodes(
    base: np.ndarray, extra: np.ndarray | None = None, n: int = 16
) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes and weights on the panels spanned by ``base`` and ``extra``.

    Parameters
    ----------
    base : ndarray, shape (P,)
        Sorted panel end points shared by all rows (the integration range is
        ``[base[0], base[-1]]``).
    extra : ndarray, shape (m, k), optional
        Per-row extra break points; they are clipped to the range.
    n : int
        Nodes per panel.

    Returns
    -------
    nodes, weights : ndarray, shape (m, (P - 1 + k) * n)
        Rows of nodes and weights; ``(weights * h(nodes)).sum(axis=1)`` integrates ``h``.

    Examples
    --------
    >>> x, w = panel_nodes(np.array([0.0, 1.0, 2.0]), np.array([[0.5], [1.5]]), n=3)
    >>> np.allclose((w * x**2).sum(axis=1), 8 / 3)
    True
    """
    base = np.asarray(base, dtype=float)
    if extra is None:
        pts = base[None, :]
    else:
        extra = np.atleast_2d(np.asarray(extra, dtype=float))
        m = extra.shape[0]
        ex = np.clip(np.nan_to_num(extra, nan=base[0], posinf=base[-1]), base[0], base[-1])
        pts = np.sort(np.concatenate([np.broadcast_to(base, (m, base.size)), ex], axis=1), axis=1)
    t, w = gauss_legendre(n)
    a, b = pts[:, :-1], pts[:, 1:]
    half = 0.5 * (b - a)
    mid = 0.5 * (a + b)
    nodes = mid[..., None] + half[..., None] * t
    weights = half[..., None] * w
    m = pts.shape[0]
    return nodes.reshape(m, -1), weights.reshape(m, -1)


class PiecewiseLegendre:
    """Piecewise polynomial interpolant of a function tabulated at Gauss-Legendre nodes.

    On each panel ``[p_j, p_{j+1}]`` the function is interpolated at the ``n`` Gauss-Legendre
    nodes; the interpolant and its running integral can then be evaluated anywhere.  Outside
    the range the end values are held constant (the integral continues linearly).

    Parameters
    ----------
    points : ndarray, shape (P,)
        Sorted panel end points (zero-length panels are dropped).
    func : callable or None
        Vectorized function ``func(s) -> values`` of a 1-d array (ignored if ``values``).
    n : int
        Nodes per panel.
    values : ndarray, optional
        Function values already computed at the nodes (panel-major, as ``panel_nodes``).

    Examples
    --------
    >>> p = PiecewiseLegendre(np.array([0.0, 1.0, 3.0]), np.exp, n=12)
    >>> bool(abs(p(np.array([2.0]))[0] - np.exp(2.0)) < 1e-10)
    True
    >>> bool(abs(p.integral(np.array([3.0]))[0] - (np.exp(3.0) - 1)) < 1e-9)
    True
    """

    def __init__(self, points: np.ndarray, func: Callable[[np.ndarray], np.ndarray] | None,
                 n: int = 16, values: np.ndarray | None = None) -> None:
        pts = np.unique(np.asarray(points, dtype=float))
        self.points = pts
        self.n = n
        t, w = gauss_legendre(n)
        a, b = pts[:-1], pts[1:]
        half = 0.5 * (b - a)
        nodes = 0.5 * (a + b)[:, None] + half[:, None] * t
        if values is None:
            if func is None:
                raise TypeError("PiecewiseLegendre needs func or values")
            values = func(nodes.ravel())
        vals = np.asarray(values, dtype=float).reshape(nodes.shape)
        self.nodes = nodes
        self.values = vals
        vinv = np.linalg.inv(_leg.legvander(t, n - 1))
        self.coef = vals @ vinv.T  # (panels, n) Legendre coefficients in t
        # antiderivative in t with value 0 at t = -1, scaled to s
        icoef = _leg.legint(self.coef, lbnd=-1, axis=1) * half[:, None]
        self.icoef = icoef
        panel_int = (vals * w).sum(axis=1) * half
        self.cum = np.concatenate([[0.0], np.cumsum(panel_int)])
        self._left = float(_leg.legval(-1.0, self.coef[0]))
        self._right = float(_leg.legval(1.0, self.coef[-1]))

    def _locate(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p = self.points
        j = np.clip(np.searchsorted(p, s, side="right") - 1, 0, p.size - 2)
        t = (2 * s - p[j] - p[j + 1]) / (p[j + 1] - p[j])
        return j, np.clip(t, -1.0, 1.0)

    def __call__(self, s: np.ndarray) -> np.ndarray:
        """Evaluate the interpolant at ``s``."""
        s = np.asarray(s, dtype=float)
        j, t = self._locate(s.ravel())
        v = (_leg.legvander(t, self.n - 1) * self.coef[j]).sum(axis=1)
        v = np.where(s.ravel() < self.points[0], self._left, v)
        v = np.where(s.ravel() > self.points[-1], self._right, v)
        return v.reshape(s.shape)

    def integral(self, s: np.ndarray) -> np.ndarray:
        """Return ``int_{points[0]}^{s} interpolant``, extended linearly outside the range."""
        s = np.asarray(s, dtype=float)
        flat = s.ravel()
        j, t = self._locate(flat)
        v = self.cum[j] + (_leg.legvander(t, self.n) * self.icoef[j]).sum(axis=1)
        lo, hi = self.points[0], self.points[-1]
        v = np.where(flat < lo, (flat - lo) * self._left, v)
        v = np.where(flat > hi, self.cum[-1] + (flat - hi) * self._right, v)
        return v.reshape(s.shape)
