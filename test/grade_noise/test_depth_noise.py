"""Depth noise: sigma(z) statistics, invalid pixels, cut-off, encodings through the pipeline."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from scipy.ndimage import binary_erosion

from grade_noise.depth import (
    DepthModel,
    DepthNoiseParams,
    depth_noise,
    depth_preset,
    depth_sigma_m,
)
from grade_noise.errors import NoiseConfigError, NoiseInputError
from grade_noise.images import depth_to_metres, metres_to_depth
from grade_noise.rgb import intrinsics_from_hfov

W, H = 320, 240
F = float(intrinsics_from_hfov(W, H, 88.95)[0, 0])


def _tilted_plane(theta_deg: float, z0: float = 1.5) -> np.ndarray:
    """Planar depth of a plane through (0, 0, z0) whose normal is tilted theta about y."""
    th = math.radians(theta_deg)
    u = (np.arange(W) - 0.5 * W) / F
    denom = np.sin(th) * u + np.cos(th)
    z = np.where(denom > 1e-3, z0 * np.cos(th) / np.maximum(denom, 1e-3), 0.0)
    return np.tile(z, (H, 1)).astype(np.float32)


@pytest.mark.parametrize(
    ("preset", "distances"),
    [
        ("stereo_5m", [0.5, 1.0, 2.0, 3.0, 4.5]),
        ("structured_light", [0.6, 1.5, 2.5]),
    ],
)
def test_noise_std_matches_model_sigma(preset: str, distances: list[float]) -> None:
    # The range cut-off would truncate the error distribution near the limits: widen it here.
    params = dataclasses.replace(depth_preset(preset), min_range_m=0.01, max_range_m=100.0)
    rng = np.random.default_rng(11)
    for z in distances:
        flat = np.full((H, W), z, dtype=np.float32)
        noisy = depth_noise(flat, F, rng, params)
        err = noisy[np.isfinite(noisy)] - z
        assert err.size > 0.95 * flat.size
        expected = float(depth_sigma_m(z, F, params))
        assert np.std(err) == pytest.approx(expected, rel=0.10), (preset, z)
        assert abs(np.mean(err)) < 0.1 * expected + 1e-3


def test_stereo_sigma_formula() -> None:
    params = depth_preset("stereo_3_5m")
    assert float(depth_sigma_m(2.0, F, params)) == pytest.approx(4.0 * 0.2 / (F * 0.05), rel=1e-6)


@pytest.mark.parametrize(
    ("preset", "cutoff"),
    [("stereo_3_5m", 3.5), ("stereo_5m", 5.0), ("cutoff_3_5m", 3.5), ("cutoff_5m", 5.0)],
)
def test_range_cutoff(preset: str, cutoff: float) -> None:
    # Fronto-parallel blocks: no grazing angles, edges only at the 4 block borders.
    z = np.tile(np.repeat(np.array([1.0, 2.0, 3.0, 4.0, 6.5], np.float32), W // 5), (H, 1))
    noisy = depth_noise(z, F, np.random.default_rng(0), depth_preset(preset))
    far = z > cutoff + 0.2
    assert np.all(np.isnan(noisy[far]))
    near = z < cutoff - 0.5
    assert np.mean(np.isfinite(noisy[near])) > 0.95


def test_edges_and_no_return_are_invalid() -> None:
    z = np.full((H, W), 1.0, dtype=np.float32)
    z[:, W // 2 :] = 2.5
    z[10:20, 10:20] = 0.0
    noisy = depth_noise(z, F, np.random.default_rng(0), depth_preset("stereo_3_5m"))
    assert np.all(np.isnan(noisy[:, W // 2 - 1 : W // 2 + 1]))
    assert np.all(np.isnan(noisy[10:20, 10:20]))
    assert np.all(np.isfinite(noisy[30:, 40 : W // 2 - 5]))


def test_grazing_surfaces_are_invalid() -> None:
    params = DepthNoiseParams(
        model=DepthModel.NONE, max_range_m=100.0, edge_jump_m=0.0, max_incidence_deg=80.0
    )
    rng = np.random.default_rng(0)
    for theta in (30.0, 80.0, 85.0):
        th = math.radians(theta)
        u = (np.arange(W) - 0.5 * W) / F
        v = (np.arange(H) - 0.5 * H) / F
        # Exact incidence per pixel: angle between the ray (u, v, 1) and the plane normal.
        cos_inc = np.abs(np.sin(th) * u[None, :] + np.cos(th)) / np.sqrt(
            u[None, :] ** 2 + v[:, None] ** 2 + 1.0
        )
        incidence = np.degrees(np.arccos(cos_inc))[2:-2, 2:-2]
        plane = _tilted_plane(theta)
        # Rays that miss the plane (z = 0) and their neighbours are no-return, not grazing.
        seen = binary_erosion(plane > 0.0, iterations=2)[2:-2, 2:-2]
        noisy = depth_noise(plane, F, rng, params)[2:-2, 2:-2]
        assert np.all(np.isnan(noisy[incidence > 81.0])), theta
        assert np.all(np.isfinite(noisy[(incidence < 79.0) & seen])), theta
        if theta == 30.0:
            assert np.all(np.isfinite(noisy))


def test_quantisation_step() -> None:
    params = DepthNoiseParams(quantisation_m=0.01)
    noisy = depth_noise(np.full((H, W), 1.0, np.float32), F, np.random.default_rng(0), params)
    valid = noisy[np.isfinite(noisy)]
    np.testing.assert_allclose(valid / 0.01, np.round(valid / 0.01), atol=1e-3)


def test_encodings_invalid_is_nan_or_zero() -> None:
    mm = np.full((H, W), 1000, np.uint16)
    mm[:, :5] = 0
    mm[:, -5:] = 6000  # beyond 3.5 m
    z = depth_to_metres(mm, "16UC1", 0.001)
    noisy = depth_noise(z, F, np.random.default_rng(0), depth_preset("stereo_3_5m"))
    as_u16 = metres_to_depth(noisy, "16UC1", 0.001)
    as_f32 = metres_to_depth(noisy, "32FC1", 0.001)
    assert as_u16.dtype == np.uint16
    assert as_f32.dtype == np.float32
    assert np.all(as_u16[:, :5] == 0)
    assert np.all(as_u16[:, -5:] == 0)
    assert np.all(np.isnan(as_f32[:, :5]))
    assert np.all(np.isnan(as_f32[:, -5:]))
    assert np.all(np.abs(as_u16[:, 20:-20].astype(int) - 1000) < 150)  # 6 sigma at 1 m


def test_same_seed_same_depth() -> None:
    z = _tilted_plane(20.0)
    a = depth_noise(z, F, np.random.default_rng(4), depth_preset("structured_light"))
    b = depth_noise(z, F, np.random.default_rng(4), depth_preset("structured_light"))
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    ("image", "focal", "match"),
    [
        (np.zeros((2, 3, 3), np.float32), F, "2-D"),
        (np.full((4, 4), -1.0, np.float32), F, "negative"),
        (np.ones((4, 4), np.float32), 0.0, "focal"),
    ],
)
def test_bad_depth_input(image: np.ndarray, focal: float, match: str) -> None:
    with pytest.raises(NoiseInputError, match=match):
        depth_noise(image, focal, np.random.default_rng(0), depth_preset("stereo_3_5m"))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"baseline_m": 0.0}, "baseline_m"),
        ({"min_range_m": 4.0}, "min_range_m"),
        ({"max_incidence_deg": 95.0}, "max_incidence_deg"),
    ],
)
def test_bad_depth_params(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(NoiseConfigError, match=match):
        DepthNoiseParams(**kwargs)  # type: ignore[arg-type]


def test_unknown_depth_preset() -> None:
    with pytest.raises(NoiseConfigError, match="stereo_3_5m"):
        depth_preset("lidar")
