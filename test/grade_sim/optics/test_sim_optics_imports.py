"""grade_sim's lowest layer (config and optics) has no import circle (issue 30, item 12).

The scenario's camera check builds the rig, and the rig computes from a camera config: the
types both need live one level down (config.camera_model), so neither module imports the other.
Imports are read from the source (ast), including those inside functions.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[3] / "src"
LOWEST = ("config", "optics")


def _module_of(path: Path) -> str:
    return ".".join(path.relative_to(SRC).with_suffix("").parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    """The modules of `modules` that a file imports, at the top or inside a function."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found & modules


def _graph() -> dict[str, set[str]]:
    files = [p for part in LOWEST for p in (SRC / "grade_sim" / part).glob("*.py")]
    modules = {_module_of(p) for p in files if p.name != "__init__.py"}
    return {
        _module_of(p): _imports(p, modules) - {_module_of(p)}
        for p in files
        if p.name != "__init__.py"
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One path per import circle found by a depth-first walk (empty: none)."""
    found: list[list[str]] = []
    done: set[str] = set()

    def walk(node: str, path: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt in path:
                found.append([*path[path.index(nxt) :], nxt])
            elif nxt not in done:
                walk(nxt, [*path, nxt])
        done.add(node)

    for start in sorted(graph):
        if start not in done:
            walk(start, [start])
    return found


def test_config_and_optics_have_no_import_circle() -> None:
    graph = _graph()
    assert "grade_sim.optics.rig" in graph["grade_sim.config.scenario"]
    assert _cycles(graph) == []


def test_the_walk_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c", "a"]]
