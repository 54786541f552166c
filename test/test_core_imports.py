"""Core modules never import rclpy: only node modules (`*.node.*`) may."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src"
CORE_FILES = [
    p
    for p in SRC.rglob("*.py")
    if "node" not in p.relative_to(SRC).parts[1:-1] and not p.name.endswith("_node.py")
]


@pytest.mark.parametrize("path", CORE_FILES, ids=lambda p: str(p.relative_to(SRC)))
def test_core_module_does_not_import_rclpy(path: Path) -> None:
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            root = name.split(".")[0]
            reason = f"{path}: core module imports {name}; move ROS code into a node module"
            assert root not in {"rclpy", "launch", "launch_ros"}, reason
            assert not name.endswith(".msg"), reason
