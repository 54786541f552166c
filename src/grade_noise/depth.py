"""Depth noise: stereo (sigma ~ z^2) and structured-light (axial + lateral) models, quantisation,
invalid pixels at depth edges and grazing surfaces, and a min/max range cut-off.

Depth arrays here are float metres, planar z, with NaN for "no return"; `images.py` converts from
and to 32FC1 (0 or NaN = no return) and 16UC1 (0 = no return).
"""

from __future__ import annotations

import enum
import functools
import math
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.types import Float32Array
from grade_noise.errors import NoiseConfigError, NoiseInputError
from grade_noise.presets import check_fields, lookup
from grade_noise.sampling import fast_standard_normal
from grade_noise.scratch import ScratchFrame, scratch_frame


class DepthModel(enum.Enum):
    """Which axial error model to use."""

    STEREO = "stereo"  # error grows with depth squared (subpixel disparity over the baseline)
    STRUCTURED_LIGHT = "structured_light"  # Kinect-like: a + b (z - z0)^2 about a sweet spot
    NONE = "none"  # no axial error: range cut-off and quantisation only


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
        check_fields(self, "depth", ("baseline_m", "subpixel_px", "max_range_m"), positive=True)
        non_negative = (
            "axial_a_m",
            "axial_b_per_m",
            "lateral_per_m",
            "min_range_m",
            "quantisation_m",
            "edge_jump_m",
        )
        check_fields(self, "depth", non_negative)
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


def _cutoff_only(max_range_m: float) -> DepthNoiseParams:
    """A preset that only drops returns beyond `max_range_m` (no noise, edges or incidence)."""
    return DepthNoiseParams(
        model=DepthModel.NONE,
        max_range_m=max_range_m,
        quantisation_m=0.0,
        edge_jump_m=0.0,
        max_incidence_deg=90.0,
    )


DEPTH_PRESETS: dict[str, DepthNoiseParams] = {
    "stereo_3_5m": DepthNoiseParams(max_range_m=3.5),
    "stereo_5m": DepthNoiseParams(max_range_m=5.0),
    "structured_light": DepthNoiseParams(
        model=DepthModel.STRUCTURED_LIGHT, min_range_m=0.5, max_range_m=3.0
    ),
    "cutoff_3_5m": _cutoff_only(3.5),
    "cutoff_5m": _cutoff_only(5.0),
}


def depth_preset(name: str) -> DepthNoiseParams:
    """Return the depth preset `name`; raise NoiseConfigError listing the valid names."""
    return lookup(DEPTH_PRESETS, name, "depth")


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


@functools.lru_cache(maxsize=8)
def _incidence_geometry(
    h: int, w: int, focal_px: float, cos2: float
) -> tuple[Float32Array, Float32Array, Float32Array]:
    """Normalised image coordinates u', v' and cos^2(max incidence) |(u', v', 1)|^2, as (h, w)
    maps: constant for a camera, so computed once."""
    up = (np.arange(w, dtype=np.float32) - np.float32(0.5 * w)) / np.float32(focal_px)
    vp = (np.arange(h, dtype=np.float32) - np.float32(0.5 * h)) / np.float32(focal_px)
    u_map = np.ascontiguousarray(np.broadcast_to(up[None, :], (h, w)))
    v_map = np.ascontiguousarray(np.broadcast_to(vp[:, None], (h, w)))
    limit = np.float32(cos2) * (u_map * u_map + v_map * v_map + np.float32(1.0))
    for arr in (u_map, v_map, limit):
        arr.flags.writeable = False
    return u_map, v_map, limit


def _central_difference(z: Float32Array, axis: int, scale: float, out: Float32Array) -> None:
    """scale * (z[i + 1] - z[i - 1]) along axis into out, 0 on the first and last line (the 3-tap
    Sobel with reflect-101 borders, several times faster than OpenCV's vertical one)."""
    w = z.shape[1]
    step = w if axis == 0 else 1
    flat_in, flat_out = z.reshape(-1), out.reshape(-1)
    # along a row, the flat neighbours are the row's own; the wrapped ones (first and last
    # column) are overwritten below
    inner = flat_out[step:-step]
    np.subtract(flat_in[2 * step :], flat_in[: -2 * step], out=inner)
    inner *= np.float32(scale)
    if axis == 0:
        out[0] = out[-1] = 0.0
    else:
        out[:, 0] = out[:, -1] = 0.0


