"""Point maps and voxel keys shared by the ground-truth map, AME and overlap code."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_eval.errors import EvalConfigError, MapError

_BITS = 21
_OFFSET = 1 << (_BITS - 1)
_MASK = (1 << _BITS) - 1


@dataclass(frozen=True)
class PointMap:
    """Points (N, 3) in metres with optional colours (N, 3) uint8 RGB."""

    points_xyz: FloatArray
    colors_rgb: NDArray[np.uint8] | None = None
    name: str = "map"

    def __post_init__(self) -> None:
        pts = np.asarray(self.points_xyz, dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] != 3:
            raise MapError(f"{self.name}: points must be (N, 3), got shape {pts.shape}")
        if not np.all(np.isfinite(pts)):
            raise MapError(f"{self.name}: points contain NaN or inf")
        if self.colors_rgb is not None and np.asarray(self.colors_rgb).shape != pts.shape:
            raise MapError(
                f"{self.name}: colours have shape {np.asarray(self.colors_rgb).shape}"
                f", expected {pts.shape}"
            )
        object.__setattr__(self, "points_xyz", pts)

    @property
    def size(self) -> int:
        """Number of points."""
        return int(self.points_xyz.shape[0])

    def require_points(self) -> None:
        """Raise MapError when the map is empty."""
        if self.size == 0:
            raise MapError(f"{self.name}: the map is empty (0 points)")

    def transformed(self, transform_se3: FloatArray, scale: float = 1.0) -> PointMap:
        """The map with points p -> R (scale p) + t."""
        pts = scale * self.points_xyz @ transform_se3[:3, :3].T + transform_se3[:3, 3]
        return PointMap(pts, self.colors_rgb, self.name)


def check_voxel_size(voxel_size_m: float) -> None:
    """Raise EvalConfigError for a voxel size outside (0, 10] m."""
    if not (np.isfinite(voxel_size_m) and 0 < voxel_size_m <= 10):
        raise EvalConfigError(f"voxel_size_m = {voxel_size_m}: allowed (0, 10] m")


def voxel_indices(points_xyz: FloatArray, voxel_size_m: float) -> NDArray[np.int64]:
    """Integer voxel coordinates round(p / voxel) (MAOMaps' centre rule), (N, 3)."""
    idx = np.round(points_xyz / voxel_size_m).astype(np.int64)
    if idx.size and (np.abs(idx) >= _OFFSET).any():
        raise MapError(
            f"points beyond +-{_OFFSET * voxel_size_m:.0f} m cannot be voxelised at "
            f"{voxel_size_m} m"
        )
    return idx


def pack_keys(indices: NDArray[np.int64]) -> NDArray[np.int64]:
    """One int64 per voxel coordinate triple (21 bits per axis)."""
    shifted = indices + _OFFSET
    return np.asarray(
        (shifted[:, 0] << (2 * _BITS)) | (shifted[:, 1] << _BITS) | shifted[:, 2], dtype=np.int64
    )


def unpack_keys(keys: NDArray[np.int64]) -> NDArray[np.int64]:
    """Inverse of pack_keys."""
    out = np.stack([(keys >> (2 * _BITS)) & _MASK, (keys >> _BITS) & _MASK, keys & _MASK], axis=1)
    return np.asarray(out - _OFFSET, dtype=np.int64)


class VoxelAccumulator:
    """Accumulates points into voxels: centre round(p / v) * v, colours averaged per voxel."""

    def __init__(self, voxel_size_m: float) -> None:
        check_voxel_size(voxel_size_m)
        self.voxel_size_m = voxel_size_m
        self._keys: list[NDArray[np.int64]] = []
        self._color_sums: list[NDArray[np.float64]] = []
        self._counts: list[NDArray[np.int64]] = []

    def add(self, points_xyz: FloatArray, colors_rgb: NDArray[np.uint8] | None = None) -> None:
        """Add points (and colours); they are reduced to voxels at once to bound memory."""
        if points_xyz.shape[0] == 0:
            return
        keys = pack_keys(voxel_indices(points_xyz, self.voxel_size_m))
        uniq, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
        sums = np.zeros((uniq.size, 3))
        if colors_rgb is not None:
            np.add.at(sums, inverse, colors_rgb.astype(np.float64))
        self._keys.append(uniq)
        self._color_sums.append(sums)
        self._counts.append(counts.astype(np.int64))
        if len(self._keys) >= 64:
            self._compact()

    def _compact(self) -> None:
        keys = np.concatenate(self._keys)
        uniq, inverse = np.unique(keys, return_inverse=True)
        sums = np.zeros((uniq.size, 3))
        np.add.at(sums, inverse, np.concatenate(self._color_sums))
        counts = np.zeros(uniq.size, dtype=np.int64)
        np.add.at(counts, inverse, np.concatenate(self._counts))
        self._keys, self._color_sums, self._counts = [uniq], [sums], [counts]

    def result(self, with_colors: bool, name: str = "map") -> PointMap:
        """The voxel map (centres sorted by key) and, if asked, the averaged colours."""
        if not self._keys:
            return PointMap(
                np.zeros((0, 3)), np.zeros((0, 3), np.uint8) if with_colors else None, name
            )
        self._compact()
        centres = unpack_keys(self._keys[0]).astype(np.float64) * self.voxel_size_m
        colors = None
        if with_colors:
            mean = self._color_sums[0] / self._counts[0][:, None]
            colors = np.clip(np.round(mean), 0, 255).astype(np.uint8)
        return PointMap(centres, colors, name)


def voxelise(point_map: PointMap, voxel_size_m: float) -> PointMap:
    """A map reduced to one point per voxel (centre), colours averaged."""
    acc = VoxelAccumulator(voxel_size_m)
    acc.add(point_map.points_xyz, point_map.colors_rgb)
    return acc.result(point_map.colors_rgb is not None, point_map.name)
