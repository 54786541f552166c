"""ROS 2 node `explorer`: drives a robot to frontiers it has seen with its depth camera.

Reads /<robot>/<camera>/depth/image_raw (32FC1 metres, or 16UC1 millimetres), camera_info and
pose (the optical frame in the world), and /<robot>/odom; keeps the 2D occupancy grid of
`grade_control.explorer` (see its docstring for what this simple explorer can and cannot do);
publishes the path to the next frontier as nav_msgs/Path on /<robot>/setpoint/path (for
joint_controller's path mode, at `altitude_m`, facing the direction of travel) and the map as
nav_msgs/OccupancyGrid on /<robot>/explorer/map. When to look around, replan or finish is
`grade_control.exploration`. With `map_output` set, the seen map (first-seen stamp per cell) and
the robot's track are written there on shutdown, for `grade explore coverage`.

With `depth_ack` on (lockstep runs), every depth image is integrated as it arrives (not at
`map_rate_hz`) and its stamp is then published as std_msgs/Header on /<robot>/explorer/depth_ack;
sim_node's `lockstep_acks` waits for it before the next image, so the explorer keeps up with the
simulation however busy the machine is.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import OccupancyGrid, Odometry, Path
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import Header

from grade_common.atomic import StagedOutput
from grade_common.images import image_to_array
from grade_common.node import spin as grade_spin
from grade_control.coverage import SeenMap, save_seen_map
from grade_control.errors import ControlConfigError, ControlError
from grade_control.exploration import ExplorationMission, MissionSettings, Plan
from grade_control.explorer import ExplorerConfig, FrontierExplorer
from grade_control.geometry import quaternion_to_rpy, rpy_to_quaternion

_NODE_DEFAULTS: dict[str, Any] = {
    "robot": "uav",
    "camera": "camera",
    "altitude_m": 1.2,
    "map_rate_hz": 5.0,
    "replan_period_s": 1.0,
    "goal_tolerance_m": 0.3,
    "origin_x_m": -10.0,
    "origin_y_m": -10.0,
    "size_x_m": 20.0,
    "size_y_m": 20.0,
    "resolution_m": 0.1,
    "min_obstacle_height_m": 0.15,
    "max_obstacle_height_m": 2.0,
    "max_range_m": 4.0,
    "pixel_stride": 8,
    "robot_radius_m": 0.3,
    "min_frontier_cells": 5,
    "path_step_m": 0.5,
    "min_goal_distance_m": 1.0,
    "stuck_timeout_s": 8.0,
    "map_output": "",
    "depth_ack": False,
}

# Camera poses kept to pair with depth images: 4 s at the default 60 Hz pose rate.
_POSE_QUEUE = 240


def depth_image_to_array(msg: Image) -> np.ndarray:
    """sensor_msgs/Image (32FC1 metres or 16UC1 millimetres) -> float metres (H, W)."""
    array = image_to_array(msg, allowed=("32FC1", "16UC1"), error=ControlError)
    return array.astype(np.float64) * (1e-3 if msg.encoding == "16UC1" else 1.0)


def pose_matrix(pose: Any) -> np.ndarray:
    """geometry_msgs/Pose -> 4x4 transform."""
    q = np.array([pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w])
    x, y, z, w = q / np.linalg.norm(q)
    matrix = np.eye(4)
    matrix[:3, :3] = np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )
    matrix[:3, 3] = (pose.position.x, pose.position.y, pose.position.z)
    return matrix


class ExplorerNode(Node):
    """Maps with the depth camera and sends paths to frontiers."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("explorer", **kwargs)
        for name, value in _NODE_DEFAULTS.items():
            self.declare_parameter(
                name, value, ParameterDescriptor(dynamic_typing=True, read_only=True)
            )
        p = {name: self.get_parameter(name).value for name in _NODE_DEFAULTS}
        for name in (
            "altitude_m",
            "map_rate_hz",
            "replan_period_s",
            "goal_tolerance_m",
            "stuck_timeout_s",
        ):
            if not (isinstance(p[name], int | float) and math.isfinite(p[name]) and p[name] > 0):
                raise ControlConfigError(f"{name} = {p[name]!r} is invalid: must be > 0")
        self.explorer = FrontierExplorer(
            ExplorerConfig(
                origin_xy_m=(float(p["origin_x_m"]), float(p["origin_y_m"])),
                size_xy_m=(float(p["size_x_m"]), float(p["size_y_m"])),
                resolution_m=float(p["resolution_m"]),
                min_obstacle_height_m=float(p["min_obstacle_height_m"]),
                max_obstacle_height_m=float(p["max_obstacle_height_m"]),
                max_range_m=float(p["max_range_m"]),
                pixel_stride=p["pixel_stride"],
                robot_radius_m=float(p["robot_radius_m"]),
                min_frontier_cells=p["min_frontier_cells"],
                path_step_m=float(p["path_step_m"]),
            )
        )
        self.mission = ExplorationMission(
            self.explorer,
            MissionSettings(
                goal_tolerance_m=float(p["goal_tolerance_m"]),
                min_goal_distance_m=float(p["min_goal_distance_m"]),
                stuck_timeout_s=float(p["stuck_timeout_s"]),
            ),
        )
        self.params = p
        robot, camera = p["robot"], p["camera"]
        # Refuse an existing output now, not after the whole exploration.
        self._map_output = (
            StagedOutput(str(p["map_output"]), exists_error=ControlConfigError)
            if p["map_output"]
            else None
        )
        self._depth: Image | None = None
        self._camera_matrix: np.ndarray | None = None
        self._poses: dict[int, np.ndarray] = {}
        self._position: np.ndarray | None = None
        self._yaw_rad = 0.0
        self._track: list[tuple[float, float, float]] = []
        self.create_subscription(
            Image, f"/{robot}/{camera}/depth/image_raw", self._on_depth, qos_profile_sensor_data
        )
        self.create_subscription(
            CameraInfo, f"/{robot}/{camera}/camera_info", self._on_info, qos_profile_sensor_data
        )
        # Every camera pose is kept (reliable, deep queue): a depth image is only used with the
        # pose of its own stamp, and a busy executor would otherwise drop exactly those poses.
        self.create_subscription(
            PoseStamped, f"/{robot}/{camera}/pose", self._on_pose, QoSProfile(depth=_POSE_QUEUE)
        )
        self.create_subscription(Odometry, f"/{robot}/odom", self._on_odom, qos_profile_sensor_data)
        self._path_pub = self.create_publisher(Path, f"/{robot}/setpoint/path", QoSProfile(depth=5))
        self._map_pub = self.create_publisher(
            OccupancyGrid,
            f"/{robot}/explorer/map",
            QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL),
        )
        self._ack_pub = (
            self.create_publisher(Header, f"/{robot}/explorer/depth_ack", QoSProfile(depth=10))
            if p["depth_ack"]
            else None
        )
        if self._ack_pub is None:
            self.create_timer(1.0 / float(p["map_rate_hz"]), self._integrate)
        self.create_timer(float(p["replan_period_s"]), self._replan)

    @staticmethod
    def _stamp_ns(stamp: Any) -> int:
        return int(stamp.sec) * 10**9 + int(stamp.nanosec)

    def _on_depth(self, msg: Image) -> None:
        self._depth = msg
        if self._ack_pub is not None:
            self._integrate()

    def _on_info(self, msg: CameraInfo) -> None:
        self._camera_matrix = np.array(msg.k, dtype=np.float64).reshape(3, 3)
        if self._ack_pub is not None:
            self._integrate()

    def _on_pose(self, msg: PoseStamped) -> None:
        self._poses[self._stamp_ns(msg.header.stamp)] = pose_matrix(msg.pose)
        while len(self._poses) > _POSE_QUEUE:
            self._poses.pop(next(iter(self._poses)))
        if self._ack_pub is not None:
            self._integrate()

    def _on_odom(self, msg: Odometry) -> None:
        self._position = np.array([msg.pose.pose.position.x, msg.pose.pose.position.y])
        q = msg.pose.pose.orientation
        self._yaw_rad = float(quaternion_to_rpy(np.array([q.x, q.y, q.z, q.w]))[2])
        stamp_s = self._stamp_ns(msg.header.stamp) / 1e9
        if not self._track or stamp_s - self._track[-1][0] >= 0.5:
            self._track.append((stamp_s, float(self._position[0]), float(self._position[1])))

    def _integrate(self) -> None:
        if self._depth is None or self._camera_matrix is None or not self._poses:
            return
        stamp = self._stamp_ns(self._depth.header.stamp)
        nearest = min(self._poses, key=lambda s: abs(s - stamp))
        if abs(nearest - stamp) > 20_000_000:  # no camera pose within 20 ms of the image
            if self._ack_pub is not None and max(self._poses) < stamp:
                return  # acknowledging: its pose is still on the way; wait for it
            self.get_logger().warning(
                "depth image without a matching camera pose: skipped", throttle_duration_sec=2.0
            )
            self._finish(False)
            return
        try:
            depth = depth_image_to_array(self._depth)
        except ControlError as err:
            self.get_logger().warning(str(err), throttle_duration_sec=5.0)
            self._finish(False)
            return
        self.explorer.integrate_depth(
            depth, self._camera_matrix, self._poses[nearest], stamp_s=stamp / 1e9
        )
        self._finish(True)

    def _finish(self, integrated: bool) -> None:
        """Done with the pending depth image (integrated or skipped): acknowledge its stamp."""
        done, self._depth = self._depth, None
        if self._ack_pub is not None and done is not None:
            ack = Header()
            ack.stamp = done.header.stamp
            ack.frame_id = "integrated" if integrated else "skipped"
            self._ack_pub.publish(ack)

    def _replan(self) -> None:
        self._publish_map()
        # Nothing to decide before the first depth image is in the map.
        if self._position is None or self.mission.finished:
            return
        if not self.explorer.observed.any():
            return
        now_s = self.get_clock().now().nanoseconds / 1e9
        plan = self.mission.update(now_s, self._position, self._yaw_rad)
        if self.mission.finished:
            self.get_logger().info(
                f"no reachable frontier left after a full look-around: exploration finished "
                f"({self.mission.goals_reached} goals reached)"
            )
            return
        if plan is None:
            return
        self.get_logger().info(plan.reason)
        self._path_pub.publish(self._path_message(plan))

    def _path_message(self, plan: Plan) -> Path:
        msg = Path()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = "world"
        for x, y, yaw in plan.poses_xy_yaw:
            pose = PoseStamped()
            pose.header = msg.header
            pose.pose.position.x, pose.pose.position.y = float(x), float(y)
            pose.pose.position.z = float(self.params["altitude_m"])
            q = rpy_to_quaternion(0.0, 0.0, float(yaw))
            (
                pose.pose.orientation.x,
                pose.pose.orientation.y,
                pose.pose.orientation.z,
                pose.pose.orientation.w,
            ) = (float(v) for v in q)
            msg.poses.append(pose)
        return msg

    def _publish_map(self) -> None:
        config = self.explorer.config
        msg = OccupancyGrid()
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = "world"
        msg.info.resolution = float(config.resolution_m)
        msg.info.height, msg.info.width = config.shape
        msg.info.origin.position.x, msg.info.origin.position.y = config.origin_xy_m
        msg.info.origin.orientation.w = 1.0
        msg.data = self.explorer.grid().ravel().tolist()
        if self.context.ok():
            self._map_pub.publish(msg)

    def destroy_node(self) -> None:
        if self._map_output is not None and not self._map_output.committed:
            config = self.explorer.config
            seen = SeenMap(config.origin_xy_m, config.resolution_m, self.explorer.first_seen_s)
            with self._map_output.path.open("wb") as file:
                save_seen_map(file, seen, np.array(self._track).reshape(-1, 3))
            self._map_output.commit()
        super().destroy_node()


main = grade_spin.node_main("explorer", ExplorerNode, config_errors=(ControlConfigError,))


if __name__ == "__main__":
    sys.exit(main())
