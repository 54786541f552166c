"""RGB camera effects: motion blur and rolling shutter from the camera motion, exposure presets,
shot/read noise and JPEG artefacts.

Motion is a constant camera twist during one frame, in the optical frame (z forward, x right,
y down): angular velocity omega (rad/s) and linear velocity v (m/s). A pose at time t relative to
the frame's reference time maps reference pixels to pixels at t with the plane-induced homography
H(t) = K R(t)^T (I - t v n^T / d) K^-1, the scene approximated by a fronto-parallel plane at d.
"""

from __future__ import annotations

import enum
import functools
import itertools
import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation
from scipy.special import ndtri

from grade_noise.errors import NoiseConfigError, NoiseInputError

FloatArray = NDArray[np.float64]
UInt8Array = NDArray[np.uint8]
Pixels = NDArray[np.integer[Any] | np.floating[Any]]

_NORMAL = np.array([0.0, 0.0, 1.0])


def intrinsics_from_hfov(width: int, height: int, hfov_deg: float) -> FloatArray:
    """Pinhole K with f = 0.5 W / tan(hfov / 2) and the principal point at the image centre."""
    f = 0.5 * width / math.tan(math.radians(hfov_deg) / 2.0)
    return np.array([[f, 0.0, 0.5 * width], [0.0, f, 0.5 * height], [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class CameraMotion:
    """Constant camera twist over one frame, in the optical frame."""

    omega_rad_s: FloatArray
    velocity_m_s: FloatArray

    @staticmethod
    def zero() -> CameraMotion:
        """No motion."""
        return CameraMotion(np.zeros(3), np.zeros(3))


def homographies_at(
    k: FloatArray, motion: CameraMotion, ts_s: FloatArray, plane_depth_m: float
) -> FloatArray:
    """(n, 3, 3) H(t) mapping reference pixels to pixels of the camera pose t seconds later."""
    ts = np.asarray(ts_s, dtype=np.float64).reshape(-1)
    rot = Rotation.from_rotvec(ts[:, None] * np.asarray(motion.omega_rad_s)[None, :]).as_matrix()
    trans = ts[:, None] * np.asarray(motion.velocity_m_s)[None, :]
    plane = np.eye(3)[None] - trans[:, :, None] * _NORMAL[None, None, :] / plane_depth_m
    h: FloatArray = k[None] @ np.transpose(rot, (0, 2, 1)) @ plane @ np.linalg.inv(k)[None]
    return h


def homography_at(
    k: FloatArray, motion: CameraMotion, t_s: float, plane_depth_m: float
) -> FloatArray:
    """H(t) mapping reference pixels to pixels of the camera pose t_s seconds later."""
    h: FloatArray = homographies_at(k, motion, np.array([t_s]), plane_depth_m)[0]
    return h


def pixel_motion_px(
    k: FloatArray,
    size_wh: tuple[int, int],
    motion: CameraMotion,
    duration_s: float,
    plane_depth_m: float,
) -> float:
    """Largest displacement of the four image corners and the centre over `duration_s`."""
    w, h = size_wh
    pts = np.array([[0, 0, 1], [w, 0, 1], [0, h, 1], [w, h, 1], [w / 2, h / 2, 1]], dtype=float).T
    hm = homography_at(k, motion, duration_s, plane_depth_m)
    moved = hm @ pts
    moved = moved[:2] / moved[2]
    return float(np.max(np.linalg.norm(moved - pts[:2], axis=0)))


def blur_subposes(travel_px: float, max_step_px: float, max_subposes: int) -> int:
    """Sub-poses needed so that consecutive ones are at most max_step_px apart (1 = no blur)."""
    if travel_px <= 1e-3:
        return 1
    return min(max_subposes, math.ceil(travel_px / max_step_px) + 1)


def _rows_warp(
    image: Pixels,
    k: FloatArray,
    motion: CameraMotion,
    t0_s: float,
    readout_s: float,
    plane_depth_m: float,
) -> Pixels:
    """Warp each row r to the pose at t0_s + (r / h - 0.5) * readout_s.

    Rows are warped in horizontal strips, each with the homography of its centre row; the strip
    count keeps the pose change inside a strip under a quarter pixel.
    """
    h, w = image.shape[:2]
    travel = pixel_motion_px(k, (w, h), motion, readout_s, plane_depth_m) if readout_s else 0.0
    strips = min(h, max(1, math.ceil(travel / 0.25)))
    bounds = np.linspace(0, h, strips + 1).round().astype(int)
    centres = 0.5 * (bounds[:-1] + bounds[1:] - 1)
    times = t0_s + (centres / h - 0.5) * readout_s
    homs = homographies_at(k, motion, times, plane_depth_m)
    out = np.empty_like(image)
    for (r0, r1), hm in zip(itertools.pairwise(bounds), homs, strict=True):
        shift = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, -float(r0)], [0.0, 0.0, 1.0]])
        out[r0:r1] = cv2.warpPerspective(
            image,
            shift @ hm,
            (w, int(r1 - r0)),
            flags=cv2.INTER_LINEAR,
            borderMode=cv2.BORDER_REFLECT,
        )
    return out


