"""Odometry drift and a generic Gaussian model for scalar fields.

Drift: the noisy pose is the composition of the true increments, each perturbed in the body frame
by a translation error proportional to the distance travelled and a yaw error proportional to the
rotation and to sqrt(dt) - like wheel or visual odometry that never sees its own error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from grade_common.types import FloatArray
from grade_noise.errors import NoiseConfigError, NoiseInputError
from grade_noise.presets import check_fields, lookup


@dataclass(frozen=True)
class GaussianParams:
    """x' = x + bias + N(0, sigma^2): the generic model for any scalar (or array) field."""

    sigma: float
    bias: float = 0.0

    def __post_init__(self) -> None:
        if not (math.isfinite(self.sigma) and self.sigma >= 0.0 and math.isfinite(self.bias)):
            raise NoiseConfigError(
                f"Gaussian noise sigma = {self.sigma!r}, bias = {self.bias!r}: sigma must be "
                ">= 0 and both finite"
            )


def gaussian_noise(
    values: FloatArray | float, rng: np.random.Generator, params: GaussianParams
) -> FloatArray:
    """Add bias and white Gaussian noise to every element of `values` (NaN input is an error)."""
    x = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(x)):
        raise NoiseInputError("scalar field contains NaN or infinite values; cannot add noise")
    out: FloatArray = x + params.bias + rng.standard_normal(x.shape) * params.sigma
    return out


@dataclass(frozen=True)
class OdometryNoiseParams:
    """Odometry drift and twist noise.

    Attributes:
        translation_per_m: std of the translation error per metre travelled (each axis).
        yaw_per_rad: std of the yaw error per radian turned.
        yaw_per_sqrt_s: std of the yaw random walk, rad/sqrt(s) (drift while standing still).
        twist_linear: Gaussian noise on the reported linear velocity (m/s).
        twist_angular: Gaussian noise on the reported angular velocity (rad/s).
    """

    translation_per_m: float = 0.02
    yaw_per_rad: float = 0.01
    yaw_per_sqrt_s: float = 1.0e-4
    twist_linear: GaussianParams = GaussianParams(0.01)
    twist_angular: GaussianParams = GaussianParams(0.005)

    def __post_init__(self) -> None:
        check_fields(self, "odometry", ("translation_per_m", "yaw_per_rad", "yaw_per_sqrt_s"))


ODOMETRY_PRESETS: dict[str, OdometryNoiseParams] = {
    "wheel": OdometryNoiseParams(),
    "visual": OdometryNoiseParams(translation_per_m=0.01, yaw_per_rad=0.005, yaw_per_sqrt_s=5e-4),
    "twist_only": OdometryNoiseParams(translation_per_m=0.0, yaw_per_rad=0.0, yaw_per_sqrt_s=0.0),
}


def odometry_preset(name: str) -> OdometryNoiseParams:
    """Return the odometry preset `name`; raise NoiseConfigError listing the valid names."""
    return lookup(ODOMETRY_PRESETS, name, "odometry")


@dataclass(frozen=True)
class OdometryState:
    """Last true pose and last noisy pose (None before the first sample)."""

    stamp_ns: int | None = None
    true_position: FloatArray | None = None
    true_quat_xyzw: FloatArray | None = None
    noisy_position: FloatArray | None = None
    noisy_quat_xyzw: FloatArray | None = None


@dataclass(frozen=True)
class OdometrySample:
    """Pose (parent -> child) and twist (child frame) of one odometry message."""

    stamp_ns: int
    position: FloatArray
    quat_xyzw: FloatArray
    linear_m_s: FloatArray
    angular_rad_s: FloatArray


def odometry_noise(
    sample: OdometrySample,
    state: OdometryState,
    rng: np.random.Generator,
    params: OdometryNoiseParams,
) -> tuple[OdometrySample, OdometryState]:
    """Drift the pose by perturbed increments and add noise to the twist.

    The first sample is returned with the true pose (the odometry origin has no error).
    """
    arrays = (sample.position, sample.quat_xyzw, sample.linear_m_s, sample.angular_rad_s)
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise NoiseInputError("odometry input contains NaN or infinite values; cannot add noise")
    quat = np.asarray(sample.quat_xyzw, dtype=np.float64)
    if not 0.5 < float(np.linalg.norm(quat)) < 1.5:
        raise NoiseInputError(f"odometry orientation {quat.tolist()} is not a unit quaternion")
    pos = np.asarray(sample.position, dtype=np.float64)
    # Fixed draw order: 3 translation, 1 yaw, 3 + 3 twist.
    trans_draw = rng.standard_normal(3)
    yaw_draw = float(rng.standard_normal())
    lin = gaussian_noise(sample.linear_m_s, rng, params.twist_linear)
    ang = gaussian_noise(sample.angular_rad_s, rng, params.twist_angular)
    if (
        state.stamp_ns is None
        or state.true_position is None
        or state.true_quat_xyzw is None
        or state.noisy_position is None
        or state.noisy_quat_xyzw is None
    ):
        noisy_pos, noisy_quat = pos.copy(), quat / np.linalg.norm(quat)
    else:
        r_prev = Rotation.from_quat(state.true_quat_xyzw)
        r_now = Rotation.from_quat(quat)
        d_pos = r_prev.inv().apply(pos - state.true_position)
        d_rot = r_prev.inv() * r_now
        dt_s = max(0.0, (sample.stamp_ns - state.stamp_ns) * 1e-9)
        dist = float(np.linalg.norm(d_pos))
        turned = float(np.linalg.norm(d_rot.as_rotvec()))
        d_pos_noisy = d_pos + trans_draw * params.translation_per_m * dist
        yaw_sigma = math.hypot(params.yaw_per_rad * turned, params.yaw_per_sqrt_s * math.sqrt(dt_s))
        d_rot_noisy = Rotation.from_rotvec([0.0, 0.0, yaw_draw * yaw_sigma]) * d_rot
        r_noisy_prev = Rotation.from_quat(state.noisy_quat_xyzw)
        noisy_pos = state.noisy_position + r_noisy_prev.apply(d_pos_noisy)
        noisy_quat = (r_noisy_prev * d_rot_noisy).as_quat()
    new_state = OdometryState(sample.stamp_ns, pos, quat, noisy_pos, noisy_quat)
    return OdometrySample(sample.stamp_ns, noisy_pos, noisy_quat, lin, ang), new_state
