"""Robots as the crowd sees them: discs on the ground plane (the live ones: sim/orchestrator)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from grade_common.types import FloatArray
from grade_people.crowd import RobotObstacle, RobotSchedule
from grade_sim.config.scenario import MotionMode, RobotConfig
from grade_sim.robots.path_follower import PathFollower

# Robots flying higher than this above the floor pass over everyone's head.
HEAD_CLEARANCE_M = 2.0


def robot_radius_m(config: RobotConfig) -> float:
    """Radius of the disc around the robot's body footprint."""
    return 0.5 * math.hypot(config.body_size_m[0], config.body_size_m[1])


def below_heads(config: RobotConfig, z_m: float) -> bool:
    """Whether a robot at height z_m is low enough to meet people."""
    return z_m - config.body_size_m[2] / 2 < HEAD_CLEARANCE_M


def planned_robot_schedule(
    robots: Sequence[tuple[RobotConfig, PathFollower | None]],
    n_steps: int,
    dt_s: float,
    bootstrap_s: float,
) -> RobotSchedule:
    """Bodies of the robots that follow planned paths (path and teleport modes) at every step.

    Robots driven by commands have no plan known in advance and are left out.
    """
    planned = [
        (rc, f)
        for rc, f in robots
        if f is not None and rc.motion.mode in (MotionMode.PATH, MotionMode.TELEPORT)
    ]
    pos = np.zeros((n_steps, len(planned), 3))
    vel = np.zeros((n_steps, len(planned), 2))
    yaw = np.zeros((n_steps, len(planned)))
    near = np.zeros((n_steps, len(planned)), dtype=bool)
    for r, (rc, follower) in enumerate(planned):
        assert follower is not None
        for k in range(n_steps):
            t = k * dt_s
            pose, rate = follower.desired(max(0.0, t - bootstrap_s))
            pos[k, r] = pose[:3]
            yaw[k, r] = pose[3]
            vel[k, r] = rate[:2] if t >= bootstrap_s else 0.0
            near[k, r] = below_heads(rc, float(pose[2]))
    return RobotSchedule(
        tuple(rc.name for rc, _ in planned),
        pos,
        vel,
        yaw,
        near,
        np.array([robot_radius_m(rc) for rc, _ in planned]),
        np.array([np.asarray(rc.body_size_m) / 2 for rc, _ in planned]).reshape(-1, 3),
    )


def start_obstacles(robots: Sequence[tuple[RobotConfig, FloatArray]]) -> list[RobotObstacle]:
    """Every robot at its start position (whatever drives it): nobody starts on a robot."""
    return [
        RobotObstacle(np.asarray(xyz[:2], dtype=np.float64), np.zeros(2), robot_radius_m(rc))
        for rc, xyz in robots
    ]
