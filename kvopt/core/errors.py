"""Exceptions raised by kvopt.

Every user-facing failure derives from :class:`KvoptError`. Bad input raises
:class:`InvalidInstanceError` (a ``ValueError``) whose message starts with the
name of the offending field, so the CLI can print it and exit with code 2.
"""

from __future__ import annotations


class KvoptError(Exception):
    """Base class of every kvopt error."""


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


class InfeasibleScheduleError(KvoptError):
    """A schedule failed :func:`kvopt.check_schedule`; ``report`` holds the violations."""

    def __init__(self, report: object) -> None:
        self.report = report
        super().__init__(str(report))


class SolverNotAvailableError(KvoptError):
    """A requested solver backend is unknown or cannot be imported."""
