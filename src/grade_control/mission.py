"""Scripted waypoint missions: a YAML file of waypoints -> a pose setpoint per update.

File format (see config/mission_uav.yaml)::

    robot: uav
    frame_id: world
    rate_hz: 10.0
    yaw_policy: face_travel        # fixed (each waypoint's yaw_deg) | face_travel
    acceptance_radius_m: 0.15
    acceptance_yaw_deg: 5.0
    ignore_z: false                # ground robots: accept on x, y only
    loop: false
    waypoints:
      - {position: [0.0, 0.0, 1.0], yaw_deg: 0.0, hover_s: 2.0}

The robot goes to each waypoint in turn; once within the acceptance radius (and yaw tolerance)
it hovers there for `hover_s`, then the next waypoint becomes the goal. After the last one the
mission is done and keeps asking for the last pose (or starts over with `loop: true`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np

from grade_common.schema import bounds, file_key, from_mapping
from grade_common.textfile import read_yaml
from grade_common.types import FloatArray
from grade_control.config import PARAMETER_WORDING
from grade_control.errors import ControlConfigError
from grade_control.geometry import wrap_angle


class YawPolicy(Enum):
    """How the yaw goal of a waypoint is chosen."""

    FIXED = "fixed"  # the waypoint's own yaw_deg
    FACE_TRAVEL = "face_travel"  # along the leg from the previous waypoint (kept on vertical legs)


class MissionPhase(Enum):
    """Where the mission is."""

    GOING = "going"  # flying to the current waypoint
    HOVERING = "hovering"  # arrived: holding the waypoint for its hover time
    DONE = "done"  # the last waypoint's hover time has passed


@dataclass(frozen=True)
class Waypoint:
    """A goal position (m, in the mission frame), yaw (rad, for the fixed policy), hover time."""

    position_m: tuple[float, float, float] = field(metadata=file_key("position"))
    yaw_rad: float = field(default=0.0, metadata=file_key("yaw_deg", math.radians))
    hover_s: float = field(default=0.0, metadata=bounds(0.0))


@dataclass(frozen=True)
class MissionConfig:
    """A validated mission; `parse_mission` builds it from a file's keys (degrees, `position`)."""

    waypoints: tuple[Waypoint, ...]
    robot: str = "uav"
    frame_id: str = "world"
    rate_hz: float = 10.0
    yaw_policy: YawPolicy = YawPolicy.FIXED
    acceptance_radius_m: float = 0.15
    acceptance_yaw_rad: float = field(
        default=math.radians(5.0), metadata=file_key("acceptance_yaw_deg", math.radians)
    )
    ignore_z: bool = False
    loop: bool = False

    def __post_init__(self) -> None:
        if not self.waypoints:
            raise ControlConfigError("waypoints = [] is invalid: at least one waypoint needed")
        for name in ("rate_hz", "acceptance_radius_m", "acceptance_yaw_rad"):
            value = getattr(self, name)
            if not (isinstance(value, float) and math.isfinite(value) and value > 0):
                raise ControlConfigError(f"{name} = {value!r} is invalid: must be a number > 0")
        if not self.robot or not self.frame_id:
            raise ControlConfigError("robot and frame_id must be non-empty")


# Mission files keep the texts their users know: `loop = 'yes' must be true or false`,
# `yaw_policy = 'spin' is invalid: allowed ['fixed', 'face_travel']`.
_MISSION_WORDING = replace(
    PARAMETER_WORDING,
    root="field(s)",
    wrong_type="{name} = {raw!r} must be {expected}",
    not_allowed="{name} = {raw!r} is invalid: allowed {choices}",
)


def parse_mission(data: Any, source: str = "<mission>") -> MissionConfig:
    """Validate a mission mapping (as loaded from YAML).

    Raises:
        ControlConfigError: naming the source, the field and the offending value.
    """
    if not isinstance(data, dict):
        raise ControlConfigError(
            f"{source}: a mission must be a mapping, got {type(data).__name__}"
        )
    try:
        return from_mapping(MissionConfig, data, wording=_MISSION_WORDING)
    except ControlConfigError as err:
        raise ControlConfigError(f"{source}: {err}") from err


def load_mission(path: Path) -> MissionConfig:
    """Read and validate a mission YAML file."""
    data = read_yaml(path, "mission file", error=ControlConfigError)
    return parse_mission(data, str(path))


@dataclass(frozen=True)
class MissionTarget:
    """The goal for this update."""

    position_m: FloatArray
    yaw_rad: float
    index: int
    phase: MissionPhase


class Mission:
    """Runs a mission against the measured pose of the robot."""

    def __init__(self, config: MissionConfig) -> None:
        self.config = config
        self.index = 0
        self.phase = MissionPhase.GOING
        self._hover_since_s: float | None = None
        self._previous_m: FloatArray | None = None  # where the current leg started
        self._travel_yaw_rad: float | None = None

    def _goal_yaw(self, measured_yaw_rad: float) -> float:
        waypoint = self.config.waypoints[self.index]
        if self.config.yaw_policy is YawPolicy.FIXED:
            return waypoint.yaw_rad
        if self._travel_yaw_rad is None:
            assert self._previous_m is not None
            leg = np.asarray(waypoint.position_m) - self._previous_m
            if math.hypot(leg[0], leg[1]) > 1e-3:
                self._travel_yaw_rad = math.atan2(leg[1], leg[0])
            else:  # a vertical leg has no direction of travel: keep the heading
                self._travel_yaw_rad = measured_yaw_rad
        return self._travel_yaw_rad

    def _advance(self, start_m: FloatArray) -> None:
        self._previous_m = start_m
        self._hover_since_s = None
        keep_yaw = self._travel_yaw_rad
        self._travel_yaw_rad = None
        if self.index + 1 < len(self.config.waypoints):
            self.index += 1
            self.phase = MissionPhase.GOING
        elif self.config.loop:
            self.index = 0
            self.phase = MissionPhase.GOING
        else:
            self.phase = MissionPhase.DONE
            self._travel_yaw_rad = keep_yaw

    def update(self, now_s: float, position_m: FloatArray, yaw_rad: float) -> MissionTarget:
        """The goal for this update, given the measured position and yaw."""
        position = np.asarray(position_m, dtype=np.float64)
        if self._previous_m is None:
            self._previous_m = position.copy()
        waypoint = self.config.waypoints[self.index]
        goal = np.asarray(waypoint.position_m, dtype=np.float64)
        goal_yaw = self._goal_yaw(yaw_rad)
        if self.phase is MissionPhase.DONE:
            return MissionTarget(goal, goal_yaw, self.index, self.phase)
        error = goal - position
        distance = (
            math.hypot(error[0], error[1]) if self.config.ignore_z else float(np.linalg.norm(error))
        )
        yaw_error = abs(float(wrap_angle(goal_yaw - yaw_rad)))
        arrived = (
            distance <= self.config.acceptance_radius_m
            and yaw_error <= self.config.acceptance_yaw_rad
        )
        if self.phase is MissionPhase.GOING and arrived:
            self.phase = MissionPhase.HOVERING
            self._hover_since_s = now_s
        if self.phase is MissionPhase.HOVERING:
            assert self._hover_since_s is not None
            if now_s - self._hover_since_s >= waypoint.hover_s:
                self._advance(goal)
                waypoint = self.config.waypoints[self.index]
                goal = np.asarray(waypoint.position_m, dtype=np.float64)
                goal_yaw = self._goal_yaw(yaw_rad)
        return MissionTarget(goal, goal_yaw, self.index, self.phase)
