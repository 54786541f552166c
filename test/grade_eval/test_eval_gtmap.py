"""Ground-truth map from a synthetic run directory; PLY/PCD roundtrip; voxel rule."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import FLOOR_RGB, PERSON_ID, WALL_RGB, WALL_X, write_run
from grade_eval.core.gtmap import GtMapConfig, build_gt_map
from grade_eval.core.pointmap import PointMap, voxelise
from grade_eval.errors import FormatError, MapError, OutputExistsError
from grade_eval.io.pointcloud import read_map, write_map
from grade_eval.io.run import (
    CameraStream,
    dynamic_instance_ids,
    list_cameras,
    list_robots,
    read_robot_trajectory,
)


def test_voxel_centres_and_colour_average() -> None:
    pts = np.array([[0.01, 0.02, -0.02], [0.024, -0.02, 0.0], [0.026, 0.0, 0.0]])
    colors = np.array([[0, 0, 0], [100, 50, 20], [9, 9, 9]], dtype=np.uint8)
    vox = voxelise(PointMap(pts, colors), 0.05)
    np.testing.assert_allclose(vox.points_xyz, [[0.0, 0.0, 0.0], [0.05, 0.0, 0.0]], atol=1e-12)
    assert vox.colors_rgb is not None
    np.testing.assert_array_equal(vox.colors_rgb, [[50, 25, 10], [9, 9, 9]])


def test_run_directory_layout(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    assert list_robots(run) == ["r1"]
    assert list_cameras(run, "r1") == ["cam"]
    assert read_robot_trajectory(run).num_poses == 5
    stream = CameraStream.open(run)
    assert len(stream.depth) == 5
    assert dynamic_instance_ids(run, ("Person",)) == frozenset({PERSON_ID})


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run(tmp_path_factory.mktemp("gtmap"))


def _near_person(points: np.ndarray) -> np.ndarray:
    # The person patch is 1.5 m ahead of the camera (x = 1.5), above the floor.
    return (np.abs(points[:, 0] - 1.5) < 0.1) & (points[:, 2] > 0.1)


def test_gt_map_lies_on_the_scene_surfaces(run_dir: Path) -> None:
    frames = CameraStream.open(run_dir).frames(with_instances=True)
    gt_map = build_gt_map(frames, GtMapConfig(voxel_size_m=0.05))
    pts = gt_map.points_xyz
    on_floor = np.abs(pts[:, 2]) <= 0.025 + 1e-9
    on_wall = np.abs(pts[:, 0] - WALL_X) <= 0.025 + 1e-9
    person = _near_person(pts)
    assert on_floor.sum() > 20
    assert on_wall.sum() > 20
    assert person.sum() > 5
    assert np.all(on_floor | on_wall | person)
    # Voxel centres are multiples of the voxel size.
    np.testing.assert_allclose(pts / 0.05, np.round(pts / 0.05), atol=1e-9)
    assert gt_map.colors_rgb is not None
    floor_only = on_floor & ~on_wall & ~person
    wall_only = on_wall & ~on_floor
    np.testing.assert_array_equal(np.unique(gt_map.colors_rgb[floor_only], axis=0), [FLOOR_RGB])
    np.testing.assert_array_equal(np.unique(gt_map.colors_rgb[wall_only], axis=0), [WALL_RGB])


def test_dynamic_actors_are_removed(run_dir: Path) -> None:
    dynamic = dynamic_instance_ids(run_dir, ("person",))
    frames = CameraStream.open(run_dir).frames(with_instances=True)
    static = build_gt_map(frames, GtMapConfig(dynamic_ids=dynamic))
    assert not _near_person(static.points_xyz).any()
    assert static.size > 40


def test_dynamic_removal_needs_masks(run_dir: Path) -> None:
    frames = CameraStream.open(run_dir).frames(with_instances=False)
    with pytest.raises(MapError, match="needs its instance mask"):
        build_gt_map(frames, GtMapConfig(dynamic_ids=frozenset({PERSON_ID})))


def test_all_invalid_depth_gives_clear_error(run_dir: Path) -> None:
    frames = CameraStream.open(run_dir).frames()
    with pytest.raises(MapError, match="ground-truth map is empty"):
        build_gt_map(frames, GtMapConfig(max_range_m=0.5))


@pytest.mark.parametrize("suffix", [".ply", ".pcd"])
def test_map_file_roundtrip(tmp_path: Path, suffix: str) -> None:
    rng = np.random.default_rng(2)
    pts = np.round(rng.uniform(-5, 5, (100, 3)), 2)
    colors = rng.integers(0, 256, (100, 3)).astype(np.uint8)
    path = write_map(tmp_path / f"m{suffix}", PointMap(pts, colors))
    back = read_map(path)
    np.testing.assert_allclose(back.points_xyz, pts, atol=1e-5)
    assert back.colors_rgb is not None
    np.testing.assert_array_equal(back.colors_rgb, colors)
    with pytest.raises(OutputExistsError, match="exists already"):
        write_map(path, PointMap(pts, colors))


@pytest.mark.parametrize(
    ("name", "payload", "match"),
    [
        (
            "a.ply",
            b"ply\nformat binary_little_endian 1.0\nelement vertex 5\nproperty float x\n"
            b"property float y\nproperty float z\nend_header\n\x00\x00",
            "truncated PLY body",
        ),
        ("b.ply", b"not a ply", "not a PLY file"),
        ("c.xyz", b"1 2 3", "unsupported map format"),
    ],
)
def test_bad_map_files(tmp_path: Path, name: str, payload: bytes, match: str) -> None:
    (tmp_path / name).write_bytes(payload)
    with pytest.raises(FormatError, match=match):
        read_map(tmp_path / name)


def test_missing_run_pieces_are_named(tmp_path: Path) -> None:
    run = write_run(tmp_path)
    (run / "gt" / "r1" / "cam" / "camera_info.yaml").write_text("width: 4\n")
    with pytest.raises(FormatError, match=r"camera_info\.yaml: camera info needs image_width"):
        CameraStream.open(run)
    with pytest.raises(FormatError, match="not a run directory"):
        list_robots(tmp_path)


def test_default_dynamic_classes_cover_people_flying_objects_and_robots(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import yaml

    from grade_eval.io.run import dynamic_instance_ids

    (tmp_path / "gt").mkdir()
    (tmp_path / "gt" / "instances.yaml").write_text(
        yaml.safe_dump(
            {
                1: {"name": "floor", "class": "floor"},
                2: {"name": "person_0", "class": "person"},
                3: {"name": "object_0", "class": "flying_box"},
                4: {"name": "uav1", "class": "robot_uav"},
                5: {"name": "table_r00_0", "class": "furniture"},
            }
        )
    )
    ids = dynamic_instance_ids(tmp_path, ("person", "human", "flying_*", "robot_*"))
    assert ids == frozenset({2, 3, 4})
