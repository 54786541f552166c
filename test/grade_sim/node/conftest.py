"""Fixtures of the sim_node tests: `grade launch` subprocesses and an rclpy observer node."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sim_node_support import Proc, grade_launch


@pytest.fixture
def launch(tmp_path: Path) -> Iterator[Callable[[str, list[str]], Proc]]:
    """Factory starting `grade launch`; every process still running at the end is interrupted."""
    started: list[Proc] = []

    def start(launch_file: str, args: list[str]) -> Proc:
        proc = grade_launch(launch_file, args, tmp_path)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.popen.poll() is None:
            proc.interrupt()


@pytest.fixture
def observer() -> Iterator[Any]:
    """An rclpy node in the test process, in its own context (a separate process from sim)."""
    rclpy = pytest.importorskip("rclpy")
    from rclpy.context import Context

    context = Context()
    rclpy.init(context=context)
    node = rclpy.create_node("sim_node_test_observer", context=context)
    try:
        yield node
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
