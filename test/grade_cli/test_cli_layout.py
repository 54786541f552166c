"""Every `grade` subcommand module has the one CLI layout, and is imported only when it runs."""

from __future__ import annotations

import argparse
import ast
import subprocess
import sys
from pathlib import Path

import pytest

from grade_cli import main as cli
from grade_cli.benchmarks import BENCHMARKS, load_benchmark
from grade_cli.commands import load

LAYOUT_NAMES = sorted(cli.SUBCOMMANDS)


@pytest.mark.parametrize("name", LAYOUT_NAMES)
def test_subcommand_module_splits_parser_and_handler(name: str) -> None:
    module = load(name)
    assert isinstance(module.build_parser(), argparse.ArgumentParser)
    assert callable(module.run)


@pytest.mark.parametrize(("name", "not_loaded"), [("eval", "mujoco"), ("bag", "grade_sim")])
def test_subcommand_imports_only_its_own_package(name: str, not_loaded: str) -> None:
    code = (
        "import sys\n"
        "from grade_cli.commands import load\n"
        f"load({name!r})\n"
        f"assert {not_loaded!r} not in sys.modules, sorted(sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize("name", cli.SUBCOMMANDS)
def test_every_command_name_loads_a_module_with_main(name: str) -> None:
    assert callable(load(name).main)


@pytest.mark.parametrize("name", BENCHMARKS)
def test_every_benchmark_name_loads_a_module_with_main(name: str) -> None:
    assert callable(load_benchmark(name).main)


def test_unknown_command_name_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="nothing"):
        load("nothing")
    with pytest.raises(KeyError, match="bench nothing"):
        load_benchmark("nothing")


def _grade_cli_imports(path: Path) -> set[str]:
    # Every `grade_cli.X` a module imports, at the top or inside a function (lazy imports too).
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module == "grade_cli":
            found.update(f"grade_cli.{a.name}" for a in node.names)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("grade_cli."):
            found.add(str(node.module))
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("grade_cli."))
    return found


def test_grade_cli_modules_import_no_circle() -> None:
    folder = Path(cli.__file__).parent
    graph = {f"grade_cli.{p.stem}": _grade_cli_imports(p) for p in folder.glob("*.py")}
    assert "grade_cli.bench" in graph["grade_cli.commands"]  # the check sees lazy imports
    circles = []
    for start in graph:
        seen, todo = set(), list(graph[start])
        while todo:
            mod = todo.pop()
            if mod == start:
                circles.append(start)
                break
            if mod not in seen:
                seen.add(mod)
                todo.extend(graph.get(mod, ()))
    assert circles == []
