"""sim_node as a real process: a subscriber in another process receives every topic with the
convention's type, frame and rate in simulated time; robot_count is validated."""

from __future__ import annotations

import itertools
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from sim_node_support import DATA, spin_until

from grade_launch.substitution import find_package_prefix
from process_support import CollectedProcess

SCENARIO = DATA / "indoor_small.yaml"


def sim_node(tmp_path: Path, *params: str) -> CollectedProcess:
    exe = find_package_prefix("grade") / "lib/grade/sim_node"
    args = [f"scenario:={SCENARIO}", *params]
    return CollectedProcess(
        [str(exe), "--ros-args", *[a for p in args for a in ("-p", p)]], tmp_path
    )


def stamp_s(stamp: Any) -> float:
    return float(stamp.sec) + float(stamp.nanosec) * 1e-9


@pytest.mark.ros
@pytest.mark.slow
def test_every_topic_arrives_with_its_type_frame_and_rate(observer: Any, tmp_path: Path) -> None:
    from geometry_msgs.msg import PoseStamped
    from nav_msgs.msg import Odometry
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import CameraInfo, Image, Imu, JointState
    from std_msgs.msg import String
    from tf2_msgs.msg import TFMessage

    # topic -> (class, type name, expected rate Hz or None, header frame or None)
    topics: dict[str, tuple[Any, str, float | None, str | None]] = {
        "/clock": (Clock, "rosgraph_msgs/msg/Clock", 240.0, None),
        "/tf": (TFMessage, "tf2_msgs/msg/TFMessage", 120.0, None),
        "/tf_static": (TFMessage, "tf2_msgs/msg/TFMessage", None, None),
        "/starting_experiment": (String, "std_msgs/msg/String", None, None),
        "/uav1/imu": (Imu, "sensor_msgs/msg/Imu", 240.0, "uav1/imu_link"),
        "/uav1/odom": (Odometry, "nav_msgs/msg/Odometry", 60.0, "uav1/odom"),
        "/uav1/joint_states": (JointState, "sensor_msgs/msg/JointState", 120.0, ""),
        "/uav1/camera/rgb/image_raw": (
            Image,
            "sensor_msgs/msg/Image",
            30.0,
            "uav1/camera_optical_frame",
        ),
        "/uav1/camera/depth/image_raw": (
            Image,
            "sensor_msgs/msg/Image",
            30.0,
            "uav1/camera_optical_frame",
        ),
        "/uav1/camera/instance/image_raw": (
            Image,
            "sensor_msgs/msg/Image",
            30.0,
            "uav1/camera_optical_frame",
        ),
        "/uav1/camera/camera_info": (
            CameraInfo,
            "sensor_msgs/msg/CameraInfo",
            30.0,
            "uav1/camera_optical_frame",
        ),
        "/uav1/camera/pose": (PoseStamped, "geometry_msgs/msg/PoseStamped", 60.0, "world"),
    }
    latched = QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
    )
    received: dict[str, list[Any]] = defaultdict(list)
    for name, (cls, _, _, _) in topics.items():
        qos = (
            latched
            if name in ("/tf_static", "/starting_experiment")
            else (QoSProfile(depth=100) if name in ("/clock", "/tf") else qos_profile_sensor_data)
        )
        observer.create_subscription(cls, name, lambda msg, n=name: received[n].append(msg), qos)

    proc = sim_node(tmp_path, "realtime:=true", "duration_s:=60.0")
    try:
        # About 2 s of simulated (= paced wall) time after the bootstrap.
        spin_until(
            observer,
            lambda: (
                len(received["/uav1/camera/rgb/image_raw"]) >= 60
                and all(received[n] for n in topics)
            ),
            60.0,
            proc,
        )
        graph = dict(observer.get_topic_names_and_types())
        for name, (_, type_name, _, _) in topics.items():
            assert graph.get(name) == [type_name], (name, graph.get(name))
    finally:
        assert proc.interrupt() == 0, proc.text
    assert "run interrupted" in proc.text

    for name, (_, _, rate_hz, frame) in topics.items():
        msgs = received[name]
        if name == "/clock":
            stamps = [stamp_s(m.clock) for m in msgs]
        elif name in ("/tf", "/tf_static"):
            stamps = [stamp_s(m.transforms[0].header.stamp) for m in msgs]
        elif frame is not None:
            stamps = [stamp_s(m.header.stamp) for m in msgs]
            assert {m.header.frame_id for m in msgs} == {frame}, name
        else:
            stamps = []
        # Simulated time: it starts at 0, far from the wall-clock epoch.
        assert all(0.0 <= s < 100.0 for s in stamps), (name, stamps[:3])
        if rate_hz is not None:
            periods = [b - a for a, b in itertools.pairwise(stamps) if b > a]
            assert len(periods) >= 10, (name, len(msgs))
            assert statistics.median(periods) == pytest.approx(1.0 / rate_hz, rel=0.01), name
    rgb = received["/uav1/camera/rgb/image_raw"][-1]
    depth = received["/uav1/camera/depth/image_raw"][-1]
    inst = received["/uav1/camera/instance/image_raw"][-1]
    assert (rgb.width, rgb.height, rgb.encoding) == (160, 120, "rgb8")
    assert (depth.width, depth.height, depth.encoding) == (160, 120, "32FC1")
    assert (inst.width, inst.height, inst.encoding) == (160, 120, "mono16")
    assert received["/starting_experiment"][0].data == "starting"
    static = {(t.header.frame_id, t.child_frame_id) for t in received["/tf_static"][0].transforms}
    assert ("world", "uav1/odom") in static