def blur_and_shutter(
    image: UInt8Array,
    k: FloatArray,
    motion: CameraMotion,
    exposure_s: float,
    readout_s: float,
    plane_depth_m: float,
    max_step_px: float = 1.0,
    max_subposes: int = 64,
) -> UInt8Array:
    """Motion blur over the exposure (centred on each row's time) plus rolling shutter.

    The blur averages N = 2^m sub-poses evenly spread over the exposure, N >= the sub-poses that
    `blur_subposes` asks for, so a still camera costs nothing and small motions few warps. With a
    constant twist, the pose at t + s is the pose at t moved by H(s) (exactly for rotation, to
    second order for translation), so the average is built by doubling: J <- (J + warp(J, H(d)))/2
    with d = exposure / (N - 1) * 2^i, i.e. m + 1 warps instead of N.
    """
    for name, value in (("exposure_s", exposure_s), ("readout_s", readout_s)):
        if value < 0.0 or not math.isfinite(value):
            raise NoiseInputError(f"{name} = {value!r}: must be finite and >= 0")
    h, w = image.shape[:2]
    travel = pixel_motion_px(k, (w, h), motion, exposure_s, plane_depth_m)
    n = blur_subposes(travel, max_step_px, max_subposes)
    shutter_px = pixel_motion_px(k, (w, h), motion, readout_s, plane_depth_m) if readout_s else 0.0
    if n == 1:
        if shutter_px < 1e-2:
            return image.copy()
        out: UInt8Array = np.asarray(
            _rows_warp(image, k, motion, 0.0, readout_s, plane_depth_m), dtype=np.uint8
        )
        return out
    m = math.ceil(math.log2(n))
    step_s = exposure_s / (2**m - 1)
    acc: Pixels = _rows_warp(
        image.astype(np.float32), k, motion, -0.5 * exposure_s, readout_s, plane_depth_m
    )
    for i in range(m):
        hm = homography_at(k, motion, step_s * 2**i, plane_depth_m)
        moved = cv2.warpPerspective(
            acc, hm, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT
        )
        acc = cv2.addWeighted(acc, 0.5, moved, 0.5, 0.0)
    # values are >= 0: convertScaleAbs rounds and saturates to uint8
    blurred: UInt8Array = np.asarray(cv2.convertScaleAbs(acc), dtype=np.uint8)
    return blurred


def motion_blur(
    image: UInt8Array,
    k: FloatArray,
    motion: CameraMotion,
    exposure_s: float,
    plane_depth_m: float,
    max_step_px: float = 1.0,
    max_subposes: int = 64,
) -> UInt8Array:
    """Motion blur alone (global shutter), see `blur_and_shutter`."""
    return blur_and_shutter(
        image, k, motion, exposure_s, 0.0, plane_depth_m, max_step_px, max_subposes
    )


