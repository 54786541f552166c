"""A robot's IMU samples and the camera's mount in the IMU frame, from a run's rosbag2 bag.

For the RGB-D-inertial backend offline (`grade slam track`): the camera folder carries the
images, the bag (record.bag in the scenario) the /<robot>/imu messages and /tf_static, the
same messages slam_node gets live.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from grade_common import ros_distro
from grade_common.rotations import quat_to_matrix
from grade_common.rundir import BAG_DIR
from grade_common.types import FloatArray
from grade_slam.errors import SlamInputError
from grade_slam.frames import ImuBuffer
from grade_slam.rep105 import FrameChain

IMU_TYPE = "sensor_msgs/msg/Imu"
TF_STATIC = "/tf_static"


def _transform(t: Any) -> FloatArray:
    m = np.eye(4)
    q, p = t.transform.rotation, t.transform.translation
    m[:3, :3] = quat_to_matrix(np.array([q.w, q.x, q.y, q.z]))
    m[:3, 3] = (p.x, p.y, p.z)
    return m


def read_bag_imu(
    run_dir: str | Path, imu_topic: str, imu_frame: str, optical_frame: str
) -> tuple[ImuBuffer, FloatArray]:
    """Every sample of `imu_topic` (in an ImuBuffer, to take frame by frame) and the pose of
    `optical_frame` in `imu_frame` from /tf_static.

    Raises:
        SlamInputError: no bag, no such IMU topic (lists the IMU topics), or no transform chain
            between the two frames on /tf_static.
    """
    from rosbags.highlevel import AnyReader

    bag = Path(run_dir) / BAG_DIR
    if not bag.is_dir():
        raise SlamInputError(
            f"{bag} is missing: the inertial backend reads the IMU from the run's bag "
            "(set record.bag: true in the scenario)"
        )
    samples = ImuBuffer(limit=10**9)
    chain = FrameChain()
    with AnyReader([bag], default_typestore=ros_distro.typestore()) as reader:
        imu = [c for c in reader.connections if c.topic == imu_topic]
        if not imu:
            found = sorted({c.topic for c in reader.connections if c.msgtype == IMU_TYPE})
            raise SlamInputError(f"{bag}: no topic {imu_topic!r}; IMU topics in the bag: {found}")
        tf = [c for c in reader.connections if c.topic == TF_STATIC]
        for conn, _, raw in reader.messages(connections=imu + tf):
            msg: Any = reader.deserialize(raw, conn.msgtype)
            if conn.topic == TF_STATIC:
                for t in msg.transforms:
                    chain.add(t.header.frame_id, t.child_frame_id, _transform(t))
                continue
            w, a = msg.angular_velocity, msg.linear_acceleration
            stamp_ns = int(msg.header.stamp.sec) * 10**9 + int(msg.header.stamp.nanosec)
            samples.add(stamp_ns, (w.x, w.y, w.z), (a.x, a.y, a.z))
    return samples, chain.relative(imu_frame, optical_frame)
