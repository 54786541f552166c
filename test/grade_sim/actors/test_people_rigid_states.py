"""People.rigid_states: each person's timeline at the step, the last step after the end;
the rigid bodies and keypoints are posed from it."""

from __future__ import annotations

import numpy as np

from grade_people.keypoints import rigid_coco17_world
from grade_people.people import part_poses
from grade_sim.actors.people_group import People
from grade_sim.scene import Scene, build_scene
from scenario_kit import small_scenario


def _scene() -> Scene:
    # The suite's small world (scenario_kit) with three rigid-part people walking for 1 s.
    return build_scene(small_scenario(seed=5, duration_s=1.0, people={"count": 3, "body": "parts"}))


def test_states_are_each_persons_timeline_at_the_step() -> None:
    scene = _scene()
    scale, xy, heading, phase, amplitude = scene.group(People).rigid_states(40)
    assert xy.shape == (3, 2)
    for i, (person, t) in enumerate(scene.group(People).with_timelines()):
        assert scale[i] == person.scale
        np.testing.assert_array_equal(xy[i], t.position_xy[40])
        assert (heading[i], phase[i], amplitude[i]) == (
            t.heading_rad[40],
            t.phase_rad[40],
            t.amplitude[40],
        )
    assert not np.array_equal(xy, scene.group(People).rigid_states(0)[1])  # people walk


def test_a_step_after_the_end_is_the_last_step() -> None:
    scene = _scene()
    last = scene.group(People).rigid_states(scene.n_steps - 1)
    for late, at_end in zip(
        scene.group(People).rigid_states(scene.n_steps + 100), last, strict=True
    ):
        np.testing.assert_array_equal(late, at_end)


def test_bodies_and_keypoints_are_posed_from_the_states() -> None:
    scene = _scene()
    states = scene.group(People).rigid_states(25)
    pos, quat = part_poses(*states)
    body_pos, body_quat = scene.actor_body_poses(25)
    n = pos.reshape(-1, 3).shape[0]
    np.testing.assert_array_equal(body_pos[:n], pos.reshape(-1, 3))
    np.testing.assert_array_equal(body_quat[:n], quat.reshape(-1, 4))
    np.testing.assert_array_equal(
        scene.group(People).keypoints_world(25), rigid_coco17_world(*states)
    )
