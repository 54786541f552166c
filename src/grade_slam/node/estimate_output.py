"""What both SLAM nodes share: their read-only parameters from frozen dataclasses, the
nav_msgs/Odometry + Path of the estimate, the online poses file, and at shutdown the counts line
and the TUM trajectory (one place for slam_node and lidar_odometry_node).

With `trajectory_output` EST.txt, each pose is also appended to EST.online.txt as it is
published (TUM, each line flushed at once, so a crash of the node loses none of the poses
published before it), and at shutdown EST.txt gets the backend's final trajectory (ORB-SLAM3's
after its last optimisation), written under a temporary name and moved into place.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import fields
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import numpy as np
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry, Path
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.qos import QoSProfile

from grade_common.atomic import StagedOutput
from grade_common.rotations import matrix_to_quat
from grade_common.schema import from_mapping
from grade_common.tum import pose_header, tum_pose_line
from grade_slam.errors import SlamOutputExistsError
from grade_slam.interfaces import TrackingStats, Trajectory
from grade_slam.trajectory_file import online_path, tum_text

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

P = TypeVar("P", bound="DataclassInstance")
C = TypeVar("C", bound="DataclassInstance")
S = TypeVar("S")

# The estimate's frame id (`map_frame`): a name token that may hold a namespace, "uav1/map".
MAP_FRAME_PATTERN = r"[A-Za-z][A-Za-z0-9_/]*"


def declare_parameters(node: Node, own: type[P], backend: type[C]) -> tuple[P, C]:
    """Declare every field of the node's own and the backend's dataclasses as a read-only ROS 2
    parameter (default: the field's; enums by value, tuples as lists) and validate each set.

    Raises:
        ConfigError: a value is invalid (its wording names the parameter).
    """
    values: dict[str, Any] = {}
    for cls in (own, backend):
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
    names = {f.name for f in fields(own)}
    return (
        from_mapping(own, {k: v for k, v in values.items() if k in names}),
        from_mapping(backend, {k: v for k, v in values.items() if k not in names}),
    )


class EstimateOutput:
    """Publishes each pose on `<prefix>/odom` and `<prefix>/path`; writes the TUM file."""

    def __init__(self, node: Node, prefix: str, map_frame: str, trajectory_output: str) -> None:
        self._node = node
        self._map_frame = map_frame
        # Refuse an existing output now, not after the whole run.
        self._output = (
            StagedOutput(trajectory_output, exists_error=SlamOutputExistsError)
            if trajectory_output
            else None
        )
        self._online: TextIO | None = None
        if self._output is not None:
            self.online_path = online_path(self._output.final)
            try:
                # line buffered: every pose reaches the file when it is published
                self._online = open(self.online_path, "x", buffering=1)  # noqa: SIM115
            except FileExistsError as err:
                raise SlamOutputExistsError(
                    f"{self.online_path}: the online poses file of trajectory_output "
                    f"{self._output.final} exists already; not overwriting it"
                ) from err
            self._online.write(
                pose_header(
                    f"{prefix} estimate in {map_frame} as published, one pose per tracked "
                    f"frame, written as it came (the final trajectory: {self._output.final})"
                )
            )
        self._odom_pub = node.create_publisher(Odometry, f"{prefix}/odom", QoSProfile(depth=10))
        self._path_pub = node.create_publisher(Path, f"{prefix}/path", QoSProfile(depth=1))
        self._path = Path()
        self._path.header.frame_id = map_frame
        # process CPU time spent in the backend (all of its threads; a backend in a child
        # process adds that process's, `TrackingStats.child_cpu_s`)
        self.cpu_s = 0.0

    def track(self, process: Callable[[S], np.ndarray | None], sample: S) -> np.ndarray | None:
        """The backend's `process` of one sample (its pose, or None), its CPU time in cpu_s."""
        start = time.process_time()
        pose = process(sample)
        self.cpu_s += time.process_time() - start
        return pose

    def publish(self, stamp: Any, child_frame: str, pose: np.ndarray) -> None:
        odom = Odometry()
        odom.header.stamp = stamp
        odom.header.frame_id = self._map_frame
        odom.child_frame_id = child_frame
        p, q = odom.pose.pose.position, odom.pose.pose.orientation
        p.x, p.y, p.z = (float(v) for v in pose[:3, 3])
        q.w, q.x, q.y, q.z = (float(v) for v in matrix_to_quat(pose[:3, :3]))
        self._odom_pub.publish(odom)
        stamped = PoseStamped()
        stamped.header = odom.header
        stamped.pose = odom.pose.pose
        self._path.header.stamp = stamp
        self._path.poses.append(stamped)
        self._path_pub.publish(self._path)
        if self._online is not None:
            stamp_ns = int(stamp.sec) * 10**9 + int(stamp.nanosec)
            self._online.write(tum_pose_line(stamp_ns, pose[:3, 3], matrix_to_quat(pose[:3, :3])))

    def finish(self, stats: TrackingStats, trajectory: Trajectory, what: str) -> None:
        """Log the counts (grade bench slam --live reads this line) and write the TUM file."""
        log = self._node.get_logger()
        log.info(
            f"frames received {stats.frames}, tracked {stats.tracked}, restarts "
            f"{stats.restarts}, cpu_s_per_frame "
            f"{(self.cpu_s + stats.child_cpu_s) / max(1, stats.frames):.4f}"
        )
        if self._online is not None:
            self._online.close()
            self._online = None
            log.info(f"online poses written: {self.online_path}")
        if self._output is not None and not self._output.committed:
            self._output.path.write_text(
                tum_text(trajectory, f"{what} ({stats.tracked} of {stats.frames} tracked)")
            )
            self._output.commit()
            log.info(f"trajectory written: {self._output.final}")
