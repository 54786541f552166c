"""Setpoint modes, stale-setpoint hold and rejection of bad setpoints."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from grade_control.config import ControllerConfig
from grade_control.controller import (
    JointController,
    MeasurementError,
    measured_from_joint_states,
    measured_from_pose,
    simulate_first_order,
)
from grade_control.errors import SetpointError
from grade_control.geometry import rpy_to_quaternion
from grade_control.setpoints import SetpointMode, SetpointTracker

UAV = ControllerConfig.uav()
OMNI = ControllerConfig.omni()
HOVER = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 0.0])
IDENTITY = (0.0, 0.0, 0.0, 1.0)


def test_velocity_setpoint_goes_stale_and_robot_holds() -> None:
    controller = JointController(UAV)
    controller.update(0.0, HOVER)
    controller.tracker.set_twist((0.4, 0.0, 0.0), (0.0, 0.0, 0.0), "world", 0.0, 0.0)
    t, positions, commands = simulate_first_order(controller, HOVER, 3.0, start_s=0.02)
    moving = t < 0.5
    assert np.all(commands[moving & (t > 0.05), 0] == pytest.approx(0.4))
    # stale after setpoint_timeout_s = 0.5 s: held where it was then, never flies on
    stale_x = positions[np.searchsorted(t, 0.52), 0]
    assert positions[-1, 0] == pytest.approx(stale_x, abs=1e-9)
    assert np.all(commands[t > 0.6] == 0.0)
    assert controller.tracker.modes == (SetpointMode.HOLD,) * 6


def test_stale_note_is_reported() -> None:
    controller = JointController(UAV)
    controller.update(0.0, HOVER)
    controller.tracker.set_pose((1.0, 0.0, 1.0), IDENTITY, "world", 0.0, 0.0)
    assert controller.update(0.4, HOVER).reference.modes[0] is SetpointMode.POSITION
    command = controller.update(0.6, HOVER + 0.01)
    assert any("stale" in note for note in command.notes)
    assert command.reference.position[0] == pytest.approx(0.01)


def _pose_nan(t: SetpointTracker) -> None:
    t.set_pose((math.nan, 0.0, 1.0), IDENTITY, "world", 1.0, 1.0)


BAD: list[tuple[str, ControllerConfig, Callable[[SetpointTracker], None], str]] = [
    ("pose nan", UAV, _pose_nan, r"non-finite"),
    (
        "pose inf quaternion",
        UAV,
        lambda t: t.set_pose((0, 0, 1), (0, 0, math.inf, 1), "world", 1.0, 1.0),
        r"non-finite",
    ),
    (
        "pose zero quaternion",
        UAV,
        lambda t: t.set_pose((0, 0, 1), (0, 0, 0, 0), "world", 1.0, 1.0),
        r"not a rotation",
    ),
    (
        "pose unknown frame",
        UAV,
        lambda t: t.set_pose((0, 0, 1), IDENTITY, "map", 1.0, 1.0),
        r"frame 'map' is unknown: allowed frames \['world', 'uav/odom'\]",
    ),
    (
        "pose below min altitude",
        UAV,
        lambda t: t.set_pose((0, 0, 0.1), IDENTITY, "world", 1.0, 1.0),
        r"joint z = 0\.1 is outside its limits \[0\.3, inf\]",
    ),
    (
        "pose roll too large",
        UAV,
        lambda t: t.set_pose((0, 0, 1), rpy_to_quaternion(0.5, 0, 0), "uav/odom", 1.0, 1.0),
        r"joint roll = 0\.5",
    ),
    (
        "pose stale on arrival",
        UAV,
        lambda t: t.set_pose((0, 0, 1), IDENTITY, "world", 1.0, 3.0),
        r"older than setpoint_timeout_s",
    ),
    (
        "pose from the future",
        UAV,
        lambda t: t.set_pose((0, 0, 1), IDENTITY, "world", 1e9, 1.0),
        r"ahead of the clock .* use_sim_time",
    ),
    (
        "twist inf",
        UAV,
        lambda t: t.set_twist((math.inf, 0, 0), (0, 0, 0), None, 0.0, 1.0),
        r"non-finite",
    ),
    (
        "twist unknown frame",
        UAV,
        lambda t: t.set_twist((0.1, 0, 0), (0, 0, 0), "camera", 1.0, 1.0),
        r"frame 'camera' is unknown",
    ),
    (
        "twist too fast",
        UAV,
        lambda t: t.set_twist((0.8, 0, 0), (0, 0, 0), "world", 1.0, 1.0),
        r"joint x velocity 0\.8 exceeds its limit 0\.5",
    ),
    (
        "omni twist in z",
        OMNI,
        lambda t: t.set_twist((0, 0, 0.2), (0, 0, 0), "world", 1.0, 1.0),
        r"twist moves joint\(s\) \['z'\] this robot does not have",
    ),
    (
        "unknown joint",
        OMNI,
        lambda t: t.set_joint_positions({"camera_pitch": 0.1}, 1.0, 1.0),
        r"unknown joint\(s\) \['camera_pitch'\]",
    ),
    (
        "joint velocity nan",
        OMNI,
        lambda t: t.set_joint_velocities({"camera_yaw": math.nan}, 1.0, 1.0),
        r"non-finite",
    ),
    (
        "trajectory joint name",
        UAV,
        lambda t: t.set_trajectory(
            [1.0],
            np.array([[0, 0, 1.0]]),
            np.array([IDENTITY]),
            None,
            None,
            "world",
            1.0,
            ["arm_link"],
        ),
        r"trajectory joint names \['arm_link'\] are unknown",
    ),
    (
        "trajectory times",
        UAV,
        lambda t: t.set_trajectory(
            [1.0, 1.0],
            np.array([[0, 0, 1.0]] * 2),
            np.array([IDENTITY] * 2),
            None,
            None,
            "world",
            1.0,
        ),
        r"strictly increasing",
    ),
    (
        "trajectory too fast",
        UAV,
        lambda t: t.set_trajectory(
            [1.0],
            np.array([[0, 0, 1.0]]),
            np.array([IDENTITY]),
            np.array([[0, 0, 2.0]]),
            None,
            "world",
            1.0,
        ),
        r"trajectory point 0: joint z velocity 2",
    ),
    (
        "path empty",
        UAV,
        lambda t: t.set_path(np.zeros((0, 3)), np.zeros((0, 4)), "world", 1.0),
        r"path has no poses",
    ),
    (
        "path out of limits",
        UAV,
        lambda t: t.set_path(
            np.array([[0, 0, 1.0], [0, 0, 0.0]]), np.array([IDENTITY] * 2), "world", 1.0
        ),
        r"path pose 1: joint z = 0",
    ),
]


@pytest.mark.parametrize(
    ("config", "action", "match"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_bad_setpoint_is_rejected_and_robot_holds(
    config: ControllerConfig, action: Callable[[SetpointTracker], None], match: str
) -> None:
    controller = JointController(config)
    start = np.zeros(len(config.axes))
    if "z" in config.joint_names:
        start[config.joint_names.index("z")] = 1.0
    controller.update(0.98, start)
    # a good velocity setpoint is active, then the bad one arrives
    controller.tracker.set_joint_velocities({"x": 0.3}, 0.98, 0.98)
    moved = start.copy()
    moved[0] = 0.1
    controller.update(0.99, moved)
    with pytest.raises(SetpointError, match=match):
        action(controller.tracker)
    command = controller.update(1.0, moved)
    assert controller.tracker.modes == (SetpointMode.HOLD,) * len(config.axes)
    assert any("holding position" in note for note in command.notes)
    assert command.reference.position[0] == pytest.approx(0.1)
    assert np.all(command.velocities == 0.0)


def test_body_frame_twist_is_rotated_by_yaw() -> None:
    controller = JointController(UAV)
    facing_y = HOVER.copy()
    facing_y[5] = math.pi / 2
    controller.update(0.0, facing_y)
    controller.tracker.set_twist((0.3, 0.0, 0.0), (0.0, 0.0, 0.2), "uav/base_link", 0.0, 0.0)
    reference = controller.update(0.02, facing_y).reference
    assert reference.velocity == pytest.approx([0.0, 0.3, 0.0, 0.0, 0.0, 0.2], abs=1e-12)
    controller.tracker.set_twist((0.3, 0.0, 0.0), (0.0, 0.0, 0.0), None, 0.0, 0.04)
    assert controller.update(0.06, facing_y).reference.velocity[1] == pytest.approx(0.3)
    controller.tracker.set_twist((0.3, 0.0, 0.0), (0.0, 0.0, 0.0), "world", 0.0, 0.06)
    assert controller.update(0.08, facing_y).reference.velocity[0] == pytest.approx(0.3)


def test_omni_body_twist_and_separate_camera_yaw_rate_run_together() -> None:
    controller = JointController(OMNI)
    start = np.zeros(4)

    def stream(now_s: float, _p: np.ndarray) -> None:
        controller.tracker.set_twist((0.2, 0.0, 0.0), (0.0, 0.0, 0.1), None, now_s, now_s)
        controller.tracker.set_joint_velocities({"camera_yaw": -0.3}, now_s, now_s)

    _, positions, _ = simulate_first_order(controller, start, 2.0, on_update=stream)
    assert positions[-1, 3] == pytest.approx(-0.6, abs=0.02)  # camera yaw turned on its own
    assert positions[-1, 2] == pytest.approx(0.2, abs=0.02)
    assert np.hypot(positions[-1, 0], positions[-1, 1]) == pytest.approx(0.4, abs=0.02)
    assert positions[-1, 1] > 0.0  # forward along a heading that turned left


def test_trajectory_is_tracked_with_feed_forward() -> None:
    controller = JointController(UAV)
    times = np.linspace(0.0, 4.0, 41)
    positions = np.stack([0.25 * times, np.zeros_like(times), np.full_like(times, 1.0)], axis=1)
    velocities = np.tile([0.25, 0.0, 0.0], (41, 1))
    controller.tracker.set_trajectory(
        times, positions, np.array([IDENTITY] * 41), velocities, None, "world", 0.0
    )
    t, states, _ = simulate_first_order(controller, HOVER, 4.45)
    during = t < 4.0
    assert np.max(np.abs(states[during, 0] - 0.25 * t[during])) < 0.006
    assert states[-1, 0] == pytest.approx(1.0, abs=0.011)  # holds the last point
    assert controller.tracker.modes[0] is SetpointMode.TRAJECTORY
    # stale setpoint_timeout_s after the last point
    controller.update(4.6, states[-1])
    assert controller.tracker.modes[0] is SetpointMode.HOLD


def test_trajectory_interpolates_yaw_across_pi_the_short_way() -> None:
    tracker = SetpointTracker(UAV)
    tracker.observe(HOVER)
    quats = np.array(
        [rpy_to_quaternion(0, 0, math.radians(170)), rpy_to_quaternion(0, 0, math.radians(-170))]
    )
    tracker.set_trajectory([0.0, 1.0], np.array([[0, 0, 1.0]] * 2), quats, None, None, "world", 0.0)
    yaw = tracker.reference(0.5, HOVER).position[5]
    assert yaw == pytest.approx(math.pi) or yaw == pytest.approx(-math.pi)


def test_path_visits_waypoints_in_order_and_holds_the_last() -> None:
    controller = JointController(UAV)
    points = np.array([[0.5, 0.0, 1.0], [0.5, 0.5, 1.0], [0.0, 0.5, 1.5]])
    quats = np.array([IDENTITY, rpy_to_quaternion(0, 0, 0.5), IDENTITY])
    controller.tracker.set_path(points, quats, "world", 0.0)
    _, states, _ = simulate_first_order(controller, HOVER, 12.0)
    visited = [np.min(np.linalg.norm(states[:, :3] - p, axis=1)) for p in points]
    assert all(d < 0.1 for d in visited)
    assert states[-1, :3] == pytest.approx(points[-1], abs=0.011)
    assert np.max(states[:, 5]) > 0.4  # turned for the middle waypoint


def test_joint_state_measurement_requires_every_joint() -> None:
    assert measured_from_joint_states(
        OMNI, ["camera_yaw", "x", "y", "yaw"], [4.0, 1.0, 2.0, 3.0]
    ).tolist() == [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(MeasurementError, match=r"lacks joint\(s\) \['camera_yaw'\]"):
        measured_from_joint_states(OMNI, ["x", "y", "yaw"], [0.0, 0.0, 0.0])
    pose = measured_from_pose(UAV, (1.0, 2.0, 3.0), rpy_to_quaternion(0.1, -0.2, 0.3))
    assert pose == pytest.approx([1.0, 2.0, 3.0, 0.1, -0.2, 0.3])


def test_unusable_measurement_commands_zero() -> None:
    controller = JointController(UAV)
    command = controller.update(0.0, np.array([0.0, math.nan, 1.0, 0.0, 0.0, 0.0]))
    assert np.all(command.velocities == 0.0)
    assert "unusable" in command.notes[0]
