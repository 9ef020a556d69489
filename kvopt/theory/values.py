"""The theory values of one policy, as ``kvopt ratio`` prints them."""

from __future__ import annotations

import math
from typing import Any

from kvopt.core.deprecation import renamed_names
from kvopt.theory import ratios as rt
from kvopt.theory.rayleigh import harmonic, lambda_max, paper_fit

#: Policies :func:`ratio_values` knows (``kvopt ratio POLICY``).
RATIO_POLICIES = ("amin", "amax", "arandom", "a-l", "mcsf", "hsf")


def ratio_values(policy: str, *, l: int, u: int, alpha: float, s: float = 0.0,
                 memory: int | None = None) -> dict[str, Any]:
    """The theory values printed by ``kvopt ratio`` (``ratio`` is the headline).

    Examples
    --------
    >>> ratio_values("amax", l=1, u=4, alpha=0.25)["ratio"]
    10.0
    >>> round(ratio_values("amin", l=1, u=4, alpha=0.25, s=3)["two_point"], 4)
    1.4702
    """
    doc: dict[str, Any] = {"policy": policy, "alpha": alpha, "l": l, "u": u, "s": s,
                           "benchmark": "H-SF (fluid limit n, M -> oo)"}
    if policy == "amin":
        lam = float(lambda_max(u, l=l, s=s))  # type: ignore[arg-type]
        two, t_two = rt.amin_two_point_lus(l, u, s)
        doc.update(ratio=lam, kind="sup over distributions (Lemma 2 / Corollary 1)",
                   two_point=two, two_point_t=t_two if math.isfinite(t_two) else None,
                   two_point_kind=("Theorem 6, (3 - alpha)/2 at t = x_l/x_u = 1/alpha" if s == 0
                                   else "Lemma 2 maximised over two-point mixes on {l, u} "
                                   "(Theorem 6's (3 - alpha)/2 is the s = 0 value)"),
                   theorem6_s0=rt.amin_two_point(l / u) if s > 0 else None,
                   log_bound=harmonic(u) if (l == 1 and s == 0) else None,
                   paper_fit=float(paper_fit(u)) if (l == 1 and s == 0) else None)
    elif policy == "amax":
        doc.update(ratio=rt.amax_upper(alpha), kind="proven upper bound (Theorem 1)",
                   upper=rt.amax_upper(alpha), lower_claimed=rt.amax_lower_claimed(alpha),
                   construction=rt.amax_construction(alpha),
                   construction_r=rt.amax_construction_argmax(alpha),
                   construction_at_sqrt_alpha=rt.amax_construction_at(alpha, alpha**0.5))
    elif policy == "arandom":
        doc.update(ratio=rt.arandom_upper(alpha), kind="upper bound (Theorem EC.1)")
    elif policy == "a-l":
        doc.update(ratio=rt.al_two_point(alpha), kind="two-point instances (Theorem 7)",
                   amin_two_point=rt.amin_two_point(alpha), alpha_star=rt.ALPHA_STAR,
                   min_two_point=rt.min_two_point(alpha))
    elif policy == "mcsf":
        doc.update(ratio=rt.THM43_RATIO, benchmark="hindsight OPT",
                   kind="O(1) constant of seed 001 Thm 4.3 (6 x 1536; all at 0, equal s, "
                        "M >= 2 max(s + o), exact lengths)",
                   deterministic_lower=(rt.jaillet_thm41_lower(memory)
                                        if memory is not None else None))
    else:  # hsf
        doc.update(ratio=1.0, kind="the benchmark itself")
    return doc


#: Deprecated (one release): ``POLICIES``, a name that clashed with :data:`kvopt.sim.POLICIES`.
__getattr__ = renamed_names(__name__, {"POLICIES": "RATIO_POLICIES"})
