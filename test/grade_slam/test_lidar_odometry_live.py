"""KISS-ICP and GenZ-ICP live: lidar_odometry_node (its own process) on sim_node's
/<robot>/lidar/points in lockstep, deskewing with the per-point `t` field; every scan is
registered and the trajectory follows the ground truth."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("rclpy")

from slam_support import executable, lockstep, run_sim, two_room_scenario

from grade_eval.core.align import AlignConfig, AlignMode
from grade_eval.core.evaluate import TrajectoryEvalConfig, evaluate_trajectory
from grade_eval.io.tum import read_tum
from process_support import CollectedProcess

LIDAR = {"name": "lidar", "preset": "vlp16", "mount": {"xyz": [0, 0, 0.15]}}


@pytest.mark.slow
@pytest.mark.ros
@pytest.mark.parametrize("backend", ["kiss_icp", "genz_icp"])
def test_live_lidar_odometry_registers_every_scan(tmp_path: Path, backend: str) -> None:
    pytest.importorskip(backend)
    estimate = tmp_path / "lidar.txt"
    node = CollectedProcess(
        [
            executable("lidar_odometry_node"),
            "--ros-args",
            *("-p", f"backend:={backend}"),
            *("-p", f"trajectory_output:={estimate}"),
        ],
        cwd=tmp_path,
    )
    try:
        node.wait_for("registering /uav1/lidar/points", timeout_s=120)
        sim, run_dir = run_sim(
            two_room_scenario(4.0, realtime=False, lidars=[LIDAR]),
            tmp_path,
            *lockstep("/uav1/lidar/points", "/uav1/lidar_odometry/ack"),
        )
        assert sim.returncode == 0, sim.stdout + sim.stderr + node.text
        assert node.interrupt() == 0, node.text
    finally:
        node.cleanup()
    gt_dir = run_dir / "gt" / "uav1" / "lidar"
    ref = read_tum(gt_dir / "groundtruth.txt")
    # every scan with ground truth (the experiment's) reached the node and was registered;
    # the bootstrap's scans come first
    est = read_tum(estimate)
    assert est.num_poses >= ref.num_poses, node.text
    # a scan whose acknowledgement is late is sent again (received twice, registered once)
    counts = re.search(r"frames received (\d+), tracked (\d+),", node.text)
    assert counts is not None, node.text
    assert int(counts.group(2)) == est.num_poses
    assert int(counts.group(1)) >= est.num_poses
    # the flight is a straight line then a hover at the corner (too straight for SE(3)
    # alignment): the first pose is put on the ground truth's
    result = evaluate_trajectory(
        ref, est, TrajectoryEvalConfig(align=AlignConfig(mode=AlignMode.ORIGIN))
    )
    assert result.ate.stats.count == ref.num_poses
    # 0.9 m of flight; a wrong frame or a lost registration would be off by about that
    assert result.ate.stats.rmse < 0.15, result.summary()
    assert np.isfinite(result.summary()["rpe_trans_rmse_m"])


@pytest.mark.slow
@pytest.mark.ros
@pytest.mark.parametrize(
    ("parameter", "match"),
    [
        ("backend:=loam", "backend = 'loam' is invalid: allowed values ['kiss_icp', 'genz_icp']"),
        ("max_range_m:=0.1", "max_range_m = 0.1 is invalid: must exceed min_range_m (0.3)"),
    ],
)
def test_lidar_odometry_node_refuses_bad_parameters(
    tmp_path: Path, parameter: str, match: str
) -> None:
    node = CollectedProcess(
        [executable("lidar_odometry_node"), "--ros-args", "-p", parameter], cwd=tmp_path
    )
    try:
        assert node.wait(timeout_s=60) == 2, node.text
    finally:
        node.cleanup()
    assert f"lidar_odometry_node: invalid parameters: {match}" in node.text
