"""What a solve returns: :class:`SolveResult`, its :class:`SolveStatus`, and the raw status a
backend reports (:data:`BackendStatus`); the names of the backends and formulations
(:data:`SolverName`, :data:`Formulation`).

Every producer of :mod:`kvopt.mip` (the exact paths of :func:`kvopt.mip.solve`, the primal
search :func:`kvopt.mip.search.improve.improve`, the goodput program of
:mod:`kvopt.mip.goodput`) returns a :class:`SolveResult`; this module is below all of them.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from kvopt.core.schedule import Schedule
from kvopt.core.validate import FeasibilityReport

#: Status as a solver reports it (before :func:`kvopt.mip.solve` re-checks any proof).
BackendStatus = Literal["optimal", "time_limit", "infeasible", "error"]
#: The built-in backends (:func:`kvopt.mip.backends.backend_names`); one added with
#: :func:`~kvopt.mip.backends.register_backend` is accepted at run time too.
SolverName = Literal["highs", "cbc", "cpsat", "scipy"]
#: The formulations :func:`kvopt.mip.solve` accepts (:data:`kvopt.mip.ALL_FORMULATIONS`): the
#: MILPs of :mod:`kvopt.mip.model.builder` and the CP-SAT models of
#: :mod:`kvopt.mip.model.cpmodel`.
Formulation = Literal["naive", "tight", "tight+cuts", "tight+cores",
                      "cp", "cp+cores", "cp+pairs", "cp+exact"]


class SolveStatus(StrEnum):
    """Status of a solve. A ``str`` enum: ``SolveStatus.OPTIMAL == "optimal"`` and it is written
    to JSON as its value.

    ``OPTIMAL`` only when the proof holds (``integral_bound(bound) >= objective``,
    :func:`integral_bound`); ``TIME_LIMIT`` with an incumbent, a bound and a gap;
    ``INFEASIBLE``; ``ERROR``.

    Examples
    --------
    >>> SolveStatus("time_limit") is SolveStatus.TIME_LIMIT, SolveStatus.OPTIMAL == "optimal"
    (True, True)
    """

    OPTIMAL = "optimal"
    TIME_LIMIT = "time_limit"
    INFEASIBLE = "infeasible"
    ERROR = "error"

    def __repr__(self) -> str:  # shown as the plain string it compares equal to
        return repr(self.value)


def integral_bound(bound: float) -> float:
    """A lower bound on a total latency, rounded up to an integer: ``ceil(bound - tol)`` with
    ``tol = max(1e-6, 1e-9 |bound|)`` (room for the rounding in a solver's sums); ``-inf``,
    ``inf`` and ``nan`` unchanged.

    Valid because the total latency of every schedule of a slotted instance is an integer
    (starts, arrivals and outputs are whole slots), so ``OPT >= bound`` gives
    ``OPT >= ceil(bound)``. Every producer of :mod:`kvopt.mip` that reports a bound on TEL
    rounds it here, and so does ``kvopt bound``
    (:func:`kvopt.mip.certify.bound_report`): the default ``kvopt solve`` and ``kvopt bound``
    print the same figure for the same LP. A proof of optimality is ``integral_bound(bound)
    >= objective``.

    Examples
    --------
    >>> integral_bound(5645.31), integral_bound(5645.0000004), integral_bound(-math.inf)
    (5646.0, 5645.0, -inf)
    """
    if not math.isfinite(bound):
        return float(bound)
    return float(math.ceil(bound - max(1e-6, 1e-9 * abs(bound))))


def best_bound(bounds: Mapping[str, float | None]) -> tuple[str, float]:
    """The name and value of the largest finite bound of ``bounds`` (``None``, ``nan`` and
    infinities left out: not computed); the first of equals.

    The one choice of "the bound that won" for ``kvopt solve``'s portfolio
    (:mod:`kvopt.mip.portfolio`) and ``kvopt bound`` (:func:`kvopt.mip.certify.bound_report`).

    Examples
    --------
    >>> best_bound({"trivial": 12.0, "fluid": 15.5, "lp": None, "core": 15.5})
    ('fluid', 15.5)
    """
    valid = {k: float(v) for k, v in bounds.items() if v is not None and math.isfinite(v)}
    if not valid:
        raise ValueError("no finite bound among " + ", ".join(bounds))
    name = max(valid, key=valid.__getitem__)
    return name, valid[name]


#: Raw backend statuses (the values of :class:`SolveStatus`).
STATUSES: tuple[BackendStatus, ...] = ("optimal", "time_limit", "infeasible", "error")


@dataclass
class SolveResult:
    """Outcome of :func:`kvopt.mip.solve` (and of the primal search and the goodput program).

    Attributes
    ----------
    status
        A :class:`SolveStatus` (a ``str`` enum): ``"optimal"`` (proven), ``"time_limit"``,
        ``"infeasible"`` or ``"error"``.
    objective
        Validated total end-to-end latency of ``schedule`` (``None`` without incumbent).
    bound
        Best proven lower bound on OPT (solver bound or combinatorial bound); on total latency
        rounded up to an integer (:func:`integral_bound`), the raw values are in ``bounds``.
    gap
        ``(objective - bound) / objective`` (0 when optimal, ``None`` without both).
    schedule
        The validated incumbent.
    runtime_s
        Wall time of the whole call (it is what the time limit covers).
    time_limit, overrun_s
        The limit of the call and how far ``runtime_s`` went past it (0 within it).
    bounds
        Every lower bound considered: ``{name: {"value", "status": "computed" | "skipped",
        "reason"}}`` (``trivial``, ``volume``, ``fluid``, ``core1``, ``core2``, ``lp``,
        ``solver``); a skipped bound says why.
    ram
        Bytes: the RAM budget ``budget_bytes``, the formulation's size ``estimate`` and the
        solver process' ``peak_rss_bytes`` (``memory`` is the deprecated name of this field).
    steps
        Seconds per step (warm start, estimate, bounds, LP pre-bound, solve, validation).

    Examples
    --------
    >>> r = SolveResult(SolveStatus.OPTIMAL, 4.0, 4.0, 0.0, "highs", "tight", 0.1)
    >>> r.proven, r.to_dict()["status"]
    (True, 'optimal')
    """

    status: SolveStatus
    objective: float | None
    bound: float | None
    gap: float | None
    solver: str
    formulation: str
    runtime_s: float
    schedule: Schedule | None = None
    report: FeasibilityReport | None = None
    solver_status: str = ""
    incumbent_source: str = ""
    model: dict[str, Any] = field(default_factory=dict)
    time_limit: float | None = None
    overrun_s: float = 0.0
    bounds: dict[str, dict[str, Any]] = field(default_factory=dict)
    ram: dict[str, Any] = field(default_factory=dict)
    steps: dict[str, float] = field(default_factory=dict)

    @property
    def proven(self) -> bool:
        """True iff the status is ``"optimal"``."""
        return self.status == "optimal"

    @property
    def memory(self) -> dict[str, Any]:
        """Deprecated name of :attr:`ram` (kept for one release: ``memory`` means KV tokens)."""
        warnings.warn("SolveResult.memory is deprecated; use SolveResult.ram (bytes)",
                      DeprecationWarning, stacklevel=2)
        return self.ram

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (without the schedule)."""
        return {"status": self.status.value, "objective": self.objective, "bound": self.bound,
                "gap": self.gap, "solver": self.solver, "formulation": self.formulation,
                "runtime_s": round(self.runtime_s, 4), "solver_status": self.solver_status,
                "incumbent_source": self.incumbent_source, "model": self.model,
                "time_limit_s": self.time_limit, "overrun_s": round(self.overrun_s, 4),
                "bounds": self.bounds, "ram": self.ram, "steps": self.steps}
