"""Rotation conversions, the one home of quaternion <-> matrix. Quaternions are (w, x, y, z),
Hamilton.

Two pairs of conversions live here because their roundings differ in the last bit, and each
caller keeps its outputs bit for bit: the closed form (`quat_to_matrix`, Shepperd's
`matrix_to_quat`: the simulator's poses, the motion library's gait) and scipy's
(`quats_to_matrices`, `matrices_to_quats`: the skeleton's joint rotations and the evaluation's
trajectories).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from grade_common.types import FloatArray


def quat_from_rpy(roll: float, pitch: float, yaw: float) -> FloatArray:
    """Quaternion of R = Rz(yaw) Ry(pitch) Rx(roll) (REP 103 fixed-axis roll, pitch, yaw)."""
    cr, sr = np.cos(roll / 2), np.sin(roll / 2)
    cp, sp = np.cos(pitch / 2), np.sin(pitch / 2)
    cy, sy = np.cos(yaw / 2), np.sin(yaw / 2)
    return np.array(
        [
            cr * cp * cy + sr * sp * sy,
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
        ]
    )


def quat_mul(a: FloatArray, b: FloatArray) -> FloatArray:
    """Hamilton product of wxyz quaternions, element-wise over leading axes ((4,) or (..., 4))."""
    aw, ax, ay, az = np.moveaxis(a, -1, 0)
    bw, bx, by, bz = np.moveaxis(b, -1, 0)
    return np.stack(
        [
            aw * bw - ax * bx - ay * by - az * bz,
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
        ],
        axis=-1,
    )


def quat_to_matrix(q: FloatArray) -> FloatArray:
    """Rotation matrices (..., 3, 3) of wxyz quaternions (..., 4) of any length > 0 (closed form).

    One quaternion (4,) is normalised by `np.linalg.norm(q)` (a dot product), a batch by the
    norm along its last axis (a sum): the two can differ in the last bit, and each kind of caller
    (the simulator's single poses, the motion library's batches) keeps its results bit for bit.
    """
    q64 = np.asarray(q, dtype=np.float64)
    norm = np.linalg.norm(q) if q64.ndim == 1 else np.linalg.norm(q64, axis=-1, keepdims=True)
    w, x, y, z = np.moveaxis(q64 / norm, -1, 0)
    out: FloatArray = np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )
    return out


def matrix_to_quat(m: FloatArray) -> FloatArray:
    """Quaternion (w >= 0) of a rotation matrix (Shepperd's method, stable for all angles)."""
    m = np.asarray(m, dtype=np.float64)
    tr = np.trace(m)
    if tr > 0:
        s = 2.0 * np.sqrt(tr + 1.0)
        q = np.array(
            [0.25 * s, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
        )
    elif m[0, 0] > m[1, 1] and m[0, 0] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
        q = np.array(
            [(m[2, 1] - m[1, 2]) / s, 0.25 * s, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
        )
    elif m[1, 1] > m[2, 2]:
        s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
        q = np.array(
            [(m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, 0.25 * s, (m[1, 2] + m[2, 1]) / s]
        )
    else:
        s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
        q = np.array(
            [(m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, 0.25 * s]
        )
    q /= np.linalg.norm(q)
    return q if q[0] >= 0 else -q


def quats_to_matrices(quat_wxyz: FloatArray) -> FloatArray:
    """Rotation matrices (..., 3, 3) of wxyz quaternions (..., 4), by scipy (normalised)."""
    q = np.asarray(quat_wxyz, dtype=np.float64)
    flat = q.reshape(-1, 4)
    out: FloatArray = (
        Rotation.from_quat(np.concatenate([flat[:, 1:], flat[:, :1]], axis=1))
        .as_matrix()
        .reshape(*q.shape[:-1], 3, 3)
    )
    return out


def matrices_to_quats(rot: FloatArray) -> FloatArray:
    """wxyz quaternions (..., 4) with w >= 0 of rotation matrices (..., 3, 3), by scipy."""
    m = np.asarray(rot, dtype=np.float64)
    xyzw = Rotation.from_matrix(m.reshape(-1, 3, 3)).as_quat()
    wxyz = np.concatenate([xyzw[:, 3:], xyzw[:, :3]], axis=1)
    wxyz *= np.where(wxyz[:, :1] < 0, -1.0, 1.0)
    out: FloatArray = wxyz.reshape(*m.shape[:-2], 4)
    return out


def rotation_between(a: FloatArray, b: FloatArray) -> FloatArray:
    """The smallest rotation (3, 3) taking direction `a` onto direction `b` (any lengths > 0).

    Opposite directions have no single smallest rotation: the half turn about an axis
    perpendicular to `a` is returned (Rodrigues' formula divides by 1 + cos there).
    """
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b)
    v = np.cross(a, b)
    c = float(np.dot(a, b))
    if c < -1 + 1e-9:
        axis = np.cross(a, [1.0, 0.0, 0.0] if abs(a[0]) < 0.9 else [0.0, 1.0, 0.0])
        axis /= np.linalg.norm(axis)
        half_turn: FloatArray = 2.0 * np.outer(axis, axis) - np.eye(3)
        return half_turn
    vx = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    out: FloatArray = np.eye(3) + vx + vx @ vx / (1.0 + c)
    return out


# Camera conventions, as rotations from the camera link (x forward, y left, z up; REP 103).
# Optical frame: z forward, x right, y down (REP 103 "_optical" suffix).
R_LINK_OPTICAL = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
# MuJoCo camera frame: looks along -z, y up, x right.
R_LINK_MJCAM = np.array([[0.0, 0.0, -1.0], [-1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
