"""LiDAR odometry offline on a run's recorded scans (gt/<robot>/<lidar>/, grade_common.kitti).

The scans carry per-point firing times (deskewing, as live) and per-point class labels, so the
points of moving classes (people and flying objects, `frames.DYNAMIC_CLASSES`) can be removed
before registration: the LiDAR's ground-truth oracle, as the masked camera backends are.
"""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatchcase
from pathlib import Path

import numpy as np

from grade_common import kitti
from grade_common.textfile import read_yaml
from grade_slam.camera_folder import stamp_ns_of
from grade_slam.errors import SlamInputError
from grade_slam.frames import DYNAMIC_CLASSES
from grade_slam.lidar_odometry import (
    IcpOdometry,
    LidarOdometryConfig,
    LidarScan,
    create_lidar_backend,
)


def dynamic_label_ids(folder: str | Path) -> frozenset[int]:
    """The class ids of the folder's classes.yaml that are people or flying objects.

    Raises:
        SlamInputError: classes.yaml is missing or not a mapping.
    """
    path = Path(folder) / kitti.CLASSES_YAML
    classes = read_yaml(path, "the LiDAR's classes", error=SlamInputError)
    if not isinstance(classes, dict):
        raise SlamInputError(f"{path}: expected class id -> name, got {classes!r}")
    return frozenset(
        int(i)
        for i, name in classes.items()
        if any(fnmatchcase(str(name), p) for p in DYNAMIC_CLASSES)
    )


def read_lidar_folder(folder: str | Path, *, drop_dynamic: bool = False) -> Iterator[LidarScan]:
    """The folder's scans in order, with their point times; `drop_dynamic` removes the points
    labelled as people or flying objects.

    Raises:
        SlamInputError: no scans, or times.txt does not have one stamp per scan.
    """
    root = Path(folder)
    scans = sorted((root / kitti.SCANS_DIR).glob("*.bin"))
    if not scans:
        raise SlamInputError(f"{root}: no {kitti.SCANS_DIR}/*.bin scans (is it a LiDAR folder?)")
    stamps_s = np.atleast_1d(np.loadtxt(root / kitti.TIMES_TXT, dtype=str))
    if len(stamps_s) != len(scans):
        raise SlamInputError(f"{root}: {len(scans)} scans but {len(stamps_s)} stamps")
    dynamic = dynamic_label_ids(root) if drop_dynamic else frozenset()
    for scan, stamp in zip(scans, stamps_s, strict=True):
        points = kitti.read_bin(scan)[:, :3].astype(np.float64)
        times = kitti.read_point_times(root / kitti.POINT_TIMES_DIR / scan.name)
        if dynamic:
            _, class_ids = kitti.read_label(root / kitti.LABELS_DIR / f"{scan.stem}.label")
            keep = ~np.isin(class_ids, list(dynamic))
            points, times = points[keep], times[keep]
        yield LidarScan(stamp_ns_of(str(stamp)), points, times)


def track_lidar_folder(
    folder: str | Path, config: LidarOdometryConfig, *, drop_dynamic: bool = False
) -> IcpOdometry:
    """Register every scan of the folder; the odometry holds the trajectory and the counts."""
    odometry = create_lidar_backend(config)
    for scan in read_lidar_folder(folder, drop_dynamic=drop_dynamic):
        odometry.process(scan)
    return odometry
