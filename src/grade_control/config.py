"""Validated, frozen configuration of the joint controller (one per robot).

Every field name equals its ROS 2 parameter name (`rate_hz`, `axes.z.kp`, ...), so an error
raised here names the parameter a user has to fix in the parameters file.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import ClassVar

from grade_common.names import ros_name
from grade_common.schema import (
    PARAMETER,
    Checked,
    Wording,
    bounds,
    from_mapping,
    named_items,
    to_mapping,
)
from grade_control.errors import ControlConfigError

# The layout of a body pose as the controller measures it (`pose_to_body_values`: position, then
# roll, pitch, yaw), which is also the UAV's default command order. Joints are matched by name
# everywhere (commands and joint states carry names), so this is not the simulator's joint chain
# order (grade_sim.robots.model: x, y, z, yaw, pitch, roll); only the names must be the same.
BODY_POSE_AXES: tuple[str, ...] = ("x", "y", "z", "roll", "pitch", "yaw")
ANGULAR_JOINTS: frozenset[str] = frozenset({"roll", "pitch", "yaw", "camera_yaw"})

# ROS 2 parameter phrasing (`axes.z.kp = -1.0 is invalid: must be >= 0`), as ControlConfigError.
PARAMETER_WORDING = replace(PARAMETER, error=ControlConfigError)


class StateSource(Enum):
    """Where the controller reads the measured joint positions from."""

    ODOMETRY = "odometry"
    JOINT_STATES = "joint_states"


class VelocityFrame(Enum):
    """Frame of velocity setpoints that carry no frame of their own (plain `Twist`)."""

    BODY = "body"
    WORLD = "world"


_GAIN = bounds(0.0)
_POSITIVE = bounds(0.0, exclusive_min=True)
_LIMIT = bounds(allow_inf=True)


@dataclass(frozen=True)
class AxisConfig(Checked):
    """PID gains and limits of one joint; velocities in m/s or rad/s, positions in m or rad.

    `integral_limit` bounds the integral term's contribution to the output (same unit as the
    output velocity). `position_min`/`position_max` may be infinite (no limit).
    """

    WORDING: ClassVar[Wording] = PARAMETER_WORDING

    name: str = field(metadata=ros_name())
    kp: float = field(default=1.2, metadata=_GAIN)
    ki: float = field(default=4.0, metadata=_GAIN)
    kd: float = field(default=0.001, metadata=_GAIN)
    integral_limit: float = field(default=1.0, metadata=_GAIN)
    velocity_limit: float = field(default=0.5, metadata=_POSITIVE)
    position_min: float = field(default=-math.inf, metadata=_LIMIT)
    position_max: float = field(default=math.inf, metadata=_LIMIT)
    dead_band: float = field(default=0.05, metadata=_GAIN)
    angular: bool = False

    def validate(self, path: str) -> None:
        # Named by the joint, as the parameter is (`axes.roll.position_min`), wherever it sits.
        prefix = f"axes.{self.name}"
        if not self.position_min < self.position_max:
            raise ControlConfigError(
                f"{prefix}.position_min = {self.position_min} is invalid: must be < "
                f"{prefix}.position_max = {self.position_max}"
            )


AXIS_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(AxisConfig) if f.name != "name")


def default_axis(name: str) -> AxisConfig:
    """GRADE's defaults for a UAV joint (roll/pitch limited to +-0.35 rad, altitude >= 0.3 m).

    Joints GRADE has no entry for (e.g. `camera_yaw`) get the yaw defaults if their name is a
    known angular joint, else the linear defaults.
    """
    if name in ("roll", "pitch"):
        return AxisConfig(
            name, velocity_limit=0.7, position_min=-0.35, position_max=0.35, angular=True
        )
    if name == "z":
        return AxisConfig(name, position_min=0.3)
    return AxisConfig(name, angular=name in ANGULAR_JOINTS)


@dataclass(frozen=True)
class ControllerConfig(Checked):
    """Configuration of one robot's joint controller (PID gains, limits, setpoint handling)."""

    WORDING: ClassVar[Wording] = PARAMETER_WORDING

    robot: str = field(default="uav", metadata=ros_name())
    axes: tuple[AxisConfig, ...] = field(
        default_factory=lambda: tuple(default_axis(name) for name in BODY_POSE_AXES),
        metadata=named_items("name"),
    )
    rate_hz: float = field(default=50.0, metadata=bounds(0.0, 1000.0, exclusive_min=True))
    state_source: StateSource = StateSource.ODOMETRY
    velocity_frame: VelocityFrame = VelocityFrame.BODY
    setpoint_timeout_s: float = field(default=0.5, metadata=_POSITIVE)
    anti_windup: bool = True
    dead_band_settle_ratio: float = field(default=0.2, metadata=bounds(0.0, 1.0))
    derivative_filter_tau_s: float = field(default=0.02, metadata=_GAIN)
    path_acceptance_m: float = field(default=0.1, metadata=_POSITIVE)
    path_acceptance_rad: float = field(default=0.1, metadata=_POSITIVE)
    # Answer every state (odometry/joint states) with a command stamped with the state's stamp,
    # for the simulator's lockstep mode; updates still happen at rate_hz (on the first state due).
    lockstep: bool = False

    def validate(self, path: str) -> None:
        if not self.axes:
            raise ControlConfigError("joints = [] is invalid: at least one joint is needed")
        names = [axis.name for axis in self.axes]
        if len(set(names)) != len(names):
            raise ControlConfigError(f"joints = {names} is invalid: names must be unique")
        if self.state_source is StateSource.ODOMETRY:
            unobservable = [n for n in names if n not in BODY_POSE_AXES]
            if unobservable:
                raise ControlConfigError(
                    f"state_source = 'odometry' is invalid for joints {unobservable}: odometry "
                    f"only measures {list(BODY_POSE_AXES)}; use 'joint_states'"
                )

    @property
    def joint_names(self) -> tuple[str, ...]:
        """Names of the controlled joints, in command order."""
        return tuple(axis.name for axis in self.axes)

    @property
    def period_s(self) -> float:
        """Control period, 1 / rate_hz."""
        return 1.0 / self.rate_hz

    @property
    def world_frames(self) -> tuple[str, ...]:
        """Frame ids accepted for world-frame setpoints."""
        return ("world", f"{self.robot}/odom")

    @property
    def body_frame(self) -> str:
        """Frame id of the robot body (velocity setpoints in this frame are body-frame)."""
        return f"{self.robot}/base_link"

    @classmethod
    def uav(cls, robot: str = "uav") -> ControllerConfig:
        """GRADE's 6-DOF UAV controller defaults."""
        return cls(robot=robot)

    @classmethod
    def omni(cls, robot: str = "omni") -> ControllerConfig:
        """GRADE's omnidirectional ground robot defaults (velocity-mode gains)."""
        axes = (
            AxisConfig("x", kp=0.6, ki=0.004),
            AxisConfig("y", kp=0.6, ki=0.004),
            AxisConfig("yaw", kp=0.4, ki=4.0, angular=True),
            AxisConfig("camera_yaw", kp=0.4, ki=4.0, angular=True),
        )
        return cls(
            robot=robot,
            axes=axes,
            state_source=StateSource.JOINT_STATES,
            velocity_frame=VelocityFrame.BODY,
        )

    def to_parameters(self) -> dict[str, object]:
        """Flat ROS 2 parameter names -> values (the inverse of `from_parameters`)."""
        params: dict[str, object] = {
            "robot": self.robot,
            "joints": list(self.joint_names),
            "rate_hz": self.rate_hz,
            "state_source": self.state_source.value,
            "velocity_frame": self.velocity_frame.value,
            "setpoint_timeout_s": self.setpoint_timeout_s,
            "anti_windup": self.anti_windup,
            "dead_band_settle_ratio": self.dead_band_settle_ratio,
            "derivative_filter_tau_s": self.derivative_filter_tau_s,
            "path_acceptance_m": self.path_acceptance_m,
            "path_acceptance_rad": self.path_acceptance_rad,
            "lockstep": self.lockstep,
        }
        for axis in self.axes:
            for name in AXIS_FIELDS:
                params[f"axes.{axis.name}.{name}"] = getattr(axis, name)
        return params

    @classmethod
    def from_parameters(cls, params: Mapping[str, object]) -> ControllerConfig:
        """Build from flat ROS 2 parameter names; missing ones take the defaults.

        The flat names (`axes.z.kp`) are regrouped per joint, starting from the joint's
        defaults, and the result is validated by `grade_common.schema.from_mapping`.

        Raises:
            ControlConfigError: naming the offending parameter, its value and the allowed range.
        """
        joints_raw = params.get("joints", list(BODY_POSE_AXES))
        if not isinstance(joints_raw, list | tuple) or not all(
            isinstance(j, str) for j in joints_raw
        ):
            raise ControlConfigError(f"joints = {joints_raw!r} is invalid: must be a list of names")
        joints = [str(j) for j in joints_raw]
        for key in params:
            if key.startswith("axes.") and key.split(".")[1] not in joints:
                raise ControlConfigError(
                    f"parameter {key} names joint {key.split('.')[1]!r}, which is not in "
                    f"joints = {joints}"
                )
            if key.startswith("axes.") and key.split(".", 2)[-1] not in AXIS_FIELDS:
                raise ControlConfigError(
                    f"parameter {key} is unknown: per-joint fields are {list(AXIS_FIELDS)}"
                )
        axes = []
        for joint in joints:
            axis = to_mapping(default_axis(joint))
            axis.update(
                {
                    name: params[f"axes.{joint}.{name}"]
                    for name in AXIS_FIELDS
                    if f"axes.{joint}.{name}" in params
                }
            )
            axes.append(axis)
        top = {k: v for k, v in params.items() if not k.startswith("axes.") and k != "joints"}
        return from_mapping(cls, {**top, "axes": axes})
