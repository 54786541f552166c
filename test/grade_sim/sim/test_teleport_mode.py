"""`motion.mode: teleport`: the robot is exactly on its path and its IMU reads the path's motion."""

from __future__ import annotations

import numpy as np

from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.engine.protocol import RobotState
from grade_sim.scene import build_scene
from grade_sim.sim.orchestrator import Simulator

PHYSICS_HZ = 240.0


class _States:
    def __init__(self) -> None:
        self.states: list[RobotState] = []

    def on_message(self, *args: object) -> None:
        return None

    def on_camera(self, *args: object) -> None:
        return None

    def on_step(self, step: int, stamp_ns: int, robot_states: dict[str, RobotState]) -> None:
        self.states.append(robot_states["uav1"])

    def close(self, status: str) -> None:
        return None


def test_teleport_follows_the_path_exactly_and_imu_matches_its_acceleration() -> None:
    scenario = scenario_from_mapping(
        {
            "seed": 1,
            "duration_s": 6.0,
            "bootstrap_s": 0.5,
            "people": {"count": 0},
            "flying_objects": {"count": 0},
            "robots": [{"name": "uav1", "motion": {"mode": "teleport"}, "cameras": []}],
            "record": {"bag": False, "ground_truth": False, "experiment_record": False},
        }
    )
    probe = _States()
    sim = Simulator(build_scene(scenario), observers=[probe])
    sim.run()
    sim.finish()
    follower = sim.scene.robots[0].follower
    assert follower is not None
    positions = np.array([s.position_world_base for s in probe.states])
    for k in range(0, len(positions), 97):
        t_path = max(0.0, k / PHYSICS_HZ - scenario.bootstrap_s)
        want, _ = follower.desired(t_path)
        np.testing.assert_allclose(positions[k], want[:3], atol=1e-9)
    assert np.linalg.norm(positions[-1] - positions[0]) > 1.0
    # Specific force = path acceleration - gravity, in the (yawed) IMU frame.
    velocities = np.array([s.joint_velocities[:3] for s in probe.states])
    accel_numeric = np.gradient(velocities, 1 / PHYSICS_HZ, axis=0)
    imu = np.array([s.imu_specific_force for s in probe.states])
    horizontal = np.abs(
        np.linalg.norm(imu[:, :2], axis=1) - np.linalg.norm(accel_numeric[:, :2], axis=1)
    )
    assert np.median(horizontal) < 1e-6
    assert np.max(np.linalg.norm(imu[:, :2], axis=1)) > 0.5  # it did accelerate
    np.testing.assert_allclose(imu[:, 2], 9.81, atol=1e-6)
