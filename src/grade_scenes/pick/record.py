"""The arm's ROS 2 record of a scene run: a rosbag2 (MCAP) directory in simulated time.

Topics, with franka_ros's joint names:
- `/clock` (rosgraph_msgs/Clock) and `/joint_states` (sensor_msgs/JointState: the 7 arm joints
  and the 2 finger joints, positions and velocities) at `rate_hz` of simulated time;
- `/arm/joint_trajectory` (trajectory_msgs/JointTrajectory): every path the protocol sends to
  the arm's joint-position loop, as waypoints with their times from start;
- `/gripper/command` (std_msgs/Float64): the commanded opening between the pads, metres.

Written with grade_common.bagfile's MCAP writer and the simulator's message encoders
(`grade_sim.sensors.messages`), so the bytes are those a live node would publish.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from grade_common.bagfile.rosbag2 import Rosbag2Writer, topic_of
from grade_common.types import FloatArray
from grade_sim.sensors.messages import clock, header, joint_state, serialize, typestore

ARM_JOINT_NAMES = tuple(f"panda_joint{i}" for i in range(1, 8))
FINGER_JOINT_NAMES = ("panda_finger_joint1", "panda_finger_joint2")
TOPICS = {
    "/clock": "rosgraph_msgs/msg/Clock",
    "/joint_states": "sensor_msgs/msg/JointState",
    "/arm/joint_trajectory": "trajectory_msgs/msg/JointTrajectory",
    "/gripper/command": "std_msgs/msg/Float64",
}


class BagRecorder:
    """Writes the arm's topics of one scene run into a new rosbag2 directory."""

    def __init__(self, path: Path, rate_hz: float = 50.0) -> None:
        self._writer = Rosbag2Writer(path)
        store = typestore()
        self._channels = {
            name: self._writer.add_topic(topic_of(name, msgtype, typestore=store))
            for name, msgtype in TOPICS.items()
        }
        self.period_ns = round(1e9 / rate_hz)
        self._next_ns = 0

    def due(self, stamp_ns: int) -> bool:
        """Whether a joint-state sample is due at this simulated time."""
        return stamp_ns >= self._next_ns

    def joint_states(self, stamp_ns: int, positions: FloatArray, velocities: FloatArray) -> None:
        self._writer.write(self._channels["/clock"], stamp_ns, clock(stamp_ns))
        names = [*ARM_JOINT_NAMES, *FINGER_JOINT_NAMES]
        data = joint_state(stamp_ns, names, positions, velocities)
        self._writer.write(self._channels["/joint_states"], stamp_ns, data)
        self._next_ns = stamp_ns - stamp_ns % self.period_ns + self.period_ns

    def trajectory(self, stamp_ns: int, positions: FloatArray, times_s: FloatArray) -> None:
        """One JointTrajectory: (n, 7) waypoints reached at times_s after stamp_ns."""
        t = typestore().types
        points = [
            t["trajectory_msgs/msg/JointTrajectoryPoint"](
                positions=np.asarray(q, dtype=np.float64),
                velocities=np.zeros(0),
                accelerations=np.zeros(0),
                effort=np.zeros(0),
                time_from_start=t["builtin_interfaces/msg/Duration"](
                    sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000
                ),
            )
            for q, ns in zip(positions, (round(float(s) * 1e9) for s in times_s), strict=True)
        ]
        msg = t["trajectory_msgs/msg/JointTrajectory"](
            header=header(stamp_ns, "panda_link0"), joint_names=list(ARM_JOINT_NAMES), points=points
        )
        self._writer.write(self._channels["/arm/joint_trajectory"], stamp_ns, serialize(msg))

    def gripper(self, stamp_ns: int, opening_m: float) -> None:
        msg = typestore().types["std_msgs/msg/Float64"](data=float(opening_m))
        self._writer.write(self._channels["/gripper/command"], stamp_ns, serialize(msg))

    def close(self) -> None:
        self._writer.close()

    def abort(self) -> None:
        self._writer.abort()
