"""Ground-truth map of a run: back-project depth with the true poses, voxelise, drop actors."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_eval.core.pointmap import PointMap, VoxelAccumulator, check_voxel_size
from grade_eval.errors import EvalConfigError, MapError


@dataclass(frozen=True)
class DepthFrame:
    """One camera frame: z-depth (H, W) in m (0 = no return), 3x3 intrinsics, optical-frame pose.

    rgb (H, W, 3) uint8 and instance ids (H, W) are optional.
    """

    stamp_s: float
    depth_m: FloatArray
    camera_matrix: FloatArray
    pose_world_optical: FloatArray
    rgb: NDArray[np.uint8] | None = None
    instance_ids: NDArray[np.integer] | None = None


@dataclass(frozen=True)
class GtMapConfig:
    """MAOMaps defaults: voxel 0.05 m, keep 0.01 < range < 10 m; dynamic_ids removed if given.

    dynamic_ids: instance ids of moving actors whose pixels never enter the static map.
    pixel_stride: use every n-th pixel in both directions (1 = all).
    """

    voxel_size_m: float = 0.05
    min_range_m: float = 0.01
    max_range_m: float = 10.0
    dynamic_ids: frozenset[int] = frozenset()
    pixel_stride: int = 1
    with_colors: bool = True

    def __post_init__(self) -> None:
        check_voxel_size(self.voxel_size_m)
        if not (0 <= self.min_range_m < self.max_range_m):
            raise EvalConfigError(
                f"min_range_m = {self.min_range_m}, max_range_m = {self.max_range_m}: need "
                "0 <= min_range_m < max_range_m"
            )
        if self.pixel_stride < 1:
            raise EvalConfigError(f"pixel_stride = {self.pixel_stride}: must be >= 1")


def backproject(
    frame: DepthFrame,
    config: GtMapConfig,
) -> tuple[FloatArray, NDArray[np.uint8] | None]:
    """World points (and colours) of the valid, static pixels of one frame."""
    depth = np.asarray(frame.depth_m, dtype=np.float64)
    if depth.ndim != 2:
        raise MapError(f"frame {frame.stamp_s:.6f}: depth must be 2-D, got {depth.shape}")
    s = config.pixel_stride
    depth = depth[::s, ::s]
    h, w = depth.shape
    vs, us = np.mgrid[0:h, 0:w]
    us = us * s
    vs = vs * s
    k = frame.camera_matrix
    x = (us - k[0, 2]) / k[0, 0] * depth
    y = (vs - k[1, 2]) / k[1, 1] * depth
    cam = np.stack([x, y, depth], axis=-1)
    rng = np.linalg.norm(cam, axis=-1)
    valid = (
        np.isfinite(depth) & (depth > 0) & (rng > config.min_range_m) & (rng < config.max_range_m)
    )
    if config.dynamic_ids:
        if frame.instance_ids is None:
            raise MapError(
                f"frame {frame.stamp_s:.6f}: removing dynamic actors needs its "
                "instance mask, but none was given"
            )
        inst = np.asarray(frame.instance_ids)[::s, ::s]
        valid &= ~np.isin(inst, np.fromiter(config.dynamic_ids, dtype=np.int64))
    pts_cam = cam[valid]
    pose = frame.pose_world_optical
    pts = pts_cam @ pose[:3, :3].T + pose[:3, 3]
    colors = None
    if frame.rgb is not None:
        colors = np.asarray(frame.rgb)[::s, ::s][valid].astype(np.uint8)
    return pts, colors


def build_gt_map(
    frames: Iterable[DepthFrame], config: GtMapConfig | None = None, name: str = "gt_map"
) -> PointMap:
    """Voxel map of every frame's valid static pixels, voxel centre round(p / v) * v.

    Raises:
        MapError: when no frame contributes a point.
    """
    cfg = config or GtMapConfig()
    acc = VoxelAccumulator(cfg.voxel_size_m)
    colored = cfg.with_colors
    for frame in frames:
        pts, colors = backproject(frame, cfg)
        if colors is None:
            colored = False
        acc.add(pts, colors if colored else None)
    result = acc.result(colored, name)
    if result.size == 0:
        raise MapError(f"{name}: no valid depth pixel in any frame; the ground-truth map is empty")
    return result
