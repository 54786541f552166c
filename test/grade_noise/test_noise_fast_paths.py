"""The fast paths of the noise models compute exactly what their defining formulas say: the
table-driven photometric noise, the single-message IMU path, the closed-form homographies, the
reused scratch buffers (never visible in outputs) and the 16-bit draws."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from scipy.special import ndtr, ndtri

from grade_noise.errors import NoiseInputError
from grade_noise.imu import imu_noise, imu_preset, initial_imu_state
from grade_noise.rgb import (
    CameraMotion,
    RgbNoiseParams,
    blur_and_shutter,
    homographies_at,
    intrinsics_from_hfov,
    photometric_noise,
)
from grade_noise.sampling import fast_standard_normal, random_uint16

K = intrinsics_from_hfov(320, 240, 88.95)


def _photometric_reference(
    image: np.ndarray, words: np.ndarray, params: RgbNoiseParams
) -> np.ndarray:
    """clip(rint(level + sigma(level) Phi^-1((u + 0.5) / 65536))) in float64, pixel by pixel."""
    level = image.reshape(-1).astype(np.float64)
    sigma = np.sqrt(level * params.shot_gain + params.read_noise_dn**2)
    z = ndtri((words.astype(np.float64) + 0.5) / 65536)
    return np.clip(np.rint(level + sigma * z), 0, 255).astype(np.uint8).reshape(image.shape)


@pytest.mark.parametrize(
    ("shot_gain", "read_noise_dn"),
    [
        (0.05, 1.0),
        (0.0, 1.0),
        (0.0, 0.3),
        (0.05, 0.0),
        (0.5, 3.0),
        (5.0, 10.0),
        (60.0, 40.0),
    ],
)
@pytest.mark.parametrize("shape", [(240, 320, 3), (7, 5, 3), (1, 1, 3), (300, 301, 3)])
def test_photometric_table_equals_the_formula(
    shot_gain: float, read_noise_dn: float, shape: tuple[int, int, int]
) -> None:
    params = RgbNoiseParams(shot_gain=shot_gain, read_noise_dn=read_noise_dn)
    image = np.random.default_rng(3).integers(0, 256, shape, dtype=np.uint8)
    rng = np.random.default_rng(7)
    noisy = photometric_noise(image, rng, params)
    reference_rng = np.random.default_rng(7)
    words = random_uint16(reference_rng, image.size)
    np.testing.assert_array_equal(noisy, _photometric_reference(image, words, params))
    # the generator advanced exactly as by one draw of the whole image's words
    assert rng.random() == reference_rng.random()


def test_photometric_tails_reach_beyond_the_central_buckets() -> None:
    # Level 128, sigma = sqrt(0.05 * 128 + 1) = 2.72: the 16-bit quantiles reach 4.17 sigma
    # (11 levels), beyond the outermost 1/256 of the draws (2.66 sigma, 7 levels) that the table
    # alone cannot resolve; |offset| >= 8 means |sigma z| >= 7.5.
    params = RgbNoiseParams(shot_gain=0.05, read_noise_dn=1.0)
    noisy = (
        photometric_noise(
            np.full((600, 600, 3), 128, np.uint8), np.random.default_rng(1), params
        ).astype(int)
        - 128
    )
    sigma = np.sqrt(0.05 * 128 + 1.0)
    assert np.std(noisy) == pytest.approx(sigma, rel=0.01)
    assert noisy.min() <= -10
    assert noisy.max() >= 10
    assert np.mean(np.abs(noisy) >= 8) == pytest.approx(2 * ndtr(-7.5 / sigma), rel=0.05)


def test_outputs_never_share_scratch_buffers() -> None:
    rng = np.random.default_rng(0)
    motion = CameraMotion(np.array([0.1, 0.6, 0.2]), np.array([0.2, 0.0, 0.3]))
    first_in = rng.integers(0, 256, (240, 320, 3), dtype=np.uint8)
    second_in = rng.integers(0, 256, (240, 320, 3), dtype=np.uint8)
    params = RgbNoiseParams()
    for func in (
        lambda img: blur_and_shutter(img, K, motion, 0.02, 0.015, 2.0),
        lambda img: blur_and_shutter(img, K, motion, 0.0, 0.015, 2.0),
        lambda img: photometric_noise(img, np.random.default_rng(5), params),
    ):
        first = func(first_in)
        kept = first.copy()
        second = func(second_in)
        np.testing.assert_array_equal(first, kept)
        assert not np.shares_memory(first, second)
        np.testing.assert_array_equal(func(first_in), kept)


def test_single_channel_and_rgba_images_blur_too() -> None:
    motion = CameraMotion(np.array([0.0, 0.8, 0.0]), np.zeros(3))
    rgb = np.random.default_rng(2).integers(0, 256, (240, 320, 3), dtype=np.uint8)
    out_rgb = blur_and_shutter(rgb, K, motion, 0.02, 0.01, 2.0)
    for channel in range(3):
        out_gray = blur_and_shutter(
            np.ascontiguousarray(rgb[:, :, channel]), K, motion, 0.02, 0.01, 2.0
        )
        assert out_gray.shape == (240, 320)
        np.testing.assert_array_equal(out_gray, out_rgb[:, :, channel])


def test_homographies_match_rotation_matrices() -> None:
    rng = np.random.default_rng(4)
    k_inv = np.linalg.inv(K)
    for omega in (np.zeros(3), np.array([1e-12, 0.0, 0.0]), rng.normal(size=3)):
        motion = CameraMotion(omega, rng.normal(size=3))
        ts = np.array([-0.03, 0.0, 0.011, 0.05])
        rot = Rotation.from_rotvec(ts[:, None] * omega[None, :]).as_matrix()
        plane = (
            np.eye(3)[None]
            - (ts[:, None] * motion.velocity_m_s)[:, :, None]
            * np.array([0.0, 0.0, 1.0])[None, None, :]
            / 2.0
        )
        expected = K[None] @ np.transpose(rot, (0, 2, 1)) @ plane @ k_inv[None]
        np.testing.assert_allclose(homographies_at(K, motion, ts, 2.0), expected, atol=1e-9)


def test_single_imu_message_equals_a_block_of_one() -> None:
    params = imu_preset("consumer")
    gyro, accel = np.array([0.1, -0.2, 0.3]), np.array([0.0, 0.2, 9.81])
    rng_a, rng_b = np.random.default_rng(9), np.random.default_rng(9)
    state_a, state_b = initial_imu_state(params, rng_a), initial_imu_state(params, rng_b)
    for step in range(20):
        dt_s = 1 / 240 + 1e-5 * step
        g_a, a_a, state_a = imu_noise(gyro, accel, dt_s, state_a, rng_a, params)
        g_b, a_b, state_b = imu_noise(gyro[None], accel[None], dt_s, state_b, rng_b, params)
        np.testing.assert_array_equal(g_a, g_b[0])
        np.testing.assert_array_equal(a_a, a_b[0])
        np.testing.assert_array_equal(state_a.gyro_bias, state_b.gyro_bias)
        np.testing.assert_array_equal(state_a.accel_bias, state_b.accel_bias)


@pytest.mark.parametrize("bad", [np.inf, -np.inf, np.nan])
def test_single_imu_message_rejects_non_finite(bad: float) -> None:
    params = imu_preset("drone")
    rng = np.random.default_rng(0)
    with pytest.raises(NoiseInputError, match="NaN or infinite"):
        imu_noise(
            np.zeros(3),
            np.array([0.0, bad, 9.81]),
            0.01,
            initial_imu_state(params, rng),
            rng,
            params,
        )


def test_random_words_are_little_endian_lanes_of_the_raw_draws() -> None:
    words = random_uint16(np.random.default_rng(11), 10)
    raw = np.random.default_rng(11).bit_generator.random_raw(3)
    lanes = [(int(r) >> (16 * i)) & 0xFFFF for r in raw for i in range(4)]
    assert words.tolist() == lanes[:10]
    normal = fast_standard_normal(np.random.default_rng(0), (400, 500))
    assert normal.dtype == np.float32
    assert np.mean(normal) == pytest.approx(0.0, abs=0.01)
    assert np.var(normal) == pytest.approx(1.0, rel=0.01)


@pytest.mark.parametrize(
    "image", [np.zeros((8, 8, 3), np.float32), np.zeros((2, 8, 8, 3), np.uint8)]
)
def test_blur_rejects_images_it_cannot_warp(image: np.ndarray) -> None:
    with pytest.raises(NoiseInputError, match="image must be uint8"):
        blur_and_shutter(
            image, K, CameraMotion(np.array([0.0, 1.0, 0.0]), np.zeros(3)), 0.02, 0.01, 2.0
        )
