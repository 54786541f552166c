"""slam_node as its own process, subscribed live to sim_node's RGB-D topics over ROS 2.

The simulator runs at real-time pace with a small 30 Hz camera (frames small enough for the
live transport), the node writes its TUM trajectory when stopped, and `grade eval traj` scores
it against the camera's ground truth of the same run.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("rclpy")
pytest.importorskip("open3d")

from slam_support import executable, lockstep, run_sim, two_room_scenario

from grade_eval.core.evaluate import evaluate_trajectory
from grade_eval.io.run import CameraStream
from grade_eval.io.tum import read_tum
from process_support import CollectedProcess

CAMERA = {
    "name": "camera",
    "width": 160,
    "height": 120,
    "hfov_deg": 88.95,
    "rate_hz": 30.0,
    "streams": ["rgb", "depth"],
}
# an L through the first room (not a straight line: SE(3) alignment needs a turn)
SCENARIO = two_room_scenario(4.0, realtime=False, cameras=[CAMERA], corner_x_m=3.7)


@pytest.mark.slow
@pytest.mark.ros
def test_live_slam_node_trajectory_is_scored_by_grade_eval(tmp_path: Path) -> None:
    estimate = tmp_path / "slam.txt"
    slam = CollectedProcess(
        [
            executable("slam_node"),
            "--ros-args",
            "-p",
            "robot:=uav1",
            "-p",
            f"trajectory_output:={estimate}",
        ],
        cwd=tmp_path,
    )
    try:
        slam.wait_for("tracking /uav1/camera", timeout_s=60)
        # Lockstep on the SLAM node's acknowledgement: every frame is tracked, however busy
        # the machine is (counts, not rates).
        sim, run_dir = run_sim(
            SCENARIO, tmp_path, *lockstep("/uav1/camera/depth/image_raw", "/uav1/slam/ack")
        )
        assert sim.returncode == 0, sim.stdout + sim.stderr
        assert slam.interrupt() == 0, slam.text
    finally:
        slam.cleanup()
    assert "trajectory written" in slam.text
    # the backend's CPU time per frame is counted (grade bench slam --live reads it)
    cpu = re.search(r"cpu_s_per_frame (\d+\.\d+)", slam.text)
    assert cpu is not None, slam.text
    assert float(cpu.group(1)) > 0.0, slam.text
    est = read_tum(estimate)
    # the simulator published frames through the bootstrap too; ground truth starts after it
    published = round((SCENARIO["bootstrap_s"] + SCENARIO["duration_s"]) * 30.0) + 1  # type: ignore[operator]
    # lockstep: every published frame set was tracked and acknowledged
    assert est.num_poses == published
    ref = CameraStream.open(run_dir, "uav1", "camera").trajectory
    result = evaluate_trajectory(ref, est)
    # estimates during the bootstrap have no ground truth (it starts with the experiment)
    assert result.ate.stats.count >= 0.8 * est.num_poses
    # 2.1 m of flight in 4 s, frame to frame (Open3D drifts): the bounds are loose; an inverted
    # or mis-framed motion would be off by about the path length (2.1 m).
    assert result.ate.stats.median < 0.2, result.summary()
    assert result.ate.stats.rmse < 0.5, result.summary()
    # the same numbers from the command a user runs
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "grade_cli.main",
            "eval",
            "traj",
            "--ref",
            str(run_dir),
            "--camera",
            "camera",
            "--est",
            str(estimate),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert cli.returncode == 0, cli.stderr
    assert "ate_rmse_m" in cli.stdout


@pytest.mark.slow
@pytest.mark.ros
@pytest.mark.parametrize(
    ("parameter", "match"),
    [
        (
            "backend:=orb_slam2",
            "backend = 'orb_slam2' is invalid: allowed values ['open3d_rgbd', 'orb_slam3_rgbd', "
            "'orb_slam3_rgbd_inertial']",
        ),
        ("method:=icp", "method = 'icp' is invalid: allowed values ['hybrid', "),
        ("robot:=uav-1", "robot = 'uav-1' is invalid: must match"),
    ],
)
def test_slam_node_refuses_bad_parameters(tmp_path: Path, parameter: str, match: str) -> None:
    node = CollectedProcess([executable("slam_node"), "--ros-args", "-p", parameter], cwd=tmp_path)
    try:
        assert node.wait(timeout_s=60) == 2, node.text
    finally:
        node.cleanup()
    assert f"slam_node: invalid parameters: {match}" in node.text
