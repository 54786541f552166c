"""Joint velocity commands received from outside (ROS topics), as a CommandSource.

Free-running: the latest command per robot is applied until it is older than `timeout_s` of
simulated time, after which the robot holds still (zero velocity) rather than flying on.

Lockstep: whenever the simulator publishes a robot's odometry (the lockstep state), the next
physics step waits until a command stamped with that state's stamp (or later) has arrived. The
controller thus sees exactly that state and the run is reproducible bit for bit; a missing answer
raises LockstepTimeoutError after `lockstep_timeout_s` of wall time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from grade_common.errors import GradeError
from grade_common.types import FloatArray

RESEND_AFTER_S = 0.5


class LockstepTimeoutError(GradeError):
    """The controller did not answer a lockstep state in time."""


@dataclass(frozen=True)
class JointCommand:
    stamp_ns: int
    velocities: dict[str, float]


class CommandStore:
    """Thread-safe latest joint commands per robot (fed by subscriptions, read by the sim)."""

    def __init__(
        self, timeout_s: float = 0.5, lockstep: bool = False, lockstep_timeout_s: float = 10.0
    ) -> None:
        self.timeout_ns = int(timeout_s * 1e9)
        self.lockstep = lockstep
        self.lockstep_timeout_s = lockstep_timeout_s
        self._latest: dict[str, JointCommand] = {}
        self._required_ns: dict[str, int] = {}
        self._cond = threading.Condition()
        self.rejected: list[str] = []
        # Lockstep: called with the robot name while its answer is overdue, to send the state
        # again (a best-effort sample can be lost; the controller answers a repeat identically).
        self.resend: Callable[[str], None] | None = None

    def update(
        self,
        robot: str,
        stamp_ns: int,
        names: list[str],
        velocities: list[float],
        known_joints: tuple[str, ...],
    ) -> str | None:
        """Store a command; returns a reason if it was rejected (unknown joints, non-finite)."""
        if len(names) != len(velocities):
            return f"{len(names)} joint names but {len(velocities)} velocities"
        unknown = sorted(set(names) - set(known_joints))
        if unknown:
            return f"unknown joint(s) {unknown}; this robot has {list(known_joints)}"
        if not all(np.isfinite(v) for v in velocities):
            return "non-finite velocity (NaN or inf)"
        with self._cond:
            previous = self._latest.get(robot)
            merged = dict(previous.velocities) if previous else {}
            merged.update(zip(names, (float(v) for v in velocities), strict=True))
            self._latest[robot] = JointCommand(stamp_ns, merged)
            self._cond.notify_all()
        return None

    def require(self, robot: str, stamp_ns: int) -> None:
        """Lockstep: the next step of `robot` must wait for a command stamped >= stamp_ns."""
        if self.lockstep:
            with self._cond:
                self._required_ns[robot] = stamp_ns

    def joint_velocities(
        self, robot: str, joint_names: tuple[str, ...], stamp_ns: int
    ) -> FloatArray | None:
        with self._cond:
            required = self._required_ns.pop(robot, None) if self.lockstep else None
            if required is not None:

                def answered() -> bool:
                    return robot in self._latest and self._latest[robot].stamp_ns >= required

                deadline = time.monotonic() + self.lockstep_timeout_s
                ok = self._cond.wait_for(
                    answered, timeout=min(RESEND_AFTER_S, self.lockstep_timeout_s)
                )
                while not ok and time.monotonic() < deadline:
                    if self.resend is not None:
                        self._cond.release()
                        try:
                            self.resend(robot)
                        finally:
                            self._cond.acquire()
                    remaining = deadline - time.monotonic()
                    ok = self._cond.wait_for(
                        answered, timeout=max(0.0, min(RESEND_AFTER_S, remaining))
                    )
                if not ok:
                    raise LockstepTimeoutError(
                        f"lockstep: no joint command for robot {robot!r} stamped >= "
                        f"{required / 1e9:.6f} s within {self.lockstep_timeout_s} s; is its "
                        "controller running in lockstep mode and subscribed to /<robot>/odom?"
                    )
            cmd = self._latest.get(robot)
        if cmd is None:
            return None
        if not self.lockstep and stamp_ns - cmd.stamp_ns > self.timeout_ns:
            return None
        return np.array([cmd.velocities.get(j, 0.0) for j in joint_names])
