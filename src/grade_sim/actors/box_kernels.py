"""Compiled kernels of the actors' 3D boxes."""

from __future__ import annotations

from typing import Any

import numba
import numpy as np


@numba.njit(nogil=True, cache=True)
def heading_bounds(pts: Any, c: float, s: float) -> Any:  # pragma: no cover - compiled
    """The points' mean, and the min and max of (p - mean) in the frame turned by the heading
    whose cos and sin are c, s about z (x = d_x c + d_y s, y = -d_x s + d_y c, z = d_z)."""
    n = pts.shape[0]
    mean = np.zeros(3)
    for i in range(n):
        for j in range(3):
            mean[j] += pts[i, j]
    mean /= n
    lo = np.full(3, np.inf)
    hi = np.full(3, -np.inf)
    for i in range(n):
        dx = pts[i, 0] - mean[0]
        dy = pts[i, 1] - mean[1]
        local = (dx * c + dy * s, -dx * s + dy * c, pts[i, 2] - mean[2])
        for j in range(3):
            lo[j] = min(lo[j], local[j])
            hi[j] = max(hi[j], local[j])
    return mean, lo, hi
