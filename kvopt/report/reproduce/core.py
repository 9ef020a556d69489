"""The reproduction report's records: targets, errata, figures, one seed's section, context.

A :class:`Target` is one checkable number (or statement) of a seed paper: what the paper
says, what kvopt computes, the tolerance, the verdict and the command that recomputes it.
Verdicts (:data:`VERDICTS`):

- ``reproduced`` -- kvopt's value is within the tolerance of the paper's;
- ``differs`` -- it is not, and the paper's value is not shown to be an error (``reason``
  says why they differ: another setting, data that is not available, ...);
- ``erratum`` -- the paper's printed value or formula is wrong and kvopt shows it (the
  errata section has the counterexample or the corrected formula);
- ``not yet implemented`` -- kvopt cannot compute it yet (``reason`` says what is missing).

:func:`compare` decides from the numbers, so that no verdict is typed in where a number
decides it.

Examples
--------
>>> compare(1.375, 1.3750000001, 1e-6)
'reproduced'
>>> compare(1 / 8.13, 1 / 8.224, 1e-4, mismatch="erratum")
'erratum'
>>> compare(2.0, None, 0.1)
'not yet implemented'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["VERDICTS", "Context", "Erratum", "Figure", "SeedSection", "Target", "build_section",
           "compare", "command", "num"]

#: The four verdicts, in the order the report counts them.
VERDICTS = ("reproduced", "differs", "erratum", "not yet implemented")


def compare(paper: float, value: float | None, tol: float, *, relative: bool = False,
            mismatch: str = "differs") -> str:
    """``"reproduced"`` if ``|value - paper| <= tol`` (``tol |paper|`` when ``relative``),
    else ``mismatch``; ``"not yet implemented"`` when there is no value.

    Examples
    --------
    >>> compare(100.0, 101.5, 0.02, relative=True)   # within 2 % of the paper's value
    'reproduced'
    >>> compare(100.0, 103.0, 0.02, relative=True)
    'differs'
    """
    if mismatch not in VERDICTS:
        raise ValueError(f"unknown verdict {mismatch!r}")
    if value is None or math.isnan(float(value)):
        return "not yet implemented"
    lim = tol * abs(paper) if relative else tol
    return "reproduced" if abs(float(value) - float(paper)) <= lim else mismatch


def num(x: float | None, digits: int = 4) -> str:
    """A number as the report prints it (``-`` for none).

    Examples
    --------
    >>> num(1.2951388), num(10240.0), num(None)
    ('1.2951', '10240', '-')
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    xf = float(x)
    if xf == round(xf) and abs(xf) < 1e12:
        return str(round(xf))
    return f"{xf:.{digits}f}"


def command(key: str, fast: bool = False) -> str:
    """The command that recomputes one target of this report.

    Examples
    --------
    >>> command("000/R1")
    'kvopt report reproduce --only 000/R1'
    """
    return f"kvopt report reproduce --only {key}" + (" --fast" if fast else "")


@dataclass(frozen=True)
class Target:
    """One checkable target of a seed paper (see the module docstring). ``reason`` explains
    a ``differs`` or ``not yet implemented`` (it is dropped for the other verdicts: an
    erratum's evidence is in the errata section); ``reading`` says which setting or
    variant kvopt's value comes from.

    Examples
    --------
    >>> t = Target("000", "R1a", "Example 1: TEL(H-SF)", paper="5", kvopt="5",
    ...            tolerance="exact", verdict=compare(5, 5.0, 0), command="kvopt simulate ...")
    >>> t.verdict, t.to_dict()["key"]
    ('reproduced', 'R1a')
    >>> Target("000", "X", "a claim", "1", "2", "exact", "differs", "kvopt ...")
    Traceback (most recent call last):
    ValueError: 000/X: a 'differs' needs its reason
    """

    seed: str
    key: str
    claim: str
    paper: str
    kvopt: str
    tolerance: str
    verdict: str
    command: str
    reason: str = ""
    reading: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"{self.seed}/{self.key}: unknown verdict {self.verdict!r}")
        if self.verdict in ("differs", "not yet implemented") and not self.reason:
            raise ValueError(f"{self.seed}/{self.key}: a '{self.verdict}' needs its reason")
        if self.verdict in ("reproduced", "erratum"):  # a reason only explains a mismatch
            object.__setattr__(self, "reason", "")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


