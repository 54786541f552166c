"""Camera models: pixel rays agree with OpenCV's projections, for rays past 90 deg too."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from grade_sim.config.scenario import CameraConfig, CameraModel
from grade_sim.optics.lens import DepthKind, lens_of
from grade_sim.sensors.camera import intrinsics, vertical_fov_deg

PLUMB_BOB = CameraConfig(
    width=320,
    height=240,
    hfov_deg=80.0,
    model=CameraModel.PLUMB_BOB,
    distortion=(-0.22, 0.05, 0.001, -0.0015, -0.004),
)
FISHEYE = CameraConfig(
    width=320,
    height=240,
    hfov_deg=180.0,
    fov_deg=200.0,
    model=CameraModel.EQUIDISTANT,
    distortion=(0.02, -0.005, 0.001, -0.0002),
)


def test_plumb_bob_pixel_rays_reproject_through_opencv() -> None:
    lens = lens_of(PLUMB_BOB)
    rays, valid = lens.pixel_rays
    assert valid.all()
    uv, _ = cv2.projectPoints(rays.reshape(-1, 3), np.zeros(3), np.zeros(3), lens.k, lens.d)
    u, v = np.meshgrid(np.arange(320), np.arange(240))
    np.testing.assert_allclose(uv.reshape(240, 320, 2), np.stack([u, v], axis=-1), atol=1e-3)
    np.testing.assert_allclose(np.linalg.norm(rays, axis=-1), 1.0, atol=1e-12)
    assert lens.distortion_model == "plumb_bob"
    assert lens.depth_kind is DepthKind.PLANAR


def test_fisheye_pixel_rays_reproject_through_opencv_below_90_deg() -> None:
    lens = lens_of(FISHEYE)
    rays, valid = lens.pixel_rays
    front = valid & (rays[..., 2] > 0.05)
    uv, _ = cv2.fisheye.projectPoints(
        rays[front].reshape(-1, 1, 3), np.zeros(3), np.zeros(3), lens.k, lens.d
    )
    u, v = np.meshgrid(np.arange(320), np.arange(240))
    np.testing.assert_allclose(uv.reshape(-1, 2), np.stack([u, v], axis=-1)[front], atol=1e-3)
    assert lens.distortion_model == "equidistant"
    assert lens.depth_kind is DepthKind.RANGE


def test_fisheye_projection_matches_opencv_and_goes_past_90_deg() -> None:
    lens = lens_of(FISHEYE)
    rng = np.random.default_rng(3)
    theta = rng.uniform(0.0, math.radians(89.0), 200)
    phi = rng.uniform(0.0, 2 * math.pi, 200)
    pts = np.stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)], 1)
    pts *= rng.uniform(0.5, 5.0, (200, 1))
    ours = lens.project(pts)
    theirs, _ = cv2.fisheye.projectPoints(
        pts.reshape(-1, 1, 3), np.zeros(3), np.zeros(3), lens.k, lens.d
    )
    np.testing.assert_allclose(ours, theirs.reshape(-1, 2), atol=1e-6)
    # 95 deg off-axis, to the right: beyond the image plane, still in a 200 deg lens.
    behind = np.array([[math.sin(math.radians(95)), 0.0, math.cos(math.radians(95))]])
    u = lens.project(behind)[0, 0]
    assert u > lens.k[0, 2] + lens.k[0, 0] * math.radians(90)
    # Past the 100 deg half-angle of fov_deg: not seen.
    assert np.isnan(lens.project(np.array([[1.0, 0.0, -0.4]]))).all()


def test_fisheye_hfov_sets_the_angle_at_the_image_edges() -> None:
    cfg = CameraConfig(width=400, height=300, hfov_deg=190.0, model=CameraModel.EQUIDISTANT)
    lens = lens_of(cfg)
    rays, _ = lens.rays(np.array([[-0.5, 149.5], [399.5, 149.5]]))
    angles = np.degrees(np.arccos(rays[:, 2]))
    np.testing.assert_allclose(angles, 95.0, atol=1e-9)
    # Equidistant: the vertical fov scales with the height.
    assert vertical_fov_deg(cfg) == pytest.approx(190.0 * 300 / 400)
    np.testing.assert_array_equal(intrinsics(cfg), lens.k)


def test_pinhole_lens_is_the_pinhole_intrinsics() -> None:
    cfg = CameraConfig(width=160, height=120, hfov_deg=70.0)
    lens = lens_of(cfg)
    np.testing.assert_array_equal(lens.k, intrinsics(cfg))
    np.testing.assert_array_equal(lens.d, np.zeros(5))
    pts = np.array([[0.3, -0.2, 2.0], [0.0, 0.0, 1.0]])
    uvw = pts @ lens.k.T
    np.testing.assert_allclose(lens.project(pts), uvw[:, :2] / uvw[:, 2:], atol=1e-9)
