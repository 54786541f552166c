"""Steering people at run time: a goal published by another process on /people/<name>/goal
(geometry_msgs/PointStamped) sends a reactive person there; the record shows it arrived."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from sim_node_support import spin_until

from grade_launch.substitution import find_package_prefix
from grade_people.paths import plan_path
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import load_scenario
from grade_sim.io.record import load_record
from grade_sim.node.sim_node import goal_topic
from grade_sim.scene import build_scene
from process_support import CollectedProcess

SCENARIO = {
    "seed": 5,
    "duration_s": 9.0,
    "bootstrap_s": 0.2,
    "realtime": True,  # wall-clock pace: time for the goal to arrive mid-run
    "environment": {"procedural": {"rooms_x": 2, "rooms_y": 1, "furniture_per_room": [0, 0]}},
    "people": {"count": 2, "mode": "reactive", "motions": ["walk", "stand"]},
    "flying_objects": {"count": 0},
    "lights": {"count": 1},
    "robots": [
        {
            "name": "uav1",
            "motion": {"altitude_m": 2.4},
            "cameras": [{"name": "camera", "width": 64, "height": 48, "rate_hz": 5.0}],
        }
    ],
}


def _far_reachable_goal(scenario_file: Path) -> tuple[np.ndarray, np.ndarray]:
    """person_0's start and a free point 3-5 m away that the planner can reach."""
    scene = build_scene(load_scenario(scenario_file)).started()
    assert scene.group(People).crowd is not None
    start = scene.group(People).timelines[0].position_xy[0]
    grid = scene.group(People).crowd.planning
    centres = grid.center_of(np.argwhere(~grid.blocked))
    dist = np.linalg.norm(centres - start, axis=1)
    for goal in centres[(dist > 3.0) & (dist < 5.0)][::7]:
        if plan_path(grid, start, goal) is not None:
            return start, goal
    pytest.fail("no reachable goal 3-5 m from person_0")


@pytest.mark.ros
@pytest.mark.slow
def test_goal_topic_steers_a_reactive_person(observer: Any, tmp_path: Path) -> None:
    from geometry_msgs.msg import PointStamped
    from rclpy.duration import Duration
    from rosgraph_msgs.msg import Clock

    scenario_file = tmp_path / "steer.yaml"
    scenario_file.write_text(yaml.safe_dump(SCENARIO))
    start, goal = _far_reachable_goal(scenario_file)
    out = tmp_path / "run"
    exe = find_package_prefix("grade") / "lib/grade/sim_node"
    params = [f"scenario:={scenario_file}", f"output_dir:={out}", "start_delay_s:=1.0"]
    proc = CollectedProcess(
        [str(exe), "--ros-args", *[a for p in params for a in ("-p", p)]], tmp_path
    )
    clock: list[Any] = []
    observer.create_subscription(Clock, "/clock", clock.append, 10)
    publisher = observer.create_publisher(PointStamped, goal_topic("person_0"), 10)
    spin_until(observer, lambda: bool(clock), 60.0, proc)
    msg = PointStamped()
    msg.header.frame_id = "world"
    msg.point.x, msg.point.y = float(goal[0]), float(goal[1])
    # Once the simulator's reader is matched, one reliable goal is delivered, however busy the
    # machine; the wait for the acknowledgement keeps it from being lost with a fast exit.
    spin_until(observer, lambda: publisher.get_subscription_count() > 0, 60.0, proc)
    publisher.publish(msg)
    spin_until(observer, lambda: publisher.wait_for_all_acked(Duration(seconds=0.1)), 60.0, proc)
    assert proc.wait(90.0) == 0, proc.text
    assert "person_0: new goal" in proc.text
    person = load_record(out / "record.npz").people["person_0"]
    assert np.linalg.norm(person.position_xy[-1] - goal) < 0.3
    assert np.linalg.norm(person.position_xy[0] - start) < 1e-9
