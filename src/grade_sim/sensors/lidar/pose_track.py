"""Poses between physics steps: linear in position, spherical-linear (slerp) in rotation.

The rolling shutter needs the sensor pose at every firing time; the simulator knows poses at
physics steps only, so the track keeps the last few steps' poses and interpolates.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray


def quats_to_matrices(q: FloatArray) -> FloatArray:
    """Rotation matrices (..., 3, 3) of unit quaternions (..., 4) wxyz."""
    w, x, y, z = np.moveaxis(np.asarray(q, dtype=np.float64), -1, 0)
    out: FloatArray = np.empty((*w.shape, 3, 3))
    out[..., 0, 0] = 1 - 2 * (y * y + z * z)
    out[..., 0, 1] = 2 * (x * y - w * z)
    out[..., 0, 2] = 2 * (x * z + w * y)
    out[..., 1, 0] = 2 * (x * y + w * z)
    out[..., 1, 1] = 1 - 2 * (x * x + z * z)
    out[..., 1, 2] = 2 * (y * z - w * x)
    out[..., 2, 0] = 2 * (x * z - w * y)
    out[..., 2, 1] = 2 * (y * z + w * x)
    out[..., 2, 2] = 1 - 2 * (x * x + y * y)
    return out


def slerp(q0: FloatArray, q1: FloatArray, alpha: FloatArray) -> FloatArray:
    """Quaternions (n, ..., 4) wxyz between q0[i] and q1[i] (n or 1, ..., 4) at alpha[i]."""
    q0 = np.asarray(q0, dtype=np.float64)
    q1 = np.asarray(q1, dtype=np.float64)
    # Weights per quaternion (shape without the last axis); the lidar slerps every moving part
    # at every actor slice, so no (..., 4) temporaries but the final blend.
    dot = np.einsum("...k,...k->...", q0, q1)
    sign = np.where(dot < 0, -1.0, 1.0)  # the short way round
    theta = np.arccos(np.minimum(np.abs(dot), 1.0))
    a = np.asarray(alpha, dtype=np.float64).reshape(-1, *([1] * (q0.ndim - 2)))
    sin_t = np.sin(theta)
    small = sin_t < 1e-9
    safe = np.where(small, 1.0, sin_t)
    w0 = np.where(small, 1 - a, np.sin((1 - a) * theta) / safe)
    w1 = np.where(small, a, np.sin(a * theta) / safe) * sign
    q = w0[..., None] * q0 + w1[..., None] * q1
    q /= np.sqrt(np.einsum("...k,...k->...", q, q))[..., None]
    out: FloatArray = q
    return out


def interpolate(
    t0_ns: NDArray[np.int64],
    t1_ns: NDArray[np.int64],
    pose0: tuple[FloatArray, FloatArray],
    pose1: tuple[FloatArray, FloatArray],
    times_ns: NDArray[np.int64],
) -> tuple[FloatArray, FloatArray]:
    """Positions (n, ..., 3) and rotation matrices (n, ..., 3, 3): time i between its own
    t0[i] and t1[i], from pose0[i] to pose1[i] (pose = positions (n, ..., 3), quaternions
    (n, ..., 4) wxyz of one or several bodies); every time in one pass."""
    times = np.asarray(times_ns, dtype=np.float64)
    span = t1_ns - t0_ns
    alpha = np.zeros(len(times))
    moving = span != 0
    alpha[moving] = (times[moving] - t0_ns[moving]) / span[moving]
    p0, p1 = np.asarray(pose0[0], dtype=np.float64), np.asarray(pose1[0], dtype=np.float64)
    a = alpha.reshape(-1, *([1] * (p0.ndim - 1)))
    pos: FloatArray = p0 + a * (p1 - p0)
    return pos, quats_to_matrices(slerp(pose0[1], pose1[1], alpha))


class PoseTrack:
    """Poses of one body (or a fixed set of bodies) at the last `keep` physics steps."""

    def __init__(self, physics_hz: float, keep: int) -> None:
        self.physics_hz = physics_hz
        self.keep = keep
        self._poses: OrderedDict[int, tuple[FloatArray, FloatArray]] = OrderedDict()

    def add(self, step: int, position: FloatArray, quat_wxyz: FloatArray) -> None:
        self._poses[step] = (np.asarray(position, float).copy(), np.asarray(quat_wxyz).copy())
        while len(self._poses) > self.keep:
            self._poses.popitem(last=False)

    def stamp_ns(self, step: int) -> int:
        return round(step * 1e9 / self.physics_hz)

    def at(self, times_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
        """Poses at each time; times outside the kept steps are clamped to the nearest end."""
        steps = np.fromiter(self._poses, dtype=np.int64, count=len(self._poses))
        order = np.argsort(steps)
        steps = steps[order]
        items = list(self._poses.values())
        pos = np.array([items[i][0] for i in order])
        quat = np.array([items[i][1] for i in order])
        stamps = np.array([self.stamp_ns(int(step)) for step in steps], dtype=np.int64)
        times = np.asarray(times_ns)
        # The last kept step at or before each time (a lidar sweep asks thousands of times
        # between a few dozen steps: index arithmetic, no sort of the times).
        k = np.floor(times * self.physics_hz / 1e9 + 1e-9).astype(np.int64)
        i0 = np.clip(np.searchsorted(steps, k, side="right") - 1, 0, len(steps) - 1)
        i1 = np.minimum(i0 + 1, len(steps) - 1)
        t = np.clip(times, stamps[i0], stamps[i1])
        return interpolate(stamps[i0], stamps[i1], (pos[i0], quat[i0]), (pos[i1], quat[i1]), t)
