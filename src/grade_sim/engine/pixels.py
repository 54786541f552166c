"""Pixels <-> 3D points of a pinhole camera (the ROS convention: pixel (0, 0)'s centre is at
image coordinate (0, 0)), shared by the normal and the optical-flow ground truth."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray


def pixel_grid(height: int, width: int) -> tuple[FloatArray, FloatArray]:
    """Column (u) and row (v) coordinates of every pixel, each (h, w)."""
    v, u = np.mgrid[0:height, 0:width].astype(np.float64)
    return u, v


def backproject(depth_m: NDArray[np.floating[Any]], k: FloatArray) -> FloatArray:
    """(h, w, 3) points in the optical frame (z forward) from planar depth; 0 depth -> z = 0."""
    h, w = depth_m.shape
    u, v = pixel_grid(h, w)
    z = depth_m.astype(np.float64)
    x = (u - k[0, 2]) / k[0, 0] * z
    y = (v - k[1, 2]) / k[1, 1] * z
    out: FloatArray = np.stack([x, y, z], axis=-1)
    return out


def project(points_cam: FloatArray, k: FloatArray) -> FloatArray:
    """(..., 2) pixel coordinates of (..., 3) optical-frame points (z must be > 0)."""
    z = points_cam[..., 2]
    u = k[0, 0] * points_cam[..., 0] / z + k[0, 2]
    v = k[1, 1] * points_cam[..., 1] / z + k[1, 2]
    out: FloatArray = np.stack([u, v], axis=-1)
    return out
