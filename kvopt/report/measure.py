"""Measured competitive ratios: simulate a policy (``kvopt.sim``), divide by H-SF and by OPT.

The benchmark H-SF is the simulator's ``"hsf"`` policy (seed 000's benchmark); OPT is the
hindsight optimum of seed 001's IP from :func:`kvopt.mip.solve` (only for small instances;
a ratio against a non-proven incumbent is reported as ``opt_status = "time_limit"``).
Policies with random tie-breaks are averaged over ``seeds`` (the competitive ratio is
defined with the expectation over the algorithm's randomness).

``"amin/redraw"`` is the simulator's Amin with ``ties="redraw"``: the eviction tie-break
among equal lower bounds redrawn uniformly at every decision (Algorithm 2 literally: "sort ...
ties uniformly at random") instead of one permutation drawn per run.
See kvopt/theory/NOTES.md for why it matters.

Examples
--------
>>> from kvopt.theory.adversarial import example1
>>> m = measure(example1(), "amax", seeds=(0,), opt=False)
>>> m["tel"], m["hsf"], m["ratio_hsf"]
(9.0, 5.0, 1.8)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kvopt.core.instance import Instance
from kvopt.sim.policies import POLICIES, policy_info

__all__ = ["RANDOMIZED", "hsf_tel", "measure", "opt_tel", "policy_tel"]

#: Policies whose schedule depends on the seed (from the simulator's policy registry, plus the
#: report's own Amin variant with eviction ties redrawn per decision).
RANDOMIZED = frozenset({name for name in POLICIES if policy_info(name).randomized}
                       | {"amin/redraw"})


def policy_tel(instance: Instance, policy: str, seed: int | None = 0) -> float:
    """Total end-to-end latency (slots) of ``policy`` simulated with unit step times.

    Examples
    --------
    >>> from kvopt.theory.adversarial import example_ec1
    >>> policy_tel(example_ec1(), "hsf")
    12.0
    """
    from kvopt.sim import simulate

    if policy == "amin/redraw":  # the simulator's Amin with eviction ties redrawn per decision
        return float(simulate(instance, "amin", seed=seed, ties="redraw").metrics.total_latency)
    return float(simulate(instance, policy, seed=seed).metrics.total_latency)


def hsf_tel(instance: Instance) -> float:
    """TEL of the hindsight shortest-first benchmark H-SF (seed 000)."""
    return policy_tel(instance, "hsf", seed=None)


def opt_tel(instance: Instance, *, solver: str = "highs", time_limit: float = 20.0
            ) -> tuple[float | None, float | None, str]:
    """``(objective, bound, status)`` of the hindsight IP (:func:`kvopt.mip.solve`)."""
    from kvopt.mip import solve

    res = solve(instance, solver=solver, time_limit=time_limit)
    return res.objective, res.bound, res.status


def measure(instance: Instance, policy: str, *, seeds: Sequence[int] = (0, 1, 2),
            opt: bool = True, solver: str = "highs", time_limit: float = 20.0
            ) -> dict[str, Any]:
    """Measured ``TEL(policy)`` (mean over seeds), H-SF, OPT and both ratios.

    Returns
    -------
    dict
        ``tel``, ``tel_std``, ``hsf``, ``ratio_hsf``, and with ``opt``: ``opt``, ``opt_bound``,
        ``opt_status``, ``ratio_opt`` (``None`` when no incumbent).
    """
    use = list(seeds) if policy in RANDOMIZED else [None]
    tels = np.array([policy_tel(instance, policy, seed=s) for s in use])
    h = hsf_tel(instance)
    out: dict[str, Any] = {"instance": instance.name, "n": instance.n, "memory": instance.memory,
                           "policy": policy, "seeds": [s for s in use if s is not None],
                           "tel": float(tels.mean()), "tel_std": float(tels.std()),
                           "hsf": h, "ratio_hsf": float(tels.mean() / h)}
    if opt:
        obj, bound, status = opt_tel(instance, solver=solver, time_limit=time_limit)
        out.update(opt=obj, opt_bound=bound, opt_status=status,
                   ratio_opt=None if obj is None else float(tels.mean() / obj))
    return out