@pytest.mark.ros
@pytest.mark.parametrize("count", ["0", "2", "-2"])
def test_robot_count_out_of_range_is_refused(tmp_path: Path, count: str) -> None:
    proc = sim_node(tmp_path, f"robot_count:={count}")
    assert proc.wait(timeout_s=60) == 1, proc.text
    assert f"parameter 'robot_count': {count} is out of range; allowed 1..1" in proc.text


@pytest.mark.ros
@pytest.mark.parametrize(
    ("param", "allowed"),
    [
        ("image_qos:=fast", "use one of 'reliable', 'best_effort'"),
        ("sensor_qos:=sensor_data", "use one of 'reliable', 'best_effort'"),
        ("image_qos_depth:=0", "out of range"),
    ],
)
def test_unknown_qos_is_refused_naming_the_parameter(
    tmp_path: Path, param: str, allowed: str
) -> None:
    proc = sim_node(tmp_path, param)
    assert proc.wait(timeout_s=60) == 1, proc.text
    name = param.split(":=")[0]
    assert f"parameter '{name}'" in proc.text, proc.text
    assert allowed in proc.text, proc.text


@pytest.mark.ros
@pytest.mark.slow
def test_paced_live_run_records_exactly_what_a_run_without_ros_records(
    tmp_path: Path, read_bag: Any
) -> None:
    """Paced publishing (realtime:=true) changes only when messages leave, never what is
    recorded: the bag's messages, the ground truth and the record equal those of the same
    scenario run in-process without ROS, and the pacing queue sent every message it got."""
    import json
    import re

    import cv2
    import numpy as np

    from grade_sim.config.scenario import load_scenario
    from grade_sim.node.sim_node import PUBLISHED_COUNTS_PREFIX
    from grade_sim.sim.run import run_scenario

    live = tmp_path / "live"
    proc = sim_node(
        tmp_path, "realtime:=true", "duration_s:=0.5", "start_delay_s:=0.2", f"output_dir:={live}"
    )
    assert proc.wait(timeout_s=180) == 0, proc.text
    paced = re.search(r"paced publishing: (\d+) messages", proc.text)
    assert paced is not None, proc.text
    line = next(x for x in proc.lines if PUBLISHED_COUNTS_PREFIX in x)
    published = json.loads(line.split(PUBLISHED_COUNTS_PREFIX, 1)[1])
    assert int(paced.group(1)) == sum(published.values())
    assert published["/uav1/imu"] > 0

    # The same scenario, also at real-time pace (the record keeps the scenario), without ROS.
    scenario = load_scenario(SCENARIO, {"duration_s": 0.5, "realtime": True})
    reference = run_scenario(scenario, tmp_path / "ref").path
    assert read_bag(live / "bag") == read_bag(reference / "bag")
    gt_live = sorted(p for p in (live / "gt").rglob("*") if p.is_file())
    gt_ref = sorted(p for p in (reference / "gt").rglob("*") if p.is_file())
    assert [p.relative_to(live) for p in gt_live] == [p.relative_to(reference) for p in gt_ref]
    assert len(gt_live) > 10
    for a, b in zip(gt_live, gt_ref, strict=True):
        if a.suffix == ".png":  # the same pixels: the encoder's bytes are not the contract
            pixels_a = cv2.imread(str(a), cv2.IMREAD_UNCHANGED)
            pixels_b = cv2.imread(str(b), cv2.IMREAD_UNCHANGED)
            assert pixels_a.dtype == pixels_b.dtype, a
            np.testing.assert_array_equal(pixels_a, pixels_b, err_msg=str(a))
        else:
            assert a.read_bytes() == b.read_bytes(), a
    with np.load(live / "record.npz") as ra, np.load(reference / "record.npz") as rb:
        assert sorted(ra.files) == sorted(rb.files)
        for key in ra.files:
            np.testing.assert_array_equal(ra[key], rb[key], err_msg=key)
