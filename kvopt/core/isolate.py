"""Run a function in a forked child process that is killed at a deadline.

Solvers do not always stop at their own time limit (HiGHS' presolve and MIP setup, CBC's
preprocessing and PuLP's model build do not look at the clock), and a model can use more
memory than estimated. :func:`run_isolated` runs such a step in a child process (``fork``:
nothing is pickled on the way in) in its own process group, so that

- at ``deadline + grace`` the whole group (the child and e.g. the CBC binary it started) is
  killed and the caller gets :class:`IsolatedOutcome` with ``killed=True``;
- the child's address space may be capped (``RLIMIT_AS``) at what it had at the fork plus a
  memory budget, so a model that does not fit fails in the child (``MemoryError``) and not
  in the kernel's OOM killer.

Where ``fork`` is missing (Windows) the function runs in-process, with neither guarantee.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kvopt.core.limits import Deadline, _vm_size


@dataclass
class IsolatedOutcome:
    """What :func:`run_isolated` observed.

    Attributes
    ----------
    value
        The function's return value (``None`` unless ``ok``).
    ok
        The function returned.
    killed
        The child was killed before it returned: at the deadline (plus grace), or by the
        caller's :meth:`IsolatedJob.kill` (``error`` says which).
    out_of_memory
        The child raised ``MemoryError`` (its memory cap was hit).
    error
        Text of an exception raised in the child, or of the signal that ended it.
    exception
        The child's exception object, when it could be sent back (re-raised by the caller
        for user errors).
    peak_rss
        The child's peak resident set size in bytes (``None`` if unknown).
    seconds
        Wall time of the call.
    isolated
        False when the function ran in-process (no ``fork``).

    Examples
    --------
    >>> out = run_isolated(lambda: [1, 2, 3])
    >>> out.ok, out.value, out.killed, out.isolated
    (True, [1, 2, 3], False, True)
    >>> out = run_isolated(lambda: 1 / 0)   # the child's exception comes back, not raised
    >>> out.ok, type(out.exception).__name__, out.error.splitlines()[-1]
    (False, 'ZeroDivisionError', 'ZeroDivisionError: division by zero')
    """

    value: Any = None
    ok: bool = False
    killed: bool = False
    out_of_memory: bool = False
    error: str = ""
    exception: BaseException | None = None
    peak_rss: int | None = None
    seconds: float = 0.0
    isolated: bool = True


def _child(fn: Callable[[], Any], wfd: int, memory_cap: int | None) -> None:
    code = 0
    try:
        os.setpgid(0, 0)
        if memory_cap is not None:
            import resource

            base = _vm_size() or 0
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            cap = base + int(memory_cap)
            if soft != resource.RLIM_INFINITY:
                cap = min(cap, int(soft))
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        try:
            payload: tuple[Any, ...] = ("ok", fn())
        except MemoryError:
            payload = ("oom", "MemoryError")
        except BaseException as exc:  # sent back to the parent, which decides
            text = "".join(traceback.format_exception(exc))
            try:
                pickle.loads(pickle.dumps(exc))
                payload = ("exc", text, exc)
            except Exception:
                payload = ("exc", text, None)
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        try:
            data = pickle.dumps((*payload, peak), protocol=pickle.HIGHEST_PROTOCOL)
        except MemoryError:
            data = pickle.dumps(("oom", "MemoryError", peak))
        write_all(wfd, data)
    except BaseException:  # pragma: no cover - last resort, the parent sees a short read
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def fork_piped() -> tuple[int, int]:
    """Fork with a pipe from the child to the parent (stdout and stderr flushed first, the
    warning about forking a threaded process silenced).

    Returns ``(0, write_fd)`` in the child and ``(child_pid, read_fd)`` in the parent; the
    other end of the pipe is closed on each side.

    Examples
    --------
    >>> pid, fd = fork_piped()
    >>> if pid == 0:   # the child sends its bytes and exits at once
    ...     write_all(fd, b"hello from the child")
    ...     os._exit(0)
    >>> with os.fdopen(fd, "rb") as fh:
    ...     fh.read()
    b'hello from the child'
    >>> os.waitpid(pid, 0)[1]   # exit status
    0
    """
    sys.stdout.flush()
    sys.stderr.flush()
    rfd, wfd = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork in a threaded process
        pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        os.close(rfd)
        return 0, wfd
    os.close(wfd)
    return pid, rfd


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the file descriptor ``fd``.

    Examples
    --------
    >>> r, w = os.pipe()
    >>> write_all(w, b"x" * 1000)
    >>> os.close(w)
    >>> len(os.read(r, 4096))
    1000
    >>> os.close(r)
    """
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def run_isolated(
    fn: Callable[[], Any],
    *,
    deadline: Deadline | None = None,
    grace: float = 1.0,
    memory_cap: int | None = None,
    on_wait: Callable[[float], None] | None = None,
    wait_every: float = 5.0,
) -> IsolatedOutcome:
    """Call ``fn()`` in a forked child; kill it ``grace`` seconds after ``deadline``.

    Parameters
    ----------
    fn
        A function without arguments (a closure); its return value must pickle.
    deadline
        When to give up (``None``: wait for the child however long it takes).
    grace
        Seconds past the deadline the child gets to stop by itself (solvers given the
        remaining time usually return just after it).
    memory_cap
        Bytes of address space the child may add to what it has at the fork (``None``: no
        cap).
    on_wait
        Called with the elapsed seconds every ``wait_every`` seconds while waiting (progress).

    Returns
    -------
    IsolatedOutcome

    Examples
    --------
    >>> run_isolated(lambda: 6 * 7).value
    42
    >>> out = run_isolated(lambda: time.sleep(30), deadline=Deadline(0.2), grace=0.1)
    >>> out.killed, out.seconds < 5
    (True, True)
    """
    return start_isolated(fn, memory_cap=memory_cap).wait(
        deadline=deadline, grace=grace, on_wait=on_wait, wait_every=wait_every)


