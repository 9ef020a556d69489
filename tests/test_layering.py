"""The package's layering, read from the source (every import, also those inside functions).

``core`` (and ``predictions``) at the bottom; ``mip``, ``sim``, ``theory``, ``queueing`` are peers
that never import each other; ``report`` and ``sweep`` above them; the CLI on top. No package
imports one above it, and no package imports the CLI.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kvopt

ROOT = Path(kvopt.__file__).parent

#: Layer of each top-level sub-package (a package may import only strictly lower layers, or
#: itself). ``mip``, ``sim``, ``theory`` and ``queueing`` share a layer, so none imports another.
LAYERS = {
    "core": 0,
    "data": 0,
    "predictions": 1,
    "mip": 2,
    "sim": 2,
    "theory": 2,
    "queueing": 2,
    "report": 3,
    "sweep": 3,
    "cli": 4,
}


def _package_of(path: Path) -> str:
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else ""


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
            # ``from kvopt import mip`` names a sub-package too
            if node.module == "kvopt":
                out += [(node.lineno, f"kvopt.{a.name}") for a in node.names]
    return out


def _edges() -> list[tuple[str, str, str]]:
    """(importer package, imported package, 'file:line') for every kvopt-internal import."""
    edges = []
    for path in sorted(ROOT.rglob("*.py")):
        src = _package_of(path)
        for line, mod in _imports(path):
            parts = mod.split(".")
            if parts[0] != "kvopt" or len(parts) < 2 or parts[1] not in LAYERS:
                continue
            edges.append((src, parts[1], f"{path.relative_to(ROOT.parent)}:{line}"))
    return edges


def test_every_subpackage_has_a_layer() -> None:
    pkgs = {p.name for p in ROOT.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert pkgs <= set(LAYERS), f"sub-packages without a layer: {sorted(pkgs - set(LAYERS))}"


def _violations(edges: list[tuple[str, str, str]]) -> list[str]:
    return [f"{where}: kvopt.{src} imports kvopt.{dst}"
            for src, dst, where in edges if src and src != dst and LAYERS[dst] >= LAYERS[src]]


def test_no_forbidden_import() -> None:
    bad = _violations(_edges())
    assert not bad, "imports against the layering:\n" + "\n".join(bad)


def test_top_level_imports_only_the_bottom() -> None:
    """``import kvopt`` stays light: its ``__init__`` reaches only core (and predictions)."""
    bad = [f"{where}: kvopt imports kvopt.{dst}" for src, dst, where in _edges()
           if src == "" and LAYERS[dst] > 1 and "__main__" not in where]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("edge", [("mip", "sim"), ("sim", "mip"), ("theory", "sim"),
                                  ("queueing", "sim"), ("core", "mip"), ("sim", "cli"),
                                  ("predictions", "sim"), ("report", "sweep")])
def test_the_rule_reports_peer_and_upward_edges(edge: tuple[str, str]) -> None:
    src, dst = edge
    assert _violations([(src, dst, "x.py:1")]) == [f"x.py:1: kvopt.{src} imports kvopt.{dst}"]


def test_the_rule_allows_downward_edges() -> None:
    assert _violations([("sim", "core", "a"), ("report", "mip", "b"), ("cli", "sweep", "c"),
                        ("sim", "sim", "d"), ("queueing", "predictions", "e")]) == []


def test_no_import_cycle_between_modules() -> None:
    """Module-level imports (the ones executed at import time) form no cycle."""
    graph: dict[str, set[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        deps = set()
        for node in tree.body:  # top level only: imports inside functions run late
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(
                    "kvopt") and node.level == 0:
                deps.add(node.module)
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name.startswith("kvopt")}
        graph[name] = deps
    # a package's __init__ importing its own sub-modules is how packages work: drop those edges
    for mod, deps in graph.items():
        graph[mod] = {d for d in deps if d in graph and not d.startswith(mod + ".")}
    seen: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> None:
        seen[m] = 1
        stack.append(m)
        for d in sorted(graph[m]):
            if seen.get(d) == 1:
                cycle = [*stack[stack.index(d):], d]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if d not in seen:
                visit(d)
        stack.pop()
        seen[m] = 2

    for m in sorted(graph):
        if m not in seen:
            visit(m)
