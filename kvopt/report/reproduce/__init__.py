"""``kvopt report reproduce``: every checkable target of the five seed papers in one place.

For each seed (001, 000, 004, 002, 003: :data:`SEEDS`) a module computes its targets
(:class:`~kvopt.report.reproduce.core.Target`: the paper's value, kvopt's, the tolerance, the
verdict and the command that recomputes it), its errata (with computed evidence) and its
figures; :func:`write_report` writes ``reproduction.md`` (with the figures as PNG files),
``reproduction.html`` (self-contained) and ``results.json``. ``fast=True`` uses fewer runs
and smaller instances (the default test suite runs it); ``only="001/T1"`` computes one
target (the ``command`` of every target). Paper-scale certificates and LP bounds are read
from the repository (``reports/mip/``) and re-validated.

Examples
--------
>>> from kvopt.report.reproduce import run
>>> [t.verdict for t in run(only="000/R6")[0].targets][:2]
['reproduced', 'reproduced']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

from kvopt.core.errors import UsageError
from kvopt.report.reproduce import seed000, seed001, seed002, seed003, seed004
from kvopt.report.reproduce.core import VERDICTS, Context, SeedSection, build_section
from kvopt.report.reproduce.render import counts, render_html, render_json, render_markdown

__all__ = ["SEEDS", "VERDICTS", "check_only", "counts", "default_root", "run", "summary",
           "write_report"]

#: The seed papers in the order of the report.
SEEDS: dict[str, ModuleType] = {"001": seed001, "000": seed000, "004": seed004,
                                "002": seed002, "003": seed003}


def default_root() -> Path:
    """The repository holding ``reports/mip`` (the checkout kvopt runs from, else the cwd).

    Examples
    --------
    >>> (default_root() / "reports" / "mip").is_dir()
    True
    """
    here = Path(__file__).resolve().parents[3]
    return here if (here / "reports" / "mip").is_dir() else Path.cwd()


def check_only(only: str) -> tuple[str, str]:
    """``"SEED/KEY"`` split and checked, else a :class:`UsageError` naming ``--only``.

    Examples
    --------
    >>> check_only("000/R1")
    ('000', 'R1')
    >>> check_only("005/R1")
    Traceback (most recent call last):
    kvopt.core.errors.UsageError: invalid --only: must be SEED/KEY with SEED in 001, 000, 004, \
002, 003, got '005/R1'
    """
    seed, _, key = only.partition("/")
    if seed not in SEEDS or not key:
        raise UsageError("--only", f"must be SEED/KEY with SEED in {', '.join(SEEDS)}, got "
                         f"{only!r}")
    return seed, key


def run(*, fast: bool = False, root: Path | None = None, only: str | None = None,
        seed: int = 0, on_section: Callable[[str], None] | None = None
        ) -> list[SeedSection]:
    """Compute every section (or the one target ``only = "SEED/KEY"``).

    Examples
    --------
    >>> [sec] = run(only="001/A2")   # one target: seed 001, App. A.2
    >>> t = sec.targets[0]
    >>> t.key, t.paper, t.kvopt, t.verdict
    ('A2', 'TEL 12 (both at 0)', '12', 'reproduced')
    >>> t.command
    'kvopt simulate instances/tiny/a2-example.json --policy mcsf'
    """
    ctx = Context(fast=fast, root=root or default_root(), seed=seed)
    if only is not None:
        s, key = check_only(only)
        sec = build_section(SEEDS[s], ctx, key)
        if not (sec.targets or sec.errata):
            raise UsageError("--only", f"seed {s} has no target {key!r}")
        return [sec]
    out = []
    for s, mod in SEEDS.items():
        out.append(build_section(mod, ctx))
        if on_section is not None:
            on_section(s)
    return out


def write_report(out: str | Path, sections: Sequence[SeedSection], *, fast: bool,
                 command: str, seed: int = 0) -> list[Path]:
    """Write ``reproduction.md``, ``reproduction.html``, ``results.json`` and the PNGs.

    Examples
    --------
    >>> import tempfile
    >>> sections = run(only="001/A2")
    >>> with tempfile.TemporaryDirectory() as d:
    ...     paths = write_report(d, sections, fast=False, command="kvopt report reproduce")
    ...     [p.name for p in paths]
    ['reproduction.md', 'reproduction.html', 'results.json']
    """
    from kvopt.report.writers import write_files

    files: dict[str, bytes | str] = {
        "reproduction.md": render_markdown(sections, fast=fast, command=command),
        "reproduction.html": render_html(sections, fast=fast, command=command),
        "results.json": render_json(sections, fast=fast, command=command, seed=seed)}
    for s in sections:
        for f in s.figures:
            files[f.name] = f.png
    return write_files(out, files)


def summary(sections: Sequence[SeedSection]) -> str:
    """One line of verdict counts.

    Examples
    --------
    >>> summary(run(only="002/Q1"))
    '2 reproduced, 0 differs, 0 erratum, 0 not yet implemented'
    """
    c = counts(sections)
    return ", ".join(f"{c[v]} {v}" for v in VERDICTS)
