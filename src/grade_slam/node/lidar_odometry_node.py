"""ROS 2 node `lidar_odometry_node`: KISS-ICP or GenZ-ICP live on a robot's LiDAR.

Subscribes /<robot>/<lidar>/points (sensor_msgs/PointCloud2 with x, y, z and the per-point `t`
field, uint32 ns after the stamp, which the backend deskews with), registers each scan
(`grade_slam.lidar_odometry`) and publishes the sensor pose as nav_msgs/Odometry on
/<robot>/lidar_odometry/odom and the trajectory so far as nav_msgs/Path on
/<robot>/lidar_odometry/path, in `map_frame` (the first scan's sensor frame). After each scan it
publishes the latest /clock (the scan's publishing step, see below) as std_msgs/Header on
/<robot>/lidar_odometry/ack, for sim_node's
`lockstep_acks` (/<robot>/<lidar>/points:/<robot>/lidar_odometry/ack): every scan is registered
however slow the backend. With `trajectory_output` set, the TUM trajectory is written there when
the node stops (score it against gt/<robot>/<lidar>/groundtruth.txt with `grade eval traj`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from rclpy.node import Node
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import PointCloud2
from std_msgs.msg import Header

from grade_common.names import ros_name
from grade_common.node import spin as grade_spin
from grade_common.pointcloud import cloud_fields
from grade_common.schema import Checked, Wording, text
from grade_slam.config import PARAMETER_WORDING
from grade_slam.errors import SlamConfigError, SlamInputError
from grade_slam.lidar_odometry import LidarOdometryConfig, LidarScan, create_lidar_backend
from grade_slam.node.estimate_output import MAP_FRAME_PATTERN, EstimateOutput, declare_parameters


@dataclass(frozen=True)
class LidarNodeParameters(Checked):
    """The node's own parameters; the backend's are `LidarOdometryConfig` (same names)."""

    WORDING: ClassVar[Wording] = PARAMETER_WORDING

    # the scans of /<robot>/<lidar>/points
    robot: str = field(default="uav1", metadata=ros_name())
    lidar: str = field(default="lidar", metadata=ros_name())
    # the estimate's frame: the first scan's sensor frame
    map_frame: str = field(default="lidar_map", metadata=text(MAP_FRAME_PATTERN))
    # a TUM file written at shutdown ("": none)
    trajectory_output: str = field(default="", metadata=text(allow_empty=True))


class LidarOdometryNode(Node):
    """Registers the live scans of one LiDAR."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("lidar_odometry", **kwargs)
        self.params, self.config = declare_parameters(
            self, LidarNodeParameters, LidarOdometryConfig
        )
        robot = self.params.robot
        self._estimate = EstimateOutput(
            self, f"/{robot}/lidar_odometry", self.params.map_frame, self.params.trajectory_output
        )
        self.tracker = create_lidar_backend(self.config)
        topic = f"/{robot}/{self.params.lidar}/points"
        reliable = QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE)
        self.create_subscription(PointCloud2, topic, self._on_scan, reliable)
        self._ack_pub = self.create_publisher(Header, f"/{robot}/lidar_odometry/ack", 10)
        # A scan is stamped with its first ray but published when the sweep completes, and
        # sim_node's lockstep gate waits for an acknowledgement of the publishing step: the
        # latest /clock (at least that step once the scan has arrived) is acknowledged.
        self._clock_ns = 0
        self.create_subscription(Clock, "/clock", self._on_clock, QoSProfile(depth=10))
        self.get_logger().info(
            f"registering {topic} with backend {self.config.backend.value!r} "
            f"(deskew {self.config.deskew})"
        )

    def _on_clock(self, msg: Clock) -> None:
        self._clock_ns = max(self._clock_ns, int(msg.clock.sec) * 10**9 + int(msg.clock.nanosec))

    def _on_scan(self, msg: PointCloud2) -> None:
        stamp_ns = int(msg.header.stamp.sec) * 10**9 + int(msg.header.stamp.nanosec)
        try:
            cloud = cloud_fields(msg, error=SlamInputError)
            missing = sorted({"x", "y", "z", "t"} - set(cloud))
            if missing:
                raise SlamInputError(f"PointCloud2 without the fields {missing}")
            scan = LidarScan(
                stamp_ns,
                np.stack([cloud["x"], cloud["y"], cloud["z"]], axis=1).astype(np.float64),
                cloud["t"].astype(np.uint32),
            )
        except SlamInputError as err:
            self.get_logger().warning(f"scan skipped: {err}", throttle_duration_sec=5.0)
        else:
            pose = self._estimate.track(self.tracker.process, scan)
            if pose is not None:
                self._estimate.publish(msg.header.stamp, msg.header.frame_id, pose)
        ack = Header()
        ack_ns = max(stamp_ns, self._clock_ns)
        ack.stamp.sec, ack.stamp.nanosec = divmod(ack_ns, 10**9)
        ack.frame_id = msg.header.frame_id
        self._ack_pub.publish(ack)

    def destroy_node(self) -> None:
        if hasattr(self, "tracker"):  # none when the backend failed to start
            what = f"{self.config.backend.value} estimate: lidar frame in {self.params.map_frame}"
            self._estimate.finish(self.tracker.stats, self.tracker.trajectory, what)
        super().destroy_node()


main = grade_spin.node_main(
    "lidar_odometry_node", LidarOdometryNode, config_errors=(SlamConfigError,)
)


if __name__ == "__main__":
    sys.exit(main())
