"""The built-in waypoint follower and the robots' virtual-joint chains."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grade_sim.config.scenario import RobotConfig, RobotKind
from grade_sim.robots.model import JointKind, robot_model
from grade_sim.robots.path_follower import PathFollower

DT_S = 1 / 240


def test_uav_and_omni_joint_chains() -> None:
    uav = robot_model(RobotConfig(name="u", type=RobotKind.UAV))
    assert uav.joint_names == ("x", "y", "z", "yaw", "pitch", "roll")
    assert [j.kind for j in uav.joints] == [JointKind.SLIDE] * 3 + [JointKind.HINGE] * 3
    assert uav.camera_joint is None
    assert uav.base_joint_names == uav.joint_names
    omni = robot_model(RobotConfig(name="o", type=RobotKind.OMNI))
    assert omni.joint_names == ("x", "y", "yaw", "camera_yaw")
    assert omni.camera_joint == "camera_yaw"
    assert omni.base_joint_names == ("x", "y", "yaw")


def track(
    follower: PathFollower, joints: tuple[str, ...], start: np.ndarray, yaw: float, t_end: float
) -> tuple[np.ndarray, np.ndarray]:
    """Integrate the follower's velocity commands on ideal joints; returns times and positions."""
    q = {name: 0.0 for name in joints}
    for k, name in enumerate(("x", "y", "z")):
        if name in q:
            q[name] = float(start[k])
    q["yaw"] = yaw
    times, states = [], []
    for k in range(int(t_end / DT_S)):
        t = k * DT_S
        cmd = follower.command(t, q)
        for name, v in cmd.items():
            q[name] += v * DT_S
        times.append(t + DT_S)
        states.append([q.get("x", 0.0), q.get("y", 0.0), q.get("z", 0.0), q["yaw"]])
    return np.array(times), np.array(states)


@pytest.mark.parametrize("kind", [RobotKind.UAV, RobotKind.OMNI])
def test_follower_reaches_every_waypoint(kind: RobotKind) -> None:
    model = robot_model(RobotConfig(name="r", type=kind))
    z = 1.2 if kind is RobotKind.UAV else 0.0
    start = np.array([0.0, 0.0, z])
    waypoints = [
        np.array([3.0, 0.0, z]),
        np.array([3.0, 2.0, z + 0.3 * (z > 0)]),
        np.array([0.5, 2.5, z]),
    ]
    follower = PathFollower(model, start, 0.0, waypoints, 0.8, 0.6, loop=False)
    assert follower.period_s > 0
    _, states = track(follower, model.joint_names, start, 0.0, follower.period_s + 2.0)
    for wp in waypoints:
        closest = np.min(np.linalg.norm(states[:, :3] - wp, axis=1))
        assert closest < 0.02, (wp, closest)
    np.testing.assert_allclose(states[-1, :3], waypoints[-1], atol=1e-3)
    # Yaw faces the last segment's direction of travel.
    d = waypoints[-1] - waypoints[-2]
    assert math.remainder(states[-1, 3] - math.atan2(d[1], d[0]), 2 * math.pi) == pytest.approx(
        0.0, abs=1e-3
    )


def test_desired_path_hits_waypoints_and_respects_speed() -> None:
    model = robot_model(RobotConfig(name="r"))
    start = np.array([1.0, 1.0, 1.4])
    waypoints = [np.array([4.0, 1.0, 1.4]), np.array([4.0, 5.0, 1.4])]
    follower = PathFollower(model, start, 0.0, waypoints, 0.8, 0.6, loop=True)
    t = np.arange(0.0, 2 * follower.period_s, 0.01)
    desired = np.array([follower.desired(s)[0] for s in t])
    vel = np.array([follower.desired(s)[1] for s in t])
    assert np.linalg.norm(vel[:, :3], axis=1).max() <= 0.8 + 1e-9
    assert np.abs(vel[:, 3]).max() <= 0.6 + 1e-9
    for wp in [*waypoints, start]:
        assert np.min(np.linalg.norm(desired[:, :3] - wp, axis=1)) < 0.01
    # A loop: back at the start after one period, and periodic.
    np.testing.assert_allclose(follower.desired(follower.period_s)[0][:3], start, atol=1e-9)
    np.testing.assert_allclose(
        follower.desired(0.3)[0], follower.desired(0.3 + follower.period_s)[0], atol=1e-9
    )


def test_no_waypoints_holds_the_start() -> None:
    model = robot_model(RobotConfig(name="r"))
    start = np.array([1.0, 2.0, 1.0])
    follower = PathFollower(model, start, 0.5, [], 0.8, 0.6, loop=True)
    pose, vel = follower.desired(3.0)
    np.testing.assert_array_equal(pose, [1.0, 2.0, 1.0, 0.5])
    np.testing.assert_array_equal(vel, np.zeros(4))
    cmd = follower.command(3.0, {"x": 1.1, "y": 2.0, "z": 1.0, "yaw": 0.5, "roll": 0.1})
    assert cmd["x"] < 0
    assert cmd["y"] == 0
    assert cmd["roll"] < 0
