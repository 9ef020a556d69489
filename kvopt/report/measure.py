"""Measured competitive ratios: simulate a policy (``kvopt.sim``), divide by H-SF and by OPT.

The benchmark H-SF is the simulator's ``"hsf"`` policy (seed 000's benchmark); OPT is the
hindsight optimum of seed 001's IP from :func:`kvopt.mip.solve` (only for small instances;
a ratio against a non-proven incumbent is reported as ``opt_status = "time_limit"``).
Policies with random tie-breaks are averaged over ``seeds`` (the competitive ratio is
defined with the expectation over the algorithm's randomness).

Amin's tie-break readings (the ``ties`` option of
:class:`kvopt.sim.policies.FutureMemoryPolicy`): ``"amin"`` draws one permutation per run
and uses it for every tie (the simulator's default); ``"amin/per-sort"`` is seed 000's
Algorithm 2 read literally (a fresh uniform tie order at every sort, for admission and
eviction); ``"amin/redraw"`` redraws the eviction ties only (an experiment). See
kvopt/theory/NOTES.md item 13 for why it matters. :func:`tie_order_expectation` computes the
expectation of the default reading exactly, over all ``n!`` tie orders.

Examples
--------
>>> from kvopt.theory.adversarial import example1
>>> m = measure(example1(), "amax", seeds=(0,), opt=False)
>>> m["tel"], m["hsf"], m["ratio_hsf"]
(9.0, 5.0, 1.8)
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance
from kvopt.sim.policies import POLICIES, policy_info

if TYPE_CHECKING:
    from kvopt.mip.result import SolverName  # checked by solve at run time

__all__ = ["RANDOMIZED", "READINGS", "hsf_tel", "mean_se", "measure", "opt_tel", "policy_tel",
           "tie_order_expectation"]

#: Policies whose schedule depends on the seed (from the simulator's policy registry, plus the
#: report's own Amin variant with eviction ties redrawn per decision).
RANDOMIZED = frozenset({name for name in POLICIES if policy_info(name).randomized}
                       | {"amin/redraw", "amin/per-sort"})


#: The tie-break reading behind each measured Amin / Amax name (issue 23: say which one).
READINGS = {
    "amin": "one tie order per run (simulator default)",
    "amax": "one tie order per run (simulator default)",
    "amin/per-sort": "Alg. 2 literal: ties redrawn at every sort",
    "amin/redraw": "experiment: eviction ties redrawn at every decision",
}


def mean_se(values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """Mean of random runs and its standard error (``std / sqrt(n)``, ``ddof = 1``; 0 for a
    single run).

    Examples
    --------
    >>> mean_se([1.0, 2.0, 3.0]), mean_se([4.0])
    ((2.0, 0.5773502691896258), (4.0, 0.0))
    """
    a = np.asarray(values, dtype=np.float64)
    return float(a.mean()), float(a.std(ddof=1) / np.sqrt(a.size)) if a.size > 1 else 0.0


def policy_tel(instance: Instance, policy: str, seed: int | None = 0) -> float:
    """Total end-to-end latency (slots) of ``policy`` simulated with unit step times.

    Examples
    --------
    >>> from kvopt.theory.adversarial import example_ec1
    >>> policy_tel(example_ec1(), "hsf")
    12.0
    """
    from kvopt.sim import simulate

    if policy in ("amin/redraw", "amin/per-sort"):  # the report's Amin tie readings
        ties = policy.split("/", 1)[1]
        return float(simulate(instance, "amin", seed=seed, ties=ties).metrics.total_latency)
    return float(simulate(instance, policy, seed=seed).metrics.total_latency)


def tie_order_expectation(instance: Instance, policy: str = "amin", *, max_n: int = 8,
                          **options: Any) -> Fraction:
    """Exact ``E[TEL]`` of a policy whose only randomness is one tie order per run
    (``ties="random"``: ``amin``, ``amax``), averaged over all ``n!`` orders.

    Requests that agree in every per-request field are interchangeable: swapping two of them
    in a tie order relabels the schedule and keeps its TEL. So each order of the request
    *classes* is simulated once, with the requests of a class in index order; it stands for
    the same number (``prod m_c!``) of the ``n!`` orders, so the mean over the distinct class
    orders is the mean over all ``n!`` (``tests/sim/test_policies_ties.py`` checks both
    against each other). On a two-point instance of 6 requests that is 20 runs instead of 720.

    Examples
    --------
    >>> from kvopt.theory.adversarial import example_ec1
    >>> e = tie_order_expectation(example_ec1())   # issue 23: 373/24, ratio 1.2951 to H-SF 12
    >>> e, round(float(e) / 12, 4)
    (Fraction(373, 24), 1.2951)
    """
    from kvopt.sim import simulate

    n = instance.n
    if n > max_n:
        raise UsageError("max_n", f"{n}! tie orders is too many (max_n = {max_n})")
    members = _interchangeable(instance)
    total = runs = 0
    for classes in _class_orders([len(m) for m in members]):
        nxt = [0] * len(members)
        perm = []
        for c in classes:
            perm.append(members[c][nxt[c]])
            nxt[c] += 1
        tel = simulate(instance, policy, tie_order=perm, **options).metrics.total_latency
        total += round(tel)
        runs += 1
    return Fraction(total, runs)


def _interchangeable(instance: Instance) -> list[list[int]]:
    """The request ids grouped into classes that agree in every per-request field (in index
    order, classes by first member)."""
    import dataclasses

    n = instance.n
    columns = []
    for f in dataclasses.fields(instance):
        value = getattr(instance, f.name)
        if isinstance(value, (list, tuple, np.ndarray)) and len(value) == n:
            columns.append([repr(v) for v in np.asarray(value, dtype=object).tolist()])
    classes: dict[tuple[str, ...], list[int]] = {}
    for i in range(n):
        classes.setdefault(tuple(col[i] for col in columns), []).append(i)
    return list(classes.values())


def _class_orders(counts: list[int]) -> Iterator[list[int]]:
    """Every distinct sequence with ``counts[c]`` copies of each class ``c`` (lexicographic).

    >>> [''.join(map(str, s)) for s in _class_orders([2, 1])]
    ['001', '010', '100']
    """
    left = list(counts)
    seq: list[int] = []

    def rec() -> Iterator[list[int]]:
        if len(seq) == sum(counts):
            yield list(seq)
            return
        for c, k in enumerate(left):
            if k:
                left[c] -= 1
                seq.append(c)
                yield from rec()
                seq.pop()
                left[c] += 1

    yield from rec()


def hsf_tel(instance: Instance) -> float:
    """TEL of the hindsight shortest-first benchmark H-SF (seed 000).

    Examples
    --------
    >>> from kvopt.theory.adversarial import example1
    >>> hsf_tel(example1())
    5.0
    """
    return policy_tel(instance, "hsf", seed=None)


def opt_tel(instance: Instance, *, solver: str = "highs", time_limit: float = 20.0
            ) -> tuple[float | None, float | None, str]:
    """``(objective, bound, status)`` of the hindsight IP (:func:`kvopt.mip.solve`).

    Examples
    --------
    >>> from kvopt.theory.adversarial import example_ec1
    >>> opt_tel(example_ec1())   # OPT = H-SF's 12 on this instance, proven optimal
    (12.0, 12.0, 'optimal')
    """
    from kvopt.mip import solve

    res = solve(instance, solver=cast("SolverName", solver), time_limit=time_limit)
    return res.objective, res.bound, res.status


def measure(instance: Instance, policy: str, *, seeds: Sequence[int] = (0, 1, 2),
            opt: bool = True, solver: str = "highs", time_limit: float = 20.0
            ) -> dict[str, Any]:
    """Measured ``TEL(policy)`` (mean over seeds), H-SF, OPT and both ratios.

    Returns
    -------
    dict
        ``tel``, ``tel_std``, ``tel_se`` (standard error of the mean over the seeds; 0 for a
        deterministic policy), ``hsf``, ``ratio_hsf``, ``ratio_hsf_se``, and with ``opt``:
        ``opt``, ``opt_bound``,
        ``opt_status``, ``ratio_opt`` (``None`` when no incumbent).

    Examples
    --------
    >>> from kvopt.theory.adversarial import example_ec1
    >>> m = measure(example_ec1(), "amin", seeds=(0, 1, 2))
    >>> m["seeds"], m["tel"], m["hsf"], m["opt"], m["opt_status"]
    ([0, 1, 2], 17.0, 12.0, 12.0, 'optimal')
    >>> round(m["ratio_opt"], 4), round(m["ratio_hsf_se"], 4)
    (1.4167, 0.1667)
    """
    use = list(seeds) if policy in RANDOMIZED else [None]
    tels = np.array([policy_tel(instance, policy, seed=s) for s in use])
    h = hsf_tel(instance)
    _, se = mean_se(tels)
    out: dict[str, Any] = {"instance": instance.name, "n": instance.n, "memory": instance.memory,
                           "policy": policy, "seeds": [s for s in use if s is not None],
                           "tel": float(tels.mean()), "tel_std": float(tels.std()),
                           "tel_se": se, "hsf": h, "ratio_hsf": float(tels.mean() / h),
                           "ratio_hsf_se": se / h}
    if opt:
        obj, bound, status = opt_tel(instance, solver=solver, time_limit=time_limit)
        out.update(opt=obj, opt_bound=bound, opt_status=status,
                   ratio_opt=None if obj is None else float(tels.mean() / obj))
    return out
