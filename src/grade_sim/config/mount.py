"""Where a sensor sits on a robot: a fixed offset from one of the robot's links."""

from __future__ import annotations

from dataclasses import dataclass, field

from grade_common.schema import bounds

Vec3 = tuple[float, float, float]


@dataclass(frozen=True)
class MountConfig:
    # Offset from the parent link, metres.
    xyz: Vec3 = (0.0, 0.0, 0.0)
    # Rotation from the parent link (roll, pitch, yaw), radians.
    rpy: Vec3 = field(default=(0.0, 0.0, 0.0), metadata=bounds(-6.2832, 6.2832))
    # The robot link the sensor is mounted on.
    parent: str = "base_link"
