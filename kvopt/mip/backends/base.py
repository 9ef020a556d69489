"""Backend protocol, result type and the registry of MILP backends.

A backend turns a :class:`~kvopt.mip.model.data.MILPData` into a solver model, runs it and
returns a :class:`BackendResult`. Backends import their solver lazily, so a missing solver
only fails when it is used (:class:`~kvopt.core.errors.SolverNotAvailableError`).
"""

from __future__ import annotations

import importlib
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from kvopt.core.errors import SolverNotAvailableError
from kvopt.core.limits import Deadline
from kvopt.mip.model.data import MILPData
from kvopt.mip.result import STATUSES, BackendStatus, SolveStatus

__all__ = ["STATUSES", "Backend", "BackendResult", "BackendStatus", "Capabilities", "SolveStatus",
           "backend_names", "get_backend", "register_backend", "solver_availability"]


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do.

    Attributes
    ----------
    mip_start
        Accepts a starting solution (``MILPData.x0``: MIP start, warm start or hint).
    reports_bound
        Reports a proven dual bound when stopped early (else only at optimality).
    threads
        Honours ``threads`` (parallel search).
    lp_relaxation
        Solves the LP relaxation (``relax=True``).
    formulations
        The formulation names :func:`kvopt.mip.solve` accepts with this backend (the
        time-indexed MILPs of :mod:`kvopt.mip.model.builder`; CP-SAT also runs the CP models of
        :mod:`kvopt.mip.model.cpmodel`, documented at :data:`kvopt.mip.solving.CP_FORMULATIONS`).

    Examples
    --------
    >>> caps = get_backend("highs").capabilities
    >>> caps.mip_start, caps.reports_bound, caps.threads, "tight" in caps.formulations
    (True, True, True, True)
    """

    mip_start: bool
    reports_bound: bool
    threads: bool
    lp_relaxation: bool
    formulations: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, bool]:
        """JSON-ready form."""
        return asdict(self)


@dataclass
class BackendResult:
    """What a backend returns.

    Attributes
    ----------
    status
        One of :data:`STATUSES` as reported by the solver (``solve`` re-checks proofs).
    x
        Best solution found (``None`` if none).
    objective
        Objective of ``x`` as the solver reports it.
    bound
        Proven lower bound (``-inf`` if none).
    runtime_s
        Wall time of the solver call.
    message
        Solver's own status text.

    Examples
    --------
    >>> from kvopt.mip.model.data import MILPData
    >>> res = get_backend("highs").solve(MILPData.example(), time_limit=10)
    >>> res.status, res.objective, res.bound, float(res.x.sum())
    ('optimal', 2.0, 2.0, 2.0)
    """

    status: BackendStatus
    x: NDArray[np.float64] | None
    objective: float | None
    bound: float
    runtime_s: float
    message: str = ""
    info: dict[str, Any] = field(default_factory=dict)


def unsolved_child(out: Any, what: str, limit: float | None, grace: float,
                   memory: str = "memory") -> BackendResult:
    """The result of a build-and-solve child process (``out``: the outcome of
    :func:`kvopt.core.isolate.run_isolated`) that returned nothing: killed at the deadline,
    ``"time_limit"``; out of memory, ``"error"``; both without a solution, so the caller
    keeps its incumbent. A :class:`~kvopt.core.errors.KvoptError` the child raised is raised
    again, and any other failure is an internal error (``RuntimeError``).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> out = SimpleNamespace(killed=True, out_of_memory=False, seconds=3.0)
    >>> res = unsolved_child(out, "the solver process", 2.0, 1.0)
    >>> res.status, res.x, res.message.endswith("within 2.0 s + 1.0 s and was killed")
    ('time_limit', None, True)
    """
    from kvopt.core.errors import KvoptError

    if out.killed:
        return BackendResult("time_limit", None, None, -np.inf, out.seconds,
                             f"stopped at the time limit: {what} did not return within "
                             f"{limit} s + {grace} s and was killed")
    if out.out_of_memory:
        return BackendResult("error", None, None, -np.inf, out.seconds,
                             f"{what} ran out of {memory}")
    if isinstance(out.exception, KvoptError):
        raise out.exception
    raise RuntimeError(f"{what} failed:\n{out.error}")


class Backend(Protocol):
    """The backend protocol: ``name``, ``module`` (import name), ``capabilities``, ``solve``.

    Examples
    --------
    >>> from kvopt.mip.model.data import MILPData
    >>> backend = get_backend("highs")              # a shipped class that follows the protocol
    >>> backend.name, backend.module
    ('highs', 'highspy')
    >>> d = MILPData.example()                      # integer optimum 2, LP relaxation 1.5
    >>> backend.solve(d, time_limit=10).objective, backend.solve(d, relax=True).objective
    (2.0, 1.5)
    """

    name: str
    module: str
    description: str
    capabilities: Capabilities

    def solve(self, data: MILPData, *, time_limit: float | None = None, threads: int = 1,
              relax: bool = False, verbose: bool = False,
              deadline: Deadline | None = None) -> BackendResult:
        """Solve ``data`` (its LP relaxation if ``relax``) within ``deadline`` (a caller's
        :class:`~kvopt.core.limits.Deadline`, which counts the model transfer too) or, without
        one, ``time_limit`` seconds from now."""
        ...


#: name -> "module:Class"; filled below, extend with :func:`register_backend`.
_REGISTRY: dict[str, str] = {
    "highs": "kvopt.mip.backends.highs:HighsBackend",
    "cbc": "kvopt.mip.backends.cbc:CbcBackend",
    "cpsat": "kvopt.mip.backends.cpsat:CpSatBackend",
    "scipy": "kvopt.mip.backends.scipy_milp:ScipyBackend",
}


def register_backend(name: str, target: str) -> None:
    """Register a backend class given as ``"module:Class"``.

    Examples
    --------
    >>> register_backend("highs-alias", "kvopt.mip.backends.highs:HighsBackend")
    >>> backend_names()[-1], get_backend("highs-alias").name
    ('highs-alias', 'highs')
    >>> del _REGISTRY["highs-alias"]                # undo, for the other examples
    """
    _REGISTRY[name] = target


def backend_names() -> list[str]:
    """All registered backend names (available or not).

    Examples
    --------
    >>> backend_names()
    ['highs', 'cbc', 'cpsat', 'scipy']
    """
    return list(_REGISTRY)


def get_backend(name: str) -> Backend:
    """Instantiate backend ``name``.

    Raises
    ------
    SolverNotAvailableError
        For an unknown name (the message lists the valid names) or a solver that cannot be
        imported.

    Examples
    --------
    >>> try:
    ...     get_backend("gurobi")
    ... except SolverNotAvailableError as exc:
    ...     print(exc)
    unknown solver 'gurobi'; valid: highs, cbc, cpsat, scipy
    """
    if name not in _REGISTRY:
        raise SolverNotAvailableError(
            f"unknown solver {name!r}; valid: {', '.join(_REGISTRY)}")
    mod_name, cls_name = _REGISTRY[name].split(":")
    cls = getattr(importlib.import_module(mod_name), cls_name)
    backend = cls()
    try:
        importlib.import_module(backend.module)
    except Exception as exc:  # ImportError or a broken binary wheel
        raise SolverNotAvailableError(
            f"solver {name!r} needs the Python module {backend.module!r}, which cannot be "
            f"imported: {exc}") from exc
    return backend


def solver_availability() -> list[dict[str, Any]]:
    """Availability of every registered backend (name, module, version, error).

    Examples
    --------
    >>> {row["name"] for row in solver_availability()} >= {"highs", "scipy"}
    True
    """
    rows = []
    for name in _REGISTRY:
        row: dict[str, Any] = {"name": name, "available": False, "version": None, "error": None}
        try:
            b = get_backend(name)
            row.update(module=b.module, description=b.description, available=True,
                       version=_version(b.module), capabilities=b.capabilities.to_dict())
        except SolverNotAvailableError as exc:
            row["error"] = str(exc)
        rows.append(row)
    return rows


def _version(module: str) -> str | None:
    from importlib import metadata

    dist = {"highspy": "highspy", "pulp": "PuLP", "ortools": "ortools", "scipy": "scipy"}
    try:
        return metadata.version(dist.get(module, module))
    except metadata.PackageNotFoundError:
        return None
