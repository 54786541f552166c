"""No work nobody takes: frames and scans of the bootstrap are made only for a bag or a
subscriber, the ground truth starts at the experiment, and flow restarts with it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grade_common import kitti
from grade_common.tum import read_poses
from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.scene import build_scene
from grade_sim.sensors.messages import TopicSpec
from grade_sim.sensors.observer import CameraSample
from grade_sim.sim.run import SimulatorSpec, run_scenario

Bag = dict[str, list[tuple[int, str, bytes]]]


def test_no_frame_is_rendered_in_the_bootstrap_without_a_bag(
    tmp_path: Path, small_data: Callable[..., dict[str, Any]]
) -> None:
    data = small_data(duration_s=0.2, bootstrap_s=0.2, record={"bag": False})
    result = run_scenario(scenario_from_mapping(data), tmp_path / "run")
    s = result.summary
    # 30 Hz over [0.2, 0.4] s at 240 Hz physics: frames at steps 48, 56, ..., 96 (7 frames);
    # the bootstrap's 6 (steps 0 .. 40) are not rendered.
    assert s["ground_truth_frames_written"] == 7
    assert s["camera_frames_rendered"] == 7


def test_the_bag_keeps_the_bootstrap_frames(
    tmp_path: Path, small_data: Callable[..., dict[str, Any]], read_bag: Callable[[Path], Bag]
) -> None:
    data = small_data(duration_s=0.2, bootstrap_s=0.2)
    result = run_scenario(scenario_from_mapping(data), tmp_path / "run")
    bag = read_bag(result.path / "bag")
    assert len(bag["/uav1/camera/rgb/image_raw"]) == 13
    assert result.summary["camera_frames_rendered"] == 13
    assert result.summary["ground_truth_frames_written"] == 7


def test_flow_of_the_first_recorded_frame_is_nan(
    tmp_path: Path, small_data: Callable[..., dict[str, Any]]
) -> None:
    import cv2

    from grade_common.gt_png import png_u16_to_flow

    data = small_data(duration_s=0.1, bootstrap_s=0.1)
    data["robots"][0]["cameras"][0]["streams"] = ["rgb", "flow"]
    result = run_scenario(scenario_from_mapping(data), tmp_path / "run")
    cam = result.path / "gt/uav1/camera"
    stamps = [ln.split()[0] for ln in (cam / "flow.txt").read_text().splitlines()[2:]]
    assert len(stamps) == 4
    flows = [
        png_u16_to_flow(cv2.imread(str(cam / "flow" / f"{t}.png"), cv2.IMREAD_UNCHANGED)[..., ::-1])
        for t in stamps
    ]
    # The bag has bootstrap frames before it, but they are not in groundtruth.txt.
    assert np.isnan(flows[0]).all()
    assert all(np.isfinite(f).all() for f in flows[1:])


def test_lidar_ground_truth_starts_with_the_trajectory(
    tmp_path: Path, small_data: Callable[..., dict[str, Any]]
) -> None:
    pytest.importorskip("embreex")
    data = small_data(duration_s=0.2, bootstrap_s=0.1, people={"count": 1})
    data["robots"][0]["cameras"] = []
    data["robots"][0]["lidars"] = [{"name": "lidar", "preset": "vlp16"}]
    result = run_scenario(scenario_from_mapping(data), tmp_path / "run")
    folder = result.path / "gt/uav1/lidar"
    times_s = [float(x) for x in (folder / kitti.TIMES_TXT).read_text().split()]
    trajectory = read_poses(result.path / "gt/uav1/trajectory.txt")
    # Scans end at 0.1, 0.2, 0.3 s; the one ending at 0.1 s starts in the bootstrap.
    assert len(times_s) == 2
    assert times_s[0] >= trajectory.stamps_s[0] - 1e-12
    # Every ray of every written scan lies inside the trajectory's span: deskewable.
    span_s = 1799 * 0.1 / 1800
    assert times_s[-1] + span_s <= trajectory.stamps_s[-1] + 1e-9


class _RgbOnly:
    """A subscriber of one image topic (as a ROS publisher with one subscription says)."""

    def __init__(self) -> None:
        self.topics: dict[str, int] = {}
        self.kinds_seen: set[tuple[bool, bool]] = set()

    def wants_messages(self, topics: tuple[TopicSpec, ...]) -> bool:
        return any(t.name == "/uav1/camera/rgb/image_raw" for t in topics)

    def wants_sample(self, robot: str, sensor: str, step: int, stamp_ns: int) -> bool:
        return False

    def on_message(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        self.topics[topic.name] = self.topics.get(topic.name, 0) + 1

    def on_camera(self, sample: CameraSample) -> None:
        self.kinds_seen.add((sample.frame.rgb is not None, sample.frame.depth_m is not None))

    def on_step(self, step: int, stamp_ns: int, robot_states: object) -> None:
        return None

    def close(self, status: str) -> None:
        return None


@pytest.mark.parametrize("pipeline", ["sequential", "parallel"])
def test_only_the_image_kinds_somebody_takes_are_rendered(
    tmp_path: Path, small_data: Callable[..., dict[str, Any]], pipeline: str
) -> None:
    record = {"bag": False, "ground_truth": False, "experiment_record": False}
    data = small_data(duration_s=0.1, bootstrap_s=0.0, record=record, sim={"pipeline": pipeline})
    probe = _RgbOnly()
    scene = build_scene(scenario_from_mapping(data))
    result = run_scenario(SimulatorSpec(scene, observers=(probe,)), tmp_path / "run")
    # 30 Hz over [0, 0.1] s: frames at steps 0, 8, 16, 24.
    assert result.summary["camera_frames_rendered"] == 4
    assert probe.topics["/uav1/camera/rgb/image_raw"] == 4
    for kind in ("depth", "instance"):
        assert f"/uav1/camera/{kind}/image_raw" not in probe.topics
    assert "/uav1/camera/camera_info" not in probe.topics
    assert probe.kinds_seen == {(True, False)}  # depth was not rendered at all
