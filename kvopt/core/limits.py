"""Limits of a long computation: one wall-clock deadline for a whole call, and a memory budget.

A :class:`Deadline` is created once at the top of a call (``solve``, ``bound_report``) and
threaded through every step (model build, LP pre-bound, warm start, solver, validation);
each step asks it how much time is left, so a solver's own limit is always *what remains*
of the caller's limit, and the overrun (if any) is measured and reported, never hidden.

The memory budget (``ram``) is the number of bytes a formulation may take (``memory`` alone
always means the KV cache of an instance, in tokens). It is, in order: the value
given by the caller (API argument or ``--memory-budget``), the environment variable
:data:`MEMORY_BUDGET_ENV`, or :data:`DEFAULT_MEMORY_FRACTION` of the memory available now
(``MemAvailable`` of ``/proc/meminfo``, read at most once a second, capped by the
address-space limit ``RLIMIT_AS`` of the process when one is set).
"""

from __future__ import annotations

import math
import os
import re
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

from kvopt.core.errors import UsageError

#: Environment variable holding the default memory budget (e.g. ``"4G"``, ``"512M"``).
MEMORY_BUDGET_ENV = "KVOPT_MEMORY_BUDGET"
#: Share of the currently available memory used as the default budget.
DEFAULT_MEMORY_FRACTION = 0.5
#: Budget used when the available memory cannot be read (no ``/proc/meminfo``).
FALLBACK_MEMORY_BUDGET = 4 * 2**30

_UNITS = {"": 1, "B": 1, "K": 2**10, "KB": 10**3, "KIB": 2**10, "M": 2**20, "MB": 10**6,
          "MIB": 2**20, "G": 2**30, "GB": 10**9, "GIB": 2**30, "T": 2**40, "TB": 10**12,
          "TIB": 2**40}


def check_time_limit(value: object, name: str = "time_limit") -> float | None:
    """A time limit in seconds: ``None`` (no limit) or a finite number ``> 0``.

    Raises
    ------
    UsageError
        Naming ``name`` for a non-positive, non-finite or non-numeric value (HiGHS would take
        a negative limit as "no limit").

    Examples
    --------
    >>> check_time_limit(2), check_time_limit(None)
    (2.0, None)
    >>> try:
    ...     check_time_limit(-1, "--time-limit")
    ... except UsageError as exc:
    ...     print(exc.field, "|", exc.reason)
    --time-limit | must be a finite number of seconds > 0 (None: no limit), got -1
    """
    if value is None:
        return None
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not math.isfinite(float(value)) or float(value) <= 0:  # type: ignore[arg-type]
        raise UsageError(name, "must be a finite number of seconds > 0 (None: no limit), "
                         f"got {value!r}")
    return float(value)  # type: ignore[arg-type]


