"""Helpers for grade_replay tests: bags with known stamps, images, poses and transforms."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.interfaces import (
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)
from rosbags.rosbag2 import Reader, Writer
from rosbags.rosbag2.enums import StoragePlugin

from grade_common import ros_distro

TS = ros_distro.typestore()
NS = 1_000_000_000
T = TS.types


def qos(latched: bool = False) -> Qos:
    zero = QosTime(0, 0)
    return Qos(
        QosHistory.KEEP_LAST,
        1 if latched else 5,
        QosReliability.RELIABLE if latched else QosReliability.BEST_EFFORT,
        QosDurability.TRANSIENT_LOCAL if latched else QosDurability.VOLATILE,
        zero,
        zero,
        QosLiveliness.AUTOMATIC,
        zero,
        False,
    )


def stamp(t_ns: int) -> Any:
    return T["builtin_interfaces/msg/Time"](sec=t_ns // NS, nanosec=t_ns % NS)


def header(t_ns: int, frame: str = "world") -> Any:
    return T["std_msgs/msg/Header"](stamp=stamp(t_ns), frame_id=frame)


def image(t_ns: int, array: np.ndarray, encoding: str) -> Any:
    array = np.ascontiguousarray(array)
    height, width = array.shape[:2]
    return T["sensor_msgs/msg/Image"](
        header=header(t_ns, "cam_optical_frame"),
        height=height,
        width=width,
        encoding=encoding,
        is_bigendian=0,
        step=array.nbytes // height,
        data=array.view(np.uint8).reshape(-1),
    )


def pose_stamped(t_ns: int, xyz: Iterable[float], quat_xyzw: Iterable[float]) -> Any:
    x, y, z = xyz
    qx, qy, qz, qw = quat_xyzw
    return T["geometry_msgs/msg/PoseStamped"](
        header=header(t_ns),
        pose=T["geometry_msgs/msg/Pose"](
            position=T["geometry_msgs/msg/Point"](x=x, y=y, z=z),
            orientation=T["geometry_msgs/msg/Quaternion"](x=qx, y=qy, z=qz, w=qw),
        ),
    )


def vector3(x: float, y: float, z: float) -> Any:
    return T["geometry_msgs/msg/Vector3"](x=x, y=y, z=z)


def odometry(t_ns: int, xyz: Iterable[float], quat_xyzw: Iterable[float]) -> Any:
    ps = pose_stamped(t_ns, xyz, quat_xyzw)
    return T["nav_msgs/msg/Odometry"](
        header=header(t_ns, "r/odom"),
        child_frame_id="r/base_link",
        pose=T["geometry_msgs/msg/PoseWithCovariance"](pose=ps.pose, covariance=np.zeros(36)),
        twist=T["geometry_msgs/msg/TwistWithCovariance"](
            twist=T["geometry_msgs/msg/Twist"](
                linear=vector3(0.0, 0.0, 0.0), angular=vector3(0.0, 0.0, 0.0)
            ),
            covariance=np.zeros(36),
        ),
    )


def tf_message(t_ns: int, edges: Iterable[tuple[str, str, tuple[float, float, float]]]) -> Any:
    transforms = [
        T["geometry_msgs/msg/TransformStamped"](
            header=header(t_ns, parent),
            child_frame_id=child,
            transform=T["geometry_msgs/msg/Transform"](
                translation=T["geometry_msgs/msg/Vector3"](x=xyz[0], y=xyz[1], z=xyz[2]),
                rotation=T["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
            ),
        )
        for parent, child, xyz in edges
    ]
    return T["tf2_msgs/msg/TFMessage"](transforms=transforms)


def string(text: str) -> Any:
    return T["std_msgs/msg/String"](data=text)


@dataclass
class BagSpec:
    """Messages to write: (topic, type, receive ns, message); latched topics get transient local."""

    messages: list[tuple[str, str, int, Any]] = field(default_factory=list)
    latched: set[str] = field(default_factory=set)

    def add(self, topic: str, msgtype: str, t_ns: int, msg: Any) -> None:
        self.messages.append((topic, msgtype, t_ns, msg))


def write_bag(path: Path, spec: BagSpec) -> Path:
    writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
    with writer:
        conns: dict[str, Any] = {}
        for topic, msgtype, t_ns, msg in spec.messages:
            if topic not in conns:
                conns[topic] = writer.add_connection(
                    topic, msgtype, typestore=TS, offered_qos_profiles=[qos(topic in spec.latched)]
                )
            writer.write(conns[topic], t_ns, bytes(TS.serialize_cdr(msg, msgtype)))
    return path


def read_bag(path: Path) -> list[tuple[str, int, bytes]]:
    """Every message as (topic, receive ns, raw bytes) in the reader's order."""
    with Reader(path) as reader:
        return [(c.topic, t, bytes(d)) for c, t, d in reader.messages()]


def decode(data: bytes, msgtype: str) -> Any:
    return TS.deserialize_cdr(data, msgtype)


def write_grade_bag(path: Path, spec: BagSpec, compression: str = "zstd") -> Path:
    """The same messages written by grade's own recorder format (CRC'd, compressed chunks)."""
    from rosbags.rosbag2.metadata import dump_qos_v9

    from grade_common.bagfile.compression import Compression
    from grade_common.bagfile.rosbag2 import Rosbag2Topic, Rosbag2Writer

    writer = Rosbag2Writer(path, compression=Compression(compression))
    channels: dict[str, int] = {}
    for topic, msgtype, t_ns, msg in spec.messages:
        if topic not in channels:
            msgdef, _ = TS.generate_msgdef(msgtype, ros_version=2)
            qos_v9 = [dict(q) for q in dump_qos_v9([qos(topic in spec.latched)])]
            channels[topic] = writer.add_topic(
                Rosbag2Topic(topic, msgtype, msgdef, TS.hash_rihs01(msgtype), qos_v9)
            )
        writer.write(channels[topic], t_ns, bytes(TS.serialize_cdr(msg, msgtype)))
    writer.close()
    return path


def flip_chunk_byte(bag: Path, chunk: int, from_end: int = 40) -> None:
    """Invert one byte inside the data of the bag's `chunk`-th chunk record (a bit rot)."""
    from grade_common.bagfile.scan import scan_mcap

    (mcap,) = sorted(bag.glob("*.mcap"))
    offset, length = scan_mcap(mcap).chunk_records[chunk]
    data = bytearray(mcap.read_bytes())
    data[offset + length - from_end] ^= 0xFF
    mcap.write_bytes(bytes(data))