def start_isolated(fn: Callable[[], Any], *, memory_cap: int | None = None) -> IsolatedJob:
    """Start ``fn()`` in a forked child and return at once (:func:`run_isolated` is this plus
    :meth:`IsolatedJob.wait`): the caller works meanwhile and collects the result with
    :meth:`IsolatedJob.poll` (non-blocking) or :meth:`IsolatedJob.wait`.

    Examples
    --------
    >>> job = start_isolated(lambda: sum(range(10)))
    >>> job.wait().value
    45
    """
    job = IsolatedJob(t0=time.monotonic())
    if not hasattr(os, "fork"):  # pragma: no cover - not POSIX
        try:
            job.outcome = IsolatedOutcome(value=fn(), ok=True, isolated=False)
        except MemoryError:
            job.outcome = IsolatedOutcome(out_of_memory=True, error="MemoryError",
                                          isolated=False)
        return job
    pid, rfd = fork_piped()
    if pid == 0:  # pragma: no cover - runs in the child
        _child(fn, rfd, memory_cap)
    job.pid, job.rfd = pid, rfd
    return job


@dataclass
class IsolatedJob:
    """A child process started by :func:`start_isolated` and the bytes it sent so far.

    Examples
    --------
    >>> job = start_isolated(lambda: time.sleep(30))
    >>> job.poll() is None   # still running: poll never waits
    True
    >>> job.kill().killed
    True
    >>> job = start_isolated(lambda: "done")
    >>> job.wait().value, job.poll().ok   # once finished, poll returns the same outcome
    ('done', True)
    """

    t0: float
    pid: int = -1
    rfd: int = -1
    chunks: list[bytes] = field(default_factory=list)
    outcome: IsolatedOutcome | None = None

    def _read(self, timeout: float) -> bool:
        """Read what the child sent within ``timeout`` seconds; ``True`` at end of data."""
        ready, _, _ = select.select([self.rfd], [], [], max(timeout, 0.0))
        if ready:
            chunk = os.read(self.rfd, 1 << 20)
            if not chunk:
                return True
            self.chunks.append(chunk)
        return False

    def poll(self) -> IsolatedOutcome | None:
        """The outcome if the child has finished (reads what is there, never waits)."""
        if self.outcome is None:
            while self.rfd >= 0:
                ready, _, _ = select.select([self.rfd], [], [], 0.0)
                if not ready:
                    return None
                if self._read(0.0):
                    self._finish(killed=False)
                    break
        return self.outcome

    def wait(self, *, deadline: Deadline | None = None, grace: float = 1.0,
             on_wait: Callable[[float], None] | None = None,
             wait_every: float = 5.0) -> IsolatedOutcome:
        """Wait for the child; kill it ``grace`` seconds after ``deadline``."""
        if self.outcome is not None:
            return self.outcome
        killed = False
        last_tick = time.monotonic()
        try:
            while True:
                wait = wait_every
                if deadline is not None and deadline.limit is not None:
                    left = deadline.limit + grace - deadline.elapsed()
                    if left <= 0:
                        killed = True
                        break
                    wait = min(wait, left)
                if self._read(wait):
                    break
                if on_wait is not None and time.monotonic() - last_tick >= wait_every:
                    last_tick = time.monotonic()
                    on_wait(last_tick - self.t0)
        except BaseException:
            killed = True
            raise
        finally:
            self._finish(killed=killed)
        assert self.outcome is not None
        return self.outcome

    def kill(self, why: str | None = None) -> IsolatedOutcome:
        """Stop the child now (if it is still running) and return its outcome; a child still
        running is reported ``killed``, with error ``why`` (default :data:`KILLED_EARLY`).

        Examples
        --------
        >>> job = start_isolated(lambda: time.sleep(30))
        >>> out = job.kill("stopped: the other search proved the optimum first")
        >>> out.killed, out.error
        (True, 'stopped: the other search proved the optimum first')
        """
        if self.outcome is None:
            self._finish(killed=True, why=why or KILLED_EARLY)
        assert self.outcome is not None
        return self.outcome

    def _finish(self, *, killed: bool, why: str | None = None) -> None:
        os.close(self.rfd)
        self.rfd = -1
        if killed:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.pid, signal.SIGKILL)
        _, status = os.waitpid(self.pid, 0)
        self.outcome = _outcome(b"".join(self.chunks), status, killed,
                                time.monotonic() - self.t0, why)


