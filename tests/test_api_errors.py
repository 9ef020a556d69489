"""Errors at the API edges (issue 20): a user's bad argument raises a :class:`KvoptError`
subclass naming the argument, which is also the builtin it replaced (``except ValueError``
keeps working); plain ``ValueError``/``TypeError``/``RuntimeError`` remain only where they are
not a user's mistake (listed below, with the reason)."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import kvopt
from kvopt.core.errors import KvoptError, UsageError, UsageTypeError

ROOT = Path(kvopt.__file__).parent

#: The plain builtin raises left in kvopt (outside kvopt/mip, which the mip part of issue 20
#: converts), each with why it is not a user-facing error.
INTERNAL = {
    ("kvopt/queueing/_quad.py", "TypeError"): "private helper called without data (a bug)",
    ("kvopt/report/goodput.py", "TypeError"): "json.dumps default hook: the JSON protocol",
    ("kvopt/cli/common.py", "TypeError"): "json.dumps default hook: the JSON protocol",
    ("kvopt/theory/rayleigh.py", "ValueError"): "B not positive definite (cannot happen, "
                                                "pragma: no cover) and a non-positive top "
                                                "eigenvector (a mathematical outcome, never "
                                                "observed)",
    ("kvopt/theory/jitserve.py", "RuntimeError"): "a bounded feasible LP failed (a bug)",
    ("kvopt/report/reproduce/core.py", "ValueError"): "a reproduction record written with an "
                                                    "unknown verdict or no reason (a bug of "
                                                    "the report's code, not an argument)",
}


def _plain_raises(root: Path) -> list[tuple[str, str, int]]:
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name) and exc.id in ("ValueError", "TypeError",
                                                            "RuntimeError"):
                    out.append((rel, exc.id, node.lineno))
    return sorted(out, key=lambda r: (r[0], r[2]))


def test_no_plain_builtin_error_at_an_api_edge() -> None:
    bad = [f"{f}:{line} raise {e}" for f, e, line in _plain_raises(ROOT)
           if not f.startswith("kvopt/mip/") and (f, e) not in INTERNAL]
    assert not bad, "raise a KvoptError subclass (UsageError, ...) instead:\n" + "\n".join(bad)


def test_the_check_finds_a_plain_raise(tmp_path: Path) -> None:
    root = tmp_path / "kvopt"
    (root / "sim").mkdir(parents=True)
    (root / "sim" / "x.py").write_text("def f(a):\n    if a:\n        raise ValueError('a')\n"
                                       "    raise TypeError\n")
    assert _plain_raises(root) == [("kvopt/sim/x.py", "ValueError", 3),
                                   ("kvopt/sim/x.py", "TypeError", 4)]


def _inst() -> kvopt.Instance:
    return kvopt.Instance(memory=10, arrival=[0, 0], prompt=[1, 1], output=[4, 8])


def _replay_too_long() -> None:
    inst = _inst()
    one = kvopt.Instance(memory=10, arrival=[0], prompt=[1], output=[4])
    kvopt.simulate(one, "replay", schedule=kvopt.Schedule.from_starts(inst, [0, 0]))


CASES: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("simulate policy type", lambda: kvopt.simulate(_inst(), 3), TypeError, "policy"),
    ("unknown policy option", lambda: kvopt.simulate(_inst(), "fcfs", bogus=1), TypeError,
     "options"),
    ("replay option", lambda: kvopt.simulate(_inst(), "replay", bogus=1,
                                             schedule=kvopt.Schedule.from_starts(
                                                 _inst(), [0, 0])), TypeError, "options"),
    ("replay schedule", _replay_too_long, ValueError, "schedule"),
    ("predictions name", lambda: kvopt.simulate(_inst(), "mcsf", predictions="psychic"),
     ValueError, "predictions"),
    ("predictions shape", lambda: kvopt.simulate(_inst(), "mcsf", predictions=[1, 2, 3]),
     ValueError, "predictions"),
    ("step-time type", lambda: kvopt.simulate(_inst(), "mcsf", step_time=3), TypeError,
     "step_time"),
    ("policy_info", lambda: __import__("kvopt.sim", fromlist=["x"]).policy_info("nope"),
     ValueError, "policy"),
    ("trail C", lambda: kvopt.simulate(_inst(), "trail", C=-1.0), ValueError, "C"),
    ("rayleigh l, u type", lambda: __import__("kvopt.theory.rayleigh", fromlist=["x"])
     .lambda_max(4.5), TypeError, "l, u"),
    ("rayleigh s", lambda: __import__("kvopt.theory.rayleigh", fromlist=["x"])
     .lambda_max(4, s=-1.0), ValueError, "s"),
    ("ratios alpha", lambda: __import__("kvopt.theory.ratios", fromlist=["x"])
     .amax_upper(2.0), ValueError, "alpha"),
    ("integer_counts", lambda: __import__("kvopt.theory.adversarial", fromlist=["x"])
     .integer_counts([1.0], -1), ValueError, "n"),
    ("queueing logt", lambda: __import__("kvopt.queueing.distributions", fromlist=["x"])
     .LogT(1.0, -1.0, 3.5), ValueError, "logt"),
    ("mcsf_starts on seconds", lambda: __import__("kvopt.core.mcsf", fromlist=["x"])
     .mcsf_starts(kvopt.Instance(memory=10, arrival=[0.5], prompt=[1], output=[2],
                                 time_unit="second")), ValueError, "time_unit"),
    ("latencies in seconds", lambda: __import__("kvopt.core.metrics", fromlist=["x"])
     .latencies(_inst(), kvopt.Schedule.from_starts(_inst(), [0, 0]), seconds=True),
     ValueError, "seconds"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_argument_is_a_kvopt_error_and_the_builtin(
        case: tuple[str, Callable[[], Any], type[Exception], str]) -> None:
    _, call, builtin, field = case
    with pytest.raises(KvoptError) as info:
        call()
    err = info.value
    assert isinstance(err, builtin) and isinstance(err, UsageError)
    assert err.field == field  # type: ignore[attr-defined]
    assert isinstance(err, UsageTypeError) == (builtin is TypeError)
    assert str(err).startswith(f"invalid {field}: ")


def test_usage_type_error_is_caught_as_either_builtin() -> None:
    for builtin in (TypeError, ValueError):
        with pytest.raises(builtin):
            raise UsageTypeError("x", "bad")
