"""RGB effects: analytic blur under a known rotation, rolling-shutter skew, no motion -> no blur,
adaptive sub-poses, photometric noise statistics, JPEG, determinism, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from grade_noise.errors import NoiseConfigError, NoiseInputError
from grade_noise.rgb import (
    CameraMotion,
    RgbNoiseParams,
    RgbSequenceState,
    blur_subposes,
    initial_rgb_state,
    intrinsics_from_hfov,
    jpeg_artefacts,
    motion_blur,
    photometric_noise,
    rgb_noise,
    rgb_preset,
    rolling_shutter,
)

W, H = 320, 240
K = intrinsics_from_hfov(W, H, 88.95)
F = float(K[0, 0])


def _edge_image() -> np.ndarray:
    """Dark left half, bright right half: a vertical step edge at x = W / 2."""
    img = np.full((H, W, 3), 40, np.uint8)
    img[:, W // 2 :] = 220
    return img


def _yaw(omega_y: float) -> CameraMotion:
    """Rotation about the optical y axis (image content moves along x)."""
    return CameraMotion(np.array([0.0, omega_y, 0.0]), np.zeros(3))


def test_blur_under_known_rotation_is_the_analytic_ramp() -> None:
    exposure_s, length_px = 0.02, 20.0
    omega = length_px / (F * exposure_s)
    blurred = motion_blur(_edge_image(), K, _yaw(omega), exposure_s, 2.0)
    row = blurred[H // 2, :, 0].astype(float)
    # A step moving uniformly by L pixels during the exposure integrates to a linear ramp of
    # width L centred on the edge (small angles: shift = f * omega * t near the centre).
    x = np.arange(W) + 0.5
    expected = 40 + 180 * np.clip((x - W / 2) / length_px + 0.5, 0.0, 1.0)
    window = slice(W // 2 - 30, W // 2 + 30)
    assert np.max(np.abs(row[window] - expected[window])) < 0.06 * 180
    ramp = np.count_nonzero((row > 40 + 0.1 * 180) & (row < 40 + 0.9 * 180))
    assert ramp == pytest.approx(0.8 * length_px, abs=2)


def test_translation_blur_scales_with_plane_depth() -> None:
    motion = CameraMotion(np.zeros(3), np.array([1.0, 0.0, 0.0]))
    widths = []
    for depth_m in (1.0, 2.0):
        row = motion_blur(_edge_image(), K, motion, 0.02, depth_m)[H // 2, :, 0]
        widths.append(np.count_nonzero((row > 58) & (row < 202)))
    # pixel motion f * v * T / d: 3.2 px at 1 m, 1.6 px at 2 m (10-90 % width = 0.8 of it)
    assert widths[0] > widths[1]
    assert widths[0] == pytest.approx(0.8 * F * 0.02 / 1.0, abs=1.5)


def test_zero_motion_gives_no_blur_and_no_skew() -> None:
    img = np.random.default_rng(0).integers(0, 256, (H, W, 3), dtype=np.uint8)
    still = CameraMotion.zero()
    np.testing.assert_array_equal(motion_blur(img, K, still, 0.05, 2.0), img)
    np.testing.assert_array_equal(rolling_shutter(img, K, still, 0.03, 2.0), img)
    state = RgbSequenceState(0.05, 0.03)
    out = rgb_noise(img, K, still, state, np.random.default_rng(0), rgb_preset("blur_only"), 2.0)
    np.testing.assert_array_equal(out, img)


def test_rolling_shutter_skews_a_vertical_edge() -> None:
    readout_s, omega = 0.03, 1.0
    out = rolling_shutter(_edge_image(), K, _yaw(omega), readout_s, 2.0)
    for r in (20, H // 2, H - 20):
        row = out[r, :, 0].astype(float)
        crossing = np.argmax(row > 130)
        # row r is read at t_r = (r / H - 0.5) readout; a yaw of omega t moves content by -f omega t
        t_r = (r / H - 0.5) * readout_s
        assert crossing == pytest.approx(W / 2 - F * omega * t_r, abs=1.0), r


def test_subposes_adapt_to_pixel_motion() -> None:
    assert blur_subposes(0.0, 1.0, 64) == 1
    assert blur_subposes(0.5, 1.0, 64) == 2
    assert blur_subposes(10.0, 1.0, 64) == 11
    assert blur_subposes(1000.0, 1.0, 64) == 64


def test_photometric_noise_follows_shot_and_read_model() -> None:
    params = RgbNoiseParams(shot_gain=0.05, read_noise_dn=1.0)
    img = np.full((400, 400, 3), 100, np.uint8)
    noisy = photometric_noise(img, np.random.default_rng(2), params).astype(float)
    assert np.std(noisy) == pytest.approx(np.sqrt(0.05 * 100 + 1.0), rel=0.05)
    assert np.mean(noisy) == pytest.approx(100, abs=0.05)


def test_jpeg_artefacts_change_little() -> None:
    yy, xx = np.mgrid[0:H, 0:W]
    img = np.stack([(xx * 0.7) % 256, (yy * 1.3) % 256, (xx + yy) % 256], axis=2).astype(np.uint8)
    out = jpeg_artefacts(img, 50)
    assert out.shape == img.shape
    assert out.dtype == np.uint8
    assert not np.array_equal(out, img)
    assert np.mean(np.abs(out.astype(float) - img)) < 3.0


def test_sequence_state_presets() -> None:
    fixed = initial_rgb_state(rgb_preset("online"), np.random.default_rng(0))
    assert fixed.exposure_s == 0.02
    draws = [
        initial_rgb_state(rgb_preset("per_sequence_exposure"), np.random.default_rng(s))
        for s in range(500)
    ]
    exposures = np.array([d.exposure_s for d in draws])
    assert exposures.min() >= 0.0
    assert exposures.max() <= 0.1
    assert np.mean(exposures) == pytest.approx(0.05, abs=0.005)
    readouts = np.array([d.readout_s for d in draws])
    assert np.mean(readouts) == pytest.approx(0.015, abs=0.001)
    assert np.std(readouts) == pytest.approx(0.006, rel=0.1)


def test_same_seed_same_image() -> None:
    img = np.random.default_rng(0).integers(0, 256, (H, W, 3), dtype=np.uint8)
    motion = CameraMotion(np.array([0.2, 0.4, 0.1]), np.array([0.3, 0.0, 0.1]))

    def run(seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        params = rgb_preset("online_jpeg")
        return rgb_noise(img, K, motion, initial_rgb_state(params, rng), rng, params, 2.0)

    np.testing.assert_array_equal(run(1), run(1))
    assert not np.array_equal(run(1), run(2))


@pytest.mark.parametrize(
    ("image", "motion", "match"),
    [
        (np.zeros((4, 4), np.uint8), CameraMotion.zero(), "uint8 \\(h, w, 3\\)"),
        (np.zeros((4, 4, 3), np.float32), CameraMotion.zero(), "uint8"),
        (np.zeros((4, 4, 3), np.uint8), CameraMotion(np.array([np.nan, 0, 0]), np.zeros(3)), "NaN"),
    ],
)
def test_bad_rgb_input(image: np.ndarray, motion: CameraMotion, match: str) -> None:
    with pytest.raises(NoiseInputError, match=match):
        rgb_noise(
            image,
            K,
            motion,
            RgbSequenceState(0.02, 0.0),
            np.random.default_rng(0),
            rgb_preset("online"),
            2.0,
        )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"exposure_s": -0.1}, "exposure_s"),
        ({"jpeg_quality": 101}, "jpeg_quality"),
        ({"max_step_px": 0.0}, "max_step_px"),
    ],
)
def test_bad_rgb_params(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(NoiseConfigError, match=match):
        RgbNoiseParams(**kwargs)  # type: ignore[arg-type]
