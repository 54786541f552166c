"""BVH clips as stops (people.clips): people play a written motion capture clip in place."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from grade_common.errors import ConfigError
from grade_people.bvh import retarget, write_bvh
from grade_people.clips import load_clips
from grade_people.people import CLIP_CODE
from grade_people.skeleton import (
    JOINT_INDEX,
    N_JOINTS,
    BodyParams,
    euler_to_matrix,
    forward_kinematics,
    rest_offsets,
)
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import load_scenario
from grade_sim.scene import build_scene

FRAME_S = 1 / 30
CLIP_S = 4.0  # long enough for the blend-in (0.35 s time constant) to settle


def _wave_bvh(path: Path) -> Path:
    """A waving clip: right arm raised, forearm swinging, pelvis 5 cm lower than standing."""
    body = BodyParams(1.75, 0.5, 1.0, 1.0, 1.0)
    n = round(CLIP_S / FRAME_S)
    t = np.arange(n) * FRAME_S
    local = np.broadcast_to(np.eye(3), (n, N_JOINTS, 3, 3)).copy()
    shoulder = np.stack([np.full(n, -2.3), np.zeros(n), np.zeros(n)], axis=1)
    local[:, JOINT_INDEX["shoulder_r"]] = euler_to_matrix(shoulder)
    swing = np.stack([0.5 * np.sin(2 * math.pi * t), np.zeros(n), np.zeros(n)], axis=1)
    local[:, JOINT_INDEX["elbow_r"]] = euler_to_matrix(swing)
    standing = forward_kinematics(rest_offsets(body), local[0], np.zeros(3))[0]
    pelvis_z = -standing[JOINT_INDEX["ankle_l"], 2] + 0.07 - 0.05
    root = np.stack([np.zeros(n), np.zeros(n), np.full(n, pelvis_z)], axis=1)
    path.write_text(write_bvh(body, local, root, FRAME_S))
    return path


def _scenario_file(tmp_path: Path, **people: Any) -> Path:
    data = {
        "seed": 2,
        "duration_s": 30.0,
        "bootstrap_s": 0.0,
        "environment": {"procedural": {"rooms_x": 1, "rooms_y": 1}},
        "flying_objects": {"count": 0},
        "people": {
            "count": 3,
            "motions": ["walk", "clip"],
            "walk_fraction": 0.3,
            "clips": ["wave.bvh"],
            **people,
        },
        "robots": [{"name": "uav1"}],
    }
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_people_play_the_clip_in_place(tmp_path: Path) -> None:
    _wave_bvh(tmp_path / "wave.bvh")
    scene = build_scene(load_scenario(_scenario_file(tmp_path)))
    assert scene.scenario.people.clips == (str(tmp_path / "wave.bvh"),)
    checked = 0
    for i, (person, tl) in enumerate(scene.group(People).with_timelines()):
        on = tl.motion == CLIP_CODE
        begins = np.flatnonzero(on & ~np.concatenate([[False], on[:-1]]))
        for start in begins:
            step = start + round(3.0 / scene.scenario.physics_dt_s)  # 3 s into the clip
            if step >= len(on) or not on[start:step].all():
                continue
            assert person.body is not None
            clip = retarget(load_clips(scene.scenario.people)[0], person.body)
            frame = int(3.0 / clip.frame_time_s)
            pos, _ = scene.group(People).skeleton_poses(int(step))
            # The clip's pose, turned to the person's heading and put where they stand.
            heading = tl.heading_rad[step]
            local = clip.local_rot[frame].copy()
            local[0] = euler_to_matrix(np.array([0.0, 0.0, heading])) @ local[0]
            root = np.array([*tl.position_xy[step], clip.root_position[frame, 2]])
            want, _ = forward_kinematics(rest_offsets(person.body), local, root)
            np.testing.assert_allclose(pos[i], want, atol=5e-3)  # the blend-in's last 2e-4
            # Standing while it plays (the clip is played in place): at most the few mm of the
            # walk's last avoidance block.
            assert np.ptp(tl.position_xy[start:step], axis=0).max() < 0.01
            checked += 1
    assert checked >= 2


def test_the_same_seed_gives_the_same_clip_stops(tmp_path: Path) -> None:
    _wave_bvh(tmp_path / "wave.bvh")
    path = _scenario_file(tmp_path)
    a, b = build_scene(load_scenario(path)), build_scene(load_scenario(path))
    for ta, tb in zip(a.group(People).timelines, b.group(People).timelines, strict=True):
        assert ta.motion.tobytes() == tb.motion.tobytes()
    pa, _ = a.group(People).skeleton_poses(2000)
    pb, _ = b.group(People).skeleton_poses(2000)
    assert pa.tobytes() == pb.tobytes()


@pytest.mark.parametrize(
    ("people", "message"),
    [
        ({"clips": []}, r"people\.motions: 'clip' needs BVH files in people\.clips"),
        (
            {"clips": ["missing.bvh"]},
            r"people\.clips\[0\]: BVH file .*missing\.bvh.* does not exist",
        ),
        ({"clips": ["wave.bvh"] * 9}, r"people\.clips: 9 files; allowed at most 8"),
    ],
)
def test_bad_clip_settings_are_refused(
    tmp_path: Path, people: dict[str, Any], message: str
) -> None:
    _wave_bvh(tmp_path / "wave.bvh")
    with pytest.raises(ConfigError, match=message):
        load_scenario(_scenario_file(tmp_path, **people))


def test_a_broken_clip_file_names_the_entry(tmp_path: Path) -> None:
    (tmp_path / "wave.bvh").write_text("HIERARCHY\nROOT Hips\n{\n")
    with pytest.raises(ConfigError, match=r"people\.clips\[0\]: .*wave\.bvh: "):
        build_scene(load_scenario(_scenario_file(tmp_path)))
