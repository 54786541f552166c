"""Robots as GRADE models them: a body moved through a chain of virtual joints.

A UAV has x, y, z (prismatic, world axes) and yaw, pitch, roll (revolute, applied in that order so
the body orientation is Rz(yaw) Ry(pitch) Rx(roll)); the omnidirectional ground robot has x, y,
yaw and a camera yaw joint carrying its cameras. Joints are driven by velocity commands.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from grade_sim.config.scenario import RobotConfig, RobotKind


class JointKind(enum.Enum):
    """MuJoCo's joint types that robot models use."""

    SLIDE = "slide"  # translation along the axis (m)
    HINGE = "hinge"  # rotation about the axis (rad)


@dataclass(frozen=True)
class JointSpec:
    name: str
    kind: JointKind
    axis: tuple[float, float, float]
    range: tuple[float, float] | None = None  # position limits (m or rad)


@dataclass(frozen=True)
class RobotModel:
    """The joint chain of one robot, in chain order (world -> body)."""

    config: RobotConfig
    joints: tuple[JointSpec, ...]
    # Joints after which the camera mount sits (omni: camera_yaw); cameras of a UAV sit on the body.
    camera_joint: str | None

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def joint_names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints)

    @property
    def base_joint_names(self) -> tuple[str, ...]:
        return tuple(j.name for j in self.joints if j.name != self.camera_joint)


ROLL_PITCH_LIMIT_RAD = (
    0.35 * 2
)  # physical joint range; the controller enforces its own tighter limit


def robot_model(config: RobotConfig) -> RobotModel:
    """The virtual-joint chain for a robot configuration."""
    joints: tuple[JointSpec, ...]
    if config.type is RobotKind.UAV:
        joints = (
            JointSpec("x", JointKind.SLIDE, (1.0, 0.0, 0.0)),
            JointSpec("y", JointKind.SLIDE, (0.0, 1.0, 0.0)),
            JointSpec("z", JointKind.SLIDE, (0.0, 0.0, 1.0)),
            JointSpec("yaw", JointKind.HINGE, (0.0, 0.0, 1.0)),
            JointSpec(
                "pitch",
                JointKind.HINGE,
                (0.0, 1.0, 0.0),
                (-ROLL_PITCH_LIMIT_RAD, ROLL_PITCH_LIMIT_RAD),
            ),
            JointSpec(
                "roll",
                JointKind.HINGE,
                (1.0, 0.0, 0.0),
                (-ROLL_PITCH_LIMIT_RAD, ROLL_PITCH_LIMIT_RAD),
            ),
        )
        return RobotModel(config, joints, None)
    joints = (
        JointSpec("x", JointKind.SLIDE, (1.0, 0.0, 0.0)),
        JointSpec("y", JointKind.SLIDE, (0.0, 1.0, 0.0)),
        JointSpec("yaw", JointKind.HINGE, (0.0, 0.0, 1.0)),
        JointSpec("camera_yaw", JointKind.HINGE, (0.0, 0.0, 1.0), (-math.pi, math.pi)),
    )
    return RobotModel(config, joints, "camera_yaw")
