"""A run with a 3D lidar and a 2D laser: bag messages, KITTI ground truth, people seen with
their instance id, and the same seed giving byte-identical scans."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from grade_common import kitti
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import Scenario, scenario_from_mapping
from grade_sim.scene import Scene, build_scene
from grade_sim.sensors.lidar.cloud import POINT_DTYPE
from grade_sim.sensors.messages import typestore
from grade_sim.sim.run import run_scenario

pytest.importorskip("embreex")
Bag = dict[str, list[tuple[int, str, bytes]]]
LIDAR = "gt/uav1/lidar"


@dataclass(frozen=True)
class Run:
    scenario: Scenario
    scene: Scene
    path: Path
    bag: Bag


def lidar_data(small_data: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    data = small_data(seed=11, duration_s=0.3, people={"count": 3}, flying_objects={"count": 1})
    data["robots"][0]["cameras"] = []
    data["robots"][0]["lidars"] = [
        {"name": "lidar", "preset": "vlp16", "range_noise_m": 0.005},
        {"name": "laser", "preset": "utm30lx", "rate_hz": 20.0, "mount": {"xyz": [0.1, 0, 0]}},
    ]
    return data


def do_run(out: Path, data: dict[str, Any], read_bag: Callable[[Path], Bag]) -> Run:
    scenario = scenario_from_mapping(data)
    result = run_scenario(scenario, out)
    return Run(scenario, build_scene(scenario), result.path, read_bag(result.path / "bag"))


@pytest.fixture(scope="module")
def run(
    tmp_path_factory: pytest.TempPathFactory,
    small_data: Callable[..., dict[str, Any]],
    read_bag: Callable[[Path], Bag],
) -> Run:
    return do_run(tmp_path_factory.mktemp("lidar") / "run", lidar_data(small_data), read_bag)


def test_pointcloud2_at_the_sensor_rate_with_the_documented_fields(run: Run) -> None:
    msgs = run.bag["/uav1/lidar/points"]
    # 0.4 s simulated at 10 Hz: scans end at 0.1, 0.2, 0.3, 0.4 s
    assert [t for t, _, _ in msgs] == [100_000_000, 200_000_000, 300_000_000, 400_000_000]
    msg = typestore().deserialize_cdr(msgs[0][2], "sensor_msgs/msg/PointCloud2")
    assert [f.name for f in msg.fields] == list(POINT_DTYPE.names)
    assert msg.point_step == POINT_DTYPE.itemsize
    assert msg.header.frame_id == "uav1/lidar_link"
    points = np.frombuffer(msg.data.tobytes(), dtype=POINT_DTYPE)
    assert len(points) == msg.width > 10_000
    # stamp = first firing: the last of 1800 columns fires at the publish time, 0.1 s
    stamp = msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
    assert stamp == 100_000_000 - 1799 * 100_000_000 // 1800
    assert 0.09e9 < points["t"].max() <= 1799 * 100_000_000 // 1800
    assert set(np.unique(points["ring"])) <= set(range(16))


def test_laser_scan_for_the_2d_laser(run: Run) -> None:
    msgs = run.bag["/uav1/laser/scan"]
    assert len(msgs) == 8
    scan = typestore().deserialize_cdr(msgs[-1][2], "sensor_msgs/msg/LaserScan")
    assert len(scan.ranges) == 1081
    assert scan.angle_min == pytest.approx(-np.deg2rad(135.0))
    assert scan.range_max == 30.0
    finite = np.isfinite(scan.ranges)
    assert finite.mean() > 0.5  # indoors almost every beam hits a wall


def test_kitti_files_load_with_numpy_fromfile(run: Run) -> None:
    folder = run.path / LIDAR
    bins = sorted((folder / kitti.SCANS_DIR).glob("*.bin"))
    # scans that start after the 0.1 s bootstrap: published at 0.2, 0.3, 0.4 s (the one published
    # at 0.1 s starts in the bootstrap, before the trajectory)
    assert [b.name for b in bins] == [f"{i:06d}.bin" for i in range(3)]
    for b in bins:
        pts = np.fromfile(b, dtype="<f4").reshape(-1, 4)
        labels = np.fromfile(folder / kitti.LABELS_DIR / (b.stem + ".label"), dtype="<u4")
        assert len(pts) == len(labels) > 10_000
        assert np.all((pts[:, 3] >= 0) & (pts[:, 3] <= 1))
        assert np.all(np.linalg.norm(pts[:, :3], axis=1) < 100.0)
    poses = kitti.read_poses(folder / kitti.POSES_TXT)
    times = np.loadtxt(folder / kitti.TIMES_TXT)
    assert poses.shape == (3, 4, 4)
    assert len(times) == 3
    classes = yaml.safe_load((folder / kitti.CLASSES_YAML).read_text())
    assert classes[0] == "unlabeled"
    assert "person" in classes.values()
    tum = [ln for ln in (folder / kitti.GROUNDTRUTH_TXT).read_text().splitlines() if ln[0] != "#"]
    assert len(tum) == 3


def test_people_appear_with_their_instance_id_where_they_are(run: Run) -> None:
    folder = run.path / LIDAR
    classes = yaml.safe_load((folder / kitti.CLASSES_YAML).read_text())
    person_class = next(i for i, n in classes.items() if n == "person")
    poses = kitti.read_poses(folder / kitti.POSES_TXT)
    times = np.loadtxt(folder / kitti.TIMES_TXT)
    seen = set()
    for k, b in enumerate(sorted((folder / kitti.SCANS_DIR).glob("*.bin"))):
        pts = kitti.read_bin(b)
        instance, cls = kitti.read_label(folder / kitti.LABELS_DIR / (b.stem + ".label"))
        world = pts[:, :3] @ poses[k, :3, :3].T + poses[k, :3, 3]
        step = round(times[k] * 240.0) + 12  # mid-sweep
        for person, timeline in zip(
            run.scene.group(People).specs, run.scene.group(People).timelines, strict=True
        ):
            mine = instance == person.instance_id
            if not mine.any():
                continue
            seen.add(person.instance_id)
            assert np.all(cls[mine] == person_class)
            # Every point labelled with the person lies within the person's reach of its centre.
            dist = np.linalg.norm(world[mine, :2] - timeline.position_xy[step], axis=1)
            assert dist.max() < 0.9, (person.name, dist.max())
            assert world[mine, 2].max() < person.height_m + 0.1
    assert seen, "no person was seen by the lidar"


@pytest.mark.slow
def test_the_same_seed_gives_byte_identical_scans_and_messages(
    run: Run,
    tmp_path: Path,
    small_data: Callable[..., dict[str, Any]],
    read_bag: Callable[[Path], Bag],
) -> None:
    again = do_run(tmp_path / "again", lidar_data(small_data), read_bag)
    for topic in ("/uav1/lidar/points", "/uav1/laser/scan"):
        assert again.bag[topic] == run.bag[topic]
    for b in sorted((run.path / LIDAR / kitti.SCANS_DIR).glob("*.bin")):
        assert (again.path / LIDAR / kitti.SCANS_DIR / b.name).read_bytes() == b.read_bytes()
