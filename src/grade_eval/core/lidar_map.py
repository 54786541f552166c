"""Ground-truth map from LiDAR scans: every point into `world` with the true sensor pose at its
own firing time, voxelised, dynamic actors dropped.

A rolling-shutter scan's points are in the sensor frame at each point's firing time; putting
them all through the pose at the scan stamp smears the map by the robot's motion during the
sweep (10 cm at 1 m/s and 10 Hz). So each point goes through the sensor pose at its time: the
robot's true base trajectory interpolated there (linear position, slerp rotation), times the
sensor's mount on the base, which is fixed and read off the scans' own poses (sensor in world at
each stamp against the base at that stamp). Without per-point times (or a base trajectory),
every point of a scan uses the pose at the scan stamp.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation, Slerp

from grade_common.types import FloatArray
from grade_eval.core.gtmap import GtMapConfig
from grade_eval.core.pointmap import PointMap, VoxelAccumulator
from grade_eval.errors import MapError


@dataclass(frozen=True)
class LidarFrame:
    """One scan: points (n, 3) in the sensor frame, the sensor pose (4x4) in world at the stamp,
    optionally each point's firing time after the stamp (s) and instance id."""

    stamp_s: float
    points_xyz: FloatArray
    pose_world_sensor: FloatArray
    time_offset_s: FloatArray | None = None
    instance_ids: NDArray[np.integer] | None = None


class BaseTrajectory:
    """The robot base's true poses, interpolated at any time inside their span."""

    def __init__(self, stamps_s: FloatArray, positions: FloatArray, quats_xyzw: FloatArray) -> None:
        if len(stamps_s) < 2:
            raise MapError("the base trajectory needs at least two poses to interpolate")
        self.stamps_s = np.asarray(stamps_s, dtype=np.float64)
        self.positions = np.asarray(positions, dtype=np.float64)
        self._slerp = Slerp(self.stamps_s, Rotation.from_quat(quats_xyzw))

    def at(self, times_s: FloatArray) -> FloatArray:
        """(n, 4, 4) poses; times outside the span are clamped to its ends."""
        t = np.clip(times_s, self.stamps_s[0], self.stamps_s[-1])
        out = np.tile(np.eye(4), (len(t), 1, 1))
        out[:, :3, :3] = self._slerp(t).as_matrix()
        for k in range(3):
            out[:, k, 3] = np.interp(t, self.stamps_s, self.positions[:, k])
        return out

    def covers(self, t_s: float) -> bool:
        return bool(self.stamps_s[0] <= t_s <= self.stamps_s[-1])


def mount_from_scans(frames: Iterable[LidarFrame], base: BaseTrajectory) -> FloatArray:
    """The sensor's pose on the base (4x4): base^-1 * sensor at the first stamp the base covers.

    Raises:
        MapError: no scan stamp lies within the base trajectory.
    """
    for frame in frames:
        if base.covers(frame.stamp_s):
            t_wb = base.at(np.array([frame.stamp_s]))[0]
            out: FloatArray = np.linalg.inv(t_wb) @ frame.pose_world_sensor
            return out
    raise MapError("no scan stamp lies within the base trajectory: cannot find the mount")


def scan_points_world(
    frame: LidarFrame,
    config: GtMapConfig,
    base: BaseTrajectory | None = None,
    mount: FloatArray | None = None,
) -> FloatArray:
    """World points of the scan's valid, static returns (see the module doc for the poses)."""
    pts = np.asarray(frame.points_xyz, dtype=np.float64).reshape(-1, 3)
    rng = np.linalg.norm(pts, axis=1)
    valid = np.isfinite(rng) & (rng > config.min_range_m) & (rng < config.max_range_m)
    if config.dynamic_ids:
        if frame.instance_ids is None:
            raise MapError(
                f"scan {frame.stamp_s:.6f}: removing dynamic actors needs its labels, "
                "but none were given"
            )
        ids = np.fromiter(config.dynamic_ids, dtype=np.int64)
        valid &= ~np.isin(np.asarray(frame.instance_ids), ids)
    pts = pts[valid]
    if frame.time_offset_s is None or base is None or mount is None:
        pose = frame.pose_world_sensor
        out: FloatArray = pts @ pose[:3, :3].T + pose[:3, 3]
        return out
    t = frame.stamp_s + np.asarray(frame.time_offset_s, dtype=np.float64)[valid]
    # One pose per distinct firing time (a rotating lidar fires a column of beams together).
    times, inverse = np.unique(t, return_inverse=True)
    poses = base.at(times) @ mount
    r, p = poses[inverse, :3, :3], poses[inverse, :3, 3]
    out = np.einsum("nij,nj->ni", r, pts) + p
    return out


def build_lidar_map(
    frames: Iterable[LidarFrame],
    config: GtMapConfig | None = None,
    name: str = "lidar_gt_map",
    base: BaseTrajectory | None = None,
    mount: FloatArray | None = None,
) -> PointMap:
    """Voxel map (centre round(p / v) * v) of every scan's valid static returns.

    Raises:
        MapError: when no scan contributes a point.
    """
    cfg = config or GtMapConfig()
    acc = VoxelAccumulator(cfg.voxel_size_m)
    for frame in frames:
        acc.add(scan_points_world(frame, cfg, base, mount))
    result = acc.result(False, name)
    if result.size == 0:
        raise MapError(f"{name}: no valid return in any scan; the ground-truth map is empty")
    return result
