"""Issue 20's size rule: no file over 800 lines and no function over 120 lines in ``kvopt/``
(a function's lines run from its ``def`` to its last line, docstring included)."""

from __future__ import annotations

import ast
from pathlib import Path

import kvopt

ROOT = Path(kvopt.__file__).parent
MAX_FILE_LINES = 800
MAX_FUNCTION_LINES = 120

#: Functions allowed over the limit for now, with the reason (file, function name).
EXEMPT: dict[tuple[str, str], str] = {}


def _too_long(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(root.parent).as_posix()
        n = len(text.splitlines())
        if n > MAX_FILE_LINES:
            out.append(f"{rel}: {n} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES and (rel, node.name) not in EXEMPT:
                    out.append(f"{rel}:{node.lineno} {node.name}: {length} lines")
    return out


def test_no_file_or_function_over_the_limit() -> None:
    bad = _too_long(ROOT)
    assert not bad, "split these (issue 20):\n" + "\n".join(bad)


def test_the_check_finds_a_long_function_and_a_long_file(tmp_path: Path) -> None:
    root = tmp_path / "kvopt"
    root.mkdir()
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    (root / "a.py").write_text(f"def f():\n{body}\n\ndef g():\n    return 1\n")
    (root / "b.py").write_text("x = 1\n" * (MAX_FILE_LINES + 1))
    assert _too_long(root) == [f"kvopt/a.py:1 f: {MAX_FUNCTION_LINES + 1} lines",
                               f"kvopt/b.py: {MAX_FILE_LINES + 1} lines"]
