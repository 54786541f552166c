"""Streams of one robot's body: IMU, odometry and joint states, under the robot's namespace."""

from __future__ import annotations

from grade_sim.config.scenario import RatesConfig
from grade_sim.sensors import messages as msgs
from grade_sim.sensors.messages import QosProfile, TopicSpec
from grade_sim.sensors.schedule import RateSchedule
from grade_sim.sensors.streams.base import MessageStream, StepState


class ImuStream(MessageStream):
    """/<robot>/imu: angular velocity and specific force in imu_link."""

    def __init__(self, robot: str, rates: RatesConfig) -> None:
        super().__init__(
            TopicSpec(f"/{robot}/imu", "sensor_msgs/msg/Imu", QosProfile.SENSOR),
            RateSchedule(rates.imu_hz, rates.physics_hz),
        )
        self.robot = robot

    def encode(self, state: StepState) -> bytes:
        st = state.robot_states[self.robot]
        return msgs.imu(
            state.stamp_ns,
            f"{self.robot}/imu_link",
            st.imu_angular_velocity,
            st.imu_specific_force,
        )


class OdometryStream(MessageStream):
    """/<robot>/odom: the true base pose in odom and its twist in base_link."""

    def __init__(self, robot: str, rates: RatesConfig) -> None:
        super().__init__(
            TopicSpec(f"/{robot}/odom", "nav_msgs/msg/Odometry", QosProfile.SENSOR),
            RateSchedule(rates.odom_hz, rates.physics_hz),
        )
        self.robot = robot

    def encode(self, state: StepState) -> bytes:
        st = state.robot_states[self.robot]
        return msgs.odometry(
            state.stamp_ns,
            f"{self.robot}/odom",
            f"{self.robot}/base_link",
            st.position_world_base,
            st.quat_world_base,
            st.linear_velocity_base,
            st.angular_velocity_base,
        )


class JointStatesStream(MessageStream):
    """/<robot>/joint_states: positions and velocities in the model's joint order."""

    def __init__(self, robot: str, joint_names: tuple[str, ...], rates: RatesConfig) -> None:
        super().__init__(
            TopicSpec(f"/{robot}/joint_states", "sensor_msgs/msg/JointState", QosProfile.SENSOR),
            RateSchedule(rates.joint_states_hz, rates.physics_hz),
        )
        self.robot = robot
        self.joint_names = joint_names

    def encode(self, state: StepState) -> bytes:
        st = state.robot_states[self.robot]
        return msgs.joint_state(
            state.stamp_ns, list(self.joint_names), st.joint_positions, st.joint_velocities
        )
