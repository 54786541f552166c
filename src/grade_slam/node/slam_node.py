"""ROS 2 node `slam_node`: a third-party RGB-D odometry backend on the live camera topics.

Subscribes /<robot>/<camera>/rgb/image_raw (rgb8/bgr8), depth/image_raw (32FC1 metres or
16UC1 millimetres) and camera_info; pairs colour and depth by identical stamps, tracks each
pair with the backend (`backend` parameter, `grade_slam.backends`), and publishes the estimated
optical-frame pose as nav_msgs/Odometry on /<robot>/slam/odom and the trajectory so far as
nav_msgs/Path on /<robot>/slam/path, both in `map_frame` (the estimate's origin: the first
frame's camera). With `trajectory_output` set, the TUM trajectory is written there when the node
stops (for `grade eval traj`). Frames the transport drops are simply not tracked; the tracker
matches the next pair against the last tracked one.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

import numpy as np
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry, Path
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image

from grade_common.atomic import StagedOutput
from grade_common.images import image_to_array
from grade_common.node import spin as grade_spin
from grade_common.rotations import matrix_to_quat
from grade_common.schema import Checked, Wording, from_mapping, text
from grade_slam.backends import create_backend
from grade_slam.config import PARAMETER_WORDING, SlamConfig
from grade_slam.errors import SlamConfigError, SlamError, SlamOutputExistsError
from grade_slam.frames import RgbdFrame
from grade_slam.tracker import RgbdTracker
from grade_slam.trajectory_file import tum_text

_NAME = r"[A-Za-z][A-Za-z0-9_]*"
_PENDING_LIMIT = 30  # unpaired images kept per stream (1 s at 30 Hz)


@dataclass(frozen=True)
class SlamNodeParameters(Checked):
    """The node's own parameters; the backend's are `SlamConfig` (same names)."""

    WORDING: ClassVar[Wording] = PARAMETER_WORDING

    robot: str = field(default="uav1", metadata=text(_NAME))
    camera: str = field(default="camera", metadata=text(_NAME))
    map_frame: str = field(default="slam_map", metadata=text(r"[A-Za-z][A-Za-z0-9_/]*"))
    trajectory_output: str = field(default="", metadata=text(allow_empty=True))


def _declare_all(node: Node) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for cls in (SlamNodeParameters, SlamConfig):
        for f in fields(cls):
            default = getattr(cls(), f.name)
            if isinstance(default, tuple):
                default = list(default)
            elif hasattr(default, "value"):
                default = default.value
            node.declare_parameter(
                f.name, default, ParameterDescriptor(dynamic_typing=True, read_only=True)
            )
            values[f.name] = node.get_parameter(f.name).value
    return values


class SlamNode(Node):
    """Tracks the live RGB-D stream with a third-party backend."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("slam", **kwargs)
        values = _declare_all(self)
        names = {f.name for f in fields(SlamNodeParameters)}
        self.params = from_mapping(
            SlamNodeParameters, {k: v for k, v in values.items() if k in names}
        )
        self.config = from_mapping(SlamConfig, {k: v for k, v in values.items() if k not in names})
        # Refuse an existing output now, not after the whole run.
        self._output = (
            StagedOutput(self.params.trajectory_output, exists_error=SlamOutputExistsError)
            if self.params.trajectory_output
            else None
        )
        self.tracker = RgbdTracker(create_backend(self.config), self.config)
        self._camera_matrix: np.ndarray | None = None
        self._rgb: dict[int, Image] = {}
        self._depth: dict[int, Image] = {}
        ns = f"/{self.params.robot}/{self.params.camera}"
        self.create_subscription(
            Image, f"{ns}/rgb/image_raw", self._on_rgb, qos_profile_sensor_data
        )
        self.create_subscription(
            Image, f"{ns}/depth/image_raw", self._on_depth, qos_profile_sensor_data
        )
        self.create_subscription(
            CameraInfo, f"{ns}/camera_info", self._on_info, qos_profile_sensor_data
        )
        self._odom_pub = self.create_publisher(
            Odometry, f"/{self.params.robot}/slam/odom", QoSProfile(depth=10)
        )
        self._path_pub = self.create_publisher(
            Path, f"/{self.params.robot}/slam/path", QoSProfile(depth=1)
        )
        self._path = Path()
        self._path.header.frame_id = self.params.map_frame
        self.get_logger().info(
            f"tracking {ns} with backend {self.config.backend!r} ({self.config.method.value})"
        )

    @staticmethod
    def _stamp_ns(msg: Any) -> int:
        return int(msg.header.stamp.sec) * 10**9 + int(msg.header.stamp.nanosec)

    def _on_info(self, msg: CameraInfo) -> None:
        self._camera_matrix = np.array(msg.k, dtype=np.float64).reshape(3, 3)

    def _on_rgb(self, msg: Image) -> None:
        self._store(self._rgb, msg)

    def _on_depth(self, msg: Image) -> None:
        self._store(self._depth, msg)

    def _store(self, pending: dict[int, Image], msg: Image) -> None:
        pending[self._stamp_ns(msg)] = msg
        while len(pending) > _PENDING_LIMIT:
            pending.pop(min(pending))
        ready = sorted(set(self._rgb) & set(self._depth))
        if ready and self._camera_matrix is not None:
            self._track(ready[-1])

    def _track(self, stamp_ns: int) -> None:
        rgb_msg, depth_msg = self._rgb[stamp_ns], self._depth[stamp_ns]
        for pending in (self._rgb, self._depth):  # older ones can no longer be tracked
            for old in [s for s in pending if s <= stamp_ns]:
                del pending[old]
        assert self._camera_matrix is not None
        try:
            rgb = image_to_array(rgb_msg, allowed=("rgb8", "bgr8"), error=SlamError)
            if rgb_msg.encoding == "bgr8":
                rgb = rgb[:, :, ::-1]
            depth = image_to_array(depth_msg, allowed=("32FC1", "16UC1"), error=SlamError)
            depth_m = depth.astype(np.float32) * np.float32(
                1e-3 if depth_msg.encoding == "16UC1" else 1.0
            )
            frame = RgbdFrame(
                stamp_ns, np.ascontiguousarray(rgb, dtype=np.uint8), depth_m, self._camera_matrix
            )
        except SlamError as err:
            self.get_logger().warning(f"frame skipped: {err}", throttle_duration_sec=5.0)
            return
        pose = self.tracker.process(frame)
        if pose is not None:
            self._publish(rgb_msg, pose)

    def _publish(self, image: Image, pose: np.ndarray) -> None:
        odom = Odometry()
        odom.header.stamp = image.header.stamp
        odom.header.frame_id = self.params.map_frame
        odom.child_frame_id = image.header.frame_id
        p, q = odom.pose.pose.position, odom.pose.pose.orientation
        p.x, p.y, p.z = (float(v) for v in pose[:3, 3])
        q.w, q.x, q.y, q.z = (float(v) for v in matrix_to_quat(pose[:3, :3]))
        self._odom_pub.publish(odom)
        stamped = PoseStamped()
        stamped.header = odom.header
        stamped.pose = odom.pose.pose
        self._path.header.stamp = image.header.stamp
        self._path.poses.append(stamped)
        self._path_pub.publish(self._path)

    def destroy_node(self) -> None:
        if self._output is not None and not self._output.committed:
            stats = self.tracker.stats
            what = (
                f"{self.config.backend} estimate: optical frame in {self.params.map_frame} "
                f"({stats.tracked} of {stats.frames} frames tracked)"
            )
            self._output.path.write_text(tum_text(self.tracker.trajectory, what))
            self._output.commit()
            self.get_logger().info(f"trajectory written: {self._output.final}")
        super().destroy_node()


main = grade_spin.node_main("slam_node", SlamNode, config_errors=(SlamConfigError,))


if __name__ == "__main__":
    sys.exit(main())
