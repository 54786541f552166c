"""ROS 2 node `joint_controller`: setpoints + odometry/joint states -> /<robot>/joint_commands.

Parameters (all validated through `ControllerConfig`; a bad one stops the node at start-up with
its name, and is refused at run time with the reason): see config/controller_uav.yaml.

Topics (robot = the `robot` parameter):
- in: /<robot>/odom (nav_msgs/Odometry) or /<robot>/joint_states (sensor_msgs/JointState)
- in: /<robot>/setpoint/pose (geometry_msgs/PoseStamped), /<robot>/setpoint/twist
  (geometry_msgs/TwistStamped, body or world frame by frame_id), /<robot>/cmd_vel
  (geometry_msgs/Twist, frame = `velocity_frame`), /<robot>/setpoint/trajectory
  (trajectory_msgs/MultiDOFJointTrajectory), /<robot>/setpoint/path (nav_msgs/Path),
  /<robot>/setpoint/joints (sensor_msgs/JointState: positions, or velocities only, for named
  joints such as camera_yaw)
- out: /<robot>/joint_commands (sensor_msgs/JointState, names + velocities) at `rate_hz`,
  stamped with the node clock (simulated time with use_sim_time).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np
from geometry_msgs.msg import PoseStamped, Twist, TwistStamped
from nav_msgs.msg import Odometry, Path
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from trajectory_msgs.msg import MultiDOFJointTrajectory

from grade_common.node import spin as grade_spin
from grade_control.config import AXIS_FIELDS, ControllerConfig, StateSource, default_axis
from grade_control.controller import (
    JointController,
    MeasurementError,
    measured_from_joint_states,
    measured_from_pose,
)
from grade_control.errors import ControlConfigError, SetpointError

READ_ONLY = ("robot", "joints", "rate_hz", "state_source", "lockstep")


def _stamp_s(stamp: Any) -> float:
    return float(stamp.sec) + float(stamp.nanosec) * 1e-9


class JointControllerNode(Node):
    """Thin ROS 2 wrapper around `JointController`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("joint_controller", **kwargs)
        self.config = self._declare_and_read()
        self.controller = JointController(self.config)
        self._measured: np.ndarray | None = None
        self._measured_at_s = 0.0
        self._warned_no_state = False
        self._pending: list[tuple[str, Callable[[float], None]]] = []
        self._next_update_s: float | None = None
        self._velocities = [0.0] * len(self.config.axes)
        robot = self.config.robot
        if self.config.state_source is StateSource.ODOMETRY:
            self.create_subscription(
                Odometry, f"/{robot}/odom", self._on_odom, qos_profile_sensor_data
            )
        else:
            self.create_subscription(
                JointState, f"/{robot}/joint_states", self._on_joint_states, qos_profile_sensor_data
            )
        reliable = QoSProfile(depth=10)
        self.create_subscription(PoseStamped, f"/{robot}/setpoint/pose", self._on_pose, reliable)
        self.create_subscription(
            TwistStamped, f"/{robot}/setpoint/twist", self._on_twist_stamped, reliable
        )
        self.create_subscription(Twist, f"/{robot}/cmd_vel", self._on_twist, reliable)
        self.create_subscription(
            MultiDOFJointTrajectory, f"/{robot}/setpoint/trajectory", self._on_trajectory, reliable
        )
        self.create_subscription(Path, f"/{robot}/setpoint/path", self._on_path, reliable)
        self.create_subscription(JointState, f"/{robot}/setpoint/joints", self._on_joints, reliable)
        self._publisher = self.create_publisher(JointState, f"/{robot}/joint_commands", reliable)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        if not self.config.lockstep:
            self.create_timer(self.config.period_s, self._on_timer)
        self.get_logger().info(
            f"controlling {list(self.config.joint_names)} of {robot} at {self.config.rate_hz} Hz "
            f"(state from {self.config.state_source.value})"
        )

    # ---- parameters ---------------------------------------------------------------------

    def _declare(self, name: str, value: object, description: str) -> None:
        descriptor = ParameterDescriptor(
            description=description, dynamic_typing=True, read_only=name in READ_ONLY
        )
        self.declare_parameter(name, value, descriptor)

    def _declare_and_read(self) -> ControllerConfig:
        defaults = ControllerConfig().to_parameters()
        self._declare("robot", defaults["robot"], "robot namespace (topics /<robot>/...)")
        self._declare("joints", defaults["joints"], "controlled joints, in command order")
        joints = self.get_parameter("joints").value
        if not isinstance(joints, list) or not joints:
            raise ControlConfigError(
                f"joints = {joints!r} is invalid: must be a non-empty list of joint names"
            )
        for name, value in defaults.items():
            if name not in ("robot", "joints") and not name.startswith("axes."):
                self._declare(name, value, f"see ControllerConfig.{name}")
        for joint in joints:
            axis = default_axis(str(joint))
            for field in AXIS_FIELDS:
                self._declare(
                    f"axes.{joint}.{field}",
                    getattr(axis, field),
                    f"AxisConfig.{field} of joint {joint}",
                )
        declared = set(self._parameters)
        unknown = sorted(name for name in self._parameter_overrides if name not in declared)
        if unknown:
            raise ControlConfigError(
                f"parameter(s) {unknown} are unknown (joints = {joints}); known: "
                f"{sorted(n for n in declared if not n.startswith('axes.'))} and "
                f"axes.<joint>.{{{','.join(AXIS_FIELDS)}}}"
            )
        return ControllerConfig.from_parameters(self._current_parameters())

    def _current_parameters(self) -> dict[str, object]:
        return {
            name: param.value
            for name, param in self._parameters.items()
            if name not in ("use_sim_time", "start_type_description_service")
        }

    def _on_set_parameters(self, params: list[Parameter[Any]]) -> SetParametersResult:
        values = self._current_parameters()
        for param in params:
            if param.name in ("use_sim_time", "start_type_description_service"):
                continue
            values[param.name] = param.value
        try:
            config = ControllerConfig.from_parameters(values)
        except ControlConfigError as err:
            self.get_logger().warning(f"parameter change refused: {err}")
            return SetParametersResult(successful=False, reason=str(err))
        self.config = config
        self.controller.reconfigure(config)
        return SetParametersResult(successful=True)

    # ---- inputs -------------------------------------------------------------------------

    def _now_s(self) -> float:
        return float(self.get_clock().now().nanoseconds * 1e-9)

    def _on_odom(self, msg: Odometry) -> None:
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        self._set_measured(
            lambda: measured_from_pose(self.config, (p.x, p.y, p.z), (q.x, q.y, q.z, q.w)),
            msg.header.stamp,
        )

    def _on_joint_states(self, msg: JointState) -> None:
        self._set_measured(
            lambda: measured_from_joint_states(self.config, list(msg.name), list(msg.position)),
            msg.header.stamp,
        )

    def _set_measured(self, read: Callable[[], np.ndarray], stamp: Any) -> None:
        try:
            self._measured = read()
            self._measured_at_s = self._now_s()
        except MeasurementError as err:
            self._measured = None
            self.get_logger().warning(f"state ignored: {err}", throttle_duration_sec=2.0)
            return
        self.controller.tracker.observe(self._measured)
        if self.config.lockstep:
            self._answer_state(stamp)

    def _answer_state(self, stamp: Any) -> None:
        """Lockstep: one command per state, stamped with it; the controller updates at the first
        state at or after each control period, so the run depends on stamps only."""
        assert self._measured is not None
        now_s = _stamp_s(stamp)
        pending, self._pending = self._pending, []
        for what, action in pending:
            self._run_action(what, action, now_s)
        if (
            self._next_update_s is None
            or now_s >= self._next_update_s - 1e-9
            or now_s < self._next_update_s - 2 * self.config.period_s
        ):
            command = self.controller.update(now_s, self._measured)
            for note in command.notes:
                self.get_logger().warning(note)
            self._velocities = [float(v) for v in command.velocities]
            period = self.config.period_s
            if self._next_update_s is None or now_s - self._next_update_s > period:
                self._next_update_s = now_s  # first state, or after a gap / time reset
            while self._next_update_s <= now_s + 1e-9:
                self._next_update_s += period
        msg = JointState()
        msg.header.stamp = stamp
        msg.header.frame_id = self.config.body_frame
        msg.name = list(self.config.joint_names)
        msg.velocity = list(self._velocities)
        if self.context.ok():
            self._publisher.publish(msg)

    def _apply(self, what: str, action: Callable[[float], None]) -> None:
        if self.config.lockstep:
            # applied at the next state's stamp, so a run depends on stamps, not on wall time
            self._pending.append((what, action))
            return
        self._run_action(what, action, self._now_s())

    def _run_action(self, what: str, action: Callable[[float], None], now_s: float) -> None:
        try:
            action(now_s)
        except SetpointError as err:
            self.get_logger().warning(f"{what} rejected, holding position: {err}")

    def _apply_stamped(
        self,
        what: str,
        setter: Callable[[tuple[float, ...], tuple[float, ...], str, float, float], None],
        first: tuple[float, ...],
        second: tuple[float, ...],
        header: Header,
    ) -> None:
        """A stamped pose or twist: `setter(first, second, frame, stamp_s, now_s)`."""
        self._apply(
            what,
            lambda now_s: setter(first, second, header.frame_id, _stamp_s(header.stamp), now_s),
        )

    def _on_pose(self, msg: PoseStamped) -> None:
        p, q = msg.pose.position, msg.pose.orientation
        tracker = self.controller.tracker
        self._apply_stamped(
            "pose setpoint", tracker.set_pose, (p.x, p.y, p.z), (q.x, q.y, q.z, q.w), msg.header
        )

    def _on_twist_stamped(self, msg: TwistStamped) -> None:
        lin, ang = msg.twist.linear, msg.twist.angular
        tracker = self.controller.tracker
        self._apply_stamped(
            "twist setpoint",
            tracker.set_twist,
            (lin.x, lin.y, lin.z),
            (ang.x, ang.y, ang.z),
            msg.header,
        )

    def _on_twist(self, msg: Twist) -> None:
        lin, ang = msg.linear, msg.angular
        self._apply(
            "cmd_vel setpoint",
            lambda now_s: self.controller.tracker.set_twist(
                (lin.x, lin.y, lin.z), (ang.x, ang.y, ang.z), None, 0.0, now_s
            ),
        )

    def _on_trajectory(self, msg: MultiDOFJointTrajectory) -> None:
        def action(now_s: float) -> None:
            start_s = _stamp_s(msg.header.stamp) or now_s
            if any(len(pt.transforms) != 1 for pt in msg.points):
                raise SetpointError("every trajectory point needs exactly one transform")
            times = [start_s + _stamp_s(pt.time_from_start) for pt in msg.points]
            pos = np.array(
                [
                    [t.translation.x, t.translation.y, t.translation.z]
                    for pt in msg.points
                    for t in pt.transforms[:1]
                ]
            ).reshape(-1, 3)
            quat = np.array(
                [
                    [t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w]
                    for pt in msg.points
                    for t in pt.transforms[:1]
                ]
            ).reshape(-1, 4)
            has_vel = all(len(pt.velocities) >= 1 for pt in msg.points) and msg.points
            lin = (
                np.array(
                    [
                        [
                            pt.velocities[0].linear.x,
                            pt.velocities[0].linear.y,
                            pt.velocities[0].linear.z,
                        ]
                        for pt in msg.points
                    ]
                )
                if has_vel
                else None
            )
            yaw = np.array([pt.velocities[0].angular.z for pt in msg.points]) if has_vel else None
            self.controller.tracker.set_trajectory(
                times, pos, quat, lin, yaw, msg.header.frame_id, now_s, list(msg.joint_names)
            )

        self._apply("trajectory setpoint", action)

    def _on_path(self, msg: Path) -> None:
        def action(now_s: float) -> None:
            for k, pose in enumerate(msg.poses):
                if pose.header.frame_id not in ("", msg.header.frame_id):
                    raise SetpointError(
                        f"path pose {k} is in frame {pose.header.frame_id!r}, "
                        f"the path in {msg.header.frame_id!r}"
                    )
            pos = np.array(
                [[s.pose.position.x, s.pose.position.y, s.pose.position.z] for s in msg.poses]
            ).reshape(-1, 3)
            quat = np.array(
                [
                    [
                        s.pose.orientation.x,
                        s.pose.orientation.y,
                        s.pose.orientation.z,
                        s.pose.orientation.w,
                    ]
                    for s in msg.poses
                ]
            ).reshape(-1, 4)
            self.controller.tracker.set_path(pos, quat, msg.header.frame_id, now_s)

        self._apply("path setpoint", action)

    def _on_joints(self, msg: JointState) -> None:
        names = list(msg.name)
        stamp = _stamp_s(msg.header.stamp)
        tracker = self.controller.tracker

        def action(now: float) -> None:
            if msg.position:
                if len(msg.position) != len(names):
                    raise SetpointError(f"{len(names)} names but {len(msg.position)} positions")
                tracker.set_joint_positions(dict(zip(names, msg.position, strict=True)), stamp, now)
            elif msg.velocity:
                if len(msg.velocity) != len(names):
                    raise SetpointError(f"{len(names)} names but {len(msg.velocity)} velocities")
                tracker.set_joint_velocities(
                    dict(zip(names, msg.velocity, strict=True)), stamp, now
                )
            else:
                raise SetpointError("joint setpoint has neither positions nor velocities")

        self._apply("joint setpoint", action)

    # ---- output -------------------------------------------------------------------------

    def _on_timer(self) -> None:
        now = self.get_clock().now()
        msg = JointState()
        msg.header.stamp = now.to_msg()
        msg.header.frame_id = self.config.body_frame
        msg.name = list(self.config.joint_names)
        now_s = now.nanoseconds * 1e-9
        if self._measured is None:
            if not self._warned_no_state:
                self.get_logger().info("no state received yet: commanding zero velocity")
                self._warned_no_state = True
            msg.velocity = [0.0] * len(msg.name)
        elif now_s - self._measured_at_s > self.config.setpoint_timeout_s:
            # never act on an old measurement: stand still until the state comes back
            self.get_logger().warning(
                f"state is {now_s - self._measured_at_s:.2f} s old (> setpoint_timeout_s): "
                "commanding zero velocity",
                throttle_duration_sec=2.0,
            )
            self.controller.pid.reset()
            msg.velocity = [0.0] * len(msg.name)
        else:
            command = self.controller.update(now_s, self._measured)
            for note in command.notes:
                self.get_logger().warning(note)
            msg.velocity = [float(v) for v in command.velocities]
        if self.context.ok():
            self._publisher.publish(msg)


main = grade_spin.node_main(
    "joint_controller", JointControllerNode, config_errors=(ControlConfigError,)
)


if __name__ == "__main__":
    sys.exit(main())
