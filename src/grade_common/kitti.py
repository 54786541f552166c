"""KITTI / SemanticKITTI lidar files: the one owner of their layout (read and write).

A lidar folder `gt/<robot>/<lidar>/` holds:
  velodyne/<000000>.bin   float32 little endian, (n, 4): x, y, z, intensity (sensor frame, m)
  labels/<000000>.label   uint32 little endian, (n,): instance_id << 16 | class_id
  point_times/<000000>.bin  uint32 little endian, (n,): each point's firing time in ns after
                          the scan stamp (the PointCloud2 `t` field; a rolling-shutter scan's
                          points are in the sensor frame at that time); not a KITTI file
  times.txt               scan stamps in seconds, one per line (KITTI)
  poses.txt               12 numbers per line: the 3x4 pose [R | t] of the sensor in `world`
                          at the scan stamp, row-major (KITTI odometry layout; the frame is
                          `world`, not KITTI's first camera)
  groundtruth.txt         the same poses as TUM lines (grade_common.tum)
  classes.yaml            class id -> class name of the labels
Read with `numpy.fromfile(path, dtype="<f4").reshape(-1, 4)` and
`numpy.fromfile(path, dtype="<u4")`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from grade_common.errors import FormatError
from grade_common.types import FloatArray

SCANS_DIR = "velodyne"
LABELS_DIR = "labels"
POINT_TIMES_DIR = "point_times"
POINT_TIME_DTYPE = np.dtype("<u4")
TIMES_TXT = "times.txt"
POSES_TXT = "poses.txt"
GROUNDTRUTH_TXT = "groundtruth.txt"
CLASSES_YAML = "classes.yaml"
BIN_DTYPE = np.dtype("<f4")
LABEL_DTYPE = np.dtype("<u4")


def scan_name(index: int) -> str:
    return f"{index:06d}"


def read_bin(path: str | Path) -> NDArray[np.float32]:
    """Points (n, 4): x, y, z, intensity."""
    data = np.fromfile(path, dtype=BIN_DTYPE)
    if data.size % 4:
        raise FormatError(f"{path}: {data.size} floats is not a multiple of 4 (x, y, z, i)")
    return data.reshape(-1, 4)


def read_label(path: str | Path) -> tuple[NDArray[np.uint16], NDArray[np.uint16]]:
    """(instance ids, class ids) of a .label file."""
    label = np.fromfile(path, dtype=LABEL_DTYPE)
    return (label >> 16).astype(np.uint16), (label & 0xFFFF).astype(np.uint16)


def read_point_times(path: str | Path) -> NDArray[np.uint32]:
    """Per-point firing times (ns after the scan stamp) of a point_times/<n>.bin file."""
    out: NDArray[np.uint32] = np.fromfile(path, dtype=POINT_TIME_DTYPE)
    return out


def pose_line(position: FloatArray, rotation: FloatArray) -> str:
    """One poses.txt line: the 3x4 [R | t], row-major."""
    m = np.hstack([np.asarray(rotation).reshape(3, 3), np.asarray(position).reshape(3, 1)])
    return " ".join(f"{v:.9e}" for v in m.reshape(-1)) + "\n"


def read_poses(path: str | Path) -> NDArray[np.float64]:
    """(n, 4, 4) poses from a poses.txt."""
    try:
        rows = np.loadtxt(path, ndmin=2)
    except ValueError as err:
        raise FormatError(f"{path}: not a KITTI poses file: {err}") from err
    if rows.shape[1] != 12:
        raise FormatError(f"{path}: expected 12 numbers per line, got {rows.shape[1]}")
    out = np.tile(np.eye(4), (len(rows), 1, 1))
    out[:, :3, :] = rows.reshape(-1, 3, 4)
    return out
