"""Size of a formulation before it is built: rows, columns, non-zeros, bytes per backend.

:func:`estimate` computes the columns of a time-indexed formulation exactly (the start
windows of :func:`kvopt.mip.model.builder.start_windows`) and its rows and non-zeros as upper
bounds (memory entries ``sum_columns o``; DFF entries counted exactly per level; core
entries ``sum_columns L``; clique entries at most the memory entries), in ``O(n)`` numpy
work after the windows. Bytes are the peak memory of building the model and running the
backend on it, ``a * nnz + b * cols + c * rows`` with per-backend coefficients measured on
this package's models (:data:`BYTES_PER`; PuLP's Python objects are an order of magnitude
heavier than HiGHS' arrays). ``solver="lp-differenced"`` is the LP that
:func:`kvopt.mip.bounds.intervals.interval_bound` and
:func:`kvopt.mip.bounds.fixing.reduced_cost_domains`
solve: the dense model is built, then HiGHS gets its row-differenced form
(:func:`kvopt.mip.bounds.sparse_lp.differenced_lp`: the same rows, one slack column per row, and per
row the sparsest of the row, its first and its second difference, so at most the dense
non-zeros plus three slack entries per row); estimated as that upper bound with the larger
of the build and HiGHS coefficients (peak RSS 334 MiB measured on the interval LP of
``model1-seed1``, 3.84 M dense non-zeros, against 580 MiB estimated without the interval
rows). The ``cp`` models of :mod:`kvopt.mip.model.cpmodel` have one interval
per output token (``sum o``), so they stay small where the time-indexed models explode.

:func:`check_memory` refuses (:class:`~kvopt.core.errors.MemoryBudgetError`) a formulation
whose estimate exceeds the budget, and names the formulations that would fit.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from kvopt.core.errors import MemoryBudgetError
from kvopt.core.instance import Instance
from kvopt.core.limits import (
    DEFAULT_MEMORY_FRACTION,
    MEMORY_BUDGET_ENV,
    format_bytes,
    machine_limit,
)
from kvopt.mip.model.builder import FORMULATIONS, family_sizes, layout

#: ``(bytes per non-zero, per column, per row)`` of the peak memory of build + solve, by
#: backend; ``"build"`` is :func:`kvopt.mip.model.builder.build_milp` alone (also the LP bound's
#: share before HiGHS). Measured as the peak RSS of a forked solve of ``model1-seed1``
#: (``tight``, ``tight+cores``) and ``model1(3, n=100)``, rounded up (see the tests).
BYTES_PER: dict[str, tuple[float, float, float]] = {
    "build": (100.0, 200.0, 200.0),
    "highs": (160.0, 600.0, 600.0),
    "scipy": (200.0, 600.0, 600.0),
    "cbc": (600.0, 2500.0, 2000.0),
    "cpsat": (400.0, 2000.0, 2000.0),
}
#: Bytes per interval of the CP-SAT ``cp`` models (one per output token) and per pair.
CP_BYTES_PER_INTERVAL = 3000.0
CP_BYTES_PER_PAIR = 2000.0
#: Fixed overhead of any solve (solver libraries, buffers).
BASE_BYTES = 64 * 2**20


@dataclass(frozen=True)
class SizeEstimate:
    """Estimated size of one formulation on one backend.

    Attributes
    ----------
    formulation, solver
        What was estimated.
    rows, cols, nnz
        Rows, columns and non-zeros (rows and non-zeros are upper bounds); for the ``cp``
        models ``rows`` counts constraints, ``cols`` start variables and ``nnz`` intervals.
    bytes
        Estimated peak memory of build + solve.

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 1], prompt=[1, 2, 1], output=[4, 8, 3])
    >>> e = estimate(inst, "tight+cores", "highs", upper=30)
    >>> e.rows, e.cols, e.nnz, e.to_dict()["size"]
    (153, 35, 704, '64.2 MiB')
    """

    formulation: str
    solver: str
    rows: int
    cols: int
    nnz: int
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (with a readable ``size``)."""
        return {**asdict(self), "size": format_bytes(self.bytes)}

    def describe(self) -> str:
        """One-line summary.

        Examples
        --------
        >>> SizeEstimate("tight", "highs", 10, 20, 30, 2**20).describe()
        'tight on highs: 10 rows, 20 columns, 30 non-zeros, ~1.0 MiB'
        """
        where = {"lp": "the HiGHS LP",
                 "lp-differenced": "the HiGHS LP (row-differenced)"}.get(self.solver,
                                                                         self.solver)
        return (f"{self.formulation} on {where}: {self.rows} rows, {self.cols} columns, "
                f"{self.nnz} non-zeros, ~{format_bytes(self.bytes)}")


