"""Exceptions raised by kvopt.

Every user-facing failure derives from :class:`KvoptError`, and names what was wrong so the
CLI can print it and exit with code 2:

- :class:`InvalidInstanceError` -- the content of an instance (a field of the JSON or CSV);
- :class:`InvalidScheduleError` -- the content of a schedule file;
- :class:`UsageError` -- a command-line flag or an API argument that is not instance data
  (:class:`UsageTypeError` when its type is wrong).

Each is also the builtin exception that describes it (``ValueError``, ``TypeError``), so code
written ``except ValueError`` keeps working.

Anything else that escapes is an internal error (a bug), never reported as a user mistake.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class KvoptError(Exception):
    """Base class of every kvopt error.

    Examples
    --------
    Catch every user-facing failure at once; errors built from ``(field, reason)`` keep both
    through pickling (solver child processes):

    >>> import pickle
    >>> err = InvalidInstanceError("memory", "must be a positive integer, got -3")
    >>> isinstance(err, KvoptError), isinstance(UsageError("--n", "bad"), KvoptError)
    (True, True)
    >>> back = pickle.loads(pickle.dumps(err))
    >>> type(back).__name__, back.field, back.reason
    ('InvalidInstanceError', 'memory', 'must be a positive integer, got -3')
    """

    def __reduce__(self) -> Any:
        # errors built from (field, reason) pickle as such (solver child processes, Dask)
        if hasattr(self, "field") and hasattr(self, "reason"):
            return (self.__class__, (self.field, self.reason), self.__dict__)
        return super().__reduce__()


class InvalidInstanceError(KvoptError, ValueError):
    """A malformed or impossible instance (or schedule file).

    Parameters
    ----------
    field
        Name of the offending field, e.g. ``"requests.output"``.
    reason
        Human readable reason.

    Examples
    --------
    >>> str(InvalidInstanceError("memory", "must be a positive integer, got -3"))
    "invalid field 'memory': must be a positive integer, got -3"
    """

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"invalid field {field!r}: {reason}")


class UsageError(KvoptError, ValueError):
    """A bad command-line flag or API argument (not instance or schedule content).

    Parameters
    ----------
    flag
        The flag or argument, e.g. ``"--time-limit"`` or ``"time_limit"``.
    reason
        Human readable reason.

    Examples
    --------
    >>> str(UsageError("--time-limit", "must be > 0, got -1"))
    'invalid --time-limit: must be > 0, got -1'
    """

    def __init__(self, flag: str, reason: str) -> None:
        self.field = flag
        self.reason = reason
        super().__init__(f"invalid {flag}: {reason}")


class UsageTypeError(UsageError, TypeError):
    """An API argument of the wrong type (a :class:`UsageError` and a :class:`TypeError`).

    Examples
    --------
    >>> err = UsageTypeError("policy", "must be a name, a policy object or a function, got 3")
    >>> isinstance(err, TypeError), isinstance(err, ValueError), str(err)
    (True, True, 'invalid policy: must be a name, a policy object or a function, got 3')
    """


class MemoryBudgetError(UsageError):
    """A formulation (or bound) whose estimated size exceeds the memory budget.

    Raised before anything is built; ``estimate`` is the refused size estimate, ``budget``
    the budget in bytes and ``alternatives`` the estimates of formulations that would fit.

    Examples
    --------
    >>> str(MemoryBudgetError("--formulation", "tight needs 24 GiB"))
    'invalid --formulation: tight needs 24 GiB'
    """

    def __init__(self, flag: str, reason: str, *, estimate: object = None, budget: int = 0,
                 alternatives: Sequence[object] | None = None) -> None:
        super().__init__(flag, reason)
        self.estimate = estimate
        self.budget = budget
        self.alternatives = list(alternatives or [])


class InvalidScheduleError(KvoptError, ValueError):
    """A malformed schedule file (its JSON content, not its feasibility).

    Examples
    --------
    >>> str(InvalidScheduleError("runs", "missing"))
    "invalid schedule field 'runs': missing"
    """

    def __init__(self, field: str, reason: str) -> None:
        self.field = field
        self.reason = reason
        super().__init__(f"invalid schedule field {field!r}: {reason}")


class InfeasibleScheduleError(KvoptError):
    """A schedule failed :func:`kvopt.check_schedule`; ``report`` holds the violations.

    Examples
    --------
    >>> from kvopt import Instance, Schedule
    >>> from kvopt.core.validate import assert_feasible
    >>> tight = Instance(memory=6, arrival=[0, 0], prompt=[1, 1], output=[3, 3])
    >>> try:
    ...     assert_feasible(tight, Schedule.from_starts(tight, [0, 0]))
    ... except InfeasibleScheduleError as exc:
    ...     print(exc.report.kinds())
    ...     print(exc)
    {'memory'}
    1 violation(s):
      memory: memory 8 > M = 6 at slot 3
    """

    def __init__(self, report: object) -> None:
        self.report = report
        super().__init__(str(report))


class SolverNotAvailableError(KvoptError):
    """A requested solver backend is unknown or cannot be imported.

    Examples
    --------
    >>> from kvopt.mip.backends.base import get_backend
    >>> try:
    ...     get_backend("gurobi")
    ... except SolverNotAvailableError as exc:
    ...     print(exc)
    unknown solver 'gurobi'; valid: highs, cbc, cpsat, scipy
    """
