"""The point layout of a scan: one owner for the PointCloud2 fields and the KITTI files.

PointCloud2 fields (little endian, 28-byte points): x, y, z, intensity (float32, metres in the
sensor frame at the point's firing time, intensity in [0, 1]), t (uint32, ns after the header
stamp), ring (uint16), class_id and instance_id (uint16; SemanticKITTI's label is
instance_id << 16 | class_id).
KITTI `.bin`: float32 x, y, z, intensity per point; SemanticKITTI `.label`: uint32 per point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import Float32Array, FloatArray

POINT_DTYPE = np.dtype(
    [
        ("x", "<f4"),
        ("y", "<f4"),
        ("z", "<f4"),
        ("intensity", "<f4"),
        ("t", "<u4"),
        ("ring", "<u2"),
        ("class_id", "<u2"),
        ("instance_id", "<u2"),
    ],
    align=True,
)
KITTI_BIN_DTYPE = np.dtype("<f4")  # (n, 4): x, y, z, intensity
KITTI_LABEL_DTYPE = np.dtype("<u4")
KITTI_TIME_DTYPE = np.dtype("<u4")  # point_times/<n>.bin: ns after the scan stamp


@dataclass(frozen=True)
class LidarScan:
    """The returns of one scan (after noise and ray drop), in the sensor frame."""

    stamp_ns: int
    points: NDArray[np.void]  # POINT_DTYPE
    position_world_sensor: FloatArray  # (3,) at the stamp
    quat_world_sensor: FloatArray  # (4,) wxyz at the stamp

    def kitti_bin(self) -> bytes:
        p = self.points
        arr = np.stack([p["x"], p["y"], p["z"], p["intensity"]], axis=1).astype(KITTI_BIN_DTYPE)
        return arr.tobytes()

    def point_times(self) -> bytes:
        """Each point's firing time, ns after the stamp (grade_common.kitti point_times)."""
        return self.points["t"].astype(KITTI_TIME_DTYPE).tobytes()

    def kitti_label(self) -> bytes:
        p = self.points
        label = (p["instance_id"].astype(np.uint32) << 16) | p["class_id"].astype(np.uint32)
        return label.astype(KITTI_LABEL_DTYPE).tobytes()


def make_points(
    xyz: FloatArray | Float32Array,
    intensity: FloatArray,
    offset_ns: NDArray[np.int64],
    ring: NDArray[np.uint16],
    class_id: NDArray[np.uint16],
    instance_id: NDArray[np.uint16],
) -> NDArray[np.void]:
    out = np.zeros(len(xyz), dtype=POINT_DTYPE)
    out["x"], out["y"], out["z"] = xyz[:, 0], xyz[:, 1], xyz[:, 2]
    out["intensity"] = intensity
    out["t"] = offset_ns
    out["ring"] = ring
    out["class_id"] = class_id
    out["instance_id"] = instance_id
    return out
