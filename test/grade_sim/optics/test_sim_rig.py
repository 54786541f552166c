"""Remapping pinhole views to distorted cameras: views, per-field rules, depth conventions."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from grade_sim.config.scenario import CameraConfig, CameraModel
from grade_sim.engine.protocol import CameraFrame
from grade_sim.optics.lens import DepthKind, lens_of
from grade_sim.optics.rig import FIELD_RULES, CameraRig, FieldRule, build_rig, source_views

PLUMB_BOB = CameraConfig(
    width=160,
    height=120,
    hfov_deg=80.0,
    model=CameraModel.PLUMB_BOB,
    distortion=(-0.22, 0.05, 0.001, -0.0015, -0.004),
)
FISHEYE = CameraConfig(width=160, height=120, hfov_deg=180.0, model=CameraModel.EQUIDISTANT)


def _rig(config: CameraConfig) -> CameraRig:
    rig = build_rig(config)
    assert rig is not None
    return rig


def _view_rays(rig: CameraRig, k: int) -> np.ndarray:
    """Unit rays of every pixel of view k, in that view's optical frame."""
    v = rig.views[k]
    u, w = np.meshgrid(np.arange(v.width), np.arange(v.height))
    rays = np.stack(
        [
            (u - (v.width - 1) / 2) / v.focal_px,
            (w - (v.height - 1) / 2) / v.focal_px,
            np.ones(u.shape),
        ],
        axis=-1,
    )
    return rays / np.linalg.norm(rays, axis=-1, keepdims=True)  # type: ignore[no-any-return]


def test_pinhole_cameras_have_no_rig() -> None:
    assert build_rig(CameraConfig()) is None
    assert source_views(CameraConfig()) == ()


def test_views_cover_the_lens() -> None:
    assert [v.name for v in _rig(PLUMB_BOB).views] == ["wide"]
    wide = _rig(PLUMB_BOB).views[0]
    assert wide.width > PLUMB_BOB.width  # barrel distortion: the image sees more than hfov
    assert [v.name for v in _rig(FISHEYE).views] == ["front", "right", "left", "down", "up"]
    all_round = dataclasses.replace(FISHEYE, hfov_deg=300.0)
    assert len(_rig(all_round).views) == 6
    for rig in (_rig(PLUMB_BOB), _rig(FISHEYE)):
        valid = rig.lens.pixel_rays[1]
        assert np.all(rig.view_index[valid] >= 0)
        assert np.all(rig.view_index[~valid] == -1)
        # Every sample (with its bilinear taps) lies inside its own view.
        for k, v in enumerate(rig.views):
            sel = rig.view_index == k
            offset = sum(w.width for w in rig.views[:k])
            x = rig.map_x[sel] - offset
            assert x.min() >= 0.5
            assert x.max() <= v.width - 1.5
            assert rig.map_y[sel].min() >= 0.5
            assert rig.map_y[sel].max() <= v.height - 1.5


def test_colours_come_from_the_view_each_pixel_belongs_to() -> None:
    rig = _rig(FISHEYE)
    colours = np.array([[200, 0, 0], [0, 200, 0], [0, 0, 200], [90, 90, 0], [0, 90, 90]], np.uint8)
    frames = [
        np.broadcast_to(colours[k], (v.height, v.width, 3)).copy() for k, v in enumerate(rig.views)
    ]
    out = rig.remap_field(FieldRule.COLOR, frames)
    valid = rig.view_index >= 0
    np.testing.assert_array_equal(out[valid], colours[rig.view_index[valid]])
    assert not out[~valid].any()


def test_instance_ids_are_never_blended() -> None:
    rig = _rig(PLUMB_BOB)
    v = rig.views[0]
    rng = np.random.default_rng(5)
    ids = np.array([0, 3, 17, 250, 4097], dtype=np.uint16)
    # Blocks of ids with sharp edges: bilinear sampling would invent ids in between.
    blocks = rng.choice(ids, size=(v.height // 4 + 1, v.width // 4 + 1))
    view_ids = np.kron(blocks, np.ones((4, 4), np.uint16))[: v.height, : v.width]
    frame = rig.remap([CameraFrame(None, None, view_ids)])
    assert frame.rgb is None
    assert frame.depth_m is None
    assert frame.instance is not None
    assert frame.instance.dtype == np.uint16
    assert set(np.unique(frame.instance).tolist()) <= set(ids.tolist())
    assert len(np.unique(frame.instance)) == len(ids)


def test_plumb_bob_depth_stays_planar() -> None:
    rig = _rig(PLUMB_BOB)
    assert rig.depth_kind is DepthKind.PLANAR
    v = rig.views[0]
    # A wall 2.5 m ahead, facing the camera: planar depth 2.5 everywhere.
    depth = np.full((v.height, v.width), 2.5, np.float32)
    out = rig.remap_field(FieldRule.DEPTH, [depth])
    np.testing.assert_allclose(out, 2.5, rtol=1e-6)
    assert out.dtype == np.float32


def test_fisheye_depth_is_the_range_along_the_ray() -> None:
    rig = _rig(FISHEYE)
    assert rig.depth_kind is DepthKind.RANGE
    radius = 3.0
    # Inside a sphere of radius 3 m around the camera: planar depth 3 cos(angle) in every face,
    # range 3 everywhere, zero where there is no return.
    frames = [(radius * _view_rays(rig, k)[..., 2]).astype(np.float32) for k in range(5)]
    frames[0][:4] = 0.0  # no return in the top rows of the front face
    out = rig.remap_field(FieldRule.DEPTH, frames)
    valid = rig.view_index >= 0
    hit = valid & (out > 0)
    assert hit.sum() > 0.95 * valid.sum()
    np.testing.assert_allclose(out[hit], radius, rtol=1e-6)
    assert not out[~valid].any()


def test_camera_frame_vectors_are_rotated_into_the_output_frame() -> None:
    rig = _rig(FISHEYE)
    # Every face sees a surface facing it: normal -z in the face's own frame.
    frames = [
        np.broadcast_to([0.0, 0.0, -1.0], (v.height, v.width, 3)).astype(np.float32)
        for v in rig.views
    ]
    out = rig.remap_field(FieldRule.VECTOR_CAM, frames)
    for k, v in enumerate(rig.views):
        sel = rig.view_index == k
        expected = np.broadcast_to(-v.r_optical_view[:, 2], (int(sel.sum()), 3))
        np.testing.assert_allclose(out[sel], expected, atol=1e-6)


def test_every_camera_frame_field_has_a_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    # flow_px alone has none: the engine projects remapped points with the lens instead.
    fields = {f.name for f in dataclasses.fields(CameraFrame)}
    assert fields - set(FIELD_RULES) == {"flow_px"}
    rig = _rig(PLUMB_BOB)
    v = rig.views[0]
    monkeypatch.delitem(FIELD_RULES, "rgb")
    with pytest.raises(KeyError, match="'rgb' has no remap rule: add it to"):
        rig.remap([CameraFrame(np.zeros((v.height, v.width, 3), np.uint8), None, None)])


def test_supersample_scales_the_views() -> None:
    double = dataclasses.replace(FISHEYE, supersample=2.0)
    a, b = _rig(FISHEYE).views[0], _rig(double).views[0]
    assert b.focal_px == pytest.approx(2 * a.focal_px)
    assert b.width >= 2 * a.width - 4
    assert lens_of(double).k[0, 0] == lens_of(FISHEYE).k[0, 0]