@dataclass
class Deadline:
    """A deadline shared by every step of one call: the one time budget of a computation.

    Created once at the API edge (from a time limit checked by :func:`check_time_limit`, see
    :func:`as_deadline`) and passed down; a step asks it what is left instead of keeping its
    own clock. A part of the budget for one phase is a :meth:`sub` deadline.

    Parameters
    ----------
    limit
        Seconds from ``t0`` (``None``: no limit).
    t0
        Start on ``clock`` (default: now). The default clock, :func:`time.monotonic`, is
        system-wide, so a forked solver process reads the same deadline.
    clock
        The clock (default wall-clock :func:`time.monotonic`; :meth:`cpu` makes a deadline
        on the CPU time of this process).

    Examples
    --------
    >>> d = Deadline(10.0)
    >>> 9.0 < d.remaining() <= 10.0, d.expired(), d.overrun()
    (True, False, 0.0)
    >>> Deadline(None).remaining() is None
    True
    >>> part = d.sub(2.0)            # at most 2 s of what is left
    >>> 1.0 < part.remaining() <= 2.0, part.clock is d.clock
    (True, True)
    """

    limit: float | None
    t0: float = None  # type: ignore[assignment]  # set from ``clock`` in __post_init__
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.t0 is None:
            self.t0 = self.clock()

    @classmethod
    def cpu(cls, limit: float | None) -> Deadline:
        """A deadline on the CPU seconds of this process (all threads), for fair budgets on a
        loaded machine (not shared with forked processes).

        Examples
        --------
        >>> Deadline.cpu(5.0).clock is time.process_time
        True
        """
        return cls(limit, clock=time.process_time)

    def elapsed(self) -> float:
        """Seconds since ``t0``."""
        return self.clock() - self.t0

    def remaining(self, reserve: float = 0.0, *, floor: float = 0.0) -> float | None:
        """Seconds left, less ``reserve``, and at least ``floor`` (``None`` without a limit).

        A solver's own limit is ``remaining(floor=...)``: a tiny positive floor, since a
        solver given 0 may read it as "no limit".
        """
        if self.limit is None:
            return None
        return max(self.limit - self.elapsed() - reserve, floor, 0.0)

    def share(self, fraction: float, *, reserve: float = 0.0,
              at_least: float = 0.0) -> float | None:
        """``fraction`` of what remains (after ``reserve``), but at least ``at_least``."""
        left = self.remaining(reserve)
        return None if left is None else max(fraction * left, at_least)

    def sub(self, seconds: float | None, *, reserve: float = 0.0) -> Deadline:
        """A deadline for one phase, starting now: ``seconds`` (``None``: no cap of its own)
        but never past this deadline less ``reserve``; on the same clock."""
        left = self.remaining(reserve)
        caps = [c for c in (seconds, left) if c is not None]
        return Deadline(min(caps) if caps else None, clock=self.clock)

    def expired(self) -> bool:
        """True once the limit has passed."""
        return self.limit is not None and self.elapsed() >= self.limit

    def overrun(self) -> float:
        """Seconds past the limit (0 when within it or without a limit)."""
        return 0.0 if self.limit is None else max(self.elapsed() - self.limit, 0.0)

    def to_dict(self) -> dict[str, float | None]:
        """``time_limit_s``, ``runtime_s`` and ``overrun_s`` now, rounded to ms."""
        return {"time_limit_s": self.limit, "runtime_s": round(self.elapsed(), 3),
                "overrun_s": round(self.overrun(), 3)}


class DeadlineExpired(RuntimeError):
    """A step of a call stopped at its :class:`Deadline` (the caller goes on without it,
    and says so).

    Examples
    --------
    >>> from kvopt import Instance
    >>> from kvopt.core.mcsf import mcsf_starts
    >>> inst = Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])
    >>> try:
    ...     mcsf_starts(inst, deadline=Deadline(0.0))   # already expired
    ... except DeadlineExpired as exc:
    ...     print(exc)
    MC-SF stopped at its deadline (0 s) at slot 0, 2 requests not started
    """


def as_deadline(time_limit: object, deadline: Deadline | None = None,
                name: str = "time_limit") -> Deadline:
    """The budget of a call at its API edge: the caller's ``deadline`` if given (a step of a
    longer call), else a new one from ``time_limit``, checked once here
    (:func:`check_time_limit`).

    Examples
    --------
    >>> as_deadline(5).limit, as_deadline(None).limit
    (5.0, None)
    >>> d = Deadline(3.0)
    >>> as_deadline(60, d) is d
    True
    """
    if deadline is not None:
        return deadline
    return Deadline(check_time_limit(time_limit, name))


def kvopt_start() -> float:
    """When kvopt started in this process, on the :func:`time.monotonic` clock: the first
    statement of ``import kvopt`` (:data:`kvopt._started.STARTED`).

    A command-line tool starts its :class:`Deadline` here, so that kvopt's imports count
    against ``--time-limit`` like everything else, and nothing before kvopt does: the process
    start time (``/proc/self/stat``) would include whatever a shell did before it exec'd
    kvopt in its own process (``bash -c 'sleep 25 && kvopt solve ...'``).

    Examples
    --------
    >>> 0 <= time.monotonic() - kvopt_start() < 3600
    True
    """
    from kvopt._started import STARTED

    return STARTED