def rolling_shutter(
    image: UInt8Array, k: FloatArray, motion: CameraMotion, readout_s: float, plane_depth_m: float
) -> UInt8Array:
    """Rolling shutter alone: row r is read at (r / h - 0.5) * readout_s from the middle row."""
    return blur_and_shutter(image, k, motion, 0.0, readout_s, plane_depth_m)


class ExposureMode(enum.Enum):
    """Fixed exposure, or one exposure drawn uniformly once per sequence."""

    FIXED = "fixed"
    PER_SEQUENCE = "per_sequence"


@dataclass(frozen=True)
class RgbNoiseParams:
    """RGB effects (defaults: the GRADE online setting).

    Attributes:
        exposure_mode, exposure_s, exposure_max_s: FIXED uses exposure_s; PER_SEQUENCE draws
            U(0, exposure_max_s) once per sequence.
        readout_mean_s, readout_std_s: rolling-shutter readout, drawn once per sequence from
            N(mean, std) clipped at 0 (std 0 gives exactly the mean; mean 0 is a global shutter).
        blur: apply motion blur.
        max_step_px: largest pixel motion between two blur sub-poses.
        shot_gain: variance of the shot noise per digital number (0 = none).
        read_noise_dn: standard deviation of the read noise in digital numbers.
        jpeg_quality: 1-100 to add JPEG artefacts, 0 = off.
    """

    exposure_mode: ExposureMode = ExposureMode.FIXED
    exposure_s: float = 0.02
    exposure_max_s: float = 0.1
    readout_mean_s: float = 0.015
    readout_std_s: float = 0.006
    blur: bool = True
    max_step_px: float = 1.0
    shot_gain: float = 0.05
    read_noise_dn: float = 1.0
    jpeg_quality: int = 0

    def __post_init__(self) -> None:
        for name in (
            "exposure_s",
            "exposure_max_s",
            "readout_mean_s",
            "readout_std_s",
            "shot_gain",
            "read_noise_dn",
        ):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0.0):
                raise NoiseConfigError(f"RGB noise field '{name}' = {value!r}: must be >= 0")
        if not (math.isfinite(self.max_step_px) and self.max_step_px > 0.0):
            raise NoiseConfigError(
                f"RGB noise field 'max_step_px' = {self.max_step_px!r}: must be > 0"
            )
        if not 0 <= self.jpeg_quality <= 100:
            raise NoiseConfigError(
                f"RGB noise field 'jpeg_quality' = {self.jpeg_quality!r}: must be 0 (off) or 1-100"
            )


RGB_PRESETS: dict[str, RgbNoiseParams] = {
    "online": RgbNoiseParams(),
    "per_sequence_exposure": RgbNoiseParams(exposure_mode=ExposureMode.PER_SEQUENCE),
    "online_jpeg": RgbNoiseParams(jpeg_quality=85),
    "blur_only": RgbNoiseParams(shot_gain=0.0, read_noise_dn=0.0),
    "photometric_only": RgbNoiseParams(blur=False, readout_mean_s=0.0, readout_std_s=0.0),
}


def rgb_preset(name: str) -> RgbNoiseParams:
    """Return the RGB preset `name`; raise NoiseConfigError listing the valid names."""
    try:
        return RGB_PRESETS[name]
    except KeyError:
        raise NoiseConfigError(
            f"unknown RGB noise preset '{name}'; available: {sorted(RGB_PRESETS)}"
        ) from None


@dataclass(frozen=True)
class RgbSequenceState:
    """Exposure and readout time of one sequence (drawn once)."""

    exposure_s: float
    readout_s: float


