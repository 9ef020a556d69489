"""Prediction models for output lengths (bottom layer: imports only :mod:`kvopt.core`).

- :mod:`~kvopt.predictions.distributions`: :class:`LogT` (TIE's log-t) and :class:`LogNormal`
  with limited-length moments, VaR/CVaR by quadrature, maximum-likelihood fits and the KS
  comparison of families;
- :mod:`~kvopt.predictions.predictors`: point, refined (TRAIL-like) and distributional
  predictors with their noise models;
- :mod:`~kvopt.predictions.workload`: the heavy-tailed workload generator (per-prompt log-t
  output lengths).
"""

from kvopt.predictions.distributions import (
    FAMILIES,
    LogLocationScale,
    LogNormal,
    LogT,
    compare_families,
    fit_family,
    ks_pass_rate,
)
from kvopt.predictions.predictors import (
    LogTPredictor,
    PredictionCost,
    RefinedPredictor,
    RefreshCache,
    hash_normal,
    lognormal_point,
    noisy_point,
)
from kvopt.predictions.workload import Workload, heavy_tailed_workload

__all__ = [
    "FAMILIES",
    "LogLocationScale",
    "LogNormal",
    "LogT",
    "LogTPredictor",
    "PredictionCost",
    "RefinedPredictor",
    "RefreshCache",
    "Workload",
    "compare_families",
    "fit_family",
    "hash_normal",
    "heavy_tailed_workload",
    "ks_pass_rate",
    "lognormal_point",
    "noisy_point",
]
