"""KISS-ICP and GenZ-ICP live: lidar_odometry_node (its own process) on sim_node's
/<robot>/lidar/points in lockstep, deskewing with the per-point `t` field; every scan is
registered and the trajectory follows the ground truth."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml

pytest.importorskip("rclpy")

from grade_eval.core.align import AlignConfig, AlignMode
from grade_eval.core.evaluate import TrajectoryEvalConfig, evaluate_trajectory
from grade_eval.io.tum import read_tum
from process_support import CollectedProcess

SCENARIO = {
    "seed": 11,
    "duration_s": 4.0,
    "bootstrap_s": 0.2,
    "realtime": False,
    "environment": {
        "procedural": {
            "rooms_x": 2,
            "rooms_y": 1,
            "room_size_m": [5.0, 5.0],
            "furniture_per_room": [2, 2],
        }
    },
    "people": {"count": 0},
    "flying_objects": {"count": 0},
    "robots": [
        {
            "name": "uav1",
            "type": "uav",
            "start_xyz": [2.5, 2.5, 1.4],
            "motion": {
                "mode": "path",
                "speed_mps": 0.6,
                "altitude_m": 1.4,
                "waypoints": [[3.4, 2.5, 1.4], [3.4, 3.4, 1.4]],
            },
            "cameras": [],
            "lidars": [{"name": "lidar", "preset": "vlp16", "mount": {"xyz": [0, 0, 0.15]}}],
        }
    ],
    "record": {"bag": False, "ground_truth": True, "experiment_record": False},
}


def _executable(name: str) -> str:
    from ament_index_python.packages import get_package_prefix

    return str(Path(get_package_prefix("grade")) / "lib" / "grade" / name)


@pytest.mark.slow
@pytest.mark.ros
@pytest.mark.parametrize("backend", ["kiss_icp", "genz_icp"])
def test_live_lidar_odometry_registers_every_scan(tmp_path: Path, backend: str) -> None:
    pytest.importorskip(backend)
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    run_dir, estimate = tmp_path / "run", tmp_path / "lidar.txt"
    node = CollectedProcess(
        [
            _executable("lidar_odometry_node"),
            "--ros-args",
            *("-p", f"backend:={backend}"),
            *("-p", f"trajectory_output:={estimate}"),
        ],
        cwd=tmp_path,
    )
    try:
        node.wait_for("registering /uav1/lidar/points", timeout_s=120)
        sim = subprocess.run(
            [
                _executable("sim_node"),
                "--ros-args",
                *("-p", f"scenario:={scenario}"),
                *("-p", f"output_dir:={run_dir}"),
                *("-p", "lockstep:=true"),
                *("-p", "lockstep_acks:=/uav1/lidar/points:/uav1/lidar_odometry/ack"),
                *("-p", "lockstep_timeout_s:=60.0"),
                *("-p", "start_delay_s:=1.0"),
            ],
            capture_output=True,
            text=True,
            timeout=400,
            check=False,
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
