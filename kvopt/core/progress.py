"""Progress reporting on stderr, the one helper every long computation uses.

On a terminal: a live ``tqdm`` bar (:class:`Progress`) or a ticking line (:class:`Heartbeat`).
Anywhere else (a pipe, a log file, CI): plain lines, at most one every ``every`` seconds, never
a carriage return, so logs stay readable. Disabled instances cost nothing.

The CLI decides whether to show progress (``--json`` and ``--no-progress`` turn it off); domain
functions take ``progress: bool`` and build one of these.

Examples
--------
>>> import io
>>> out = io.StringIO()                      # not a terminal: plain lines only
>>> with Progress(3, "demo", stream=out, every=0) as bar:
...     for _ in range(3):
...         bar.update()
>>> "\\r" in out.getvalue(), out.getvalue().splitlines()[-1].startswith("demo: 3/3")
(False, True)
"""

from __future__ import annotations

import sys
import threading
import time
from typing import IO, Any

__all__ = ["Heartbeat", "Progress", "is_terminal", "note"]


def is_terminal(stream: IO[str] | None = None) -> bool:
    """Whether ``stream`` (default ``sys.stderr``) is an interactive terminal.

    Examples
    --------
    >>> import io
    >>> is_terminal(io.StringIO())                 # a buffer, like a pipe or a log file
    False
    """
    s = sys.stderr if stream is None else stream
    try:
        return bool(s.isatty())
    except (AttributeError, ValueError):
        return False


def note(message: str, *, enabled: bool = True, stream: IO[str] | None = None) -> None:
    """One progress message line on stderr (e.g. the phase a long command entered).

    Examples
    --------
    >>> import sys
    >>> note("phase 2/3: solving the MIP", stream=sys.stdout)
    phase 2/3: solving the MIP
    >>> note("not shown", enabled=False, stream=sys.stdout)
    """
    if enabled:
        print(message, file=sys.stderr if stream is None else stream, flush=True)


class Progress:
    """Counted progress: ``update(k)`` as work items finish.

    Parameters
    ----------
    total
        Number of items (``None``: unknown).
    desc
        Label printed in front.
    enabled
        ``False`` makes every method a no-op.
    unit
        Item name (``"req"``, ``"inst"``).
    stream
        Default ``sys.stderr``.
    every
        Seconds between plain lines when ``stream`` is not a terminal.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()
    >>> with Progress(2, "solve", unit="inst", stream=out, every=0) as bar:
    ...     bar.update()
    ...     bar.update()
    >>> print(out.getvalue(), end="")              # elapsed seconds and ETA vary
    solve: 1/2 inst (50%), ... s, ETA ... s
    solve: 2/2 inst (100%), ... s
    solve: 2/2 inst (100%), ... s done
    >>> Progress(5, "off", enabled=False).update()  # disabled: a no-op
    """

    def __init__(self, total: int | None, desc: str, *, enabled: bool = True,
                 unit: str = "it", stream: IO[str] | None = None, every: float = 10.0) -> None:
        self.total, self.desc, self.unit, self.every = total, desc, unit, every
        self.enabled = enabled
        self.stream = sys.stderr if stream is None else stream
        self.n = 0
        self._t0 = time.perf_counter()
        self._last = self._t0
        self._printed = False
        self._bar: Any = None
        if enabled and is_terminal(self.stream):
            try:
                from tqdm import tqdm  # type: ignore[import-untyped]

                self._bar = tqdm(total=total, desc=desc, unit=unit, file=self.stream,
                                 leave=False)
            except ImportError:  # pragma: no cover - tqdm is a dependency
                self._bar = None

    def update(self, k: int = 1) -> None:
        """``k`` more items done."""
        if not self.enabled:
            return
        self.n += k
        if self._bar is not None:
            self._bar.update(k)
            return
        now = time.perf_counter()
        if now - self._last >= self.every:
            self._last = now
            self._line()

    def _line(self, final: bool = False) -> None:
        el = time.perf_counter() - self._t0
        of = f"/{self.total}" if self.total is not None else ""
        pct = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        tail = " done" if final else ""
        if not final and self.total and 0 < self.n < self.total:
            tail = f", ETA {el / self.n * (self.total - self.n):.0f} s"
        print(f"{self.desc}: {self.n}{of} {self.unit}{pct}, {el:.0f} s{tail}",
              file=self.stream, flush=True)
        self._printed = True

    def close(self) -> None:
        """Finish (a final line if plain lines were printed)."""
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._printed or self.every == 0:
            self._line(final=True)
        self.enabled = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Heartbeat:
    """Elapsed time of work without a count (a solver, an LP), from a background thread.

    On a terminal one line is rewritten every ``tick`` seconds; otherwise a plain line is
    printed every ``every`` seconds. Use as a context manager around the work.

    Examples
    --------
    >>> import io
    >>> out = io.StringIO()                        # not a terminal: a line every 30 s
    >>> with Heartbeat("LP relaxation", limit=60, stream=out, every=30) as hb:
    ...     total = sum(range(1000))               # work shorter than one period
    >>> hb.tty, hb.period, out.getvalue()
    (False, 30, '')
    """

    def __init__(self, label: str, limit: float | None = None, *, enabled: bool = True,
                 stream: IO[str] | None = None, tick: float = 5.0, every: float = 30.0) -> None:
        self.label, self.limit, self.enabled = label, limit, enabled
        self.stream = sys.stderr if stream is None else stream
        self.tty = is_terminal(self.stream)
        self.period = tick if self.tty else every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._wrote = False

    def _run(self) -> None:
        t0 = time.perf_counter()
        while not self._stop.wait(self.period):
            el = time.perf_counter() - t0
            lim = f" / {self.limit:.0f} s" if self.limit else " s"
            if self.tty:
                print(f"\r{self.label}: {el:.0f}{lim}", end="", file=self.stream, flush=True)
            else:
                print(f"{self.label}: {el:.0f}{lim}", file=self.stream, flush=True)
            self._wrote = True

    def __enter__(self) -> Heartbeat:
        if self.enabled:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if not self.enabled:
            return
        self._stop.set()
        self._thread.join()
        if self._wrote and self.tty:
            print(file=self.stream, flush=True)  # end the rewritten line
