"""Helpers shared by the CLI sub-commands: JSON output, instance loading, progress."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kvopt.core.errors import UsageError
from kvopt.core.instance import Instance, load_instance
from kvopt.core.progress import Heartbeat, Progress, note  # the progress helpers every command uses

__all__ = ["DEFAULT_SEED", "Heartbeat", "Progress", "add_instance_argument", "add_json_argument",
           "add_solve_time_limit", "bytes_arg", "check_input_file", "check_output_dir",
           "check_output_file", "emit", "float_in", "int_at_least", "json_stdout", "note",
           "read_instance", "seed_arg", "stdout_to_stderr", "write_stdout"]

#: Seed every randomized command uses when ``--seed`` is not given (printed with the results).
DEFAULT_SEED = 0


def add_instance_argument(p: argparse.ArgumentParser) -> None:
    """``INSTANCE`` (JSON v1 or trace CSV) and ``--memory`` for CSV traces."""
    p.add_argument("instance", metavar="INSTANCE", help="instance JSON (v1) or trace CSV")
    from kvopt.core.instance import MAX_REPRESENTABLE

    p.add_argument("--memory", type=int_at_least(1, MAX_REPRESENTABLE), default=None,
                   help="KV capacity M in tokens (trace CSV default 16492; overrides JSON)")


def add_json_argument(p: argparse.ArgumentParser) -> None:
    """The ``--json`` flag every sub-command takes."""
    p.add_argument("--json", action="store_true", help="print one JSON object to stdout")


def read_instance(args: argparse.Namespace) -> Instance:
    """Load the instance named by ``args.instance`` (raises InvalidInstanceError)."""
    return load_instance(args.instance, memory=getattr(args, "memory", None))


def emit(args: argparse.Namespace, doc: dict[str, Any], text: str) -> None:
    """Print ``doc`` as JSON under ``--json`` (through :func:`write_stdout`), else the
    human-readable ``text``."""
    if getattr(args, "json", False):
        write_stdout(json.dumps(doc, indent=1, default=_default) + "\n")
    else:
        print(text)


#: the documents a ``--json`` command wrote, held until it ends (:func:`json_stdout`)
_HELD: list[str] | None = None


def write_stdout(text: str) -> None:
    """Write ``text`` to the command's stdout; inside :func:`json_stdout`, at its end."""
    if _HELD is not None:
        _HELD.append(text)
    else:
        sys.stdout.write(text)


@contextlib.contextmanager
def json_stdout(active: bool) -> Iterator[None]:
    """Keep a ``--json`` command's stdout exactly its JSON document.

    While active, everything written to stdout, from Python or from C code on file
    descriptor 1 (solver logs, the debug line the HiGHS inside SciPy prints on some MIPs,
    a worker process started meanwhile), goes to stderr (:func:`stdout_to_stderr`); what
    the command writes through :func:`write_stdout` (:func:`emit`) is held and written to
    stdout at the end, in order, after file descriptor 1 is back. Inactive, it does
    nothing. :func:`kvopt.cli.main.main` runs every command inside it.
    """
    global _HELD
    if not active:
        yield
        return
    held: list[str] = []
    outer, _HELD = _HELD, held
    try:
        with stdout_to_stderr():
            yield
    finally:
        _HELD = outer
        for text in held:
            write_stdout(text)
        sys.stdout.flush()


def _default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o)}")


def check_output_file(path: str | os.PathLike[str] | None, flag: str,
                      inputs: tuple[str | os.PathLike[str] | None, ...] = ()) -> None:
    """Refuse (``UsageError`` naming ``flag``) an output file that cannot be written, or
    that is one of the command's ``inputs`` (the same file by any name, links included:
    ``kvopt simulate A.json --requests-out A.json`` had overwritten its own instance).

    Called before any work starts, so a bad path never costs a run. ``None`` passes.

    Examples
    --------
    >>> check_output_file(".", "--out")
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid --out: . is a folder; give a file name
    >>> check_output_file("README.md", "--out", inputs=("./README.md",))
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid --out: README.md is the input ./README.md; ...
    """
    if path is None:
        return
    p = Path(path)
    if p.is_dir():
        raise UsageError(flag, f"{path} is a folder; give a file name")
    for src in inputs:
        if src is not None and same_file(p, Path(src)):
            raise UsageError(flag, f"{path} is the input {src}; writing it would destroy "
                             "the input: give another file name")
    _check_ancestor(p.parent, flag)


