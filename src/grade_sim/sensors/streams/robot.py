"""Streams of one robot's body: IMU, odometry and joint states, under the robot's namespace."""

from __future__ import annotations

from abc import abstractmethod
from typing import ClassVar

from grade_sim.config.scenario import FramesConfig
from grade_sim.engine.protocol import RobotState
from grade_sim.sensors import messages as msgs
from grade_sim.sensors.messages import QosProfile, TopicSpec
from grade_sim.sensors.schedule import RateSchedule
from grade_sim.sensors.streams.base import MessageStream, StepState


class RobotStateStream(MessageStream):
    """A message on /<robot>/<suffix> encoded from that robot's state alone."""

    suffix: ClassVar[str]
    msgtype: ClassVar[str]

    def __init__(self, robot: str, rate_hz: float, physics_hz: float) -> None:
        super().__init__(
            TopicSpec(f"/{robot}/{self.suffix}", self.msgtype, QosProfile.SENSOR),
            RateSchedule(rate_hz, physics_hz),
        )
        self.robot = robot

    def encode(self, state: StepState) -> bytes:
        return self.encode_robot(state.stamp_ns, state.robot_states[self.robot])

    @abstractmethod
    def encode_robot(self, stamp_ns: int, st: RobotState) -> bytes:
        """The CDR bytes of the message for this robot's state at stamp_ns."""


class ImuStream(RobotStateStream):
    """Angular velocity and specific force in imu_link."""

    suffix = "imu"
    msgtype = "sensor_msgs/msg/Imu"

    def encode_robot(self, stamp_ns: int, st: RobotState) -> bytes:
        return msgs.imu(
            stamp_ns, f"{self.robot}/imu_link", st.imu_angular_velocity, st.imu_specific_force
        )


class FramedRobotStream(RobotStateStream):
    """A robot stream whose messages name TF frames (the scenario's frame names)."""

    def __init__(self, robot: str, rate_hz: float, physics_hz: float, frames: FramesConfig) -> None:
        super().__init__(robot, rate_hz, physics_hz)
        self.frames = frames


class OdometryStream(FramedRobotStream):
    """The true base pose in odom and its twist in base_link."""

    suffix = "odom"
    msgtype = "nav_msgs/msg/Odometry"

    def parent_frame(self) -> str:
        return self.frames.odom_frame(self.robot)

    def encode_robot(self, stamp_ns: int, st: RobotState) -> bytes:
        return msgs.odometry(
            stamp_ns,
            self.parent_frame(),
            self.frames.base_frame(self.robot),
            st.position_world_base,
            st.quat_world_base,
            st.linear_velocity_base,
            st.angular_velocity_base,
        )


class GroundTruthOdometryStream(OdometryStream):
    """/<robot>/ground_truth/odom: the true base pose in the world frame, whatever the TF tree
    (with a SLAM stack owning map -> odom, /<robot>/odom is that stack's input, this the truth)."""

    suffix = "ground_truth/odom"

    def parent_frame(self) -> str:
        return self.frames.world


class GroundTruthPoseStream(FramedRobotStream):
    """/<robot>/ground_truth/pose: the true base pose in the world frame (PoseStamped)."""

    suffix = "ground_truth/pose"
    msgtype = "geometry_msgs/msg/PoseStamped"

    def encode_robot(self, stamp_ns: int, st: RobotState) -> bytes:
        return msgs.pose_stamped(
            stamp_ns, self.frames.world, st.position_world_base, st.quat_world_base
        )


class JointStatesStream(RobotStateStream):
    """Positions and velocities in the model's joint order."""

    suffix = "joint_states"
    msgtype = "sensor_msgs/msg/JointState"

    def __init__(
        self, robot: str, joint_names: tuple[str, ...], rate_hz: float, physics_hz: float
    ) -> None:
        super().__init__(robot, rate_hz, physics_hz)
        self.joint_names = joint_names

    def encode_robot(self, stamp_ns: int, st: RobotState) -> bytes:
        return msgs.joint_state(
            stamp_ns, list(self.joint_names), st.joint_positions, st.joint_velocities
        )
