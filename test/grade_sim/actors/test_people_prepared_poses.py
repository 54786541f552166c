"""People.prepare_poses: several steps posed in one pass give, bit for bit, the poses of one
step at a time (the lidar asks for a sweep's steps together)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from grade_sim.actors.people_group import People
from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.scene import Scene, build_scene


def _scene(duration_s: float, **people: Any) -> Scene:
    return build_scene(
        scenario_from_mapping(
            {
                "seed": 5,
                "duration_s": duration_s,
                "environment": {
                    "procedural": {"rooms_x": 2, "rooms_y": 1, "furniture_per_room": [2, 3]}
                },
                "people": {"count": 5, **people},
                "flying_objects": {"count": 1},
                "robots": [{"name": "uav1", "cameras": [{"name": "camera"}]}],
            }
        )
    )


@pytest.mark.parametrize(("mode", "body"), [("scripted", "makehuman"), ("reactive", "skinned")])
def test_prepared_steps_equal_one_step_at_a_time(mode: str, body: str) -> None:
    # Walking, turning, sitting and a motion-capture clip, all in one batch: a step where one
    # person sits blends everyone's ankles with sitting, and a batch keeps that per step.
    scene = _scene(
        8.0,
        body=body,
        mode=mode,
        motions=["walk", "sit", "clip"],
        walk_fraction=0.4,
        clips=["cmu:01_01"],
    ).started()
    people = scene.group(People)
    n = people.n_steps
    for k in range(1, n):  # a reactive crowd is posed from what it has walked so far
        people.advance(k, list)
    one_at_a_time = replace(people)  # the same people, nothing computed yet
    # Steps across the run, neighbours (a sweep's), the last, and one past the end.
    steps = [3, 40, 41, 97, *range(300, n, 173), n - 2, n - 1, n + 50]
    sitting = [int(tl.seat_height_m[k] > 0) for k in steps[:-1] for tl in people.timelines]
    assert 0 < sum(sitting) < len(sitting)  # some steps with someone seated, some without
    people.prepare_poses(steps)
    assert all(min(k, n - 1) in people._last_skeleton for k in steps)
    for k in steps:
        for got, want in zip(people.poses(k), one_at_a_time.poses(k), strict=True):
            np.testing.assert_array_equal(got, want)
        for got, want in zip(
            people.skeleton_poses(k), one_at_a_time.skeleton_poses(k), strict=True
        ):
            np.testing.assert_array_equal(got, want)
            assert not got.flags.writeable


def test_the_scene_passes_steps_to_every_group() -> None:
    scene = _scene(2.0, body="skinned")
    one_at_a_time = _scene(2.0, body="skinned")
    scene.prepare_actor_poses([])
    scene.prepare_actor_poses([7, 8])
    assert set(scene.group(People)._last_skeleton) == {7, 8}
    for k in (7, 8):
        for got, want in zip(
            scene.actor_body_poses(k), one_at_a_time.actor_body_poses(k), strict=True
        ):
            np.testing.assert_array_equal(got, want)
    parts = _scene(2.0, body="parts")
    parts.prepare_actor_poses([7, 8])  # rigid parts: nothing to prepare, poses as before
    np.testing.assert_array_equal(
        parts.actor_body_poses(7)[0], _scene(2.0, body="parts").actor_body_poses(7)[0]
    )
