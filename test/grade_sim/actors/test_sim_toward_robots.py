"""people.toward_robots in a built scene: people are more often in front of the UAV's camera
facing it, and the whole trace still passes the FCL placement check."""

from __future__ import annotations

import numpy as np
import pytest

from grade_people.config import PersonMotion
from grade_people.people import MOTION_CODES
from grade_sim.actors.people_group import People
from grade_sim.actors.robot_discs import planned_robot_schedule
from grade_sim.scene import Scene, build_scene
from scenario_kit import small_scenario

WALK = MOTION_CODES[PersonMotion.WALK]
VIEW_M = 6.0


def _scene(toward: float) -> Scene:
    people = {"count": 4, "body": "parts", "walk_fraction": 0.9, "toward_robots": toward}
    return build_scene(small_scenario(seed=11, duration_s=12.0, people=people))


def _facing_in_front(scene: Scene) -> float:
    """Of all (step, person) pairs: the share with the person in front of the robot (within
    VIEW_M and 45 degrees of its heading, a forward camera's view) and facing it (heading
    within 90 degrees of pointing at the robot)."""
    schedule = planned_robot_schedule(
        [(r.model.config, r.follower) for r in scene.robots],
        scene.n_steps,
        scene.scenario.physics_dt_s,
        scene.scenario.bootstrap_s,
    )
    robot = schedule.position_xyz[:, 0, :2]
    yaw = schedule.yaw_rad[:, 0]
    ahead = np.stack([np.cos(yaw), np.sin(yaw)], axis=1)
    facing = total = 0
    for _, timeline in scene.group(People).with_timelines():
        rel = timeline.position_xy - robot
        dist = np.linalg.norm(rel, axis=1)
        cos = np.einsum("ij,ij->i", rel, ahead) / np.maximum(dist, 1e-9)
        view = (dist < VIEW_M) & (cos > np.cos(np.pi / 4))
        looks = np.stack([np.cos(timeline.heading_rad), np.sin(timeline.heading_rad)], axis=1)
        toward = np.einsum("ij,ij->i", looks, -rel) > 0.0
        facing += int((view & toward).sum())
        total += len(dist)
    return facing / total


@pytest.mark.slow
def test_people_face_the_camera_more_often_and_placement_still_passes() -> None:
    uniform, toward = _scene(0.0), _scene(1.0)
    facing_u, facing_t = _facing_in_front(uniform), _facing_in_front(toward)
    print(f"facing the camera in front of it: uniform {facing_u:.3f}, toward {facing_t:.3f}")
    assert facing_t > 1.5 * facing_u
    assert toward.placement.checked
    assert toward.placement.rejected == ()
    assert len(toward.group(People).specs) == 4
