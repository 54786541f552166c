"""Depth noise: stereo (sigma ~ z^2) and structured-light (axial + lateral) models, quantisation,
invalid pixels at depth edges and grazing surfaces, and a min/max range cut-off.

Depth arrays here are float metres, planar z, with NaN for "no return"; `images.py` converts from
and to 32FC1 (0 or NaN = no return) and 16UC1 (0 = no return).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_noise.errors import NoiseConfigError, NoiseInputError
from grade_noise.sampling import fast_standard_normal

Float32Array = NDArray[np.float32]


class DepthModel(enum.Enum):
    """Which axial error model to use."""

    STEREO = "stereo"
    STRUCTURED_LIGHT = "structured_light"
    NONE = "none"


@dataclass(frozen=True)
class DepthNoiseParams:
    """Parameters of the depth noise (defaults: RealSense-like stereo from the reference notes).

    Attributes:
        model: axial error model.
        baseline_m, subpixel_px: stereo sigma(z) = z^2 * subpixel / (f * baseline).
        axial_a_m, axial_b_per_m, axial_z0_m: structured light sigma(z) = a + b (z - z0)^2.
        lateral_per_m: structured light lateral sigma in metres per metre of depth.
        min_range_m, max_range_m: valid range; outside -> invalid.
        quantisation_m: output step (0 = none).
        edge_jump_m: pixels next to a depth jump larger than this are invalid (0 = off).
        max_incidence_deg: pixels seen at a larger angle to the surface normal are invalid.
    """

    model: DepthModel = DepthModel.STEREO
    baseline_m: float = 0.05
    subpixel_px: float = 0.2
    axial_a_m: float = 0.0012
    axial_b_per_m: float = 0.0019
    axial_z0_m: float = 0.4
    lateral_per_m: float = 0.0014
    min_range_m: float = 0.01
    max_range_m: float = 3.5
    quantisation_m: float = 0.001
    edge_jump_m: float = 0.1
    max_incidence_deg: float = 80.0

    def __post_init__(self) -> None:
        positive = ("baseline_m", "subpixel_px", "max_range_m")
        non_negative = (
            "axial_a_m",
            "axial_b_per_m",
            "lateral_per_m",
            "min_range_m",
            "quantisation_m",
            "edge_jump_m",
        )
        for name in positive + non_negative:
            value = getattr(self, name)
            ok = math.isfinite(value) and (value > 0.0 if name in positive else value >= 0.0)
            if not ok:
                bound = "> 0" if name in positive else ">= 0"
                raise NoiseConfigError(f"depth noise field '{name}' = {value!r}: must be {bound}")
        if self.min_range_m >= self.max_range_m:
            raise NoiseConfigError(
                f"depth noise field 'min_range_m' = {self.min_range_m}: must be < max_range_m "
                f"({self.max_range_m})"
            )
        if not 0.0 < self.max_incidence_deg <= 90.0:
            raise NoiseConfigError(
                f"depth noise field 'max_incidence_deg' = {self.max_incidence_deg!r}: "
                "must be in (0, 90]"
            )


DEPTH_PRESETS: dict[str, DepthNoiseParams] = {
    "stereo_3_5m": DepthNoiseParams(max_range_m=3.5),
    "stereo_5m": DepthNoiseParams(max_range_m=5.0),
    "structured_light": DepthNoiseParams(
        model=DepthModel.STRUCTURED_LIGHT, min_range_m=0.5, max_range_m=3.0
    ),
    "cutoff_3_5m": DepthNoiseParams(
        model=DepthModel.NONE,
        max_range_m=3.5,
        quantisation_m=0.0,
        edge_jump_m=0.0,
        max_incidence_deg=90.0,
    ),
    "cutoff_5m": DepthNoiseParams(
        model=DepthModel.NONE,
        max_range_m=5.0,
        quantisation_m=0.0,
        edge_jump_m=0.0,
        max_incidence_deg=90.0,
    ),
}


def depth_preset(name: str) -> DepthNoiseParams:
    """Return the depth preset `name`; raise NoiseConfigError listing the valid names."""
    try:
        return DEPTH_PRESETS[name]
    except KeyError:
        raise NoiseConfigError(
            f"unknown depth noise preset '{name}'; available: {sorted(DEPTH_PRESETS)}"
        ) from None


def depth_sigma_m(
    depth_m: Float32Array | float, focal_px: float, params: DepthNoiseParams
) -> Float32Array:
    """Axial standard deviation sigma(z) of the model at depth z (metres)."""
    z = np.asarray(depth_m, dtype=np.float32)
    if params.model is DepthModel.STEREO:
        return z * z * np.float32(params.subpixel_px / (focal_px * params.baseline_m))
    if params.model is DepthModel.STRUCTURED_LIGHT:
        dz = z - np.float32(params.axial_z0_m)
        return np.float32(params.axial_a_m) + np.float32(params.axial_b_per_m) * dz * dz
    return np.zeros_like(z)


def _invalid_geometry(
    z: Float32Array, focal_px: float, params: DepthNoiseParams
) -> NDArray[np.bool_]:
    """Pixels next to depth discontinuities or on surfaces seen at a grazing angle."""
    invalid = np.zeros(z.shape, dtype=bool)
    filled = np.where(np.isfinite(z), z, 0.0).astype(np.float32)
    if params.edge_jump_m > 0.0:
        kernel = np.ones((3, 3), np.uint8)
        jump = cv2.dilate(filled, kernel) - cv2.erode(filled, kernel)
        invalid |= jump > params.edge_jump_m
    if params.max_incidence_deg < 90.0:
        h, w = z.shape
        # Incidence from depth gradients. With p = z (u', v', 1), u' = (u - cx) / f, and
        # A = f dz/du, B = f dz/dv, the normal is n ~ (-A, -B, z + u' A + v' B) and n . p/z = z,
        # so cos(incidence) = z / (|n| |(u', v', 1)|): invalid where z^2 < c^2 |n|^2 |r|^2.
        a = cv2.Sobel(filled, cv2.CV_32F, 1, 0, ksize=1, scale=0.5 * focal_px)
        b = cv2.Sobel(filled, cv2.CV_32F, 0, 1, ksize=1, scale=0.5 * focal_px)
        up = (np.arange(w, dtype=np.float32) - np.float32(0.5 * w)) / np.float32(focal_px)
        vp = (np.arange(h, dtype=np.float32) - np.float32(0.5 * h)) / np.float32(focal_px)
        nz = filled + up[None, :] * a + vp[:, None] * b
        ray2 = up[None, :] ** 2 + vp[:, None] ** 2 + np.float32(1.0)
        cos2 = np.float32(math.cos(math.radians(params.max_incidence_deg)) ** 2)
        invalid |= filled * filled < cos2 * (a * a + b * b + nz * nz) * ray2
    return invalid


def depth_noise(
    depth_m: Float32Array, focal_px: float, rng: np.random.Generator, params: DepthNoiseParams
) -> Float32Array:
    """Return a noisy copy of a float depth image in metres; invalid pixels become NaN.

    Args:
        depth_m: (h, w) planar depth; NaN, inf and 0 mean "no return" and stay invalid.
        focal_px: focal length in pixels (sets the stereo error and the lateral shift).
        rng: the stream's generator.
        params: model and validity parameters.

    Raises:
        NoiseInputError: not a 2-D image or negative depth values.
    """
    z = np.asarray(depth_m, dtype=np.float32)
    if z.ndim != 2:
        raise NoiseInputError(f"depth image must be 2-D (h, w), got shape {z.shape}")
    if not (math.isfinite(focal_px) and focal_px > 0.0):
        raise NoiseInputError(f"focal length focal_px = {focal_px!r}: must be > 0")
    finite = np.isfinite(z)
    if np.any(z[finite] < 0.0):
        raise NoiseInputError("depth image contains negative depths; expected metres >= 0")
    # Out of range is judged on the true depth (the sensor does not see that far) and again on the
    # measured one (a reading outside the range is never reported).
    no_return = ~finite | (z <= 0.0) | (z < params.min_range_m) | (z > params.max_range_m)
    invalid = no_return | _invalid_geometry(np.where(no_return, np.nan, z), focal_px, params)
    z = np.where(no_return, np.float32(0.0), z)
    if params.model is DepthModel.STRUCTURED_LIGHT and params.lateral_per_m > 0.0:
        # Lateral error: each pixel reads the depth of a neighbour displaced by sigma_L = l * z (m),
        # i.e. l * f pixels, nearest neighbour so no depth is interpolated across edges.
        h, w = z.shape
        sigma_px = np.float32(params.lateral_per_m * focal_px)
        du = fast_standard_normal(rng, (h, w)) * sigma_px
        dv = fast_standard_normal(rng, (h, w)) * sigma_px
        map_x = np.arange(w, dtype=np.float32)[None, :] + du
        map_y = np.arange(h, dtype=np.float32)[:, None] + dv
        z = np.asarray(
            cv2.remap(z, map_x, map_y, cv2.INTER_NEAREST, borderMode=cv2.BORDER_REPLICATE),
            dtype=np.float32,
        )
        invalid = cv2.remap(
            invalid.astype(np.uint8),
            map_x,
            map_y,
            cv2.INTER_NEAREST,
            borderMode=cv2.BORDER_REPLICATE,
        ).astype(bool)
    if params.model is not DepthModel.NONE:
        z = z + fast_standard_normal(rng, z.shape) * depth_sigma_m(z, focal_px, params)
    if params.quantisation_m > 0.0:
        q = np.float32(params.quantisation_m)
        z = (np.round(z / q) * q).astype(np.float32)
    invalid |= (z < params.min_range_m) | (z > params.max_range_m)
    out: Float32Array = np.where(invalid, np.float32(np.nan), z).astype(np.float32)
    return out
