"""Multi-robot runs through launch/multi_robot.launch.yaml: one bag in which every robot's topics
are separate and complete, one TF tree rooted at `world`; an interrupted recording launch leaves
a readable bag and an `interrupted` run."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from sim_node_support import DATA, spin_until

from grade_sim.config.scenario import load_scenario
from grade_sim.robots.model import robot_model
from grade_sim.sensors.schedule import RateSchedule
from process_support import CollectedProcess

SCENARIO = DATA / "multi_robot_small.yaml"
ROBOT_TOPICS = {
    "imu": "sensor_msgs/msg/Imu",
    "odom": "nav_msgs/msg/Odometry",
    "ground_truth/odom": "nav_msgs/msg/Odometry",
    "ground_truth/pose": "geometry_msgs/msg/PoseStamped",
    "joint_states": "sensor_msgs/msg/JointState",
    "camera/rgb/image_raw": "sensor_msgs/msg/Image",
    "camera/depth/image_raw": "sensor_msgs/msg/Image",
    "camera/instance/image_raw": "sensor_msgs/msg/Image",
    "camera/camera_info": "sensor_msgs/msg/CameraInfo",
    "camera/pose": "geometry_msgs/msg/PoseStamped",
}
GLOBAL_TOPICS = {
    "/clock": "rosgraph_msgs/msg/Clock",
    "/tf": "tf2_msgs/msg/TFMessage",
    "/tf_static": "tf2_msgs/msg/TFMessage",
    "/starting_experiment": "std_msgs/msg/String",
}


def expected_topics(robots: list[str]) -> dict[str, str]:
    topics = dict(GLOBAL_TOPICS)
    for robot in robots:
        topics.update({f"/{robot}/{name}": t for name, t in ROBOT_TOPICS.items()})
    return topics


def read_bag(bag: Path) -> tuple[dict[str, str], list[tuple[str, int, Any]]]:
    """Topics -> types, and every message (topic, log time, decoded) in log-time order."""
    from rosbags.highlevel import AnyReader

    from grade_common import ros_distro

    with AnyReader([bag], default_typestore=ros_distro.typestore()) as reader:
        topics = {c.topic: c.msgtype for c in reader.connections}
        messages = [
            (c.topic, t, reader.deserialize(raw, c.msgtype)) for c, t, raw in reader.messages()
        ]
        assert len(messages) == reader.message_count
    return topics, messages


def tf_edges(messages: list[tuple[str, int, Any]]) -> dict[str, str]:
    """child frame -> parent frame over /tf and /tf_static; a child never changes parent."""
    parent_of: dict[str, str] = {}
    for topic, _, msg in messages:
        if topic not in ("/tf", "/tf_static"):
            continue
        for tr in msg.transforms:
            child, parent = tr.child_frame_id, tr.header.frame_id
            assert parent_of.setdefault(child, parent) == parent, (
                f"frame {child} has two parents: {parent_of[child]} and {parent}"
            )
    return parent_of


def header_frame(msg: Any) -> str:
    frame: str = msg.header.frame_id
    return frame


@pytest.mark.ros
@pytest.mark.slow
def test_two_uavs_and_a_ground_robot_record_one_complete_bag(
    launch: Callable[[str, list[str]], CollectedProcess], tmp_path: Path
) -> None:
    out = tmp_path / "run"
    proc = launch("multi_robot.launch.yaml", [f"scenario:={SCENARIO}", f"output_dir:={out}"])
    assert proc.wait() == 0, proc.text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "complete"
    scenario = load_scenario(SCENARIO)
    robots = [r.name for r in scenario.robots]
    assert robots == ["uav1", "uav2", "omni1"]
    assert [r.type.value for r in scenario.robots] == ["uav", "uav", "omni"]
    topics, messages = read_bag(out / "bag")
    assert topics == expected_topics(robots)

    # Complete: every message the schedule makes due was recorded, nothing more.
    rates = scenario.rates
    phys = rates.physics_hz
    n_steps = round((scenario.bootstrap_s + scenario.duration_s) * phys) + 1
    rate_of = {
        "imu": rates.imu_hz,
        "odom": rates.odom_hz,
        "ground_truth/odom": rates.odom_hz,
        "ground_truth/pose": rates.odom_hz,
        "joint_states": rates.joint_states_hz,
        "camera/pose": rates.camera_pose_hz,
    }
    counts: dict[str, int] = defaultdict(int)
    for topic, _, _ in messages:
        counts[topic] += 1
    for robot in scenario.robots:
        cam_rate = robot.cameras[0].rate_hz
        for name in ROBOT_TOPICS:
            rate = rate_of.get(name, cam_rate)
            due = sum(RateSchedule(rate, phys).due(k) for k in range(n_steps))
            assert counts[f"/{robot.name}/{name}"] == due, (robot.name, name)
    assert counts["/clock"] == n_steps
    assert counts["/tf_static"] == 1
    assert counts["/starting_experiment"] == 1
    assert {t: c["count"] for t, c in summary["topics"].items()} == dict(counts)

    # Separate: each robot's messages carry only its own frames and joints.
    joints = {r.name: robot_model(r).joint_names for r in scenario.robots}
    assert "camera_yaw" in joints["omni1"]
    assert "z" in joints["uav1"]
    for topic, _, msg in messages:
        robot = topic.split("/")[1]
        if robot not in robots:
            continue
        # Poses and ground truth are in `world`; joint states carry joint names, no frame.
        if topic.startswith(f"/{robot}/ground_truth/"):
            assert msg.header.frame_id == "world", topic
        elif hasattr(msg, "header") and not topic.endswith(("/pose", "/joint_states")):
            assert header_frame(msg).startswith(f"{robot}/"), (topic, header_frame(msg))
        if topic == f"/{robot}/odom":
            assert (msg.header.frame_id, msg.child_frame_id) == (
                f"{robot}/odom",
                f"{robot}/base_link",
            )
        if topic.endswith("/joint_states"):
            assert tuple(msg.name) == joints[robot], (topic, list(msg.name))
        if topic.endswith("/rgb/image_raw"):
            assert (msg.width, msg.height, msg.encoding) == (160, 120, "rgb8")

    # One TF tree: a single root `world`, every robot frame in the robot's namespace below it.
    parent_of = tf_edges(messages)
    frames = set(parent_of) | set(parent_of.values())
    roots = {f for f in frames if f not in parent_of}
    assert roots == {"world"}
    for frame in frames - {"world"}:
        assert frame.split("/")[0] in robots, frame
        seen = {frame}
        while frame in parent_of:
            frame = parent_of[frame]
            assert frame not in seen, f"TF cycle through {frame}"
            seen.add(frame)
        assert frame == "world"
    for robot in robots:
        assert {
            f"{robot}/odom",
            f"{robot}/base_link",
            f"{robot}/imu_link",
            f"{robot}/camera_link",
            f"{robot}/camera_optical_frame",
        } <= frames
        assert (out / "gt" / robot / "trajectory.txt").is_file()
    # The ground robot's camera sits on its yaw joint: that mount moves, so it is on /tf.
    assert parent_of["omni1/camera_mount"] == "omni1/base_link"


@pytest.mark.ros
@pytest.mark.slow
def test_interrupting_a_recording_launch_leaves_a_readable_bag(
    launch: Callable[[str, list[str]], CollectedProcess], observer: Any, tmp_path: Path
) -> None:
    from rosgraph_msgs.msg import Clock

    out = tmp_path / "run"
    proc = launch(
        "multi_robot.launch.yaml",
        [
            f"scenario:={SCENARIO}",
            f"output_dir:={out}",
            "robot_count:=2",
            "realtime:=true",
            "duration_s:=120.0",
        ],
    )
    latest_s = [0.0]

    def on_clock(msg: Any) -> None:
        latest_s[0] = msg.clock.sec + msg.clock.nanosec * 1e-9

    observer.create_subscription(Clock, "/clock", on_clock, 10)
    spin_until(observer, lambda: latest_s[0] > 1.0, 60.0, proc)
    assert proc.interrupt() == 0, proc.text
    assert "run interrupted" in proc.text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["status"] == "interrupted"
    assert yaml.safe_load((out / "run.yaml").read_text())["status"] == "interrupted"
    assert 1.0 < summary["sim_time_s"] < 100.0
    topics, messages = read_bag(out / "bag")
    assert topics == expected_topics(["uav1", "uav2"])  # robot_count:=2 keeps the first two
    clock_s = [m.clock.sec + m.clock.nanosec * 1e-9 for t, _, m in messages if t == "/clock"]
    assert clock_s == sorted(clock_s)
    assert clock_s[-1] == pytest.approx(summary["sim_time_s"])
    assert len(messages) == sum(c["count"] for c in summary["topics"].values())
