"""The ground robot (omni: no z joint) rides just above the floor at its start height and follows
its path in physics; its body box once sat half inside the floor, whose contacts braked every
joint (it turned at a twentieth of the commanded rate)."""

from __future__ import annotations

import numpy as np

from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.engine.mujoco.builder import CHASSIS_CLEARANCE_M
from grade_sim.scene import build_scene
from grade_sim.sim.orchestrator import Simulator


def test_the_ground_robot_follows_its_path_on_the_floor() -> None:
    scenario = scenario_from_mapping(
        {
            "seed": 3,
            "duration_s": 6.0,
            "bootstrap_s": 0.5,
            "environment": {
                "procedural": {
                    "rooms_x": 1,
                    "rooms_y": 1,
                    "room_size_m": [8.0, 8.0],
                    "furniture_per_room": [0, 0],  # nothing in the way
                }
            },
            "people": {"count": 0},
            "flying_objects": {"count": 0},
            "robots": [
                {
                    "name": "omni1",
                    "type": "omni",
                    "start_xyz": [2.0, 4.0, 0.125],
                    "start_yaw": 1.0,
                    "cameras": [],
                    "motion": {"waypoints": [[6.0, 4.0, 0.125]], "loop": False},
                }
            ],
        }
    )
    scene = build_scene(scenario)
    (robot,) = scene.robots
    assert robot.follower is not None
    sim = Simulator(scene)
    try:
        sim.run()
        names = robot.model.joint_names
        q = sim.backend.robot_state("omni1").joint_positions
        base_z = float(sim.backend.data.xpos[sim.backend.model.body("omni1/base_link").id][2])
    finally:
        sim.finish()
    want, _ = robot.follower.desired(scenario.duration_s + scenario.bootstrap_s - 0.5)
    assert base_z == 0.125 + CHASSIS_CLEARANCE_M  # the box just above the floor
    assert abs(q[names.index("yaw")] - want[3]) < 0.05  # turned to face the waypoint
    assert q[names.index("x")] - 2.0 > 1.5  # and drove (at 1.0 m/s² up to 0.8 m/s)
    assert np.hypot(q[names.index("x")] - want[0], q[names.index("y")] - want[1]) < 0.3
