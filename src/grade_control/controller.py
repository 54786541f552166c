"""The joint controller: setpoints + measured state -> joint velocity commands (numpy only).

The ROS node and the simulator (in-process, e.g. for lockstep runs) both drive this class:
feed setpoints through `tracker`, then call `update(now_s, measured)` once per control period.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from grade_common.types import FloatArray
from grade_control.config import BODY_POSE_AXES, ControllerConfig
from grade_control.errors import ControlError
from grade_control.pid import JointPid
from grade_control.setpoints import Reference, SetpointTracker, pose_to_body_values


@dataclass(frozen=True)
class Command:
    """Output of one update: joint velocities (command order = `ControllerConfig.joint_names`)."""

    stamp_s: float
    velocities: FloatArray
    reference: Reference
    notes: tuple[str, ...]


class MeasurementError(ControlError):
    """A measured state cannot be used (unknown or missing joints, non-finite values)."""


def measured_from_pose(
    config: ControllerConfig, position_xyz: Sequence[float], quat_xyzw: Sequence[float]
) -> FloatArray:
    """Joint positions of a robot from its base_link pose (odometry)."""
    try:
        body = pose_to_body_values(position_xyz, quat_xyzw)
    except ControlError as err:
        raise MeasurementError(f"odometry: {err}") from err
    return np.array([body[BODY_POSE_AXES.index(name)] for name in config.joint_names])


def measured_from_joint_states(
    config: ControllerConfig, names: Sequence[str], positions: Sequence[float]
) -> FloatArray:
    """Joint positions in controller order from a (names, positions) joint state.

    Raises:
        MeasurementError: when a controlled joint is missing or the lists differ in length.
    """
    if len(names) != len(positions):
        raise MeasurementError(f"joint state has {len(names)} names but {len(positions)} positions")
    lookup = dict(zip(names, positions, strict=True))
    missing = [name for name in config.joint_names if name not in lookup]
    if missing:
        raise MeasurementError(f"joint state lacks joint(s) {missing} (has {list(names)})")
    return np.array([float(lookup[name]) for name in config.joint_names])


class JointController:
    """PID joint controller of one robot."""

    def __init__(self, config: ControllerConfig) -> None:
        self.config = config
        self.pid = JointPid(config)
        self.tracker = SetpointTracker(config)
        self._last_s: float | None = None

    def reconfigure(self, config: ControllerConfig) -> None:
        """New gains and limits at run time (same joints)."""
        self.pid.reconfigure(config)
        self.tracker.reconfigure(config)
        self.config = config

    def update(self, now_s: float, measured: FloatArray) -> Command:
        """One control update at time `now_s` with the measured joint positions."""
        measured = np.asarray(measured, dtype=np.float64)
        notes: list[str] = []
        if measured.shape != (len(self.config.axes),) or not np.all(np.isfinite(measured)):
            # Without a usable measurement nothing is safe but standing still.
            self.pid.reset()
            reference = Reference(
                np.full(len(self.config.axes), np.nan),
                np.zeros(len(self.config.axes)),
                self.tracker.modes,
                (),
            )
            return Command(
                now_s,
                np.zeros(len(self.config.axes)),
                reference,
                (f"measured state {measured.tolist()} is unusable: commanding zero",),
            )
        if self._last_s is None or not now_s > self._last_s:
            if self._last_s is not None:
                notes.append(f"time went back ({self._last_s} -> {now_s} s): PID state reset")
                self.pid.reset()
            dt_s = self.config.period_s
        else:
            # a late update must not scale the command by a huge dt; cap at 5 periods
            dt_s = min(now_s - self._last_s, 5.0 * self.config.period_s)
        self._last_s = now_s
        reference = self.tracker.reference(now_s, measured)
        velocities = self.pid.step(reference.position, reference.velocity, measured, dt_s)
        return Command(now_s, velocities, reference, (*notes, *reference.notes))


def simulate_first_order(
    controller: JointController,
    initial: FloatArray,
    duration_s: float,
    plant_rate_hz: float = 240.0,
    start_s: float = 0.0,
    on_update: Callable[[float, FloatArray], None] | None = None,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Close the loop on a first-order plant (joint velocity = command), integrated at
    `plant_rate_hz` with the command held between controller updates at its own rate.

    Returns:
        (times_s (k,), positions (k, n), commands (k, n)) at every plant step.
    """
    plant_dt = 1.0 / plant_rate_hz
    steps = round(duration_s * plant_rate_hz)
    n = len(controller.config.axes)
    position = np.asarray(initial, dtype=np.float64).copy()
    times = np.empty(steps)
    positions = np.empty((steps, n))
    commands = np.empty((steps, n))
    command = np.zeros(n)
    next_update_s = start_s
    for k in range(steps):
        now_s = start_s + k * plant_dt
        if now_s >= next_update_s - 1e-9:
            if on_update is not None:
                on_update(now_s, position)
            command = controller.update(now_s, position).velocities
            next_update_s += controller.config.period_s
        times[k], positions[k], commands[k] = now_s, position, command
        position = position + command * plant_dt
    return times, positions, commands
