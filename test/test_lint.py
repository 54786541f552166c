"""The tree stays ruff-clean and ruff-formatted and the source mypy-clean (strict), as the style
guide asks."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.parametrize(
    "command",
    [
        ["ruff", "check", "src", "test", "scripts"],
        ["ruff", "format", "--check", "src", "test", "scripts"],
        [sys.executable, "-m", "mypy"],
    ],
    ids=["ruff", "ruff-format", "mypy"],
)
def test_tool_reports_nothing(command: list[str], repo_root: Path) -> None:
    if shutil.which(command[0]) is None and command[0] != sys.executable:
        pytest.skip(f"{command[0]} is not installed")
    result = subprocess.run(
        command, cwd=repo_root, capture_output=True, text=True, timeout=600, check=False
    )
    assert result.returncode == 0, result.stdout + result.stderr
