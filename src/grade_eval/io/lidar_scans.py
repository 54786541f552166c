"""A lidar's ground-truth folder of a run (gt/<robot>/<lidar>/, layout: grade_common.kitti) as
LidarFrames, and the robot's base trajectory for the per-point poses."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grade_common import kitti
from grade_common.rundir import RunLayout
from grade_eval.core.lidar_map import BaseTrajectory, LidarFrame
from grade_eval.errors import FormatError
from grade_eval.io.tum import read_tum


@dataclass(frozen=True)
class LidarFolder:
    """The scans of one lidar: stamps (s) and poses (n, 4, 4) from times.txt and poses.txt."""

    folder: Path
    stamps_s: np.ndarray
    poses: np.ndarray

    @classmethod
    def open(cls, run_dir: str | Path, robot: str, lidar: str) -> LidarFolder:
        """Raises FormatError naming the missing or inconsistent file."""
        folder = RunLayout(Path(run_dir)).gt / robot / lidar
        times, poses = folder / kitti.TIMES_TXT, folder / kitti.POSES_TXT
        for f in (times, poses):
            if not f.is_file():
                raise FormatError(f"{f}: missing; is {robot}/{lidar} a lidar of this run?")
        stamps = np.loadtxt(times, ndmin=1)
        pose_mats = kitti.read_poses(poses)
        if len(stamps) != len(pose_mats):
            raise FormatError(
                f"{folder}: {len(stamps)} stamps in times.txt but {len(pose_mats)} poses"
            )
        return cls(folder, stamps, pose_mats)

    def __len__(self) -> int:
        return len(self.stamps_s)

    def frames(self, with_labels: bool) -> Iterator[LidarFrame]:
        """The scans in order; per-point times when the folder has them."""
        for i, (stamp, pose) in enumerate(zip(self.stamps_s, self.poses, strict=True)):
            name = kitti.scan_name(i)
            scan = self.folder / kitti.SCANS_DIR / f"{name}.bin"
            if not scan.is_file():
                raise FormatError(f"{scan}: missing (times.txt lists {len(self)} scans)")
            points = kitti.read_bin(scan)
            times = self.folder / kitti.POINT_TIMES_DIR / f"{name}.bin"
            offset = (
                kitti.read_point_times(times).astype(np.float64) * 1e-9 if times.is_file() else None
            )
            ids = None
            if with_labels:
                ids, _ = kitti.read_label(self.folder / kitti.LABELS_DIR / f"{name}.label")
            for what, arr in (("point_times", offset), ("labels", ids)):
                if arr is not None and len(arr) != len(points):
                    raise FormatError(
                        f"{self.folder}: scan {name} has {len(points)} points but "
                        f"{len(arr)} entries in {what}"
                    )
            yield LidarFrame(float(stamp), points[:, :3].astype(np.float64), pose, offset, ids)


def base_trajectory(run_dir: str | Path, robot: str) -> BaseTrajectory:
    """The robot's gt/<robot>/trajectory.txt (base_link in world)."""
    traj = read_tum(RunLayout(Path(run_dir)).trajectory(robot))
    quat_xyzw = np.roll(traj.orientations_quat_wxyz, -1, axis=1)
    return BaseTrajectory(traj.stamps_s, traj.positions_xyz, quat_xyzw)
