"""People.skeleton_poses keeps the last SKELETON_STEPS_KEPT steps' poses (a pipelined run asks
again for a frame's step after the loop has stepped on)."""

from __future__ import annotations

import numpy as np

from grade_sim.actors.people_group import SKELETON_STEPS_KEPT, People
from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.scene import Scene, build_scene


def _scene() -> Scene:
    return build_scene(
        scenario_from_mapping(
            {
                "seed": 11,
                "duration_s": 2.0,
                "environment": {
                    "procedural": {"rooms_x": 1, "rooms_y": 1, "furniture_per_room": [0, 0]}
                },
                "people": {"count": 2, "body": "skinned"},
                "flying_objects": {"count": 0},
                "robots": [{"name": "uav1", "cameras": [{"name": "camera"}]}],
            }
        )
    )


def test_recent_steps_stay_cached_and_equal_a_fresh_computation() -> None:
    scene = _scene()
    first = scene.group(People).skeleton_poses(10)
    for step in range(11, 10 + SKELETON_STEPS_KEPT):  # 10 is still among the last N
        scene.group(People).skeleton_poses(step)
    assert scene.group(People).skeleton_poses(10) is first  # kept, not recomputed
    fresh = _scene().group(People).skeleton_poses(10)
    np.testing.assert_array_equal(first[0], fresh[0])
    np.testing.assert_array_equal(first[1], fresh[1])


def test_older_steps_are_dropped_and_recomputed_identically() -> None:
    scene = _scene()
    first = scene.group(People).skeleton_poses(10)
    for step in range(11, 11 + SKELETON_STEPS_KEPT):  # one more: 10 is the oldest, dropped
        scene.group(People).skeleton_poses(step)
    again = scene.group(People).skeleton_poses(10)
    assert again is not first
    np.testing.assert_array_equal(again[0], first[0])
    np.testing.assert_array_equal(again[1], first[1])
    assert not again[0].flags.writeable
    assert not again[1].flags.writeable
