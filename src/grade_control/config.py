"""Validated, frozen configuration of the joint controller (one per robot).

Every field name equals its ROS 2 parameter name (`rate_hz`, `axes.z.kp`, ...), so an error
raised here names the parameter a user has to fix in the parameters file.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from typing import TypeVar

from grade_control.errors import ControlConfigError

UAV_JOINTS: tuple[str, ...] = ("x", "y", "z", "roll", "pitch", "yaw")
OMNI_JOINTS: tuple[str, ...] = ("x", "y", "yaw", "camera_yaw")
# Joints whose value odometry gives directly (base_link pose in the world-aligned odom frame).
BODY_JOINTS: frozenset[str] = frozenset(UAV_JOINTS)
ANGULAR_JOINTS: frozenset[str] = frozenset({"roll", "pitch", "yaw", "camera_yaw"})

E = TypeVar("E", bound=Enum)
_ROBOT_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class StateSource(Enum):
    """Where the controller reads the measured joint positions from."""

    ODOMETRY = "odometry"
    JOINT_STATES = "joint_states"


class VelocityFrame(Enum):
    """Frame of velocity setpoints that carry no frame of their own (plain `Twist`)."""

    BODY = "body"
    WORLD = "world"


def _enum_value(enum: type[E], name: str, value: object) -> E:
    try:
        return enum(value)
    except ValueError as err:
        allowed = [member.value for member in enum]
        raise ControlConfigError(
            f"{name} = {value!r} is invalid: allowed values {allowed}") from err


def _check_number(name: str, value: object, *, minimum: float | None = None,
                  strict_minimum: bool = False, allow_inf: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ControlConfigError(f"{name} = {value!r} is invalid: must be a number")
    number = float(value)
    if math.isnan(number) or (math.isinf(number) and not allow_inf):
        raise ControlConfigError(f"{name} = {value!r} is invalid: must be a finite number")
    if minimum is not None:
        if strict_minimum and not number > minimum:
            raise ControlConfigError(f"{name} = {value!r} is invalid: must be > {minimum:g}")
        if not strict_minimum and not number >= minimum:
            raise ControlConfigError(f"{name} = {value!r} is invalid: must be >= {minimum:g}")
    return number


@dataclass(frozen=True)
class AxisConfig:
    """PID gains and limits of one joint; velocities in m/s or rad/s, positions in m or rad.

    `integral_limit` bounds the integral term's contribution to the output (same unit as the
    output velocity). `position_min`/`position_max` may be infinite (no limit).
    """

    name: str
    kp: float = 1.2
    ki: float = 4.0
    kd: float = 0.001
    integral_limit: float = 1.0
    velocity_limit: float = 0.5
    position_min: float = -math.inf
    position_max: float = math.inf
    dead_band: float = 0.05
    angular: bool = False

    def __post_init__(self) -> None:
        prefix = f"axes.{self.name}"
        if not isinstance(self.name, str) or not _ROBOT_NAME.match(self.name):
            raise ControlConfigError(
                f"joints entry {self.name!r} is invalid: must match {_ROBOT_NAME.pattern}")
        for name in ("kp", "ki", "kd", "integral_limit", "dead_band"):
            object.__setattr__(self, name, _check_number(f"{prefix}.{name}",
                                                         getattr(self, name), minimum=0.0))
        object.__setattr__(self, "velocity_limit", _check_number(
            f"{prefix}.velocity_limit", self.velocity_limit, minimum=0.0, strict_minimum=True))
        for name in ("position_min", "position_max"):
            object.__setattr__(self, name, _check_number(f"{prefix}.{name}", getattr(self, name),
                                                         allow_inf=True))
        if not self.position_min < self.position_max:
            raise ControlConfigError(
                f"{prefix}.position_min = {self.position_min} is invalid: must be < "
                f"{prefix}.position_max = {self.position_max}")
        if not isinstance(self.angular, bool):
            raise ControlConfigError(f"{prefix}.angular = {self.angular!r} is invalid: "
                                     "must be true or false")


AXIS_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(AxisConfig) if f.name != "name")


def default_axis(name: str) -> AxisConfig:
    """GRADE's defaults for a UAV joint (roll/pitch limited to +-0.35 rad, altitude >= 0.3 m).

    Joints GRADE has no entry for (e.g. `camera_yaw`) get the yaw defaults if their name is a
    known angular joint, else the linear defaults.
    """
    if name in ("roll", "pitch"):
        return AxisConfig(name, velocity_limit=0.7, position_min=-0.35, position_max=0.35,
                          angular=True)
    if name == "z":
        return AxisConfig(name, position_min=0.3)
    return AxisConfig(name, angular=name in ANGULAR_JOINTS)


@dataclass(frozen=True)
class ControllerConfig:
    """Configuration of one robot's joint controller (PID gains, limits, setpoint handling)."""

    robot: str = "uav"
    axes: tuple[AxisConfig, ...] = field(
        default_factory=lambda: tuple(default_axis(name) for name in UAV_JOINTS))
    rate_hz: float = 50.0
    state_source: StateSource = StateSource.ODOMETRY
    velocity_frame: VelocityFrame = VelocityFrame.BODY
    setpoint_timeout_s: float = 0.5
    anti_windup: bool = True
    dead_band_settle_ratio: float = 0.2
    derivative_filter_tau_s: float = 0.02
    path_acceptance_m: float = 0.1
    path_acceptance_rad: float = 0.1
    # Answer every state (odometry/joint states) with a command stamped with the state's stamp,
    # for the simulator's lockstep mode; updates still happen at rate_hz (on the first state due).
    lockstep: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.robot, str) or not _ROBOT_NAME.match(self.robot):
            raise ControlConfigError(
                f"robot = {self.robot!r} is invalid: must match {_ROBOT_NAME.pattern}")
        if not self.axes:
            raise ControlConfigError("joints = [] is invalid: at least one joint is needed")
        names = [axis.name for axis in self.axes]
        if len(set(names)) != len(names):
            raise ControlConfigError(f"joints = {names} is invalid: names must be unique")
        object.__setattr__(self, "rate_hz", _check_number("rate_hz", self.rate_hz, minimum=0.0,
                                                          strict_minimum=True))
        if self.rate_hz > 1000.0:
            raise ControlConfigError(f"rate_hz = {self.rate_hz} is invalid: must be <= 1000")
        object.__setattr__(self, "state_source",
                           _enum_value(StateSource, "state_source", _raw(self.state_source)))
        object.__setattr__(self, "velocity_frame",
                           _enum_value(VelocityFrame, "velocity_frame", _raw(self.velocity_frame)))
        for name, strict in (("setpoint_timeout_s", True), ("derivative_filter_tau_s", False),
                             ("path_acceptance_m", True), ("path_acceptance_rad", True)):
            object.__setattr__(self, name, _check_number(name, getattr(self, name), minimum=0.0,
                                                         strict_minimum=strict))
        object.__setattr__(self, "dead_band_settle_ratio", _check_number(
            "dead_band_settle_ratio", self.dead_band_settle_ratio, minimum=0.0))
        if self.dead_band_settle_ratio > 1.0:
            raise ControlConfigError(f"dead_band_settle_ratio = {self.dead_band_settle_ratio} is "
                                     "invalid: must be in [0, 1]")
        for flag in ("anti_windup", "lockstep"):
            if not isinstance(getattr(self, flag), bool):
                raise ControlConfigError(
                    f"{flag} = {getattr(self, flag)!r} is invalid: must be true or false")
        if self.state_source is StateSource.ODOMETRY:
            unobservable = [n for n in names if n not in BODY_JOINTS]
            if unobservable:
                raise ControlConfigError(
                    f"state_source = 'odometry' is invalid for joints {unobservable}: odometry "
                    f"only measures {list(UAV_JOINTS)}; use 'joint_states'")

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
        return cls(robot=robot, axes=axes, state_source=StateSource.JOINT_STATES,
                   velocity_frame=VelocityFrame.BODY)

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

        Raises:
            ControlConfigError: naming the offending parameter, its value and the allowed range.
        """
        known = set(cls().to_parameters()) - {k for k in cls().to_parameters() if "." in k}
        joints_raw = params.get("joints", list(UAV_JOINTS))
        if not isinstance(joints_raw, list | tuple) or not all(
                isinstance(j, str) for j in joints_raw):
            raise ControlConfigError(f"joints = {joints_raw!r} is invalid: must be a list of names")
        joints = [str(j) for j in joints_raw]
        axes = []
        for joint in joints:
            base = default_axis(joint)
            overrides = {name: params[f"axes.{joint}.{name}"] for name in AXIS_FIELDS
                         if f"axes.{joint}.{name}" in params}
            axes.append(replace(base, **overrides))  # type: ignore[arg-type]
        for key in params:
            if key.startswith("axes.") and key.split(".")[1] not in joints:
                raise ControlConfigError(
                    f"parameter {key} names joint {key.split('.')[1]!r}, which is not in "
                    f"joints = {joints}")
            if key.startswith("axes.") and key.split(".", 2)[-1] not in AXIS_FIELDS:
                raise ControlConfigError(
                    f"parameter {key} is unknown: per-joint fields are {list(AXIS_FIELDS)}")
        top = {k: v for k, v in params.items() if k in known and k != "joints"}
        return cls(axes=tuple(axes), **top)  # type: ignore[arg-type]


def _raw(value: object) -> object:
    return value.value if isinstance(value, Enum) else value
