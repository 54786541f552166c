"""Closed loop in the simulator: grade_control's controller flies the MuJoCo UAV.

The controller runs in-process as the simulator's command source at its own 50 Hz, measuring the
robot from its base pose as the ROS node does from odometry. Settling bounds are the issue's:
5 cm and 2 degrees after 1 m steps and a 90 degree yaw step.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from grade_control.config import ControllerConfig
from grade_control.controller import JointController, measured_from_pose
from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.scene import build_scene
from grade_sim.sim.orchestrator import Simulator

START = (4.0, 4.0, 1.5)


def _scenario(duration_s: float) -> object:
    return scenario_from_mapping(
        {
            "seed": 3,
            "duration_s": duration_s,
            "bootstrap_s": 0.0,
            "environment": {
                "procedural": {
                    "rooms_x": 1,
                    "rooms_y": 1,
                    "room_size_m": [8.0, 8.0],
                    "furniture_per_room": [0, 0],
                }
            },
            "people": {"count": 0},
            "flying_objects": {"count": 0},
            "robots": [
                {
                    "name": "uav1",
                    "type": "uav",
                    "start_xyz": list(START),
                    "motion": {"mode": "commands"},
                    "cameras": [],
                }
            ],
            "record": {"bag": False, "ground_truth": False, "experiment_record": False},
        }
    )


class InProcessController:
    """CommandSource: one JointController update per control period, from the true base pose."""

    def __init__(self, setpoint: object) -> None:
        self.sim: Simulator | None = None  # set once built: the simulator takes this source
        self.config = ControllerConfig.uav("uav1")
        self.controller = JointController(self.config)
        self.setpoint = setpoint  # callable(controller, now_s) re-sending the goal like a mission
        self.next_s = 0.0
        self.command = np.zeros(len(self.config.joint_names))
        self.log: list[tuple[float, np.ndarray]] = []

    def joint_velocities(
        self, robot: str, joint_names: tuple[str, ...], stamp_ns: int
    ) -> np.ndarray:
        now_s = stamp_ns / 1e9
        if now_s >= self.next_s - 1e-9:
            assert self.sim is not None
            st = self.sim.backend.robot_state(robot)
            q = st.quat_world_base
            measured = measured_from_pose(
                self.config, st.position_world_base, [q[1], q[2], q[3], q[0]]
            )
            self.setpoint(self.controller, now_s)  # type: ignore[operator]
            self.command = self.controller.update(now_s, measured).velocities
            self.log.append((now_s, measured))
            self.next_s += self.config.period_s
        by_name = dict(zip(self.config.joint_names, self.command, strict=True))
        return np.array([by_name.get(j, 0.0) for j in joint_names])


def _fly(duration_s: float, setpoint: object) -> tuple[Simulator, InProcessController]:
    source = InProcessController(setpoint)
    scene = build_scene(_scenario(duration_s))  # type: ignore[arg-type]
    sim = Simulator(scene, command_source=source)
    source.sim = sim
    sim.run()
    sim.finish()
    return sim, source


def _pose_setpoint(target_xyz: tuple[float, float, float], yaw: float) -> object:
    quat_xyzw = [0.0, 0.0, math.sin(yaw / 2), math.cos(yaw / 2)]

    def send(controller: JointController, now_s: float) -> None:
        controller.tracker.set_pose(target_xyz, quat_xyzw, "world", now_s, now_s)

    return send


@pytest.mark.slow
@pytest.mark.parametrize(
    ("axis", "delta"), [("x", 1.0), ("y", 1.0), ("z", 1.0), ("yaw", math.pi / 2)]
)
def test_step_settles_within_5cm_and_2deg(axis: str, delta: float) -> None:
    target = list(START)
    yaw = 0.0
    if axis == "yaw":
        yaw = delta
    else:
        target["xyz".index(axis)] += delta
    sim, source = _fly(8.0, _pose_setpoint((target[0], target[1], target[2]), yaw))
    st = sim.backend.robot_state("uav1")
    position_error = float(np.linalg.norm(st.position_world_base - np.array(target)))
    q = st.quat_world_base
    yaw_now = math.atan2(2 * (q[0] * q[3] + q[1] * q[2]), 1 - 2 * (q[2] ** 2 + q[3] ** 2))
    yaw_error_deg = abs(math.degrees(math.remainder(yaw_now - yaw, 2 * math.pi)))
    assert position_error < 0.05, f"{axis} step: {position_error:.3f} m off after 8 s"
    assert yaw_error_deg < 2.0, f"{axis} step: yaw {yaw_error_deg:.2f} deg off after 8 s"
    # It really moved: halfway through it was far from the start along the stepped axis.
    moved = next(m for t, m in source.log if 3.9 < t < 4.1)
    index = source.config.joint_names.index(axis)
    assert (
        abs(moved[index] - ([*START, 0, 0, 0][["x", "y", "z", "roll", "pitch", "yaw"].index(axis)]))
        > 0.5 * delta
    )


@pytest.mark.slow
def test_circle_trajectory_is_tracked() -> None:
    radius, omega = 1.0, 0.3
    times = np.arange(0.0, 12.0, 0.05)
    cx, cy, z = START[0] - radius, START[1], START[2]
    positions = np.column_stack(
        [
            cx + radius * np.cos(omega * times),
            cy + radius * np.sin(omega * times),
            np.full_like(times, z),
        ]
    )
    velocities = np.column_stack(
        [
            -radius * omega * np.sin(omega * times),
            radius * omega * np.cos(omega * times),
            np.zeros_like(times),
        ]
    )
    quats = np.tile([0.0, 0.0, 0.0, 1.0], (len(times), 1))
    sent = {"done": False}

    def send(controller: JointController, now_s: float) -> None:
        if not sent["done"]:
            controller.tracker.set_trajectory(
                times, positions, quats, velocities, None, "world", now_s
            )
            sent["done"] = True

    _, source = _fly(10.0, send)
    errors = []
    for t, measured in source.log:
        if t < 2.0:
            continue
        want = np.array([cx + radius * math.cos(omega * t), cy + radius * math.sin(omega * t), z])
        errors.append(np.linalg.norm(measured[:3] - want))
    rms = float(np.sqrt(np.mean(np.square(errors))))
    print(f"circle r={radius} m at {radius * omega:.2f} m/s: RMS position error {100 * rms:.2f} cm")
    assert rms < 0.05
