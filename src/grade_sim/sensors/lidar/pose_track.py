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
    out: FloatArray = np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )
    return out


def slerp(q0: FloatArray, q1: FloatArray, alpha: FloatArray) -> FloatArray:
    """Quaternions (n, ..., 4) wxyz between q0 and q1 (..., 4) at fractions alpha (n,)."""
    q0 = np.asarray(q0, dtype=np.float64)
    q1 = np.asarray(q1, dtype=np.float64)
    dot = np.sum(q0 * q1, axis=-1, keepdims=True)
    q1 = np.where(dot < 0, -q1, q1)  # the short way round
    dot = np.abs(dot)
    theta = np.arccos(np.clip(dot, -1.0, 1.0))
    a = np.asarray(alpha, dtype=np.float64).reshape(-1, *([1] * q0.ndim))
    sin_t = np.sin(theta)
    small = sin_t < 1e-9
    safe = np.where(small, 1.0, sin_t)
    w0 = np.where(small, 1 - a, np.sin((1 - a) * theta) / safe)
    w1 = np.where(small, a, np.sin(a * theta) / safe)
    q = w0 * q0[None] + w1 * q1[None]
    out: FloatArray = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return out


def interpolate(
    t0_ns: int,
    t1_ns: int,
    pose0: tuple[FloatArray, FloatArray],
    pose1: tuple[FloatArray, FloatArray],
    times_ns: NDArray[np.int64],
) -> tuple[FloatArray, FloatArray]:
    """Positions (n, ..., 3) and rotation matrices (n, ..., 3, 3) at times in [t0, t1].

    pose = (positions (..., 3), quaternions (..., 4) wxyz) of one or several bodies.
    """
    times = np.asarray(times_ns, dtype=np.float64)
    alpha = np.zeros(len(times)) if t1_ns == t0_ns else (times - t0_ns) / (t1_ns - t0_ns)
    p0, p1 = np.asarray(pose0[0], dtype=np.float64), np.asarray(pose1[0], dtype=np.float64)
    a = alpha.reshape(-1, *([1] * p0.ndim))
    pos: FloatArray = p0[None] + a * (p1 - p0)[None]
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
        steps = sorted(self._poses)
        first, last = steps[0], steps[-1]
        k = np.floor(np.asarray(times_ns) * self.physics_hz / 1e9 + 1e-9).astype(np.int64)
        k = np.clip(k, first, last)
        out_pos: list[FloatArray] = []
        out_rot: list[FloatArray] = []
        order: list[NDArray[np.int64]] = []
        for step in np.unique(k):
            idx = np.flatnonzero(k == step)
            nxt = min(int(step) + 1, last)
            t = np.clip(times_ns[idx], self.stamp_ns(int(step)), self.stamp_ns(nxt))
            p, r = interpolate(
                self.stamp_ns(int(step)),
                self.stamp_ns(nxt),
                self._poses[int(step)],
                self._poses[nxt],
                t,
            )
            out_pos.append(p)
            out_rot.append(r)
            order.append(idx)
        perm = np.argsort(np.concatenate(order))
        return np.concatenate(out_pos)[perm], np.concatenate(out_rot)[perm]
