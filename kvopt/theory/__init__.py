"""Competitive ratios of the seed 000 / seed 001 policies: closed forms, sympy, Rayleigh quotient.

This package never imports the simulator or the MIP: it only evaluates formulas and builds
instances (:mod:`kvopt.theory.adversarial`). Measured ratios live in :mod:`kvopt.report`.

Examples
--------
>>> from kvopt.theory import lambda_max, amax_upper
>>> round(lambda_max(2), 6), amax_upper(0.5)
(1.25, 3.0)
"""

from kvopt.theory.ratios import (
    al_two_point,
    amax_construction,
    amax_lower_claimed,
    amax_upper,
    amin_geometric,
    amin_lg,
    amin_rayleigh,
    amin_two_point,
    arandom_upper,
)
from kvopt.theory.rayleigh import (
    amin_ratio_lemma2,
    fit_log_curve,
    lambda_max,
    lambda_max_dense,
    worst_distribution,
)

__all__ = [
    "al_two_point",
    "amax_construction",
    "amax_lower_claimed",
    "amax_upper",
    "amin_geometric",
    "amin_lg",
    "amin_ratio_lemma2",
    "amin_rayleigh",
    "amin_two_point",
    "arandom_upper",
    "fit_log_curve",
    "lambda_max",
    "lambda_max_dense",
    "worst_distribution",
]
