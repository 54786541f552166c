"""Leaving out what lies outside the view changes no pixel, and does leave things out."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest

from grade_sim.config.scenario import Stream
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.engine.mujoco.view_cull import outside_view
from grade_sim.scene import Scene, build_scene


@dataclass
class _GLCamera:  # the fields of mujoco.MjvGLCamera that outside_view reads
    pos: tuple[float, float, float] = (0.0, 0.0, 0.0)
    forward: tuple[float, float, float] = (1.0, 0.0, 0.0)
    up: tuple[float, float, float] = (0.0, 0.0, 1.0)
    frustum_center: float = 0.0
    frustum_width: float = 0.0
    frustum_bottom: float = -0.05
    frustum_top: float = 0.05
    frustum_near: float = 0.05
    frustum_far: float = 30.0
    orthographic: int = 0


def test_outside_view_keeps_what_the_frustum_touches() -> None:
    cam = _GLCamera()  # 90 degrees vertical field of view, looking along +x, 4:3
    centers = np.array(
        [
            [5.0, 0.0, 0.0],  # ahead
            [-2.0, 0.0, 0.0],  # behind
            [-0.3, 0.0, 0.0],  # behind, but its sphere reaches past the eye
            [5.0, 0.0, 8.0],  # above the top plane (z = x)
            [5.0, 0.0, 5.5],  # above it, but its sphere crosses it
            [5.0, -9.0, 0.0],  # right of the right plane (|y| = 4/3 x)
            [40.0, 0.0, 0.0],  # beyond the far plane
            [31.0, 0.0, 0.0],  # straddles it
        ]
    )
    radii = np.array([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 2.0])
    out = outside_view(centers, radii, cam, 4 / 3)
    np.testing.assert_array_equal(out, [False, True, False, True, False, True, True, False])
    assert not outside_view(centers, radii, _GLCamera(orthographic=1), 4 / 3).any()


def _types_culled(engine: MujocoEngine) -> int:
    import mujoco

    vs = engine._vscene
    return sum(vs.geoms[i].type == mujoco.mjtGeom.mjGEOM_NONE for i in range(vs.ngeom))


# A cheap bake, with contact shadows and light probes (per-frame decals and colours).
_BAKE = {
    "enabled": True,
    "texel_m": 0.4,
    "light_samples": 1,
    "hemisphere_samples": 4,
    "contact_shadows": True,
    "probes": True,
    "probe_spacing_m": 1.0,
}


@pytest.mark.slow
@pytest.mark.parametrize(
    "lights",
    [{"shadows": False}, {"shadows": True}, {"shadows": False, "bake": _BAKE}],
    ids=["plain", "shadow-maps", "baked"],
)
def test_culled_frames_are_byte_identical(
    small_scenario: Callable[..., Any],
    engine_of: Callable[[Scene], MujocoEngine],
    turning_views: Callable[..., Iterator[int]],
    lights: dict[str, Any],
) -> None:
    scene = build_scene(
        small_scenario(
            people={"count": 4, "body": "skinned"},
            flying_objects={"count": 3},
            lights=lights,
        )
    )
    plain, culling = engine_of(scene), engine_of(scene)
    plain.cull_unseen = False
    streams = frozenset({Stream.RGB, Stream.DEPTH, Stream.INSTANCE, Stream.SEMANTIC})
    robot = scene.robots[0].model.name
    camera = scene.robots[0].model.config.cameras[0].name
    culled = 0
    for _ in turning_views(scene, plain, culling):
        a = plain.render(robot, camera, streams)
        b = culling.render(robot, camera, streams)
        culled += _types_culled(culling)
        assert _types_culled(plain) == 0
        for name in ("rgb", "depth_m", "instance", "semantic"):
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    assert culled > 0  # the camera looked away from something
