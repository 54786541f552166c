"""Lockstep closed loop with real processes: sim_node and joint_controller over ROS 2.

In lockstep the simulator waits at every odometry sample for the controller's command stamped
with it, so two runs of the same scenario, seed and setpoints must give identical trajectories.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

rclpy = pytest.importorskip("rclpy")

from grade_sim.io.record import load_record  # noqa: E402

SCENARIO = {
    "seed": 5,
    "duration_s": 2.0,
    "bootstrap_s": 0.2,
    "environment": {
        "procedural": {
            "rooms_x": 1,
            "rooms_y": 1,
            "room_size_m": [8.0, 8.0],
            "furniture_per_room": [0, 0],
        }
    },
    "people": {"count": 0},
    "flying_objects": {"count": 0},
    "robots": [
        {
            "name": "uav1",
            "type": "uav",
            "start_xyz": [4.0, 4.0, 1.5],
            "motion": {"mode": "commands"},
            "cameras": [],
        }
    ],
    "record": {"bag": False, "ground_truth": False, "experiment_record": True},
}
WAYPOINTS = [(5.0, 4.5, 1.8), (5.5, 5.0, 1.6)]


def _executable(name: str) -> str:
    from ament_index_python.packages import get_package_prefix

    return str(Path(get_package_prefix("grade")) / "lib" / "grade" / name)


def _send_path_once() -> None:
    """Publish the waypoint path once the controller listens (before the simulation starts)."""
    from geometry_msgs.msg import PoseStamped
    from nav_msgs.msg import Path as PathMsg
    from rclpy.duration import Duration

    rclpy.init()
    node = rclpy.create_node("lockstep_test_setpoints")
    try:
        pub = node.create_publisher(PathMsg, "/uav1/setpoint/path", 10)
        deadline = time.monotonic() + 30
        while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
            rclpy.spin_once(node, timeout_sec=0.1)
        assert pub.get_subscription_count() > 0, "joint_controller never subscribed to its path"
        msg = PathMsg()
        msg.header.frame_id = "world"
        for x, y, z in WAYPOINTS:
            pose = PoseStamped()
            pose.header.frame_id = "world"
            pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = x, y, z
            pose.pose.orientation.w = 1.0
            msg.poses.append(pose)
        pub.publish(msg)
        # The path must be in the controller's reader before this node goes away.
        assert pub.wait_for_all_acked(Duration(seconds=60)), "joint_controller never got its path"
    finally:
        node.destroy_node()
        rclpy.shutdown()


def _closed_loop_run(tmp_path: Path, name: str, repo_root: Path) -> Path:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump(SCENARIO))
    out = tmp_path / name
    env = os.environ.copy()
    controller = subprocess.Popen(
        [
            _executable("joint_controller"),
            "--ros-args",
            "--params-file",
            str(repo_root / "config" / "controller_uav.yaml"),
            "-p",
            "robot:=uav1",
            "-p",
            "lockstep:=true",
            "-p",
            "use_sim_time:=true",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        _send_path_once()
        sim = subprocess.run(
            [
                _executable("sim_node"),
                "--ros-args",
                "-p",
                f"scenario:={scenario}",
                "-p",
                f"output_dir:={out}",
                "-p",
                "lockstep:=true",
                "-p",
                "lockstep_timeout_s:=20.0",
                "-p",
                "start_delay_s:=1.0",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=240,
            check=False,
        )
        assert sim.returncode == 0, sim.stdout + sim.stderr
    finally:
        controller.send_signal(subprocess.signal.SIGINT)
        try:
            controller.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            controller.kill()
    return out


@pytest.mark.slow
@pytest.mark.ros
def test_lockstep_runs_repeat_bit_for_bit(tmp_path: Path, repo_root: Path) -> None:
    first = load_record(_closed_loop_run(tmp_path, "run_a", repo_root) / "record.npz")
    second = load_record(_closed_loop_run(tmp_path, "run_b", repo_root) / "record.npz")
    q_a, q_b = first.joint_positions["uav1"], second.joint_positions["uav1"]
    assert q_a.shape == q_b.shape
    assert np.array_equal(q_a, q_b), f"max difference {np.abs(q_a - q_b).max()}"
    assert np.array_equal(first.joint_commands["uav1"], second.joint_commands["uav1"])
    # The controller really flew the robot towards the first waypoint.
    travelled = np.linalg.norm(q_a[-1, :3] - q_a[0, :3])
    assert travelled > 0.3, f"robot moved only {travelled:.3f} m"
    assert first.status == "complete"
