"""A tracker that runs in a child process, so that its native code cannot take the caller down.

ORB-SLAM3 (pyorbslam3) runs threads of its own and saves its final trajectory from C++; a
segmentation fault there, or in its teardown when the process exits, would end the process that
holds the estimate. Here the backend lives in a child Python process (`python -m
grade_slam.tracker_process FD`, talking over a socket pair with `multiprocessing.connection`):
the caller sends each frame and gets its pose back, and at `close` it gets the final trajectory.
The child then leaves with `os._exit`, so ORB-SLAM3's destructors never run. If the child dies
at any point, the caller keeps every pose it was given and says so in the trajectory's `note`;
a frame sent to a dead child is a `SlamError`.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import signal
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from grade_common.types import FloatArray
from grade_slam import errors
from grade_slam.config import SlamConfig
from grade_slam.errors import SlamError
from grade_slam.frames import RgbdFrame
from grade_slam.interfaces import FrameTracker, TrackingStats, Trajectory

# How long the caller waits for the child to start the backend (ORB-SLAM3 loads its vocabulary)
# and to stop it at `close` (its threads finish, it saves the trajectory).
_START_TIMEOUT_S = 300.0
_CLOSE_TIMEOUT_S = 120.0


def describe_exit(code: int | None) -> str:
    """'exit code 1', 'signal SIGSEGV' (a negative Popen return code) or 'no exit yet'."""
    if code is None:
        return "no exit yet"
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


class ChildProcessTracker:
    """`FrameTracker` whose backend runs in a child: `build` ("module:function", a function of
    the `SlamConfig` that returns the tracker) is imported and called there."""

    def __init__(self, config: SlamConfig, build: str) -> None:
        self._config = config
        self._stats = TrackingStats()
        self._trajectory = Trajectory()
        parent, child = socket.socketpair()
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "grade_slam.tracker_process", str(child.fileno())],
            pass_fds=(child.fileno(),),
        )
        child.close()
        self._conn: Connection | None = Connection(parent.detach())
        try:
            reply = self._receive("starting", _START_TIMEOUT_S, send=("start", build, config))
        except SlamError:  # the backend refused to start (a bad setting): the child leaves
            self._close_connection()
            self._proc.wait(timeout=30.0)
            raise
        if reply is None:
            raise SlamError(self._died("starting"))

    def _died(self, when: str) -> str:
        """Why the child is gone (it is reaped); the trajectory keeps the poses given."""
        try:
            code = self._proc.wait(timeout=10.0)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            code = self._proc.wait()
        self._close_connection()
        why = f"{self._config.backend}: its process ended ({describe_exit(code)}) while {when}"
        self._trajectory.note = f"the poses given while tracking ({why})"
        print(f"grade_slam: {why}; the trajectory keeps the poses given", file=sys.stderr)
        return why

    def _close_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _receive(self, when: str, timeout_s: float, send: tuple[Any, ...]) -> Any:
        """Send `send`, return the child's answer; None if the child is gone (or silent for
        `timeout_s`). An error the child raised on purpose is raised here, same type."""
        if self._conn is None:
            return None
        try:
            self._conn.send(send)
            if not self._conn.poll(timeout_s):
                self._proc.kill()
                return None
            reply = self._conn.recv()
        except (EOFError, OSError):
            return None
        if reply[0] == "raise":
            _, name, message = reply
            cls = getattr(errors, name, SlamError)
            raise cls(message)
        return reply

    @property
    def stats(self) -> TrackingStats:
        return self._stats

    @property
    def trajectory(self) -> Trajectory:
        return self._trajectory

    def process(self, frame: RgbdFrame) -> FloatArray | None:
        """Track one frame in the child; its pose, or None.

        Raises:
            SlamError: the child has ended (the message says how), or the backend's own error.
        """
        reply = self._receive(f"tracking frame {frame.stamp_ns}", 600.0, send=("frame", frame))
        if reply is None:
            raise SlamError(self._died(f"tracking frame {frame.stamp_ns}"))
        _, pose, self._stats = reply
        if pose is not None:
            self._trajectory.stamps_ns.append(frame.stamp_ns)
            self._trajectory.poses.append(pose)
        return pose  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop the backend and take its final trajectory; if the child dies doing so, keep the
        poses given so far (`trajectory.note` says why). Idempotent."""
        if self._conn is None:
            return
        reply = self._receive("closing", _CLOSE_TIMEOUT_S, send=("close",))
        if reply is None:
            self._died("stopping and saving its final trajectory")
            return
        _, self._trajectory, self._stats = reply
        self._close_connection()
        try:
            self._proc.wait(timeout=30.0)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()


def _flush_native_stdio() -> None:
    """Flush C stdio (ORB-SLAM3's std::cout is synced with it) before `os._exit`."""
    sys.stdout.flush()
    sys.stderr.flush()
    ctypes.CDLL(None).fflush(None)


def _builder(build: str) -> Callable[[SlamConfig], FrameTracker]:
    module, _, function = build.partition(":")
    builder: Callable[[SlamConfig], FrameTracker] = getattr(
        importlib.import_module(module), function
    )
    return builder


def _serve(conn: Connection) -> None:
    tracker: FrameTracker | None = None
    started_cpu_s = 0.0

    def stats() -> TrackingStats:
        assert tracker is not None
        counts = tracker.stats
        counts.child_cpu_s = time.process_time() - started_cpu_s
        return counts

    while True:
        try:
            message = conn.recv()
        except EOFError:  # the caller is gone: nothing left to answer
            return
        try:
            if message[0] == "start":
                tracker = _builder(message[1])(message[2])
                started_cpu_s = time.process_time()
                conn.send(("ready",))
            elif message[0] == "frame":
                assert tracker is not None
                pose = tracker.process(message[1])
                conn.send(("pose", pose, stats()))
            elif message[0] == "close":
                if tracker is not None:
                    tracker.close()
                    conn.send(("closed", tracker.trajectory, stats()))
                else:
                    conn.send(("closed", Trajectory(), TrackingStats()))
                return
        except SlamError as err:
            conn.send(("raise", type(err).__name__, str(err)))
        except (RuntimeError, ValueError, OSError) as err:  # the binding's own errors
            conn.send(("raise", "SlamError", f"{type(err).__name__}: {err}"))


def main(argv: list[str]) -> None:
    """The child: serve the caller on file descriptor argv[0], then leave without teardown."""
    # The caller decides when the backend stops: a Ctrl-C in the terminal reaches the whole
    # process group, and the caller answers it by closing (which saves the trajectory).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    conn = Connection(int(argv[0]))
    code = 0
    try:
        _serve(conn)
    except BaseException:  # a bug: say where in the log, the caller sees the exit code
        traceback.print_exc()
        code = 1
    finally:
        _flush_native_stdio()
        # No interpreter teardown: ORB-SLAM3's objects and threads are never destroyed (its
        # destructors are what could crash); the OS reclaims them.
        os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
