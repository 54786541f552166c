"""The CMU clips set-up fetches (assimp-testmodels' 01_01, 01_03) as named people.clips.

These need the files scripts/fetch_motions.py puts in motions_dir()/cmu; a missing fetch fails
(naming `make setup`), it is not skipped.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from grade_common.errors import ConfigError
from grade_people.bvh import retarget
from grade_people.clips import NAMED_CLIPS, load_clip, named_clip_path
from grade_people.makehuman.dress import makehuman_params
from grade_people.makehuman.shape import REFERENCE_SHAPE
from grade_people.mocap import MOTIONS_DIR_ENV
from grade_people.people import CLIP_CODE
from grade_people.skeleton import JOINT_INDEX, N_JOINTS, forward_kinematics, rest_offsets
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import load_scenario
from grade_sim.scene import build_scene
from grade_sim.sim.run import run_scenario
from scenario_kit import small_mapping

FEET = [JOINT_INDEX[j] for j in ("ankle_l", "ankle_r", "toe_l", "toe_r")]


@pytest.mark.parametrize(("name", "frames"), [("cmu:01_01", 2752), ("cmu:01_03", 4511)])
def test_the_fetched_clip_parses_at_120_hz(name: str, frames: int) -> None:
    assert named_clip_path(name).is_file()
    motion = load_clip(name)
    assert motion.n_frames == frames
    assert motion.frame_time_s == pytest.approx(1 / 120, rel=1e-4)


@pytest.mark.parametrize("name", sorted(NAMED_CLIPS))
def test_it_retargets_onto_makehuman_with_the_feet_on_the_floor(name: str) -> None:
    body = makehuman_params(REFERENCE_SHAPE)
    moved = retarget(load_clip(name), body)
    assert np.isfinite(moved.local_rot).all()
    assert np.isfinite(moved.root_position).all()
    eye = np.broadcast_to(np.eye(3), moved.local_rot.shape)
    rtr = np.swapaxes(moved.local_rot, -1, -2) @ moved.local_rot
    np.testing.assert_allclose(rtr, eye, atol=1e-9)  # rotations, not just any matrices
    assert len(moved.mapped) == N_JOINTS  # every joint of ours has a CMU joint
    offsets = rest_offsets(body)
    rest = forward_kinematics(offsets, np.broadcast_to(np.eye(3), (N_JOINTS, 3, 3)), offsets[0])
    first, _ = forward_kinematics(offsets, moved.local_rot[0], moved.root_position[0])
    # The lowest foot joint over where it is standing at rest: on the floor within 2 cm.
    lowest = (first[FEET, 2] - rest[0][FEET, 2]).min()
    assert abs(lowest) < 0.02, lowest


def _scenario(tmp_path: Path) -> Path:
    """The small test scenario, 1 s, its people stopping to play cmu:01_01."""
    people = {"count": 3, "motions": ["walk", "clip"], "walk_fraction": 0.0, "clips": ["cmu:01_01"]}
    data = small_mapping(duration_s=1.0, bootstrap_s=0.0, people=people)
    path = tmp_path / "scenario.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_scenario_with_a_cmu_clip_is_deterministic(tmp_path: Path) -> None:
    path = _scenario(tmp_path)
    a, b = build_scene(load_scenario(path)), build_scene(load_scenario(path))
    assert a.scenario.people.clips == ("cmu:01_01",)  # kept as a name (the record replays it)
    playing = np.stack([tl.motion == CLIP_CODE for tl in a.group(People).timelines])
    assert playing.any()
    steps = len(a.group(People).timelines[0].motion)
    for step in range(0, steps, 25):
        pa, ra = a.group(People).skeleton_poses(step)
        pb, rb = b.group(People).skeleton_poses(step)
        assert np.isfinite(pa).all()
        assert pa.tobytes() == pb.tobytes()
        assert ra.tobytes() == rb.tobytes()


def test_a_missing_fetch_or_an_unknown_name_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _scenario(tmp_path)
    monkeypatch.setenv(MOTIONS_DIR_ENV, str(tmp_path / "empty"))
    with pytest.raises(
        ConfigError,
        match=r"people\.clips\[0\]: clip 'cmu:01_01' needs .*make setup.*"
        r"apt-get download assimp-testmodels=5\.2\.5~ds0-1",
    ):
        load_scenario(path)
    path.write_text(path.read_text().replace("cmu:01_01", "cmu:02_01"))
    with pytest.raises(
        ConfigError, match=r"unknown clip 'cmu:02_01'; allowed: \['cmu:01_01', 'cmu:01_03'\]"
    ):
        load_scenario(path)


@pytest.mark.slow
def test_a_one_second_run_with_a_cmu_clip_is_byte_identical(tmp_path: Path) -> None:
    path = _scenario(tmp_path)
    runs = [run_scenario(load_scenario(path), tmp_path / name).path for name in ("a", "b")]
    with np.load(runs[0] / "record.npz") as ra, np.load(runs[1] / "record.npz") as rb:
        assert sorted(ra.files) == sorted(rb.files)
        motion = [k for k in ra.files if k.startswith("person/") and k.endswith("/motion")]
        assert any((ra[k] == CLIP_CODE).any() for k in motion), motion  # the clip plays
        for key in ra.files:
            assert ra[key].tobytes() == rb[key].tobytes(), key
    gt = [sorted(p for p in (run / "gt").rglob("*") if p.is_file()) for run in runs]
    assert len(gt[0]) > 3
    assert [p.read_bytes() for p in gt[0]] == [p.read_bytes() for p in gt[1]]
