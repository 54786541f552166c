"""Helpers of the sim_node tests: the small scenarios, `grade launch` as a real subprocess, and
spinning an rclpy observer node until a condition holds."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from process_support import CollectedProcess, grade_launch_command

DATA = Path(__file__).resolve().parent / "data"
REPO = Path(__file__).resolve().parents[3]
LAUNCH_DIR = REPO / "launch"


def grade_launch(launch_file: str, args: list[str], cwd: Path) -> CollectedProcess:
    """`grade launch launch/<launch_file> args...` as a subprocess."""
    return CollectedProcess(grade_launch_command([str(LAUNCH_DIR / launch_file), *args]), cwd)


def spin_until(
    node: Any, done: Callable[[], bool], timeout_s: float, proc: CollectedProcess
) -> None:
    """Spin the observer until `done()` or the timeout; fail if the process ends first."""
    from rclpy.executors import SingleThreadedExecutor

    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    deadline = time.monotonic() + timeout_s
    try:
        while not done():
            if time.monotonic() > deadline:
                pytest.fail(f"timed out after {timeout_s} s; process output:\n{proc.text}")
            if proc.popen.poll() is not None:
                pytest.fail(f"process ended early ({proc.popen.returncode}):\n{proc.text}")
            executor.spin_once(timeout_sec=0.05)
    finally:
        executor.remove_node(node)
