"""Poses between physics steps: linear in position, spherical-linear (slerp) in rotation.

The rolling shutter needs the sensor pose at every firing time; the simulator knows poses at
physics steps only, so the track keeps the last few steps' poses and interpolates.
"""

from __future__ import annotations

from collections import OrderedDict

import numba
import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.sensors.schedule import step_stamps_ns, steps_at_or_before


@numba.njit(nogil=True, cache=True)
def _blend(
    p0: FloatArray,
    q0: FloatArray,
    p1: FloatArray,
    q1: FloatArray,
    alpha: FloatArray,
    out_pos: FloatArray,
    out_rot: FloatArray,
) -> None:  # pragma: no cover - compiled
    """Row i: position p0 + alpha (p1 - p0) and the rotation matrix of slerp(q0, q1, alpha)
    (the short way round). A lidar sweep asks thousands of these per scan: one compiled loop
    instead of a dozen numpy passes."""
    for i in range(len(alpha)):
        a = alpha[i]
        for j in range(3):
            out_pos[i, j] = p0[i, j] + a * (p1[i, j] - p0[i, j])
        dot = q0[i, 0] * q1[i, 0] + q0[i, 1] * q1[i, 1] + q0[i, 2] * q1[i, 2] + q0[i, 3] * q1[i, 3]
        sign = -1.0 if dot < 0.0 else 1.0
        theta = np.arccos(min(abs(dot), 1.0))
        sin_t = np.sin(theta)
        if sin_t < 1e-9:
            w0, w1 = 1.0 - a, a * sign
        else:
            w0 = np.sin((1.0 - a) * theta) / sin_t
            w1 = np.sin(a * theta) / sin_t * sign
        w = w0 * q0[i, 0] + w1 * q1[i, 0]
        x = w0 * q0[i, 1] + w1 * q1[i, 1]
        y = w0 * q0[i, 2] + w1 * q1[i, 2]
        z = w0 * q0[i, 3] + w1 * q1[i, 3]
        norm = np.sqrt(w * w + x * x + y * y + z * z)
        w, x, y, z = w / norm, x / norm, y / norm, z / norm
        out_rot[i, 0, 0] = 1 - 2 * (y * y + z * z)
        out_rot[i, 0, 1] = 2 * (x * y - w * z)
        out_rot[i, 0, 2] = 2 * (x * z + w * y)
        out_rot[i, 1, 0] = 2 * (x * y + w * z)
        out_rot[i, 1, 1] = 1 - 2 * (x * x + z * z)
        out_rot[i, 1, 2] = 2 * (y * z - w * x)
        out_rot[i, 2, 0] = 2 * (x * z - w * y)
        out_rot[i, 2, 1] = 2 * (y * z + w * x)
        out_rot[i, 2, 2] = 1 - 2 * (x * x + y * y)


def interpolate(
    t0_ns: NDArray[np.int64],
    t1_ns: NDArray[np.int64],
    pose0: tuple[FloatArray, FloatArray],
    pose1: tuple[FloatArray, FloatArray],
    times_ns: NDArray[np.int64],
) -> tuple[FloatArray, FloatArray]:
    """Positions (n, ..., 3) and rotation matrices (n, ..., 3, 3): time i between its own
    t0[i] and t1[i], from pose0[i] to pose1[i] (pose = positions (n, ..., 3), quaternions
    (n, ..., 4) wxyz of one or several bodies), linear in position and slerp in rotation."""
    times = np.asarray(times_ns, dtype=np.float64)
    span = t1_ns - t0_ns
    alpha = np.zeros(len(times))
    moving = span != 0
    alpha[moving] = (times[moving] - t0_ns[moving]) / span[moving]
    p0 = np.asarray(pose0[0], dtype=np.float64)
    shape = p0.shape[:-1]
    bodies = int(np.prod(shape[1:], dtype=np.int64))

    def rows(a: FloatArray, width: int) -> FloatArray:
        out: FloatArray = np.ascontiguousarray(a, dtype=np.float64).reshape(-1, width)
        return out

    pos = np.empty((len(alpha) * bodies, 3))
    rot = np.empty((len(alpha) * bodies, 3, 3))
    _blend(
        rows(p0, 3),
        rows(pose0[1], 4),
        rows(pose1[0], 3),
        rows(pose1[1], 4),
        np.repeat(alpha, bodies),
        pos,
        rot,
    )
    return pos.reshape(*shape, 3), rot.reshape(*shape, 3, 3)


class PoseTrack:
    """Poses of one body (or a fixed set of bodies) at the last `keep` physics steps."""

    def __init__(self, physics_hz: float, keep: int) -> None:
        self.physics_hz = physics_hz
        self.keep = keep
        self._poses: OrderedDict[int, tuple[FloatArray, FloatArray]] = OrderedDict()

    def copy(self) -> PoseTrack:
        """The track as it is now (a scan cast on another thread reads this, not the live one)."""
        out = PoseTrack(self.physics_hz, self.keep)
        out._poses = self._poses.copy()  # the kept arrays are never changed, only replaced
        return out

    def add(self, step: int, position: FloatArray, quat_wxyz: FloatArray) -> None:
        self._poses[step] = (np.asarray(position, float).copy(), np.asarray(quat_wxyz).copy())
        while len(self._poses) > self.keep:
            self._poses.popitem(last=False)

    def at(self, times_ns: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
        """Poses at each time; times outside the kept steps are clamped to the nearest end."""
        steps = np.fromiter(self._poses, dtype=np.int64, count=len(self._poses))
        order = np.argsort(steps)
        steps = steps[order]
        items = list(self._poses.values())
        pos = np.array([items[i][0] for i in order])
        quat = np.array([items[i][1] for i in order])
        stamps = step_stamps_ns(steps, self.physics_hz)
        times = np.asarray(times_ns)
        # The last kept step at or before each time (a lidar sweep asks thousands of times
        # between a few dozen steps: index arithmetic, no sort of the times).
        k = steps_at_or_before(times, self.physics_hz)
        i0 = np.clip(np.searchsorted(steps, k, side="right") - 1, 0, len(steps) - 1)
        i1 = np.minimum(i0 + 1, len(steps) - 1)
        t = np.clip(times, stamps[i0], stamps[i1])
        return interpolate(stamps[i0], stamps[i1], (pos[i0], quat[i0]), (pos[i1], quat[i1]), t)
