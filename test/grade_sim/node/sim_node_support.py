"""Helpers of the sim_node tests: the small scenarios, `grade launch` as a real subprocess, and
spinning an rclpy observer node until a condition holds."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parent / "data"
REPO = Path(__file__).resolve().parents[3]
LAUNCH_DIR = REPO / "launch"


class Proc:
    """A subprocess whose merged output lines are collected by a thread."""

    def __init__(self, cmd: list[str], cwd: Path) -> None:
        env = dict(os.environ)  # ROS_DOMAIN_ID and LOCALHOST discovery from test/conftest.py
        env["ROS_LOG_DIR"] = str(cwd / "ros_log")
        self.popen = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)
        self.lines: list[str] = []
        self._queue: queue.Queue[str] = queue.Queue()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            self.lines.append(line.rstrip("\n"))
            self._queue.put(line)

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def wait(self, timeout_s: float = 90.0) -> int:
        try:
            code = self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            pytest.fail(f"{self.popen.args} did not finish in {timeout_s} s:\n{self.text}")
        self._thread.join(timeout=5.0)
        return code

    def interrupt(self, timeout_s: float = 60.0) -> int:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
        return self.wait(timeout_s)


def grade_launch(launch_file: str, args: list[str], cwd: Path) -> Proc:
    """`grade launch launch/<launch_file> args...` as a subprocess."""
    return Proc([sys.executable, "-m", "grade_sim.cli.main", "launch",
                 str(LAUNCH_DIR / launch_file), *args], cwd)


def spin_until(node: Any, done: Callable[[], bool], timeout_s: float, proc: Proc) -> None:
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
