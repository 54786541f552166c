"""ORB-SLAM3's shutdown cannot take the estimate down.

- The documented launch (launch/slam_benchmark.launch.yaml) with ORB-SLAM3 RGB-D and
  RGB-D-inertial, run as `grade launch` in its own process: exit 0, EST.txt with ORB-SLAM3's
  final trajectory and EST.online.txt with the poses as they were published.
- A map that never initialised (pyorbslam3 0.1.1's SaveTrajectoryTUM reads the first keyframe
  of an empty map: SIGSEGV) ends with the live poses, not a crash.
- A crash of ORB-SLAM3's process (SIGSEGV sent to it) leaves the caller running with every pose
  it was given.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("pyorbslam3")

from slam_support import two_room_scenario

from grade_common.rundir import RunLayout
from grade_common.tum import POSE_COLUMNS
from grade_eval.io.tum import read_tum
from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.sim.run import run_scenario
from grade_slam.backends import create_backend
from grade_slam.camera_folder import read_camera_folder
from grade_slam.config import SlamConfig
from grade_slam.errors import SlamError
from grade_slam.frames import RgbdFrame
from grade_slam.tracker_process import ChildProcessTracker
from grade_slam.vocabulary_set import TEST_RECIPE, build_vocabulary
from process_support import CollectedProcess, grade_launch_command

LAUNCH = Path(__file__).resolve().parents[2] / "launch" / "slam_benchmark.launch.yaml"
# 640 x 480: ORB-SLAM3 RGB-D needs > 500 features to initialise a map in our rooms
CAMERA = {
    "name": "camera",
    "width": 640,
    "height": 480,
    "hfov_deg": 88.95,
    "rate_hz": 30.0,
    "streams": ["rgb", "depth"],
}


def _stamps(path: Path) -> list[str]:
    return [line.split()[0] for line in path.read_text().splitlines() if not line.startswith("#")]


@pytest.mark.slow
@pytest.mark.ros
@pytest.mark.parametrize("backend", ["orb_slam3_rgbd", "orb_slam3_rgbd_inertial"])
def test_slam_benchmark_launch_with_orb_slam3_exits_0_with_final_and_online_poses(
    tmp_path: Path, backend: str
) -> None:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(two_room_scenario(3.0, realtime=True, cameras=[CAMERA])))
    estimate = tmp_path / "EST.txt"
    launch = CollectedProcess(
        grade_launch_command(
            [
                str(LAUNCH),
                f"backend:={backend}",
                "duration_s:=3",
                f"scenario:={scenario}",
                f"output_dir:={tmp_path / 'OUT'}",
                f"trajectory_output:={estimate}",
                f"vocabulary:={build_vocabulary(TEST_RECIPE)}",
            ]
        ),
        cwd=tmp_path,
    )
    assert launch.wait(timeout_s=400) == 0, launch.text
    assert "run complete" in launch.text, launch.text
    online = tmp_path / "EST.online.txt"
    assert online.read_text().splitlines()[1] == POSE_COLUMNS.strip()
    live, final = _stamps(online), _stamps(estimate)
    assert len(live) >= 10, launch.text
    # EST.txt: ORB-SLAM3's trajectory after its final optimisation, for the frames given live
    header = estimate.read_text().splitlines()[0]
    assert "ORB-SLAM3's final trajectory after shutdown" in header, header
    assert final == live
    assert read_tum(estimate).num_poses == len(live)
    assert "process has died" not in launch.text, launch.text


def _frames(tmp_path: Path, duration_s: float) -> list[RgbdFrame]:
    data = two_room_scenario(duration_s, realtime=False, cameras=[CAMERA])
    scenario = scenario_from_mapping(data)
    run_scenario(scenario, tmp_path / "run")
    return list(read_camera_folder(RunLayout(tmp_path / "run").camera_dir("uav1", "camera")))


@pytest.mark.slow
def test_orb_slam3_that_made_no_map_ends_with_the_live_poses_not_a_crash(tmp_path: Path) -> None:
    vocabulary = build_vocabulary(TEST_RECIPE)
    tracker = create_backend(SlamConfig(backend="orb_slam3_rgbd", vocabulary=str(vocabulary)))
    assert isinstance(tracker, ChildProcessTracker)
    blank = RgbdFrame(
        1_000_000,
        np.zeros((480, 640, 3), np.uint8),
        np.ones((480, 640), np.float32),
        np.array([[320.0, 0, 320], [0, 320, 240], [0, 0, 1]]),
    )
    assert tracker.process(blank) is None
    tracker.close()
    assert tracker.trajectory.poses == []
    assert "ORB-SLAM3 made no map from 1 frames of 640 x 480" in tracker.trajectory.note


@pytest.mark.slow
def test_a_crash_of_orb_slam3s_process_keeps_every_pose_given(tmp_path: Path) -> None:
    frames = _frames(tmp_path, 1.0)
    vocabulary = build_vocabulary(TEST_RECIPE)
    tracker = create_backend(SlamConfig(backend="orb_slam3_rgbd", vocabulary=str(vocabulary)))
    assert isinstance(tracker, ChildProcessTracker)
    given = [tracker.process(frame) for frame in frames[:20]]
    assert sum(pose is not None for pose in given) >= 15
    os.kill(tracker._proc.pid, signal.SIGSEGV)  # what a native crash does to the process
    with pytest.raises(SlamError, match="its process ended \\(signal SIGSEGV\\)"):
        tracker.process(frames[20])
    tracker.close()  # no final trajectory to take: the live poses stay
    assert len(tracker.trajectory.poses) == sum(pose is not None for pose in given)
    assert "the poses given while tracking" in tracker.trajectory.note