def same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name the same file: by inode where both exist, else by their
    resolved paths (two outputs of one command, neither written yet)."""
    with contextlib.suppress(OSError):
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


def check_figure_file(path: str | os.PathLike[str], flag: str,
                      formats: tuple[str, ...] | None = None,
                      inputs: tuple[str | os.PathLike[str] | None, ...] = ()) -> None:
    """Refuse (``UsageError`` naming ``flag``) a figure file whose suffix names no format
    :func:`kvopt.report.writers.save_figure` writes, then check it as
    :func:`check_output_file`. ``formats`` restricts the suffix to those given; without it
    every format matplotlib writes is accepted, and no suffix (written as PNG). ``inputs``:
    as :func:`check_output_file`.

    Examples
    --------
    >>> check_figure_file("fig.json", "--plot-fig8")
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid --plot-fig8: must name a figure file (.png, ...
    >>> check_figure_file("fig.svg", "--out", ("png",))
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid --out: must name a .png file, got 'fig.svg'
    """
    kind = Path(path).suffix.lstrip(".").lower()
    if formats is not None:
        if kind not in formats:
            names = ", ".join(f".{f}" for f in formats)
            raise UsageError(flag, f"must name a {names} file, got {str(path)!r}")
    elif kind:
        from matplotlib.backend_bases import FigureCanvasBase

        if kind not in FigureCanvasBase.get_supported_filetypes():
            raise UsageError(flag, "must name a figure file (.png, .pdf, .svg or another "
                             f"format matplotlib writes), got {str(path)!r}")
    check_output_file(path, flag, inputs)


def check_output_dir(path: str | os.PathLike[str] | None, flag: str) -> None:
    """Refuse (``UsageError`` naming ``flag``) an output folder that is a file or cannot be
    created.

    Examples
    --------
    >>> check_output_dir("pyproject.toml", "--out")
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid --out: pyproject.toml exists and is not a folder
    """
    if path is None:
        return
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(flag, f"{path} exists and is not a folder")
    _check_ancestor(p, flag)


def _check_ancestor(p: Path, flag: str) -> None:
    """The nearest existing ancestor of ``p`` (itself included) is a writable folder."""
    q = p if str(p) else Path(".")
    while not q.exists():
        if q.parent == q:
            break
        q = q.parent
    if not q.is_dir():
        raise UsageError(flag, f"{q} is a file, so {p} cannot be created")
    if not os.access(q, os.W_OK | os.X_OK):
        raise UsageError(flag, f"folder {q} is not writable")


def check_input_file(path: str | os.PathLike[str] | None, flag: str) -> None:
    """Refuse (``UsageError`` naming ``flag``) an input file that does not exist."""
    if path is None:
        return
    p = Path(path)
    if not p.is_file():
        raise UsageError(flag, f"{path} {'is a folder' if p.is_dir() else 'does not exist'}")


#: Default upper end of :func:`int_at_least` (a C ``int``: solvers and numpy take it).
MAX_INT_OPTION = 2**31 - 1


def int_at_least(lo: int, hi: int = MAX_INT_OPTION) -> Any:
    """argparse ``type=``: an integer ``lo <= v <= hi`` (argparse names the flag on failure).

    Every count or size option has an upper end (by default :data:`MAX_INT_OPTION`; tighter
    where the value sizes the work), so that no value runs or allocates without bound.

    Examples
    --------
    >>> int_at_least(1)("3")
    3
    >>> int_at_least(1, 10)("11")
    Traceback (most recent call last):
    argparse.ArgumentTypeError: must be an integer in [1, 10], got 11
    """
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if v < lo:
            raise argparse.ArgumentTypeError(f"must be >= {lo}, got {v}")
        if v > hi:
            raise argparse.ArgumentTypeError(f"must be an integer in [{lo}, {hi}], got {v}")
        return v

    parse.__name__ = f"integer >= {lo}"
    return parse


def bytes_arg(text: str) -> int:
    """argparse ``type=`` of a memory size (``4G``, ``512M``, ``2000000000``;
    :func:`kvopt.core.limits.parse_bytes`).

    Examples
    --------
    >>> bytes_arg("1K")
    1024
    """
    from kvopt.core.limits import parse_bytes

    try:
        return parse_bytes(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(exc.reason) from None


bytes_arg.__name__ = "bytes"


def seed_arg(text: str) -> int:
    """argparse ``type=`` of every seed flag (``--seed``, ``--rng-seed``, ``--seeds``): an
    integer in ``[0, 2**63 - 1]`` (:func:`kvopt.core.seeds.check_seed`; argparse names the
    flag on failure).

    Examples
    --------
    >>> seed_arg("12")
    12
    """
    from kvopt.core.seeds import check_seed

    try:
        return check_seed(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(exc.reason) from None


seed_arg.__name__ = "seed"


def float_in(lo: float, hi: float = float("inf"), *, lo_open: bool = False,
             hi_open: bool = False) -> Any:
    """argparse ``type=``: a finite float in the interval ``lo .. hi``.

    Examples
    --------
    >>> float_in(0, lo_open=True)("2.5")
    2.5
    """
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        ok = v == v and (v > lo if lo_open else v >= lo) and (v < hi if hi_open else v <= hi)
        if not ok or v in (float("inf"), float("-inf")):
            span = (f"{'(' if lo_open else '['}{lo:g}, "
                    f"{'inf)' if hi == float('inf') else f'{hi:g}' + (')' if hi_open else ']')}")
            raise argparse.ArgumentTypeError(f"must be a finite number in {span}, got {text}")
        return v

    parse.__name__ = "number"
    return parse


class _OldSpelling(argparse.Action):
    """An option kept under its old name for one release: it sets the new option's value and
    says on stderr why and which name to use (stdout stays clean for ``--json``)."""

    def __init__(self, option_strings: list[str], dest: str, *, new: str, why: str,
                 **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.new, self.why = new, why

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        print(f"{parser.prog}: {option_string} is deprecated here, {self.why}; use {self.new}",
              file=sys.stderr)
        setattr(namespace, self.dest, values)


def add_solve_time_limit(p: argparse.ArgumentParser, default: float | None, help: str) -> None:
    """``--solve-time-limit S`` (``args.solve_time_limit``): seconds for *each* MIP solve of a
    command that runs many of them.

    ``--time-limit`` is the whole call (``kvopt solve``), so these commands' per-solve limit has
    a name of its own. Their old spelling ``--time-limit`` still works for one release: it sets
    the same value and prints a deprecation line on stderr; ``--help`` shows only the new name.

    Examples
    --------
    >>> p = argparse.ArgumentParser(prog="kvopt demo")
    >>> add_solve_time_limit(p, 10.0, "seconds per MIP solve (default 10)")
    >>> p.parse_args([]).solve_time_limit
    10.0
    >>> p.parse_args(["--solve-time-limit", "3"]).solve_time_limit
    3.0
    """
    p.add_argument("--solve-time-limit", type=float_in(0, lo_open=True), default=default,
                   metavar="S", help=help)
    p.add_argument("--time-limit", dest="solve_time_limit", type=float_in(0, lo_open=True),
                   default=argparse.SUPPRESS, metavar="S", action=_OldSpelling,
                   new="--solve-time-limit",
                   why="where it limits each MIP solve, not the whole call",
                   help=argparse.SUPPRESS)


@contextlib.contextmanager
def stdout_to_stderr(active: bool = True) -> Iterator[None]:
    """Send everything written to file descriptor 1 (Python and C code: solver logs) to
    stderr while active, so that stdout stays one JSON document."""
    if not active:
        yield
        return
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no real stdout (embedded use): nothing to protect
        yield
        return
    try:
        os.dup2(2, 1)
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)
