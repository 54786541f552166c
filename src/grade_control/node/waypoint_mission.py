"""ROS 2 node `waypoint_mission`: flies a scripted mission file with the joint controller.

Parameters: `mission_file` (path to a mission YAML, see grade_control.mission), `robot`
(optional; overrides the file's robot). Reads /<robot>/odom, publishes
geometry_msgs/PoseStamped goals on /<robot>/setpoint/pose at the mission's rate_hz (node clock,
so simulated time with use_sim_time), logging each waypoint reached and the end of the mission.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rclpy.qos import QoSProfile, qos_profile_sensor_data

from grade_common.node import spin as grade_spin
from grade_control.errors import ControlConfigError
from grade_control.geometry import quaternion_to_rpy, rpy_to_quaternion
from grade_control.mission import Mission, MissionPhase, load_mission


class WaypointMissionNode(Node):
    """Publishes the current waypoint of a mission as a pose setpoint."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("waypoint_mission", **kwargs)
        self.declare_parameter(
            "mission_file", "", ParameterDescriptor(description="mission YAML file", read_only=True)
        )
        self.declare_parameter(
            "robot",
            "",
            ParameterDescriptor(
                description="robot namespace; empty: the mission file's robot", read_only=True
            ),
        )
        path = str(self.get_parameter("mission_file").value)
        if not path:
            raise ControlConfigError(
                "mission_file = '' is invalid: give a mission YAML file "
                "(-p mission_file:=config/mission_uav.yaml)"
            )
        config = load_mission(Path(path))
        robot = str(self.get_parameter("robot").value)
        if robot:
            config = replace(config, robot=robot)
        self.config = config
        self.mission = Mission(config)
        self._pose: tuple[np.ndarray, float] | None = None
        self._last_index = -1
        self._done_logged = False
        self.create_subscription(
            Odometry, f"/{config.robot}/odom", self._on_odom, qos_profile_sensor_data
        )
        self._publisher = self.create_publisher(
            PoseStamped, f"/{config.robot}/setpoint/pose", QoSProfile(depth=10)
        )
        self.create_timer(1.0 / config.rate_hz, self._on_timer)
        self.get_logger().info(
            f"mission {path}: {len(config.waypoints)} waypoints for "
            f"{config.robot}, yaw policy {config.yaw_policy.value}"
        )

    def _on_odom(self, msg: Odometry) -> None:
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        try:
            yaw = float(quaternion_to_rpy(np.array([q.x, q.y, q.z, q.w]))[2])
        except ValueError as err:
            self.get_logger().warning(f"odometry ignored: {err}", throttle_duration_sec=2.0)
            return
        self._pose = (np.array([p.x, p.y, p.z]), yaw)

    def _on_timer(self) -> None:
        if self._pose is None:
            return  # the first leg starts where the robot is: wait for odometry
        now = self.get_clock().now()
        target = self.mission.update(now.nanoseconds * 1e-9, *self._pose)
        if target.index != self._last_index:
            self.get_logger().info(f"waypoint {target.index}: {target.position_m.tolist()}")
            self._last_index = target.index
        if target.phase is MissionPhase.DONE and not self._done_logged:
            self.get_logger().info("mission complete: holding the last waypoint")
            self._done_logged = True
        msg = PoseStamped()
        msg.header.stamp = now.to_msg()
        msg.header.frame_id = self.config.frame_id
        x, y, z = (float(v) for v in target.position_m)
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = x, y, z
        q = rpy_to_quaternion(0.0, 0.0, target.yaw_rad)
        (
            msg.pose.orientation.x,
            msg.pose.orientation.y,
            msg.pose.orientation.z,
            msg.pose.orientation.w,
        ) = (float(v) for v in q)
        if self.context.ok():
            self._publisher.publish(msg)


main = grade_spin.node_main(
    "waypoint_mission",
    WaypointMissionNode,
    config_errors=(ControlConfigError,),
    config_error_what="invalid mission",
)


if __name__ == "__main__":
    sys.exit(main())
