"""Loose 2D boxes of distorted cameras: the box's edges projected through the lens."""

from __future__ import annotations

import numpy as np

from grade_sim.config.scenario import CameraConfig, CameraModel
from grade_sim.optics.lens import lens_of
from grade_sim.sensors.boxes import Box3D, loose_box_2d

# Optical frame = world frame here: the camera at the origin looking along +z.
EYE = np.eye(3)
ORIGIN = np.zeros(3)


def _dense_bounds(box: Box3D, project: object) -> np.ndarray:
    """Bounds of 400 points per edge projected: the reference the 16-point sampling must meet."""
    c = box.corners_world()
    t = np.linspace(0, 1, 400)[:, None]
    pts = np.concatenate(
        [c[a] + t * (c[a | b] - c[a]) for a in range(8) for b in (1, 2, 4) if not a & b]
    )
    uv = project(pts)  # type: ignore[operator]
    uv = uv[np.all(np.isfinite(uv), axis=1)]
    return np.concatenate([uv.min(axis=0), uv.max(axis=0)])


def test_zero_distortion_matches_the_pinhole_box() -> None:
    cfg = CameraConfig(width=320, height=240, hfov_deg=80.0, model=CameraModel.PLUMB_BOB)
    lens = lens_of(cfg)
    box = Box3D(1, np.array([0.3, -0.1, 3.0]), np.array([0.6, 0.4, 0.5]), EYE)
    pinhole = loose_box_2d(box, lens.k, ORIGIN, EYE, 320, 240)
    assert pinhole == loose_box_2d(box, lens.k, ORIGIN, EYE, 320, 240, lens.project)


def test_fisheye_box_bends_past_its_corners() -> None:
    cfg = CameraConfig(width=400, height=400, hfov_deg=180.0, model=CameraModel.EQUIDISTANT)
    lens = lens_of(cfg)
    # A long box across the view: its straight top edge bows away from the corners in a fisheye.
    box = Box3D(1, np.array([0.0, -0.8, 1.5]), np.array([3.0, 0.2, 0.2]), EYE)
    loose = loose_box_2d(box, lens.k, ORIGIN, EYE, 400, 400, lens.project)
    assert loose is not None
    x0, y0, x1, y1 = _dense_bounds(box, lens.project)
    assert abs(loose[2] - min(np.ceil(x1), 399)) <= 1
    assert abs(loose[1] - np.floor(y0)) <= 1
    assert abs(loose[3] - np.ceil(y1)) <= 1
    assert abs(loose[0] - max(np.floor(x0), 0)) <= 1
    corners_only = lens.project(box.corners_world())
    assert loose[1] < np.floor(corners_only[:, 1].min()) - 3  # the bow reaches above the corners
