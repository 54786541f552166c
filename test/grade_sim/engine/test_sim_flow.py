"""Optical flow from known motion (grade_sim.engine.flow) against analytic flow fields."""

from __future__ import annotations

import numpy as np

from grade_sim.engine.flow import PoseSnapshot, backward_flow
from grade_sim.engine.pixels import backproject, pixel_grid

H, W, F = 120, 160, 100.0
K = np.array([[F, 0.0, (W - 1) / 2], [0.0, F, (H - 1) / 2], [0.0, 0.0, 1.0]])
ONE_GEOM = np.zeros((H, W), dtype=np.int64)


def _snapshot(position: np.ndarray, r_world_optical: np.ndarray) -> PoseSnapshot:
    return PoseSnapshot(position, r_world_optical, np.zeros((1, 3)), np.eye(3)[None])


def test_camera_translating_past_a_plane_moves_every_pixel_by_f_t_over_d() -> None:
    # Optical frame = world frame; a wall at z = 4 m; the camera moved 0.1 m along +x.
    depth = np.full((H, W), 4.0)
    before = _snapshot(np.zeros(3), np.eye(3))
    now = _snapshot(np.array([0.1, 0.0, 0.0]), np.eye(3))
    flow = backward_flow(backproject(depth, K), ONE_GEOM, K, now, before)
    # A static point moves opposite to the camera: dx = -f t / d = -2.5 px, dy = 0.
    assert np.allclose(flow[..., 0], -F * 0.1 / 4.0, atol=1e-4)
    assert np.allclose(flow[..., 1], 0.0, atol=1e-4)


def test_a_rotating_camera_gives_the_homography_flow_whatever_the_depth() -> None:
    rng = np.random.default_rng(3)
    depth = rng.uniform(1.0, 9.0, size=(H, W))
    angle = np.radians(2.0)  # a pan about the optical y axis (down)
    c, s = np.cos(angle), np.sin(angle)
    r_now = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
    before = _snapshot(np.zeros(3), np.eye(3))
    now = _snapshot(np.zeros(3), r_now)
    flow = backward_flow(backproject(depth, K), ONE_GEOM, K, now, before)
    u, v = pixel_grid(H, W)
    x, y = (u - K[0, 2]) / F, (v - K[1, 2]) / F
    # A pan by `angle` adds it to every ray's azimuth: x0 = tan(atan(x) + angle), and y scales
    # with the ray's new depth (c - x s).
    x0 = np.tan(np.arctan(x) + angle)
    y0 = y / (c - x * s)
    err = np.hypot(flow[..., 0] - F * (x - x0), flow[..., 1] - F * (y - y0))
    assert np.median(err) < 1e-3
    assert err.max() < 1e-3


def test_a_moving_body_carries_its_pixels_and_static_ones_stay() -> None:
    depth = np.full((H, W), 5.0)
    geoms = np.zeros((H, W), dtype=np.int64)
    geoms[:, W // 2 :] = 1  # the right half is geom 1 of a moving body
    pos_before = np.zeros((2, 3))
    pos_now = np.array([[0.0, 0.0, 0.0], [0.0, 0.5, 0.0]])  # moved 0.5 m down the image
    rot = np.stack([np.eye(3)] * 2)
    before = PoseSnapshot(np.zeros(3), np.eye(3), pos_before, rot)
    now = PoseSnapshot(np.zeros(3), np.eye(3), pos_now, rot)
    flow = backward_flow(backproject(depth, K), geoms, K, now, before)
    assert np.allclose(flow[:, : W // 2], 0.0, atol=1e-5)
    assert np.allclose(flow[:, W // 2 :, 1], F * 0.5 / 5.0, atol=1e-4)


def test_no_previous_frame_or_no_surface_is_nan() -> None:
    depth = np.full((H, W), 2.0)
    depth[:10] = 0.0
    now = _snapshot(np.zeros(3), np.eye(3))
    assert np.isnan(backward_flow(backproject(depth, K), ONE_GEOM, K, now, None)).all()
    flow = backward_flow(backproject(depth, K), ONE_GEOM, K, now, now)
    assert np.isnan(flow[:10]).all()
    assert np.allclose(flow[10:], 0.0)
    assert flow.dtype == np.float32
    assert flow.shape == (H, W, 2)
