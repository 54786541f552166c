"""CDR encoding of the standard messages (rosbags' type store) and the bag writer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from grade_sim.io.bag_writer import BagWriter
from grade_sim.sensors import messages as msgs
from grade_sim.sensors.messages import QosProfile, TopicSpec, Transform, typestore

Bag = dict[str, list[tuple[int, str, bytes]]]
STAMP_NS = 12 * 10**9 + 345_678_901


def decode(raw: bytes, msgtype: str) -> Any:
    return typestore().deserialize_cdr(raw, msgtype)


def stamp_of(msg: Any) -> int:
    return int(msg.header.stamp.sec) * 10**9 + int(msg.header.stamp.nanosec)


@pytest.mark.parametrize(
    ("encoding", "array"),
    [
        ("rgb8", np.arange(4 * 5 * 3, dtype=np.uint8).reshape(4, 5, 3)),
        ("32FC1", np.linspace(0, 9.5, 20, dtype=np.float32).reshape(4, 5)),
        ("mono16", np.arange(20, dtype=np.uint16).reshape(4, 5) * 3000),
    ],
)
def test_image_round_trip(encoding: str, array: np.ndarray) -> None:
    raw = msgs.image(STAMP_NS, "cam_optical_frame", array, encoding)
    msg = decode(raw, "sensor_msgs/msg/Image")
    assert stamp_of(msg) == STAMP_NS
    assert (msg.height, msg.width, msg.encoding, msg.is_bigendian) == (4, 5, encoding, 0)
    assert msg.step == 5 * array.itemsize * (3 if array.ndim == 3 else 1)
    back = np.frombuffer(bytes(msg.data), dtype=array.dtype).reshape(array.shape)
    np.testing.assert_array_equal(back, array)


def test_imu_odometry_pose_joint_state() -> None:
    imu = decode(
        msgs.imu(STAMP_NS, "r/imu_link", np.array([0.1, 0.2, 0.3]), np.array([0.0, 0.5, 9.81])),
        "sensor_msgs/msg/Imu",
    )
    assert imu.header.frame_id == "r/imu_link"
    assert (imu.angular_velocity.x, imu.linear_acceleration.z) == (0.1, 9.81)
    assert imu.orientation_covariance[0] == -1.0  # orientation unknown (REP 145)
    with_q = decode(
        msgs.imu(STAMP_NS, "f", np.zeros(3), np.zeros(3), np.array([0, 1.0, 0, 0])),
        "sensor_msgs/msg/Imu",
    )
    assert (with_q.orientation.x, with_q.orientation.w) == (1.0, 0.0)
    assert with_q.orientation_covariance[0] == 0.0
    odom = decode(
        msgs.odometry(
            STAMP_NS,
            "r/odom",
            "r/base_link",
            np.array([1.0, 2, 3]),
            np.array([0.5, 0.5, 0.5, 0.5]),
            np.array([0.1, 0, 0]),
            np.array([0, 0, 0.2]),
        ),
        "nav_msgs/msg/Odometry",
    )
    assert (odom.header.frame_id, odom.child_frame_id) == ("r/odom", "r/base_link")
    q = odom.pose.pose.orientation
    assert (q.w, q.x, q.y, q.z) == (0.5, 0.5, 0.5, 0.5)  # wxyz in, x y z w fields out
    assert (odom.twist.twist.linear.x, odom.twist.twist.angular.z) == (0.1, 0.2)
    pose = decode(
        msgs.pose_stamped(STAMP_NS, "world", np.array([1.0, 2, 3]), np.array([1.0, 0, 0, 0])),
        "geometry_msgs/msg/PoseStamped",
    )
    assert (pose.header.frame_id, pose.pose.position.z, pose.pose.orientation.w) == ("world", 3, 1)
    js = decode(
        msgs.joint_state(STAMP_NS, ["x", "yaw"], np.array([1.0, 2.0]), np.array([0.1, 0.2])),
        "sensor_msgs/msg/JointState",
    )
    assert list(js.name) == ["x", "yaw"]
    np.testing.assert_array_equal(js.position, [1.0, 2.0])
    np.testing.assert_array_equal(js.velocity, [0.1, 0.2])


def test_tf_clock_string_camera_info() -> None:
    tf = decode(
        msgs.tf_message(
            STAMP_NS,
            [
                Transform("world", "r/odom", np.zeros(3), np.array([1.0, 0, 0, 0])),
                Transform("r/odom", "r/base_link", np.array([1.0, 2, 3]), np.array([0, 0, 0, 1.0])),
            ],
        ),
        "tf2_msgs/msg/TFMessage",
    )
    assert [(t.header.frame_id, t.child_frame_id) for t in tf.transforms] == [
        ("world", "r/odom"),
        ("r/odom", "r/base_link"),
    ]
    assert tf.transforms[1].transform.rotation.z == 1.0
    assert all(stamp_of(t) == STAMP_NS for t in tf.transforms)
    clock = decode(msgs.clock(STAMP_NS), "rosgraph_msgs/msg/Clock")
    assert (clock.clock.sec, clock.clock.nanosec) == (12, 345_678_901)
    assert decode(msgs.string("starting"), "std_msgs/msg/String").data == "starting"
    k = np.array([[100.0, 0, 79.5], [0, 100.0, 59.5], [0, 0, 1]])
    info = decode(msgs.camera_info(STAMP_NS, "c", 160, 120, k), "sensor_msgs/msg/CameraInfo")
    np.testing.assert_array_equal(np.asarray(info.k).reshape(3, 3), k)
    np.testing.assert_array_equal(np.asarray(info.p).reshape(3, 4)[:, :3], k)
    np.testing.assert_array_equal(info.d, np.zeros(5))
    assert (info.width, info.height, info.distortion_model) == (160, 120, "plumb_bob")


def test_bag_writer_round_trip(tmp_path: Path, read_bag: Callable[[Path], Bag]) -> None:
    topics = [
        TopicSpec("/clock", "rosgraph_msgs/msg/Clock", QosProfile.RELIABLE),
        TopicSpec("/r/imu", "sensor_msgs/msg/Imu", QosProfile.SENSOR),
        TopicSpec("/tf_static", "tf2_msgs/msg/TFMessage", QosProfile.LATCHED),
        TopicSpec("/unused", "std_msgs/msg/String", QosProfile.RELIABLE),
    ]
    writer = BagWriter(tmp_path / "bag", topics)
    written = []
    writer.on_message(topics[2], 0, msgs.tf_message(0, []))
    for k in range(50):
        stamp = k * 5_000_000
        for topic, raw in (
            (topics[0], msgs.clock(stamp)),
            (topics[1], msgs.imu(stamp, "f", np.zeros(3), np.ones(3))),
        ):
            writer.on_message(topic, stamp, raw)
            written.append((topic.name, stamp, raw))
    writer.close("complete")
    writer.close("complete")  # idempotent
    bag = read_bag(tmp_path / "bag")
    assert len(bag["/clock"]) == 50
    assert len(bag["/r/imu"]) == 50
    assert len(bag["/tf_static"]) == 1
    assert "/unused" not in bag
    for name, stamp, raw in written:
        assert (stamp, raw) in [(s, r) for s, _, r in bag[name]]
    meta = yaml.safe_load((tmp_path / "bag" / "metadata.yaml").read_text())
    info = meta["rosbag2_bagfile_information"]
    qos = {
        t["topic_metadata"]["name"]: t["topic_metadata"]["offered_qos_profiles"]
        for t in info["topics_with_message_count"]
    }
    assert qos["/r/imu"][0]["reliability"] == "best_effort"
    assert qos["/r/imu"][0]["depth"] == 5
    assert qos["/clock"][0]["reliability"] == "reliable"
    assert qos["/clock"][0]["durability"] == "volatile"
    assert qos["/tf_static"][0]["durability"] == "transient_local"
    assert {t["topic_metadata"]["name"] for t in info["topics_with_message_count"]} == {
        t.name for t in topics
    }
