"""Conservative output-length upper bounds refined as tokens are generated (seed 003, §3.1).

JITServe predicts a *quantile* (q = 0.95 in its released code) of the output length with a
quantile regression forest and "gradually relaxes this conservatism" as the response grows;
the paper's text for the refinement is missing (notes/seed-003 §3.1). kvopt's rule: each
request has a predictive distribution ``L ~ LogNormal(log m_i, sigma)`` (``m_i`` its median,
e.g. a point prediction); after ``g`` generated tokens the bound is the *conditional* quantile

    ``ub(g) = Q_q(L | L > g) = exp(log m + sigma z)``,  ``1 - Phi(z) = (1 - q) (1 - F(g))``,

rounded up and at least ``g + 1``. At ``g = 0`` it is the plain q-quantile
``m exp(sigma Phi^{-1}(q))``; it never falls below the progress, and the *remaining* bound
``ub(g) - g`` shrinks relative to the progress once ``g`` passes the bulk of the
distribution (a long response makes a still longer one plausible, but only by a factor that
tends to 1). ``sigma = 0`` gives the exact length (JITServe*, the oracle).

Examples
--------
>>> conditional_upper(np.array([100.0]), 0.5, 0.95, np.array([0])).tolist()
[228]
>>> conditional_upper(np.array([100.0]), 0.5, 0.95, np.array([300])).tolist()
[494]
>>> conditional_upper(np.array([100.0]), 0.0, 0.95, np.array([30])).tolist()
[100]
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["conditional_upper"]


def conditional_upper(median: ArrayLike, sigma: float, q: float,
                      generated: ArrayLike) -> NDArray[np.int64]:
    """Conditional ``q``-quantile of ``LogNormal(log median, sigma)`` given ``L > generated``.

    Parameters
    ----------
    median
        Per-request median length (> 0).
    sigma
        Log-scale spread (0: the median itself, i.e. an exact prediction).
    q
        Quantile level in (0, 1).
    generated
        Tokens generated so far (``>= 0``).

    Returns
    -------
    numpy.ndarray
        Integer bounds ``>= max(generated + 1, 1)`` (for ``sigma = 0``: ``max(median, g + 1)``).

    Examples
    --------
    One request (median 100) watched as it generates: the bound grows with the progress.

    >>> conditional_upper([100, 100, 100, 100], 0.5, 0.95, [0, 100, 200, 400]).tolist()
    [228, 267, 375, 616]
    >>> conditional_upper([50, 400], 0.0, 0.95, [60, 0]).tolist()   # exact: past it, g + 1
    [61, 400]
    """
    m = np.asarray(median, dtype=np.float64)
    g = np.asarray(generated, dtype=np.float64)
    if sigma <= 0:
        ub = np.ceil(m - 1e-9)
    else:
        from scipy import special  # on first use: importing the simulator loads no scipy

        with np.errstate(divide="ignore"):
            zg = np.where(g > 0, (np.log(np.maximum(g, 1e-300)) - np.log(m)) / sigma, -np.inf)
        sf = (1.0 - q) * special.ndtr(-zg)           # P(L > ub) = (1 - q) P(L > g)
        z = -special.ndtri(np.maximum(sf, 1e-300))
        ub = np.ceil(m * np.exp(sigma * z) - 1e-9)
    return np.maximum(ub, g + 1).astype(np.int64)
