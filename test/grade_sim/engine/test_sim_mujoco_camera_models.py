"""Distorted and fisheye cameras rendered by MuJoCo: known 3D points land where OpenCV puts them.

Small cubes ("markers") stand at known points around the camera. Each marker's mask is compared
pixel by pixel with the exact mask: the pixels whose ray (Lens.rays, which test_sim_lens checks
against cv2.projectPoints and cv2.fisheye.projectPoints) hits the cube. The plain pinhole
renderer matches its exact mask pixel for pixel. Centroids of projected silhouettes are no
reference: mask quantisation alone moves them by up to 0.4 px for these sizes, even in pinhole.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import pytest

from grade_common.occupancy import OccupancyGrid
from grade_common.rotations import quat_to_matrix
from grade_sim.config.scenario import IMAGE_STREAMS, Stream, scenario_from_mapping
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.engine.protocol import CameraFrame
from grade_sim.optics.lens import DepthKind, Lens, lens_of
from grade_sim.optics.rig import build_rig
from grade_sim.robots.model import robot_model
from grade_sim.scene import InstanceInfo, RobotSetup, Scene, build_scene
from grade_sim.world.model import Material, StaticBox, World

ROBOT_ID = 1
FIRST_MARKER_ID = 10
# Robot at (0, 0, 1), yaw 0, camera 0.3 m ahead (clear of the body, which a fisheye would see):
# optical (x, y, z) -> world (0.3 + z, -x, 1 - y).
CAMERA_XYZ = np.array([0.3, 0.0, 1.0])
R_WORLD_OPTICAL = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
MARKER_HALF_M = 0.05
DISTANCE_M = 1.6
TOLERANCE_PX = 0.5  # the bound, against OpenCV's projection
# Ids are sampled nearest from the views: an outline can move by up to 0.71 view pixels (half a
# pixel on each axis). The position tests render the views at twice the output's focal length
# (supersample 2), so outlines stay within 0.5 output pixels; test_default_supersample_... checks
# the default (supersample 1) against 0.75 px.
SUPERSAMPLE = 2.0


def _scene(camera: dict[str, Any], points_optical: np.ndarray) -> Scene:
    scenario = scenario_from_mapping(
        {
            "duration_s": 0.1,
            "bootstrap_s": 0.0,
            "people": {"count": 0},
            "flying_objects": {"count": 0},
            "robots": [{"name": "uav1", "motion": {"mode": "commands"}, "cameras": [camera]}],
        }
    )
    colours = [(0.9, 0.1, 0.1, 1.0), (0.1, 0.8, 0.1, 1.0), (0.1, 0.2, 0.9, 1.0)]
    boxes = tuple(
        StaticBox(
            f"marker{k}",
            "marker",
            FIRST_MARKER_ID + k,
            tuple(CAMERA_XYZ + R_WORLD_OPTICAL @ p),
            (MARKER_HALF_M,) * 3,
            0.0,
            Material(colours[k % 3]),
        )
        for k, p in enumerate(points_optical)
    )
    grid = OccupancyGrid((-5.0, -5.0), 0.1, np.zeros((100, 100), dtype=bool))
    world = World(boxes, (), (), grid, (-5.0, -5.0, -2.0), (5.0, 5.0, 4.0))
    rc = scenario.robots[0]
    setup = RobotSetup(robot_model(rc), ROBOT_ID, np.array([0.0, 0.0, 1.0]), 0.0, None)
    instances = {b.instance_id: InstanceInfo(b.instance_id, b.name, "marker") for b in boxes}
    instances[ROBOT_ID] = InstanceInfo(ROBOT_ID, rc.name, "robot_uav")
    return Scene(scenario=scenario, world=world, n_steps=3, robots=(setup,), instances=instances)


@pytest.fixture
def engines() -> Iterator[list[MujocoEngine]]:
    made: list[MujocoEngine] = []
    yield made
    for e in made:
        e.close()


def _directions(theta_deg: list[float], phi_deg: list[float]) -> np.ndarray:
    """Unit rays theta off the optical axis at azimuth phi (from +x towards +y)."""
    t = np.radians(theta_deg)[:, None]
    p = np.radians(phi_deg)[None, :]
    d = np.stack(
        [np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t) * np.ones_like(p)], axis=-1
    )
    # theta = 0 is one direction whatever phi.
    return np.unique(np.round(d.reshape(-1, 3), 12), axis=0)


def _corners_optical(point_optical: np.ndarray) -> np.ndarray:
    """The 8 corners of the marker cube (axis-aligned in the world) around a point."""
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    return point_optical + MARKER_HALF_M * signs @ R_WORLD_OPTICAL  # type: ignore[no-any-return]


def _hits(rays: np.ndarray, point_optical: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which rays (..., 3) from the camera hit the marker, and the range along each (slab test)."""
    corners = _corners_optical(point_optical)
    lo, hi = corners.min(axis=0), corners.max(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t0, t1 = lo / rays, hi / rays
    t_in = np.nanmax(np.minimum(t0, t1), axis=-1)
    t_out = np.nanmin(np.maximum(t0, t1), axis=-1)
    return (t_out >= t_in) & (t_in > 0), t_in


def _raycast(lens: Lens, point_optical: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The marker's exact mask (pixel centres whose ray hits it) and range image."""
    rays, valid = lens.pixel_rays
    hit, range_m = _hits(rays, point_optical)
    return valid & hit, range_m


def _near_outline(lens: Lens, point: np.ndarray, pixels_uv: np.ndarray, radius_px: float) -> Any:
    """Whether the exact mask changes within radius_px of each pixel centre (16 directions)."""
    centre = _hits(lens.rays(pixels_uv)[0], point)[0]
    near = np.zeros(len(pixels_uv), dtype=bool)
    for a in np.linspace(0, 2 * np.pi, 16, endpoint=False):
        for r in (0.5 * radius_px, radius_px):
            rays, valid = lens.rays(pixels_uv + r * np.array([np.cos(a), np.sin(a)]))
            near |= (_hits(rays, point)[0] & valid) != centre
    return near


@dataclass
class Rendered:
    lens: Lens
    frame: CameraFrame
    points: np.ndarray


def _render(engines: list[MujocoEngine], camera: dict[str, Any], points: np.ndarray) -> Rendered:
    engine = MujocoEngine(_scene(camera, points))
    engines.append(engine)
    pos, quat = engine.camera_pose("uav1", camera["name"])
    np.testing.assert_allclose(pos, CAMERA_XYZ, atol=1e-9)
    np.testing.assert_allclose(quat_to_matrix(quat), R_WORLD_OPTICAL, atol=1e-9)
    frame = engine.render("uav1", camera["name"], IMAGE_STREAMS)
    lens = lens_of(engine.scene.robots[0].model.config.cameras[0])
    return Rendered(lens, frame, points)


def _check_markers(r: Rendered, least: int, outline_px: float = TOLERANCE_PX) -> dict[int, float]:
    """Every marker in the image against its exact mask; returns centroid errors (px) by marker.

    Checks: mask pixels differ from the exact mask only within outline_px of the outline (so
    every outline is within outline_px of where the lens model puts it); depth follows the lens's
    DepthKind. The centroid errors are returned for the record, not bounded: one pixel column
    flipping on a 10-pixel marker moves a centroid by 0.5 px.
    """
    inst, depth = r.frame.instance, r.frame.depth_m
    assert inst is not None
    assert depth is not None
    errors: dict[int, float] = {}
    for k, p in enumerate(r.points):
        hit, range_m = _raycast(r.lens, p)
        mask = inst == FIRST_MARKER_ID + k
        if hit.sum() < 20:
            assert mask.sum() < 40, f"marker {k} at {p} is drawn but outside the lens"
            continue
        window = cv2.dilate((mask | hit).astype(np.uint8), np.ones((5, 5), np.uint8)) > 0
        vs, us = np.nonzero(window)
        wrong = (mask ^ hit)[vs, us]
        near = _near_outline(r.lens, p, np.stack([us, vs], axis=1).astype(float), outline_px)
        assert not np.any(wrong & ~near), (k, np.stack([us, vs], axis=1)[wrong & ~near])
        ys, xs = np.nonzero(mask)
        hy, hx = np.nonzero(hit)
        errors[k] = float(np.hypot(xs.mean() - hx.mean(), ys.mean() - hy.mean()))
        both = mask & hit
        rays = r.lens.pixel_rays[0]
        expected_depth = range_m * (rays[..., 2] if r.lens.depth_kind is DepthKind.PLANAR else 1)
        err_m = np.abs(depth[both] - expected_depth[both])
        assert np.median(err_m) < 2e-3, (k, np.median(err_m))
    assert len(errors) >= least
    ids = set(np.unique(inst).tolist())
    assert ids <= {0, ROBOT_ID, *(FIRST_MARKER_ID + k for k in range(len(r.points)))}
    return errors


def _camera(**fields: Any) -> dict[str, Any]:
    return {
        "name": "camera",
        "width": 320,
        "height": 240,
        "supersample": SUPERSAMPLE,
        "mount": {"xyz": [0.3, 0.0, 0.0]},
        **fields,
    }


def test_pinhole_renderer_matches_the_exact_masks_pixel_for_pixel(
    engines: list[MujocoEngine],
) -> None:
    """The reference: without a remap, masks are exact (outline tolerance zero)."""
    points = DISTANCE_M * _directions([0.0, 20.0, 35.0], [0.0, 135.0, 250.0])
    r = _render(engines, _camera(hfov_deg=80.0), points)
    errors = _check_markers(r, least=7, outline_px=0.0)
    assert max(errors.values()) == 0.0


def test_plumb_bob_markers_land_where_opencv_projects_them(engines: list[MujocoEngine]) -> None:
    camera = _camera(
        hfov_deg=80.0, model="plumb_bob", distortion=[-0.22, 0.05, 0.001, -0.0015, -0.004]
    )
    points = DISTANCE_M * _directions([0.0, 15.0, 30.0, 40.0], [0.0, 60.0, 135.0, 210.0, 300.0])
    r = _render(engines, camera, points)
    errors = _check_markers(r, least=12)
    print("plumb_bob errors px", errors)
    # Barrel distortion: the 40 deg marker on the x axis sits nearer the centre than in a pinhole.
    k = int(np.argmax(points[:, 0]))
    ideal = r.lens.k @ (points[k] / points[k, 2])
    assert r.frame.instance is not None
    xs = np.nonzero(r.frame.instance == FIRST_MARKER_ID + k)[1]
    assert xs.mean() < ideal[0] - 5


def test_default_supersample_keeps_mask_outlines_within_three_quarters_of_a_pixel(
    engines: list[MujocoEngine],
) -> None:
    camera = _camera(
        hfov_deg=80.0,
        model="plumb_bob",
        distortion=[-0.22, 0.05, 0.001, -0.0015, -0.004],
        supersample=1.0,
    )
    points = DISTANCE_M * _directions([0.0, 20.0, 35.0], [0.0, 135.0, 250.0])
    r = _render(engines, camera, points)
    # Nearest sampling: half a view pixel on each axis, at most 0.71 view pixels.
    _check_markers(r, least=7, outline_px=0.75)


def test_fisheye_180_markers_land_where_opencv_projects_them(engines: list[MujocoEngine]) -> None:
    camera = _camera(
        hfov_deg=180.0,
        fov_deg=200.0,
        model="equidistant",
        distortion=[0.02, -0.005, 0.001, -0.0002],
    )
    points = DISTANCE_M * _directions([0.0, 30.0, 60.0, 75.0], [0.0, 50.0, 130.0, 200.0, 290.0])
    r = _render(engines, camera, points)
    print("fisheye 180 errors px", _check_markers(r, least=12))


def test_fisheye_180_sees_a_point_85_deg_off_axis(engines: list[MujocoEngine]) -> None:
    camera = _camera(hfov_deg=180.0, model="equidistant")
    points = DISTANCE_M * _directions([85.0], [0.0, 180.0])  # right and left
    r = _render(engines, camera, points)
    errors = _check_markers(r, least=0)
    assert r.frame.instance is not None
    for k, p in enumerate(points):
        _ys, xs = np.nonzero(r.frame.instance == FIRST_MARKER_ID + k)
        side = np.sign(p[0])
        assert np.all(side * (xs - r.lens.k[0, 2]) > 0.8 * r.lens.k[0, 2]), "near the rim"
    print("85 deg errors", errors)


def test_fisheye_200_sees_behind_its_image_plane_and_leaves_outside_the_circle_empty(
    engines: list[MujocoEngine],
) -> None:
    camera = _camera(width=320, height=320, hfov_deg=200.0, fov_deg=200.0, model="equidistant")
    points = DISTANCE_M * _directions([0.0, 50.0, 95.0], [45.0, 180.0, 270.0])
    r = _render(engines, camera, points)
    assert np.any(points[:, 2] < 0)
    _check_markers(r, least=4)
    assert r.frame.rgb is not None
    assert r.frame.depth_m is not None
    outside = ~r.lens.pixel_rays[1]
    assert outside[0, 0]
    assert not outside[160, 160]
    assert not r.frame.rgb[outside].any()
    assert not r.frame.depth_m[outside].any()
    assert r.frame.instance is not None
    assert not r.frame.instance[outside].any()


def test_fisheye_has_no_seams_between_cube_faces(
    engines: list[MujocoEngine], small_data: Any
) -> None:
    """Across a face boundary, neighbouring pixels on one surface look like neighbours inside a
    face (MuJoCo's headlight follows the rendering camera: unaimed, it lit each face from its
    own direction and the floor's brightness stepped by ~40 levels at the seams)."""
    data = small_data(people={"count": 0}, flying_objects={"count": 0})
    data["robots"][0]["cameras"] = [_camera(hfov_deg=180.0, model="equidistant", supersample=1.0)]
    engine = MujocoEngine(build_scene(scenario_from_mapping(data)))
    engines.append(engine)
    frame = engine.render("uav1", "camera", frozenset({Stream.RGB, Stream.INSTANCE}))
    rig = build_rig(engine.scene.robots[0].model.config.cameras[0])
    assert rig is not None
    assert frame.rgb is not None
    assert frame.instance is not None
    rgb = frame.rgb.astype(float)
    steps = {True: [], False: []}
    for axis in (0, 1):
        a = [slice(None), slice(None)]
        b = [slice(None), slice(None)]
        a[axis], b[axis] = slice(0, -1), slice(1, None)
        same_surface = frame.instance[tuple(a)] == frame.instance[tuple(b)]
        same_surface &= (frame.instance[tuple(a)] > 0) & (rig.view_index[tuple(a)] >= 0)
        seam = rig.view_index[tuple(a)] != rig.view_index[tuple(b)]
        diff = np.abs(rgb[tuple(a)] - rgb[tuple(b)]).mean(axis=-1)
        steps[True] += diff[same_surface & seam].tolist()
        steps[False] += diff[same_surface & ~seam & (rig.view_index[tuple(b)] >= 0)].tolist()
    assert len(steps[True]) > 100
    assert np.mean(steps[True]) < 2 * np.mean(steps[False]) + 1.0, (
        np.mean(steps[True]),
        np.mean(steps[False]),
    )