def initial_rgb_state(params: RgbNoiseParams, rng: np.random.Generator) -> RgbSequenceState:
    """Draw the per-sequence exposure and readout time (always two draws, for stable streams)."""
    u = float(rng.uniform(0.0, 1.0))
    g = float(rng.standard_normal())
    exposure = (
        u * params.exposure_max_s
        if params.exposure_mode is ExposureMode.PER_SEQUENCE
        else params.exposure_s
    )
    readout = max(0.0, params.readout_mean_s + params.readout_std_s * g)
    return RgbSequenceState(exposure, readout)


@functools.lru_cache(maxsize=8)
def _photometric_table(shot_gain: float, read_noise_dn: float) -> NDArray[np.uint8]:
    """Noisy 8-bit value for every (level, 12-bit quantile) pair: round(level + sigma(level) z)
    with z = Phi^-1((q + 0.5) / 4096), flattened to index (level << 12) | q."""
    levels = np.arange(256, dtype=np.float64)[:, None]
    z = ndtri((np.arange(4096) + 0.5) / 4096)[None, :]
    sigma = np.sqrt(levels * shot_gain + read_noise_dn**2)
    table: NDArray[np.uint8] = np.clip(np.rint(levels + sigma * z), 0, 255).astype(np.uint8)
    return table.ravel()


def photometric_noise(
    image: UInt8Array, rng: np.random.Generator, params: RgbNoiseParams
) -> UInt8Array:
    """Shot (signal-dependent) plus read noise, rounded and saturated to 8 bits.

    Each pixel draws 12 random bits, a quantile of the standard normal (4096 equiprobable levels,
    tails cut at 3.5 sigma), and a table maps (level, quantile) to the output value: one gather
    instead of sampling, scaling, adding and rounding per pixel.
    """
    if params.shot_gain == 0.0 and params.read_noise_dn == 0.0:
        return image.copy()
    table = _photometric_table(params.shot_gain, params.read_noise_dn)
    quantile = np.frombuffer(rng.bytes(2 * image.size), dtype="<u2") >> np.uint16(4)
    index = image.reshape(-1).astype(np.uint32) << np.uint32(12)
    index |= quantile
    out: UInt8Array = table[index].reshape(image.shape)
    return out


def jpeg_artefacts(image: UInt8Array, quality: int) -> UInt8Array:
    """Encode and decode with JPEG at `quality` (channel order is irrelevant for the round trip)."""
    ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise NoiseInputError(f"JPEG encoding failed for an image of shape {image.shape}")
    decoded = cv2.imdecode(buf, cv2.IMREAD_UNCHANGED)
    out: UInt8Array = np.asarray(decoded, dtype=np.uint8).reshape(image.shape)
    return out


def rgb_noise(
    image: UInt8Array,
    k: FloatArray,
    motion: CameraMotion,
    state: RgbSequenceState,
    rng: np.random.Generator,
    params: RgbNoiseParams,
    plane_depth_m: float,
) -> UInt8Array:
    """Rolling shutter, motion blur, shot/read noise and JPEG, in the order a camera applies them.

    Blur uses the same homographies for every row: with a constant twist over the frame the motion
    during one row's exposure is, to first order, the same for all rows.
    """
    img = np.asarray(image)
    if img.dtype != np.uint8 or img.ndim != 3 or img.shape[2] != 3:
        raise NoiseInputError(f"RGB image must be uint8 (h, w, 3), got {img.dtype} {img.shape}")
    if not (np.all(np.isfinite(motion.omega_rad_s)) and np.all(np.isfinite(motion.velocity_m_s))):
        raise NoiseInputError("camera motion for blur contains NaN or infinite values")
    exposure_s = state.exposure_s if params.blur else 0.0
    out = blur_and_shutter(
        img, k, motion, exposure_s, state.readout_s, plane_depth_m, params.max_step_px
    )
    out = photometric_noise(out, rng, params)
    if params.jpeg_quality > 0:
        out = jpeg_artefacts(out, params.jpeg_quality)
    return out
