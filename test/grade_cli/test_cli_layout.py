"""Every `grade` subcommand module has the one CLI layout, and is imported only when it runs."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from grade_cli import main as cli
from grade_cli.bench import BENCHMARKS
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


@pytest.mark.parametrize("name", [*cli.SUBCOMMANDS, *(f"bench {b}" for b in BENCHMARKS)])
def test_every_command_name_loads_a_module_with_main(name: str) -> None:
    assert callable(load(name).main)


def test_unknown_command_name_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="bench nothing"):
        load("bench nothing")
