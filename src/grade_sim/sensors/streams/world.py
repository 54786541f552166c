"""Streams of the whole simulation: /clock, /tf, /tf_static and the experiment-start marker."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from grade_common.rotations import R_LINK_OPTICAL, matrix_to_quat, quat_from_rpy, quat_to_matrix
from grade_sim.config.scenario import FramesConfig, RatesConfig
from grade_sim.scene import RobotSetup
from grade_sim.sensors import messages as msgs
from grade_sim.sensors.messages import QosProfile, TopicSpec, Transform
from grade_sim.sensors.schedule import AtStep, RateSchedule
from grade_sim.sensors.streams.base import MessageStream, StepState

START_TOPIC = "/starting_experiment"
IDENTITY_QUAT = np.array([1.0, 0.0, 0.0, 0.0])


class ClockStream(MessageStream):
    """/clock: simulated time."""

    def __init__(self, rates: RatesConfig) -> None:
        super().__init__(
            TopicSpec("/clock", "rosgraph_msgs/msg/Clock", QosProfile.RELIABLE),
            RateSchedule(rates.clock_hz, rates.physics_hz),
        )

    def encode(self, state: StepState) -> bytes:
        return msgs.clock(state.stamp_ns)


class StartMarkerStream(MessageStream):
    """/starting_experiment, once, at the first step after the bootstrap."""

    def __init__(self, start_step: int) -> None:
        super().__init__(
            TopicSpec(START_TOPIC, "std_msgs/msg/String", QosProfile.LATCHED), AtStep(start_step)
        )

    def encode(self, state: StepState) -> bytes:
        return msgs.string("starting")


class StaticTfStream(MessageStream):
    """/tf_static, once at step 0: odom in world (unless a SLAM stack owns that link), the IMU
    and camera mounts, optical frames."""

    def __init__(self, robots: Sequence[RobotSetup], frames: FramesConfig) -> None:
        super().__init__(
            TopicSpec("/tf_static", "tf2_msgs/msg/TFMessage", QosProfile.LATCHED), AtStep(0)
        )
        self._transforms = [t for r in robots for t in _static_transforms(r, frames)]

    def encode(self, state: StepState) -> bytes:
        return msgs.tf_message(state.stamp_ns, self._transforms)


class TfStream(MessageStream):
    """/tf: each robot's base in its odom frame and, on a gimbal, the camera mount on the base."""

    def __init__(
        self, robots: Sequence[RobotSetup], rates: RatesConfig, frames: FramesConfig
    ) -> None:
        super().__init__(
            TopicSpec("/tf", "tf2_msgs/msg/TFMessage", QosProfile.RELIABLE),
            RateSchedule(rates.tf_hz, rates.physics_hz),
        )
        self._robots = tuple(robots)
        self._frames = frames

    def encode(self, state: StepState) -> bytes:
        return msgs.tf_message(
            state.stamp_ns,
            [t for r in self._robots for t in _dynamic_transforms(r, state, self._frames)],
        )


def _static_transforms(setup: RobotSetup, frames: FramesConfig) -> list[Transform]:
    cfg = setup.model.config
    name = cfg.name
    base = frames.base_frame(name)
    out = []
    if frames.publish_world_odom:
        out.append(Transform(frames.world, frames.odom_frame(name), np.zeros(3), IDENTITY_QUAT))
    out.append(
        Transform(
            base,
            f"{name}/imu_link",
            np.asarray(cfg.imu.mount.xyz),
            quat_from_rpy(*cfg.imu.mount.rpy),
        )
    )
    cam_parent = f"{name}/camera_mount" if setup.model.camera_joint else base
    for cam in cfg.cameras:
        link = f"{name}/{cam.name}_link"
        out.append(
            Transform(cam_parent, link, np.asarray(cam.mount.xyz), quat_from_rpy(*cam.mount.rpy))
        )
        out.append(
            Transform(
                link,
                f"{name}/{cam.name}_optical_frame",
                np.zeros(3),
                matrix_to_quat(R_LINK_OPTICAL),
            )
        )
    for lidar in cfg.lidars:
        out.append(
            Transform(
                f"{name}/{lidar.mount.parent}",
                f"{name}/{lidar.name}_link",
                np.asarray(lidar.mount.xyz),
                quat_from_rpy(*lidar.mount.rpy),
            )
        )
    return out


def _dynamic_transforms(
    setup: RobotSetup, state: StepState, frames: FramesConfig
) -> list[Transform]:
    name = setup.model.name
    st = state.robot_states[name]
    base = frames.base_frame(name)
    # Ground-truth odometry has no drift: the odom frame coincides with the world frame.
    out = [Transform(frames.odom_frame(name), base, st.position_world_base, st.quat_world_base)]
    if setup.model.camera_joint:
        pos_b, q_b = state.backend.link_pose(name, "base_link")
        pos_m, q_m = state.backend.link_pose(name, "camera_mount")
        r_b = quat_to_matrix(q_b)
        out.append(
            Transform(
                base,
                f"{name}/camera_mount",
                r_b.T @ (pos_m - pos_b),
                matrix_to_quat(r_b.T @ quat_to_matrix(q_m)),
            )
        )
    return out
