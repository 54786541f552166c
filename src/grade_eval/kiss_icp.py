"""KISS-ICP (third-party LiDAR odometry, `pip install kiss-icp`) on a folder of KITTI scans.

The adapter reads `velodyne/*.bin` and `times.txt` (grade_common.kitti: a run's
`gt/<robot>/<lidar>/` or a `grade bag export --points` folder), registers the scans in order with
KISS-ICP's Python pipeline and returns the estimated sensor trajectory. KISS-ICP starts at the
identity; when the folder has the ground-truth `poses.txt`, the estimate is put in `world` by the
first ground-truth pose (so only the drift remains for `grade eval traj`). Per-point times are
not in KITTI files, so KISS-ICP's own deskewing is off.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from grade_common import kitti
from grade_common.errors import GradeError
from grade_common.rotations import matrix_to_quat
from grade_eval.core.trajectory import PoseTrajectory

INSTALL_HINT = "pip install kiss-icp==1.3.0 (requirements/dev.txt)"


def kiss_icp_trajectory(
    folder: str | Path, max_range_m: float = 100.0, min_range_m: float = 0.0
) -> PoseTrajectory:
    """Run KISS-ICP on every scan of a KITTI folder; the sensor's poses at the scan stamps.

    Raises:
        GradeError: kiss-icp is not installed, or the folder has no scans / mismatched times.
    """
    try:
        from kiss_icp.config import load_config
        from kiss_icp.kiss_icp import KissICP
    except ImportError as err:
        raise GradeError(f"KISS-ICP is not installed: {INSTALL_HINT} ({err})") from err
    root = Path(folder)
    scans = sorted((root / kitti.SCANS_DIR).glob("*.bin"))
    if not scans:
        raise GradeError(f"{root}: no {kitti.SCANS_DIR}/*.bin scans")
    times = np.atleast_1d(np.loadtxt(root / kitti.TIMES_TXT))
    if len(times) != len(scans):
        raise GradeError(f"{root}: {len(scans)} scans but {len(times)} lines in {kitti.TIMES_TXT}")
    config = load_config(None)
    config.data.max_range = max_range_m
    config.data.min_range = min_range_m
    config.data.deskew = False
    config.mapping.voxel_size = max_range_m / 100.0
    odometry = KissICP(config)
    poses = []
    for scan in scans:
        points = kitti.read_bin(scan)[:, :3].astype(np.float64)
        odometry.register_frame(points, np.zeros(0))
        poses.append(np.array(odometry.last_pose))
    est = np.array(poses)
    gt_file = root / kitti.POSES_TXT
    if gt_file.is_file():
        first = kitti.read_poses(gt_file)[0]
        est = first[None] @ est
    return PoseTrajectory(
        times,
        est[:, :3, 3],
        np.array([matrix_to_quat(m[:3, :3]) for m in est]),
        name="kiss-icp",
    )