def parse_bytes(text: str | int | float, name: str = "memory_budget") -> int:
    """Bytes from ``"4G"``, ``"512M"``, ``"1.5GiB"``, ``"2GB"`` or a plain number.

    ``K``, ``M``, ``G``, ``T`` (and ``KiB`` ...) are binary units, ``KB``, ``MB``, ``GB``,
    ``TB`` decimal ones.

    Examples
    --------
    >>> parse_bytes("4G"), parse_bytes("1.5GB"), parse_bytes(1000)
    (4294967296, 1500000000, 1000)
    >>> try:
    ...     parse_bytes("lots", "--memory-budget")
    ... except UsageError as exc:
    ...     print(exc.reason)
    expected bytes such as 4G, 512M or 2000000000, got 'lots'
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        value = float(text)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*", str(text))
        unit = m.group(2).upper() if m else ""
        if m is None or unit not in _UNITS:
            raise UsageError(name, "expected bytes such as 4G, 512M or 2000000000, got "
                             f"{text!r}")
        value = float(m.group(1)) * _UNITS[unit]
    if not math.isfinite(value) or value <= 0:
        raise UsageError(name, f"must be a positive number of bytes, got {text!r}")
    return int(value)


def format_bytes(n: float) -> str:
    """Human-readable binary size.

    Examples
    --------
    >>> format_bytes(3 * 2**30), format_bytes(1536), format_bytes(12)
    ('3.0 GiB', '1.5 KiB', '12 B')
    """
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} B"


#: ``MemAvailable`` is read at most once per this many seconds (:func:`_meminfo_available`).
MEMINFO_TTL_S = 1.0
_meminfo_cache: tuple[float, int | None] | None = None


def _meminfo_available() -> int | None:
    """``MemAvailable`` in bytes, read at most once per :data:`MEMINFO_TTL_S` seconds: a small
    simulation checks several allocations against the budget, and reading ``/proc/meminfo``
    for each took ~12 % of its time (``kvopt.report.ratios.adversarial_rows``: 5020
    simulations, 30278 reads)."""
    global _meminfo_cache
    now = time.monotonic()
    if _meminfo_cache is not None and now - _meminfo_cache[0] < MEMINFO_TTL_S:
        return _meminfo_cache[1]
    value: int | None = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    value = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass                                   # value stays None: no reading
    _meminfo_cache = (now, value)
    return value


def _vm_size() -> int | None:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def address_space_headroom() -> int | None:
    """Bytes this process may still map under its ``RLIMIT_AS`` (``None``: no limit).

    Examples
    --------
    >>> h = address_space_headroom()   # None unless this process runs under a cap
    >>> h is None or h >= 0
    True
    >>> from kvopt.core.isolate import run_isolated
    >>> capped = run_isolated(address_space_headroom, memory_cap=2**30).value  # child: +1 GiB
    >>> 0 < capped <= 2**30
    True
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    return max(int(soft) - (_vm_size() or 0), 0)


def available_memory() -> int | None:
    """Memory the process can use now: ``MemAvailable``, capped by the ``RLIMIT_AS``
    headroom (``None`` if neither is known).

    Examples
    --------
    >>> m = available_memory()
    >>> m is None or m > 0
    True
    """
    vals = [v for v in (_meminfo_available(), address_space_headroom()) if v is not None]
    return min(vals) if vals else None


def check_allocation(nbytes: float, what: str, field: str,
                     budget: str | int | float | None = None) -> None:
    """Refuse, before it is made, an allocation sized by the input (a horizon, an output length,
    an arrival span) that the memory budget (:func:`resolve_memory_budget`) cannot hold, or
    that exceeds the memory available now (:func:`available_memory`) under a budget set
    above it.

    Raises
    ------
    MemoryBudgetError
        Naming ``field`` (the instance field whose size asks for it, e.g.
        ``"requests.output"``), with ``what`` needed it and both sizes.

    Examples
    --------
    >>> check_allocation(8 * 10**6, "a window of 1e6 slots", "requests.output", "1G")
    >>> try:
    ...     check_allocation(8e9, "a window of 1e9 slots", "requests.output", "1G")
    ... except UsageError as exc:
    ...     print(exc.field, "|", exc.reason)
    requests.output | a window of 1e9 slots would need 7.5 GiB, more than the memory budget \
of 1.0 GiB (KVOPT_MEMORY_BUDGET, or a command's --memory-budget)
    """
    from kvopt.core.errors import MemoryBudgetError

    cap = resolve_memory_budget(budget)
    if nbytes > cap:
        raise MemoryBudgetError(field, f"{what} would need {format_bytes(nbytes)}, more than "
                                f"the memory budget of {format_bytes(cap)} ({MEMORY_BUDGET_ENV}"
                                ", or a command's --memory-budget)", estimate=nbytes,
                                budget=cap)
    avail = machine_limit(cap)
    if nbytes > avail:
        raise MemoryBudgetError(field, f"{what} would need {format_bytes(nbytes)}, more than "
                                f"the {format_bytes(avail)} of memory available now (the "
                                f"budget of {format_bytes(cap)} allows it; this machine "
                                "does not)", estimate=nbytes, budget=avail)