def milp_shape(instance: Instance, formulation: str, *,
               upper: float | None = None) -> tuple[int, int, int]:
    """``(rows, cols, nnz)`` of :func:`~kvopt.mip.model.builder.build_milp` without building it.

    Columns are exact (:func:`~kvopt.mip.model.builder.layout`); rows and non-zeros are the
    sums of the size formulas kept beside each row family
    (:func:`~kvopt.mip.model.builder.family_sizes`), upper bounds.

    Examples
    --------
    >>> from kvopt.mip.model.builder import build_milp
    >>> inst = Instance(memory=10, arrival=[0, 0, 1], prompt=[1, 2, 1], output=[4, 8, 3])
    >>> d = build_milp(inst, "tight+cores", upper=30)
    >>> r, c, z = milp_shape(inst, "tight+cores", upper=30)
    >>> c == d.n_cols and r >= d.n_rows and z >= d.nnz
    True
    """
    instance.require_slotted()
    if formulation not in FORMULATIONS:
        raise ValueError(f"not a time-indexed formulation: {formulation!r}")
    lay = layout(instance, formulation, upper=upper)
    sizes = family_sizes(lay)
    return sum(r for _, r, _ in sizes), lay.n_cols, sum(z for _, _, z in sizes)


def estimate(instance: Instance, formulation: str, solver: str, *,
             upper: float | None = None) -> SizeEstimate:
    """Estimated size of ``formulation`` on ``solver`` (see the module docstring).

    ``solver="build"`` estimates the model build alone; ``"lp"`` the LP relaxation on HiGHS;
    ``"lp-differenced"`` its row-differenced form (module docstring).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 1], prompt=[1, 2, 1], output=[4, 8, 3])
    >>> e = estimate(inst, "cp", "cpsat")
    >>> e.nnz, e.bytes < 100 * 2**20
    (15, True)
    >>> estimate(inst, "tight", "cbc").bytes > estimate(inst, "tight", "highs").bytes
    True
    """
    if formulation.startswith("cp"):
        n = instance.n
        intervals = int(instance.output.astype(np.int64).sum())
        pairs = n * (n - 1) // 2 if formulation in ("cp+pairs", "cp+exact") else 0
        nbytes = (BASE_BYTES + CP_BYTES_PER_INTERVAL * (intervals + 2 * n)
                  + CP_BYTES_PER_PAIR * pairs)
        return SizeEstimate(formulation, solver, n + pairs, n, intervals, int(nbytes))
    rows, cols, nnz = milp_shape(instance, formulation, upper=upper)
    if solver == "lp-differenced":
        cols, nnz = cols + rows, nnz + 3 * rows
    key = "highs" if solver in ("lp", "lp-differenced") else solver
    per = BYTES_PER.get(key, BYTES_PER["cbc"])
    build = BYTES_PER["build"]
    coef = [max(p, b) for p, b in zip(per, build, strict=True)]
    nbytes = BASE_BYTES + coef[0] * nnz + coef[1] * cols + coef[2] * rows
    return SizeEstimate(formulation, solver, rows, cols, nnz, int(nbytes))


def fitting_alternatives(instance: Instance, budget: int, *, upper: float | None = None,
                         exclude: tuple[str, str] | None = None) -> list[SizeEstimate]:
    """The (formulation, solver) pairs whose estimate fits ``budget``, smallest first.

    CP-SAT's ``cp`` model comes first when it fits (it is the default and the smallest).

    Examples
    --------
    With 100 kB above the fixed overhead only the CP models and the plain time-indexed
    models on HiGHS or scipy fit:

    >>> inst = Instance(memory=10, arrival=[0, 0, 1], prompt=[1, 2, 1], output=[4, 8, 3])
    >>> [(e.formulation, e.solver) for e in fitting_alternatives(inst, BASE_BYTES + 100_000)]
    [('cp', 'cpsat'), ('cp+cores', 'cpsat'), ('tight', 'highs'), ('tight', 'scipy'),
     ('naive', 'highs'), ('naive', 'scipy')]
    """
    combos = [("cp", "cpsat"), ("cp+cores", "cpsat")]
    combos += [(f, b) for f in ("tight", "tight+cuts", "tight+cores", "naive")
               for b in ("highs", "scipy", "cpsat", "cbc")]
    fits: list[SizeEstimate] = []
    shapes: dict[str, tuple[int, int, int]] = {}
    for f, b in combos:
        if (f, b) == exclude:
            continue
        if f.startswith("cp"):
            e = estimate(instance, f, b)
        else:
            if f not in shapes:
                shapes[f] = milp_shape(instance, f, upper=upper)
            rows, cols, nnz = shapes[f]
            per = [max(p, q) for p, q in zip(BYTES_PER[b], BYTES_PER["build"], strict=True)]
            e = SizeEstimate(f, b, rows, cols, nnz,
                             int(BASE_BYTES + per[0] * nnz + per[1] * cols + per[2] * rows))
        if e.bytes <= budget:
            fits.append(e)
    return fits


