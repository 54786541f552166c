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
import math
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray
from scipy.special import ndtri

from grade_common.types import FloatArray, UInt8Array
from grade_noise.errors import NoiseConfigError, NoiseInputError
from grade_noise.presets import check_fields, lookup
from grade_noise.sampling import random_uint16
from grade_noise.scratch import ScratchFrame, scratch_frame

Pixels = NDArray[np.integer[Any] | np.floating[Any]]


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


@dataclass(frozen=True)
class _HomographyBasis:
    """H(t) = sum_i c_i(t) B_i for one camera, twist and plane (see `homographies_at`)."""

    basis: FloatArray  # (6, 9)
    theta_rad_s: float

    @staticmethod
    def of(k: FloatArray, motion: CameraMotion, plane_depth_m: float) -> _HomographyBasis:
        # The six 3x3 terms in plain floats: a handful of numpy calls on 3x3 arrays cost more
        # than the arithmetic, the more so with the caches cold from the image passes.
        ox, oy, oz = np.asarray(motion.omega_rad_s, dtype=np.float64).tolist()
        vx, vy, vz = np.asarray(motion.velocity_m_s, dtype=np.float64).tolist()
        theta = math.sqrt(ox * ox + oy * oy + oz * oz)
        ax, ay, az = (ox / theta, oy / theta, oz / theta) if theta > 0.0 else (0.0, 0.0, 0.0)
        px, py, pz = vx / plane_depth_m, vy / plane_depth_m, vz / plane_depth_m  # M = p n^T
        axis = [[0.0, -az, ay], [az, 0.0, -ax], [-ay, ax, 0.0]]  # S
        norm2 = ax * ax + ay * ay + az * az
        aa = (ax, ay, az)
        axis2 = [
            [ai * aj - (norm2 if i == j else 0.0) for j, aj in enumerate(aa)]
            for i, ai in enumerate(aa)
        ]  # S^2 = a a^T - |a|^2 I
        # only the third column of M (n = e_z) and of S M, S^2 M is nonzero
        axis_p = [r[0] * px + r[1] * py + r[2] * pz for r in axis]
        axis2_p = [r[0] * px + r[1] * py + r[2] * pz for r in axis2]
        terms = np.array(
            [
                [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                [[0.0, 0.0, -px], [0.0, 0.0, -py], [0.0, 0.0, -pz]],
                [[-x for x in row] for row in axis],
                [[0.0, 0.0, x] for x in axis_p],
                axis2,
                [[0.0, 0.0, -x] for x in axis2_p],
            ]
        )  # R^T = I - sin S + (1 - cos) S^2 since S^T = -S: coefficients 1, t, sin, t sin,
        # 1 - cos, t (1 - cos)
        basis = (k @ terms @ np.linalg.inv(k)).reshape(6, 9)
        return _HomographyBasis(basis, theta)

    def at(self, ts_s: FloatArray) -> FloatArray:
        """(n, 3, 3) H(t) for the n times ts_s."""
        ts = np.asarray(ts_s, dtype=np.float64).reshape(-1)
        theta = self.theta_rad_s
        sin = np.sin(theta * ts)
        one_minus_cos = 2.0 * np.sin(0.5 * theta * ts) ** 2  # 1 - cos without cancellation
        coeffs = np.stack(
            [np.ones_like(ts), ts, sin, ts * sin, one_minus_cos, ts * one_minus_cos], 1
        )
        h: FloatArray = (coeffs @ self.basis).reshape(-1, 3, 3)
        return h


def homographies_at(
    k: FloatArray, motion: CameraMotion, ts_s: FloatArray, plane_depth_m: float
) -> FloatArray:
    """(n, 3, 3) H(t) mapping reference pixels to pixels of the camera pose t seconds later.

    With a constant twist, R(t) = I + sin(theta t) S + (1 - cos(theta t)) S^2 (Rodrigues, S the
    cross-product matrix of the unit axis) and the plane term is I - t M, M = v n^T / d, so
    H(t) = K R(t)^T (I - t M) K^-1 is a fixed combination of six matrices with coefficients
    (1, t, sin, t sin, 1 - cos, t (1 - cos)): one small matrix product for all n times instead of
    n rotations (this runs per strip and per blur step, so its cost adds up).
    """
    return _HomographyBasis.of(k, motion, plane_depth_m).at(ts_s)


def homography_at(
    k: FloatArray, motion: CameraMotion, t_s: float, plane_depth_m: float
) -> FloatArray:
    """H(t) mapping reference pixels to pixels of the camera pose t_s seconds later."""
    h: FloatArray = homographies_at(k, motion, np.array([t_s]), plane_depth_m)[0]
    return h


def _pixel_motions_px(
    homographies: _HomographyBasis, size_wh: tuple[int, int], durations_s: tuple[float, ...]
) -> tuple[float, ...]:
    """`pixel_motion_px` for several durations at once (0 for a zero duration)."""
    w, h = float(size_wh[0]), float(size_wh[1])
    corners = ((0.0, 0.0), (w, 0.0), (0.0, h), (w, h), (0.5 * w, 0.5 * h))
    travel: list[float] = []
    # plain floats: five points per homography
    for hm, duration in zip(
        homographies.at(np.asarray(durations_s, dtype=float)).tolist(), durations_s, strict=True
    ):
        (h00, h01, h02), (h10, h11, h12), (h20, h21, h22) = hm
        largest = 0.0
        for x, y in corners:
            q = h20 * x + h21 * y + h22
            dx = (h00 * x + h01 * y + h02) / q - x
            dy = (h10 * x + h11 * y + h12) / q - y
            largest = max(largest, dx * dx + dy * dy)
        travel.append(math.sqrt(largest) if duration else 0.0)
    return tuple(travel)


def pixel_motion_px(
    k: FloatArray,
    size_wh: tuple[int, int],
    motion: CameraMotion,
    duration_s: float,
    plane_depth_m: float,
) -> float:
    """Largest displacement of the four image corners and the centre over `duration_s`."""
    basis = _HomographyBasis.of(k, motion, plane_depth_m)
    return _pixel_motions_px(basis, size_wh, (duration_s,))[0]


def blur_subposes(travel_px: float, max_step_px: float, max_subposes: int) -> int:
    """Sub-poses needed so that consecutive ones are at most max_step_px apart (1 = no blur)."""
    if travel_px <= 1e-3:
        return 1
    return min(max_subposes, math.ceil(travel_px / max_step_px) + 1)


def _warp(image: Pixels, hm: FloatArray, dsize_wh: tuple[int, int], dst: Pixels) -> None:
    """Bilinear perspective warp with reflected borders into dst (same dtype and channels)."""
    out = cv2.warpPerspective(
        image, hm, dsize_wh, dst=dst, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT
    )
    # OpenCV silently allocates a new output when dst does not fit; that would lose the result
    assert out is dst, "warp output buffer does not match the image"


def _rows_warp(
    image: Pixels,
    homographies: _HomographyBasis,
    t0_s: float,
    readout_s: float,
    travel_px: float,
    out: Pixels,
) -> None:
    """Warp each row r of image into out, to the pose at t0_s + (r / h - 0.5) * readout_s.

    Rows are warped in horizontal strips, each with the homography of its centre row; the strip
    count keeps the pose change inside a strip (travel_px over the readout) under a quarter pixel.
    """
    h, w = image.shape[:2]
    strips = min(h, max(1, math.ceil(travel_px / 0.25)))
    bounds = np.linspace(0, h, strips + 1).round().astype(int)
    centres = 0.5 * (bounds[:-1] + bounds[1:] - 1)
    times = t0_s + (centres / h - 0.5) * readout_s
    homs = homographies.at(times)
    # shift @ H for each strip: the strip's output row 0 is image row r0
    homs[:, 1, :] -= bounds[:-1, None] * homs[:, 2, :]
    rows = bounds.tolist()
    for hm, r0, r1 in zip(homs, rows[:-1], rows[1:], strict=True):
        _warp(image, hm, (w, r1 - r0), out[r0:r1])


def _padded(image: UInt8Array, frame: ScratchFrame) -> UInt8Array:
    """The image with 3 channels padded to 4 (a scratch array), else itself, contiguous: OpenCV
    warps 4-channel rows with SIMD, about twice as fast as 3-channel ones."""
    src = np.ascontiguousarray(image)
    if src.ndim == 3 and src.shape[2] == 3:
        dst = frame.array((*src.shape[:2], 4), np.uint8)
        cv2.cvtColor(src, cv2.COLOR_RGB2RGBA, dst=dst)
        return dst
    return src


def _unpadded(padded: UInt8Array, channels: int) -> UInt8Array:
    """A new array with `_padded`'s padding channel dropped."""
    if channels == 3:
        out: UInt8Array = np.asarray(cv2.cvtColor(padded, cv2.COLOR_RGBA2RGB), dtype=np.uint8)
        return out
    return padded.copy()


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
    with d = exposure / (N - 1) * 2^i, i.e. m + 1 warps instead of N. The sum is kept in float32.
    """
    for name, value in (("exposure_s", exposure_s), ("readout_s", readout_s)):
        if value < 0.0 or not math.isfinite(value):
            raise NoiseInputError(f"{name} = {value!r}: must be finite and >= 0")
    if image.dtype != np.uint8 or image.ndim not in (2, 3):
        raise NoiseInputError(
            f"image must be uint8 (h, w) or (h, w, channels), got {image.dtype} {image.shape}"
        )
    h, w = image.shape[:2]
    channels = image.shape[2] if image.ndim == 3 else 1
    homographies = _HomographyBasis.of(k, motion, plane_depth_m)
    travel, shutter_px = _pixel_motions_px(homographies, (w, h), (exposure_s, readout_s))
    n = blur_subposes(travel, max_step_px, max_subposes)
    if n == 1 and shutter_px < 1e-2:
        return image.copy()
    with scratch_frame() as frame:
        src = _padded(image, frame)
        if n == 1:
            shuttered = frame.array(src.shape, np.uint8)
            _rows_warp(src, homographies, 0.0, readout_s, shutter_px, shuttered)
            return _unpadded(shuttered, channels)
        src_f32 = frame.array(src.shape, np.float32)
        np.copyto(src_f32, src)
        acc = frame.array(src.shape, np.float32)
        _rows_warp(src_f32, homographies, -0.5 * exposure_s, readout_s, shutter_px, acc)
        m = math.ceil(math.log2(n))
        step_s = exposure_s / (2**m - 1)
        moved = src_f32  # free again
        homs = homographies.at(step_s * 2.0 ** np.arange(m))
        for hm in homs[:-1]:
            _warp(acc, hm, (w, h), moved)
            cv2.addWeighted(acc, 0.5, moved, 0.5, 0.0, dst=acc)
        _warp(acc, homs[-1], (w, h), moved)
        # the last average goes straight to uint8 (rounded, saturated); a padded copy of the input
        # is free again by now and takes it (a smaller working set is a faster one)
        blurred = src if channels == 3 else frame.array(src.shape, np.uint8)
        cv2.addWeighted(acc, 0.5, moved, 0.5, 0.0, dst=blurred, dtype=cv2.CV_8U)
        return _unpadded(blurred, channels)


def motion_blur(
    image: UInt8Array, k: FloatArray, motion: CameraMotion, exposure_s: float, plane_depth_m: float
) -> UInt8Array:
    """Motion blur alone (global shutter), see `blur_and_shutter`."""
    return blur_and_shutter(image, k, motion, exposure_s, 0.0, plane_depth_m)


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
        non_negative = (
            "exposure_s",
            "exposure_max_s",
            "readout_mean_s",
            "readout_std_s",
            "shot_gain",
            "read_noise_dn",
        )
        check_fields(self, "RGB", non_negative)
        check_fields(self, "RGB", ("max_step_px",), positive=True)
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
    return lookup(RGB_PRESETS, name, "RGB")


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


_QUANTILE_Z: FloatArray = ndtri((np.arange(65536) + 0.5) / 65536)


def _sigma_dn(shot_gain: float, read_noise_dn: float) -> FloatArray:
    """Noise standard deviation of each 8-bit level: sqrt(level * shot_gain + read_noise^2)."""
    sigma: FloatArray = np.sqrt(np.arange(256, dtype=np.float64) * shot_gain + read_noise_dn**2)
    return sigma


def _exact_noisy(
    levels: NDArray[np.uint8], words: NDArray[np.uint16], sigma: FloatArray
) -> NDArray[np.uint8]:
    """The defining formula: clip(rint(level + sigma(level) Phi^-1((u + 0.5) / 65536)), 0, 255)."""
    value = np.rint(levels + sigma[levels] * _QUANTILE_Z[words])
    out: NDArray[np.uint8] = np.clip(value, 0, 255).astype(np.uint8)
    return out


@functools.lru_cache(maxsize=8)
def _photometric_table(shot_gain: float, read_noise_dn: float) -> tuple[NDArray[np.uint16], int]:
    """Lookup table of `_exact_noisy` for a 16-bit uniform u = 256 q + v, and the number of
    buckets k at each end of the q range it cannot represent.

    Within the bucket q of one level the exact value is base for v < thr and base + 1 from there
    on (the bucket holds at most one rounding boundary) everywhere but in the k outermost buckets.
    The entry base * 256 + (256 - thr) (base * 256 without a boundary), minus 256 q modulo 2^16 so
    that adding the whole word u = 256 q + v adds just v, gives the value as (entry + u) >> 8 in
    16-bit arithmetic, without overflow (base <= 254 where there is a boundary). Indexed by
    (q << 8) | level.
    """
    sigma = _sigma_dn(shot_gain, read_noise_dn)
    words = np.arange(65536, dtype=np.uint16)
    table = np.zeros((256, 256), dtype=np.int64)  # [q, level]
    wide_lo, wide_hi = 0, 0
    for level in range(256):
        exact = _exact_noisy(np.full(65536, level, np.uint8), words, sigma).reshape(256, 256)
        base = exact[:, 0].astype(np.int64)
        span = exact[:, 255].astype(np.int64) - base
        # buckets widen towards the tails: the wide ones lie within the outermost k
        wide = np.flatnonzero(span > 1)
        wide_lo = max(wide_lo, int(wide[wide < 128].max(initial=-1)) + 1)
        wide_hi = max(wide_hi, 256 - int(wide[wide >= 128].min(initial=256)))
        thr = np.count_nonzero(exact == exact[:, :1], axis=1)
        table[:, level] = base * 256 + np.where(span == 1, 256 - thr, 0)
    table -= np.arange(256, dtype=np.int64)[:, None] * 256
    packed: NDArray[np.uint16] = np.mod(table, 65536).astype(np.uint16).ravel()
    packed.flags.writeable = False
    return packed, max(wide_lo, wide_hi)


def photometric_noise(
    image: UInt8Array, rng: np.random.Generator, params: RgbNoiseParams
) -> UInt8Array:
    """Shot (signal-dependent) plus read noise, rounded and saturated to 8 bits.

    Each pixel value is clip(rint(level + sigma(level) z)) with z = Phi^-1((u + 0.5) / 65536)
    for a uniform 16-bit u (the standard normal quantised to 65536 equiprobable levels, tails at
    4.17 sigma), computed exactly but without floating point: a 128 KiB table (cache resident)
    indexed by the level and the high byte of u gives the value up to one rounding boundary set
    by the low byte; the few pixels in the outermost quantile buckets are computed directly.
    """
    if params.shot_gain == 0.0 and params.read_noise_dn == 0.0:
        return image.copy()
    noisy = np.ascontiguousarray(image).copy()
    _photometric_in_place(noisy.reshape(-1), rng, params)
    return noisy


def _photometric_in_place(
    flat: NDArray[np.uint8], rng: np.random.Generator, params: RgbNoiseParams
) -> None:
    """`photometric_noise` of a contiguous flat array, overwriting it."""
    table, wide = _photometric_table(params.shot_gain, params.read_noise_dn)
    sigma = _sigma_dn(params.shot_gain, params.read_noise_dn)
    if wide >= 128:  # noise of tens of levels: the table covers no bucket
        flat[:] = _exact_noisy(flat, random_uint16(rng, flat.size), sigma)
        return
    size = flat.size
    words = random_uint16(rng, size)
    with scratch_frame() as frame:
        outer = np.empty(0, np.intp)
        if wide:
            # pixels whose high byte q is < wide or >= 256 - wide: (q + wide) mod 256 < 2 wide
            rotated = np.add(words, np.uint16(wide << 8), out=frame.array((size,), np.uint16))
            outer = np.flatnonzero(
                np.less(rotated, np.uint16(2 * wide << 8), out=frame.array((size,), np.bool_))
            )
        outer_levels = flat[outer]  # before the image is overwritten
        # Blocks small enough to stay in the cache through all passes.
        block = min(size, _PHOTOMETRIC_BLOCK)
        index_buf = frame.array((block,), np.uint16)
        value_buf = frame.array((block,), np.uint16)
        for start in range(0, size, block):
            levels = flat[start : start + block]
            block_words = words[start : start + block]
            index, value = index_buf[: levels.size], value_buf[: levels.size]
            np.bitwise_and(block_words, np.uint16(0xFF00), out=index)  # (q << 8) | level
            np.bitwise_or(index, levels, out=index)
            np.take(table, index, out=value, mode="wrap")  # "wrap": no bounds check
            value += block_words
            value >>= np.uint16(8)
            np.copyto(levels, value, casting="unsafe")
    flat[outer] = _exact_noisy(outer_levels, words[outer], sigma)


_PHOTOMETRIC_BLOCK = 1 << 17


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
    if params.shot_gain > 0.0 or params.read_noise_dn > 0.0:
        # out is this call's own new array: noise it in place
        out = np.ascontiguousarray(out)
        _photometric_in_place(out.reshape(-1), rng, params)
    if params.jpeg_quality > 0:
        out = jpeg_artefacts(out, params.jpeg_quality)
    return out
