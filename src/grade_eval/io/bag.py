"""Trajectories from rosbag2 bags: PoseStamped, Odometry, TransformStamped or TF topics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from grade_common import ros_distro
from grade_common.bagfile.integrity import corruption_description
from grade_eval.core.trajectory import PoseTrajectory
from grade_eval.errors import FormatError

POSE_TYPES = (
    "geometry_msgs/msg/PoseStamped",
    "geometry_msgs/msg/PoseWithCovarianceStamped",
    "nav_msgs/msg/Odometry",
    "geometry_msgs/msg/TransformStamped",
)
TF_TYPE = "tf2_msgs/msg/TFMessage"


def _stamp_s(header: Any) -> float:
    return float(header.stamp.sec) + 1e-9 * float(header.stamp.nanosec)


def _pose_row(msg: Any, msgtype: str) -> list[float]:
    if msgtype == "geometry_msgs/msg/TransformStamped":
        t, q = msg.transform.translation, msg.transform.rotation
    else:
        pose = msg.pose.pose if msgtype != "geometry_msgs/msg/PoseStamped" else msg.pose
        t, q = pose.position, pose.orientation
    return [_stamp_s(msg.header), t.x, t.y, t.z, q.w, q.x, q.y, q.z]


def read_bag_trajectory(
    bag_path: str | Path,
    topic: str,
    child_frame: str | None = None,
    parent_frame: str | None = None,
) -> PoseTrajectory:
    """Read one trajectory from a rosbag2 directory (stamps from the headers, else the bag).

    Args:
        topic: a PoseStamped/PoseWithCovarianceStamped/Odometry/TransformStamped topic, or a
            TF topic (/tf), in which case child_frame (and optionally parent_frame) select
            the transform; TF gives the direct parent -> child transform, not a chain.

    Raises:
        FormatError: unreadable bag, unknown topic (lists the usable ones), wrong type, no data.
    """
    # Imported here so the rest of grade_eval works without rosbags.
    from rosbags.highlevel import AnyReader

    path = Path(bag_path)
    rows: list[list[float]] = []
    bag_stamps_s: list[float] = []
    try:
        with AnyReader([path], default_typestore=ros_distro.typestore()) as reader:
            conns = [c for c in reader.connections if c.topic == topic]
            if not conns:
                usable = sorted(
                    {c.topic for c in reader.connections if c.msgtype in (*POSE_TYPES, TF_TYPE)}
                )
                raise FormatError(
                    f"{path}: no topic {topic!r}; pose/odometry/TF topics in the bag: {usable}"
                )
            msgtype = conns[0].msgtype
            if msgtype not in (*POSE_TYPES, TF_TYPE):
                raise FormatError(
                    f"{path}: topic {topic} has type {msgtype}; supported: {[*POSE_TYPES, TF_TYPE]}"
                )
            if msgtype == TF_TYPE and not child_frame:
                raise FormatError(f"{path}: topic {topic} is TF; give the child frame to read")
            for conn, bag_ns, raw in reader.messages(connections=conns):
                msg: Any = reader.deserialize(raw, conn.msgtype)
                if msgtype != TF_TYPE:
                    rows.append(_pose_row(msg, msgtype))
                    bag_stamps_s.append(bag_ns * 1e-9)
                    continue
                for tf in msg.transforms:
                    if tf.child_frame_id.lstrip("/") != (child_frame or "").lstrip("/"):
                        continue
                    if parent_frame and tf.header.frame_id.lstrip("/") != parent_frame.lstrip("/"):
                        continue
                    rows.append(_pose_row(tf, "geometry_msgs/msg/TransformStamped"))
                    bag_stamps_s.append(bag_ns * 1e-9)
    except FormatError:
        raise
    except Exception as err:  # rosbags raises several unrelated types for a broken bag
        # A CRC failure or a killed recording: name the chunk's topics and times, and the fix.
        found = corruption_description(path) if path.exists() else None
        raise FormatError(found or f"{path}: cannot read bag: {err}") from err
    if not rows:
        what = f"transform to {child_frame!r}" if msgtype == TF_TYPE else "message"
        raise FormatError(f"{path}: topic {topic} has no {what}")
    data = np.asarray(rows, dtype=np.float64)
    if not data[:, 0].any():
        # Publishers that leave header stamps unset: the recording time is the only clock.
        data[:, 0] = bag_stamps_s
    data = data[np.argsort(data[:, 0], kind="stable")]
    # Repeated stamps (e.g. TF republished) keep their first pose.
    keep = np.concatenate([[True], np.diff(data[:, 0]) > 0])
    data = data[keep]
    return PoseTrajectory(data[:, 0], data[:, 1:4], data[:, 4:8], f"{path.name}:{topic}")