def machine_limit(budget: int) -> int:
    """``budget`` capped by the memory available now (:func:`available_memory`): a budget
    set above the machine does not create memory (:func:`check_allocation` and the MIP
    sizing refuse what exceeds it).

    Examples
    --------
    >>> machine_limit(1) == 1 and machine_limit(2**70) <= 2**70
    True
    """
    avail = available_memory()
    return budget if avail is None else min(budget, avail)


#: The budget of the call in progress (:func:`memory_budget_scope`), read first by
#: :func:`resolve_memory_budget` when it is given no value.
_SCOPED_BUDGET: ContextVar[int | None] = ContextVar("kvopt_memory_budget", default=None)


@contextmanager
def memory_budget_scope(value: str | int | float | None,
                        name: str = "memory_budget") -> Iterator[int | None]:
    """Within the block, every allocation check without a budget of its own
    (:func:`check_allocation`: MC-SF's window, the simulator's profiles, the list search's
    tables, ...) uses ``value`` (``None``: no change). A command's ``--memory-budget`` and
    :func:`kvopt.mip.solve`'s ``ram`` set it, so the budget given is the budget of the whole
    call, not only of the model. Forked children inherit it.

    Examples
    --------
    >>> with memory_budget_scope("1M"):
    ...     resolve_memory_budget()
    1048576
    >>> with memory_budget_scope("1M"):
    ...     check_allocation(8 * 10**6, "a window of 1e6 slots", "requests.output")
    Traceback (most recent call last):
    ...
    kvopt.core.errors.MemoryBudgetError: invalid requests.output: a window of 1e6 slots would \
need 7.6 MiB, more than the memory budget of 1.0 MiB (KVOPT_MEMORY_BUDGET, or a command's \
--memory-budget)
    """
    if value is None:
        yield None
        return
    token = _SCOPED_BUDGET.set(parse_bytes(value, name))
    try:
        yield _SCOPED_BUDGET.get()
    finally:
        _SCOPED_BUDGET.reset(token)


def resolve_memory_budget(value: str | int | float | None = None,
                          name: str = "memory_budget") -> int:
    """The RAM budget in bytes (see the module docstring for the order of sources).

    Examples
    --------
    >>> resolve_memory_budget("2G")
    2147483648
    >>> resolve_memory_budget() > 0
    True
    """
    if value is not None:
        return parse_bytes(value, name)
    scoped = _SCOPED_BUDGET.get()
    if scoped is not None:
        return scoped
    env = os.environ.get(MEMORY_BUDGET_ENV)
    if env:
        return parse_bytes(env, MEMORY_BUDGET_ENV)
    avail = available_memory()
    if avail is None:
        return FALLBACK_MEMORY_BUDGET
    return max(int(DEFAULT_MEMORY_FRACTION * avail), 1)


def memory_budget(value: str | int | float | None = None, name: str = "memory_budget") -> int:
    """Deprecated name of :func:`resolve_memory_budget` (kept for one release).

    Examples
    --------
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     memory_budget("2G"), caught[0].category.__name__
    (2147483648, 'DeprecationWarning')
    """
    warnings.warn("kvopt.core.limits.memory_budget is deprecated; use resolve_memory_budget",
                  DeprecationWarning, stacklevel=2)
    return resolve_memory_budget(value, name)