#: ``IsolatedOutcome.error`` of a child killed at its deadline (plus grace).
KILLED_AT_DEADLINE = "killed at the deadline"
#: ``IsolatedOutcome.error`` of a child stopped by :meth:`IsolatedJob.kill` before it returned.
KILLED_EARLY = "stopped by the caller before the deadline"


def _outcome(data: bytes, status: int, killed: bool, seconds: float,
             why: str | None = None) -> IsolatedOutcome:
    """What the child's bytes and exit status say (``why``: the reason a kill is reported
    with, :data:`KILLED_AT_DEADLINE` unless given)."""
    if killed:
        return IsolatedOutcome(killed=True, error=why or KILLED_AT_DEADLINE, seconds=seconds)
    try:
        payload = pickle.loads(data)
    except Exception:
        sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        how = (f"signal {signal.Signals(sig).name}" if sig is not None
               else f"exit code {os.WEXITSTATUS(status)}")
        return IsolatedOutcome(error=f"solver process ended without a result ({how})",
                               out_of_memory=sig == signal.SIGKILL, seconds=seconds)
    kind, peak = payload[0], payload[-1]
    if kind == "ok":
        return IsolatedOutcome(value=payload[1], ok=True, peak_rss=peak, seconds=seconds)
    if kind == "oom":
        return IsolatedOutcome(out_of_memory=True, error="MemoryError", peak_rss=peak,
                               seconds=seconds)
    return IsolatedOutcome(error=payload[1], exception=payload[2], peak_rss=peak,
                           seconds=seconds)
