"""Angles and rotations the controller needs (numpy only).

The virtual-joint chain is world -> x -> y -> z -> yaw -> pitch -> roll, so the joint angles are
the Z-Y-X (REP 103 roll-pitch-yaw) Euler angles of `base_link` in `world`:
R = Rz(yaw) Ry(pitch) Rx(roll).
"""

from __future__ import annotations

import math

import numpy as np

from grade_common.types import FloatArray


def wrap_angle(angle_rad: FloatArray | float) -> FloatArray:
    """Wrap angles to [-pi, pi) (the shortest signed angle)."""
    return np.asarray((np.asarray(angle_rad, dtype=np.float64) + np.pi) % (2.0 * np.pi) - np.pi)


def quaternion_to_rpy(quat_xyzw: FloatArray) -> FloatArray:
    """Roll, pitch, yaw (Z-Y-X) of a unit quaternion given as (x, y, z, w); it is normalised."""
    q = np.asarray(quat_xyzw, dtype=np.float64)
    norm = float(np.linalg.norm(q))
    if not math.isfinite(norm) or norm < 1e-9:
        raise ValueError(f"quaternion {q.tolist()} is not a rotation (norm {norm})")
    x, y, z, w = q / norm
    roll = math.atan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = math.asin(max(-1.0, min(1.0, 2.0 * (w * y - z * x))))
    yaw = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return np.array([roll, pitch, yaw])


def rpy_to_quaternion(roll: float, pitch: float, yaw: float) -> FloatArray:
    """Unit quaternion (x, y, z, w) of Z-Y-X Euler angles."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return np.array(
        [
            sr * cp * cy - cr * sp * sy,
            cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy,
            cr * cp * cy + sr * sp * sy,
        ]
    )


def rpy_to_matrix(roll: float, pitch: float, yaw: float) -> FloatArray:
    """Rotation matrix R = Rz(yaw) Ry(pitch) Rx(roll) (body -> world)."""
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def body_rates_to_euler_rates(rpy: FloatArray, rates_body: FloatArray) -> FloatArray:
    """Z-Y-X Euler angle rates (roll', pitch', yaw') of body angular velocity (p, q, r).

    Raises:
        ValueError: at pitch +-90 deg (gimbal lock), where the rates are undefined.
    """
    roll, pitch = float(rpy[0]), float(rpy[1])
    cp = math.cos(pitch)
    if abs(cp) < 1e-6:
        raise ValueError(f"pitch {pitch} rad is at gimbal lock; Euler rates are undefined")
    sr, cr, tp = math.sin(roll), math.cos(roll), math.tan(pitch)
    transform = np.array(
        [
            [1.0, sr * tp, cr * tp],
            [0.0, cr, -sr],
            [0.0, sr / cp, cr / cp],
        ]
    )
    return np.asarray(transform @ np.asarray(rates_body, dtype=np.float64))