def _mark_invalid_geometry(
    filled: Float32Array,
    focal_px: float,
    params: DepthNoiseParams,
    invalid: NDArray[np.bool_],
    frame: ScratchFrame,
) -> None:
    """Add to `invalid` the pixels next to depth discontinuities or on surfaces seen at a grazing
    angle. `filled` is the depth with 0 where there is no return."""
    shape = filled.shape
    mask = frame.array(shape, np.bool_)
    grad_u = frame.array(shape, np.float32)
    grad_v = frame.array(shape, np.float32)
    if params.edge_jump_m > 0.0:
        kernel = np.ones((3, 3), np.uint8)
        # the gradient arrays, free until the incidence test below
        high, low = grad_u, grad_v
        cv2.dilate(filled, kernel, dst=high)
        cv2.erode(filled, kernel, dst=low)
        cv2.subtract(high, low, dst=high)
        invalid |= np.greater(high, np.float32(params.edge_jump_m), out=mask)
    if params.max_incidence_deg < 90.0:
        h, w = shape
        # Incidence from depth gradients. With p = z (u', v', 1), u' = (u - cx) / f, and
        # A = f dz/du, B = f dz/dv, the normal is n ~ (-A, -B, z + u' A + v' B) and n . p/z = z,
        # so cos(incidence) = z / (|n| |(u', v', 1)|): invalid where z^2 < c^2 |n|^2 |r|^2.
        cos2 = math.cos(math.radians(params.max_incidence_deg)) ** 2
        u_map, v_map, limit = _incidence_geometry(h, w, float(focal_px), cos2)
        a, b = grad_u, grad_v
        _central_difference(filled, 1, 0.5 * focal_px, a)
        _central_difference(filled, 0, 0.5 * focal_px, b)
        nz = frame.array(shape, np.float32)
        np.copyto(nz, filled)
        cv2.accumulateProduct(u_map, a, nz)
        cv2.accumulateProduct(v_map, b, nz)
        norm2 = np.multiply(nz, nz, out=frame.array(shape, np.float32))
        cv2.accumulateSquare(a, norm2)
        cv2.accumulateSquare(b, norm2)
        norm2 *= limit
        invalid |= np.less(np.multiply(filled, filled, out=nz), norm2, out=mask)


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
    z = np.ascontiguousarray(depth_m, dtype=np.float32)
    if z.ndim != 2:
        raise NoiseInputError(f"depth image must be 2-D (h, w), got shape {z.shape}")
    if not (math.isfinite(focal_px) and focal_px > 0.0):
        raise NoiseInputError(f"focal length focal_px = {focal_px!r}: must be > 0")
    # Intermediates come from the thread's scratch arena: memory the other models use too, so it
    # is still in the cache from their calls.
    with scratch_frame() as frame:
        return _depth_noise(z, focal_px, rng, params, frame)


def _depth_noise(
    z: Float32Array,
    focal_px: float,
    rng: np.random.Generator,
    params: DepthNoiseParams,
    frame: ScratchFrame,
) -> Float32Array:
    """`depth_noise` of a contiguous float32 image, with intermediates from `frame`."""
    shape = z.shape
    mask = frame.array(shape, np.bool_)
    negative = np.less(z, np.float32(0.0), out=mask)
    # -inf is "no return", not a negative depth
    if np.any(negative) and np.any(negative & np.isfinite(z)):
        raise NoiseInputError("depth image contains negative depths; expected metres >= 0")
    # Out of range is judged on the true depth (the sensor does not see that far) and again on the
    # measured one (a reading outside the range is never reported). NaN fails both comparisons.
    valid = np.greater_equal(z, np.float32(params.min_range_m), out=frame.array(shape, np.bool_))
    valid &= np.less_equal(z, np.float32(params.max_range_m), out=mask)
    if params.min_range_m <= 0.0:
        valid &= np.greater(z, np.float32(0.0), out=mask)
    # z where valid, else 0
    filled: Float32Array = frame.array(shape, np.float32)
    filled.fill(0.0)
    cv2.copyTo(z, valid.view(np.uint8), filled)
    invalid = np.logical_not(valid, out=valid)
    if params.edge_jump_m > 0.0 or params.max_incidence_deg < 90.0:
        _mark_invalid_geometry(filled, focal_px, params, invalid, frame)
    z = filled
    if params.model is DepthModel.STRUCTURED_LIGHT and params.lateral_per_m > 0.0:
        # Lateral error: each pixel reads the depth of a neighbour displaced by sigma_L = l * z (m),
        # i.e. l * f pixels, nearest neighbour so no depth is interpolated across edges.
        h, w = shape
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
            invalid.view(np.uint8),
            map_x,
            map_y,
            cv2.INTER_NEAREST,
            borderMode=cv2.BORDER_REPLICATE,
        ).view(np.bool_)
    if params.model is not DepthModel.NONE:
        noise = fast_standard_normal(rng, shape)
        if params.model is DepthModel.STEREO:  # sigma = c z^2, applied in place
            noise *= z
            noise *= z
            noise *= np.float32(params.subpixel_px / (focal_px * params.baseline_m))
        else:
            noise *= depth_sigma_m(z, focal_px, params)
        z = noise.__iadd__(z)  # z + sigma(z) n, in the noise buffer
    elif z is filled:  # the output must not be a scratch array
        z = z.copy()
    if params.quantisation_m > 0.0:
        q = np.float32(params.quantisation_m)
        z /= q
        np.rint(z, out=z)
        z *= q
    invalid |= np.less(z, np.float32(params.min_range_m), out=mask)
    invalid |= np.greater(z, np.float32(params.max_range_m), out=mask)
    # z is this call's own new array (the noise, a remap output or a copy), never the input
    out: Float32Array = z
    # NaN where invalid: a masked copy has no data-dependent branches, unlike numpy's masked
    # assignment, which slows to ~3 ns a pixel on scattered invalid pixels
    nan = frame.array(shape, np.float32)
    nan.fill(np.float32(np.nan))
    cv2.copyTo(nan, invalid.view(np.uint8), out)
    return out