@dataclass(frozen=True)
class Erratum:
    """An error in a seed paper: where, what is printed, what is right, and the evidence
    (computed by the report, with the command that recomputes it).

    Examples
    --------
    >>> from kvopt.report.reproduce import run
    >>> [e] = run(only="002/errata")[0].errata   # seed 002's one erratum
    >>> e.where, e.printed
    ("Summary's TL;DR: throughput", 'throughput 1.42x')
    >>> sorted(e.to_dict())
    ['command', 'corrected', 'evidence', 'printed', 'seed', 'where']
    """

    seed: str
    where: str
    printed: str
    corrected: str
    evidence: str
    command: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


@dataclass(frozen=True)
class Figure:
    """A PNG figure of the report (``name`` is its file name; ``alt`` its text).

    Examples
    --------
    >>> from pathlib import Path
    >>> png = Path("reports/queueing/fig8.png").read_bytes()   # a shipped figure
    >>> f = Figure("fig8.png", "Mean response time and peak memory vs arrival rate", png)
    >>> f.name, f.png[:4]
    ('fig8.png', b'\\x89PNG')
    """

    name: str
    caption: str
    png: bytes


@dataclass
class SeedSection:
    """One seed paper's part of the report.

    Examples
    --------
    >>> ok = Target("000", "R1a", "TEL(H-SF)", "5", "5", "exact", "reproduced", "kvopt ...")
    >>> off = Target("000", "R2", "a ratio", "1.52", "1.48", "0.01", "differs", "kvopt ...",
    ...              reason="another setting")
    >>> sec = SeedSection("000", "Adaptively robust inference", "Chen et al.", "Amin, Amax.",
    ...                   targets=[ok, off])
    >>> sec.counts()
    {'reproduced': 1, 'differs': 1, 'erratum': 0, 'not yet implemented': 0}
    """

    seed: str
    title: str
    paper: str
    intro: str
    targets: list[Target] = field(default_factory=list)
    errata: list[Erratum] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """Targets per verdict."""
        return {v: sum(t.verdict == v for t in self.targets) for v in VERDICTS}


@dataclass
class Context:
    """What every target function gets: the mode, the repository root (for the committed
    certificates and bounds), the seed of every random choice, and a cache shared by the
    targets of one run (a computation several targets use is done once).

    Examples
    --------
    >>> ctx = Context(fast=True)
    >>> ctx.once("tel", lambda: 12), ctx.once("tel", lambda: 0)   # computed once, then cached
    (12, 12)
    >>> ctx.cmd("000/R1")
    'kvopt report reproduce --only 000/R1 --fast'
    """

    fast: bool = False
    root: Path = field(default_factory=lambda: Path.cwd())
    seed: int = 0
    cache: dict[str, Any] = field(default_factory=dict)

    def once(self, key: str, compute: Callable[[], Any]) -> Any:
        """``compute()`` the first time ``key`` is asked for, the cached value after."""
        if key not in self.cache:
            self.cache[key] = compute()
        return self.cache[key]

    def cmd(self, key: str) -> str:
        """:func:`command` in this run's mode."""
        return command(key, self.fast)


def build_section(mod: ModuleType, ctx: Context, only: str | None = None) -> SeedSection:
    """One seed's section from its module: ``SEED``, ``TITLE``, ``PAPER``, ``INTRO``,
    ``TARGETS`` (key -> function of the context returning targets), optional ``ALIASES``
    (a target's key -> the key of the function computing it), ``errata(ctx)``,
    ``figures(ctx)`` and optional ``notes(ctx)``. ``only``: one key, or ``"errata"``.

    Examples
    --------
    >>> from kvopt.report.reproduce import seed001
    >>> sec = build_section(seed001, Context(), "A2")   # one target, no errata or figures
    >>> sec.seed, [(t.key, t.verdict) for t in sec.targets], sec.errata, sec.figures
    ('001', [('A2', 'reproduced')], [], [])
    """
    if only is not None:
        only = getattr(mod, "ALIASES", {}).get(only, only)
    sec = SeedSection(mod.SEED, mod.TITLE, mod.PAPER, mod.INTRO)
    for key, fn in mod.TARGETS.items():
        if only in (None, key):
            sec.targets += fn(ctx)
    if only in (None, "errata"):
        sec.errata += mod.errata(ctx)
    if only is None:
        sec.figures += mod.figures(ctx)
        if hasattr(mod, "notes"):
            sec.notes += mod.notes(ctx)
    return sec
