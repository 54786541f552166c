"""Test processes whose merged output is collected line by line by a reader thread.

Shared by every test that starts real processes (`grade launch`, nodes); the environment
inherits ROS_DOMAIN_ID and localhost-only discovery from test/conftest.py.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest


def colcon_build_grade(
    repo_root: Path, ws: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    """`colcon build --packages-select grade` of `repo_root` into `ws`/build and `ws`/install
    (a plain install, as a ROS 2 workspace builds it), with the environment `env`."""
    return subprocess.run(
        [
            "colcon",
            "--log-base",
            str(ws / "log"),
            "build",
            "--base-paths",
            str(repo_root),
            "--packages-select",
            "grade",
            "--build-base",
            str(ws / "build"),
            "--install-base",
            str(ws / "install"),
            "--event-handlers",
            "console_direct-",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )


def grade_launch_command(args: list[str]) -> list[str]:
    """`grade launch ARGS...` run with this interpreter."""
    return [sys.executable, "-m", "grade_cli.main", "launch", *args]


class CollectedProcess:
    """A subprocess with stdout+stderr collected in `lines` as it runs."""

    def __init__(
        self, cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> None:
        env = dict(os.environ) if env is None else env
        if cwd is not None:
            env["ROS_LOG_DIR"] = str(cwd / "ros_log")
        self.popen = subprocess.Popen(
            cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
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

    def wait_for(self, predicate: str, count: int = 1, timeout_s: float = 60.0) -> None:
        """Block until `count` output lines contain `predicate`; fail on timeout or exit."""
        deadline = time.monotonic() + timeout_s
        while sum(predicate in line for line in self.lines) < count:
            if time.monotonic() > deadline or (
                self.popen.poll() is not None and self._queue.empty()
            ):
                pytest.fail(f"no {count} x {predicate!r} in output:\n{self.text}")
            with contextlib.suppress(queue.Empty):
                self._queue.get(timeout=0.2)

    def wait(self, timeout_s: float = 90.0) -> int:
        """The exit code; a process still running after timeout_s is killed and the test fails."""
        try:
            code = self.popen.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            pytest.fail(f"{self.popen.args} did not finish in {timeout_s} s:\n{self.text}")
        self._thread.join(timeout=5.0)
        return code

    def interrupt(self, timeout_s: float = 60.0) -> int:
        """SIGINT (as Ctrl-C would), then the exit code as in wait()."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
        return self.wait(timeout_s)

    def cleanup(self, timeout_s: float = 20.0) -> None:
        """End the process whatever state the test left it in (for finally blocks)."""
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGINT)
            try:
                self.popen.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.popen.kill()
