"""Standard ROS 2 messages as CDR bytes, built without rclpy (rosbags' type store).

The simulator encodes each message once; the same bytes go to the bag and onto the wire
(`publisher.publish(bytes)`), so recorded and published data are identical by construction.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common import ros_distro
from grade_common.images import ENCODINGS
from grade_common.types import FloatArray


@dataclass(frozen=True)
class QosPolicy:
    """What a topic's publisher promises: a keep-last history of `depth` messages, reliable or
    best effort, volatile or transient local (late joiners get the last `depth` messages)."""

    depth: int
    reliable: bool
    transient_local: bool = False


class QosProfile(enum.Enum):
    """The one QoS table of the simulator's topics, a policy per kind of topic: sim_node's
    publishers and the bag's offered-QoS record are both made from it (sim_node's image_qos and
    sensor_qos parameters override SENSOR for its publishers)."""

    SENSOR = QosPolicy(depth=5, reliable=False)  # ROS 2's sensor-data preset
    # /clock and /tf: 100 deep (0.4 s of /clock at 240 Hz) so a slow reliable reader is not
    # skipped by a keep-last writer.
    RELIABLE = QosPolicy(depth=100, reliable=True)
    LATCHED = QosPolicy(depth=1, reliable=True, transient_local=True)

    @property
    def policy(self) -> QosPolicy:
        """What publishers of this kind of topic promise."""
        policy: QosPolicy = self.value
        return policy

    def describe(self) -> str:
        """The policy in words, e.g. "sensor (best effort, keep last 5)", for logs and docs."""
        p = self.policy
        words = ["reliable" if p.reliable else "best effort"]
        if p.transient_local:
            words.append("transient local")
        words.append(f"keep last {p.depth}")
        return f"{self.name.lower()} ({', '.join(words)})"


@dataclass(frozen=True)
class TopicSpec:
    name: str
    msgtype: str  # e.g. "sensor_msgs/msg/Image"
    qos: QosProfile


@lru_cache(maxsize=1)
def typestore() -> Any:
    return ros_distro.typestore()


def _types() -> Any:
    return typestore().types


def stamp(stamp_ns: int) -> Any:
    return _types()["builtin_interfaces/msg/Time"](
        sec=int(stamp_ns // 1_000_000_000), nanosec=int(stamp_ns % 1_000_000_000)
    )


def header(stamp_ns: int, frame_id: str) -> Any:
    return _types()["std_msgs/msg/Header"](stamp=stamp(stamp_ns), frame_id=frame_id)


def serialize(msg: Any) -> bytes:
    return bytes(typestore().serialize_cdr(msg, msg.__msgtype__))


def _vec3(v: FloatArray) -> Any:
    return _types()["geometry_msgs/msg/Vector3"](x=float(v[0]), y=float(v[1]), z=float(v[2]))


def _point(v: FloatArray) -> Any:
    return _types()["geometry_msgs/msg/Point"](x=float(v[0]), y=float(v[1]), z=float(v[2]))


def _quat(q_wxyz: FloatArray) -> Any:
    return _types()["geometry_msgs/msg/Quaternion"](
        x=float(q_wxyz[1]), y=float(q_wxyz[2]), z=float(q_wxyz[3]), w=float(q_wxyz[0])
    )


def _pose(p: FloatArray, q_wxyz: FloatArray) -> Any:
    return _types()["geometry_msgs/msg/Pose"](position=_point(p), orientation=_quat(q_wxyz))


_ZERO9 = np.zeros(9)
_UNKNOWN9 = np.array([-1.0] + [0.0] * 8)


def clock(stamp_ns: int) -> bytes:
    return serialize(_types()["rosgraph_msgs/msg/Clock"](clock=stamp(stamp_ns)))


def string(text: str) -> bytes:
    return serialize(_types()["std_msgs/msg/String"](data=text))


def imu(
    stamp_ns: int,
    frame_id: str,
    angular_velocity: FloatArray,
    linear_acceleration: FloatArray,
    orientation_wxyz: FloatArray | None = None,
) -> bytes:
    t = _types()
    has_orientation = orientation_wxyz is not None
    msg = t["sensor_msgs/msg/Imu"](
        header=header(stamp_ns, frame_id),
        orientation=_quat(
            orientation_wxyz if orientation_wxyz is not None else np.array([1.0, 0, 0, 0])
        ),
        orientation_covariance=_ZERO9.copy() if has_orientation else _UNKNOWN9.copy(),
        angular_velocity=_vec3(angular_velocity),
        angular_velocity_covariance=_ZERO9.copy(),
        linear_acceleration=_vec3(linear_acceleration),
        linear_acceleration_covariance=_ZERO9.copy(),
    )
    return serialize(msg)


def odometry(
    stamp_ns: int,
    frame_id: str,
    child_frame_id: str,
    position: FloatArray,
    quat_wxyz: FloatArray,
    linear_velocity_child: FloatArray,
    angular_velocity_child: FloatArray,
) -> bytes:
    t = _types()
    msg = t["nav_msgs/msg/Odometry"](
        header=header(stamp_ns, frame_id),
        child_frame_id=child_frame_id,
        pose=t["geometry_msgs/msg/PoseWithCovariance"](
            pose=_pose(position, quat_wxyz), covariance=np.zeros(36)
        ),
        twist=t["geometry_msgs/msg/TwistWithCovariance"](
            twist=t["geometry_msgs/msg/Twist"](
                linear=_vec3(linear_velocity_child), angular=_vec3(angular_velocity_child)
            ),
            covariance=np.zeros(36),
        ),
    )
    return serialize(msg)


def joint_state(
    stamp_ns: int, names: list[str], positions: FloatArray | None, velocities: FloatArray | None
) -> bytes:
    msg = _types()["sensor_msgs/msg/JointState"](
        header=header(stamp_ns, ""),
        name=list(names),
        position=np.asarray(positions if positions is not None else [], dtype=np.float64),
        velocity=np.asarray(velocities if velocities is not None else [], dtype=np.float64),
        effort=np.zeros(0),
    )
    return serialize(msg)


def pose_stamped(
    stamp_ns: int, frame_id: str, position: FloatArray, quat_wxyz: FloatArray
) -> bytes:
    msg = _types()["geometry_msgs/msg/PoseStamped"](
        header=header(stamp_ns, frame_id), pose=_pose(position, quat_wxyz)
    )
    return serialize(msg)


@dataclass(frozen=True)
class Transform:
    parent: str
    child: str
    translation: FloatArray
    quat_wxyz: FloatArray


def tf_message(stamp_ns: int, transforms: list[Transform]) -> bytes:
    t = _types()
    items = [
        t["geometry_msgs/msg/TransformStamped"](
            header=header(stamp_ns, tr.parent),
            child_frame_id=tr.child,
            transform=t["geometry_msgs/msg/Transform"](
                translation=_vec3(tr.translation), rotation=_quat(tr.quat_wxyz)
            ),
        )
        for tr in transforms
    ]
    return serialize(t["tf2_msgs/msg/TFMessage"](transforms=items))


def image(stamp_ns: int, frame_id: str, array: NDArray[Any], encoding: str) -> bytes:
    dtype, channels = ENCODINGS[encoding]  # the one encoding table (grade_common.images)
    arr = np.ascontiguousarray(array, dtype=dtype)
    h, w = arr.shape[:2]
    msg = _types()["sensor_msgs/msg/Image"](
        header=header(stamp_ns, frame_id),
        height=h,
        width=w,
        encoding=encoding,
        is_bigendian=0,
        step=w * channels * arr.itemsize,
        data=arr.reshape(-1).view(np.uint8),
    )
    return serialize(msg)


def camera_info(
    stamp_ns: int,
    frame_id: str,
    width: int,
    height: int,
    k: FloatArray,
    distortion_model: str = "plumb_bob",
    d: FloatArray | None = None,
) -> bytes:
    """CameraInfo of an image as published (distorted: D set, P = [K | 0], R = identity).

    `d`: plumb_bob k1 k2 p1 p2 k3, equidistant k1 k2 k3 k4; None: five zeros (a pinhole).
    """
    t = _types()
    p = np.zeros((3, 4))
    p[:, :3] = k
    msg = t["sensor_msgs/msg/CameraInfo"](
        header=header(stamp_ns, frame_id),
        height=height,
        width=width,
        distortion_model=distortion_model,
        d=np.zeros(5) if d is None else np.asarray(d, dtype=np.float64),
        k=np.asarray(k, dtype=np.float64).reshape(9),
        r=np.eye(3).reshape(9),
        p=p.reshape(12),
        binning_x=0,
        binning_y=0,
        roi=t["sensor_msgs/msg/RegionOfInterest"](
            x_offset=0, y_offset=0, height=0, width=0, do_rectify=False
        ),
    )
    return serialize(msg)


# sensor_msgs/PointField datatypes
POINT_FIELD_TYPES: dict[str, int] = {
    "i1": 1, "u1": 2, "i2": 3, "u2": 4, "i4": 5, "u4": 6, "f4": 7, "f8": 8,
}  # fmt: skip


def pointcloud2(stamp_ns: int, frame_id: str, points: NDArray[Any]) -> bytes:
    """An unorganised cloud (height 1) from a structured array; its fields become PointFields."""
    t = _types()
    dtype = points.dtype
    assert dtype.fields is not None
    fields = [
        t["sensor_msgs/msg/PointField"](
            name=name,
            offset=int(spec[1]),
            datatype=POINT_FIELD_TYPES[np.dtype(spec[0]).str[1:]],
            count=1,
        )
        for name, spec in dtype.fields.items()
    ]
    arr = np.ascontiguousarray(points)
    msg = t["sensor_msgs/msg/PointCloud2"](
        header=header(stamp_ns, frame_id),
        height=1,
        width=len(arr),
        fields=fields,
        is_bigendian=False,
        point_step=dtype.itemsize,
        row_step=dtype.itemsize * len(arr),
        data=arr.view(np.uint8).reshape(-1),
        is_dense=True,
    )
    return serialize(msg)


def laser_scan(
    stamp_ns: int,
    frame_id: str,
    angles_rad: tuple[float, float, float],
    time_increment_s: float,
    scan_time_s: float,
    range_limits_m: tuple[float, float],
    ranges_m: NDArray[np.float32],
    intensities: NDArray[np.float32],
) -> bytes:
    """sensor_msgs/LaserScan; angles_rad = (min, max, increment); +inf where nothing returned."""
    msg = _types()["sensor_msgs/msg/LaserScan"](
        header=header(stamp_ns, frame_id),
        angle_min=float(angles_rad[0]),
        angle_max=float(angles_rad[1]),
        angle_increment=float(angles_rad[2]),
        time_increment=float(time_increment_s),
        scan_time=float(scan_time_s),
        range_min=float(range_limits_m[0]),
        range_max=float(range_limits_m[1]),
        ranges=np.ascontiguousarray(ranges_m, dtype=np.float32),
        intensities=np.ascontiguousarray(intensities, dtype=np.float32),
    )
    return serialize(msg)
