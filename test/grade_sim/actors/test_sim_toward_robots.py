"""people.toward_robots in a built scene: people are more often in front of the UAV's camera
facing it, and the whole trace still passes the FCL placement check."""

from __future__ import annotations

import numpy as np
import pytest

from grade_people.config import PersonMotion
from grade_people.people import MOTION_CODES
from grade_sim.actors.people_group import People
from grade_sim.scene import Scene, build_scene, people_facing_robot
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
    counts = people_facing_robot(scene, VIEW_M, np.pi / 4)
    return counts.facing / counts.pairs


@pytest.mark.slow
def test_people_face_the_camera_more_often_and_placement_still_passes() -> None:
    uniform, toward = _scene(0.0), _scene(1.0)
    facing_u, facing_t = _facing_in_front(uniform), _facing_in_front(toward)
    print(f"facing the camera in front of it: uniform {facing_u:.3f}, toward {facing_t:.3f}")
    assert facing_t > 1.5 * facing_u
    assert toward.placement.checked
    assert toward.placement.rejected == ()
    assert len(toward.group(People).specs) == 4