def memory_refusal(instance: Instance, formulation: str, solver: str, budget: int, *,
                   upper: float | None = None, flag: str = "formulation",
                   budget_flag: str = f"ram / --memory-budget / {MEMORY_BUDGET_ENV}",
                   what: str | None = None, hint: str | None = None,
                   ) -> tuple[SizeEstimate, MemoryBudgetError | None]:
    """The estimate of ``formulation`` on ``solver`` and, above ``budget`` bytes, the refusal
    :func:`check_memory` raises (for a caller that skips the model instead, with the reason).

    ``what`` names the model in the message (default: the estimate's description); ``hint``
    replaces the list of formulations that fit (e.g. a cheaper bound).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 1], prompt=[1, 2, 1], output=[4, 8, 3])
    >>> est, refused = memory_refusal(inst, "tight", "highs", 1000, what="the LP")
    >>> refused.reason.startswith("the LP (tight on highs:"), est.bytes > 1000
    (True, True)
    """
    est = estimate(instance, formulation, solver, upper=upper)
    return est, budget_refusal(instance, est, budget, upper=upper, flag=flag,
                               budget_flag=budget_flag, what=what, hint=hint)


def budget_refusal(instance: Instance, est: SizeEstimate, budget: int, *,
                   upper: float | None = None, flag: str = "formulation",
                   budget_flag: str = f"ram / --memory-budget / {MEMORY_BUDGET_ENV}",
                   what: str | None = None, hint: str | None = None,
                   ) -> MemoryBudgetError | None:
    """The refusal of :func:`memory_refusal` for an estimate the caller made (e.g. a model
    of its own sized from a formulation's), or ``None`` when ``est`` fits ``budget`` and the
    memory available now (a budget set above the machine is capped by it).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 1], prompt=[1, 2, 1], output=[4, 8, 3])
    >>> est = estimate(inst, "naive", "highs")
    >>> budget_refusal(inst, est, 2**40) is None
    True
    >>> budget_refusal(inst, est, 1000, flag="instance", hint="smaller").reason.endswith(
    ...     "available memory); smaller")
    True
    """
    cap = machine_limit(budget) if est.bytes <= budget else budget
    if est.bytes <= cap:
        return None
    alts: list[SizeEstimate] = []
    if hint is None:
        alts = fitting_alternatives(instance, cap, upper=upper,
                                    exclude=(est.formulation, est.solver))
        hint = ("would fit: " + ", ".join(f"{e.formulation} on {e.solver} "
                                          f"(~{format_bytes(e.bytes)})" for e in alts[:3])
                if alts else "no formulation fits; raise the budget or solve a smaller instance")
    model = est.describe() if what is None else f"{what} ({est.describe()})"
    if cap < budget:
        return MemoryBudgetError(
            flag, f"{model} exceeds the {format_bytes(cap)} of memory available now (the "
            f"budget of {format_bytes(budget)} allows it; this machine does not); {hint}",
            estimate=est, budget=cap, alternatives=alts)
    return MemoryBudgetError(
        flag, f"{model} exceeds the memory budget of {format_bytes(budget)} "
        f"(set it with {budget_flag}; default {int(100 * DEFAULT_MEMORY_FRACTION)}% of the "
        f"available memory); {hint}",
        estimate=est, budget=budget, alternatives=alts)


def check_memory(instance: Instance, formulation: str, solver: str, budget: int, *,
                 upper: float | None = None, flag: str = "formulation",
                 budget_flag: str = f"ram / --memory-budget / {MEMORY_BUDGET_ENV}",
                 what: str | None = None, hint: str | None = None) -> SizeEstimate:
    """Estimate ``formulation`` on ``solver`` and refuse it above ``budget`` bytes: the one
    check every model of :mod:`kvopt.mip` passes before it is built (the refusal is
    :func:`memory_refusal`'s).

    Raises
    ------
    MemoryBudgetError
        Naming ``flag``, the estimate, the budget (and how to change it: ``budget_flag``)
        and the formulations / solvers that fit (or ``hint``).

    Examples
    --------
    >>> inst = Instance(memory=10, arrival=[0, 0, 1], prompt=[1, 2, 1], output=[4, 8, 3])
    >>> check_memory(inst, "tight", "highs", 2**30).cols > 0
    True
    >>> try:
    ...     check_memory(inst, "tight", "highs", 1000)
    ... except MemoryBudgetError as exc:
    ...     print(exc.field, exc.estimate.formulation)
    formulation tight
    """
    est, refused = memory_refusal(instance, formulation, solver, budget, upper=upper,
                                  flag=flag, budget_flag=budget_flag, what=what, hint=hint)
    if refused is not None:
        raise refused
    return est
