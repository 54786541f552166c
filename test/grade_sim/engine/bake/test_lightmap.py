"""The bake against references: soft direct light and shadow of a box under one area light
(Monte Carlo with an analytic ray-box test, no Embree), AO in a corner, seeds, the cache."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from grade_common.occupancy import OccupancyGrid
from grade_common.types import FloatArray
from grade_sim.config.scenario import BakeConfig
from grade_sim.engine.bake.cache import bake_key, baked_lightmaps
from grade_sim.engine.bake.lightmap import Lightmaps, bake_lightmaps, face_grids
from grade_sim.world.model import Ambience, Light, Material, StaticBox, World

BLACK = Material((0.0, 0.0, 0.0, 1.0))  # reflects nothing: no bounce, the direct light alone
GREY = Material((0.5, 0.5, 0.5, 1.0))
FLOOR_TOP_M = 0.0
CUBE_HALF_M = 0.25
LIGHT_Z_M = 2.0
LIGHT = Light(
    position_xyz=(0.0, 0.0, LIGHT_Z_M),
    diffuse_rgb=(0.8, 0.8, 0.8),
    cutoff_deg=80.0,
    exponent=1.0,
    attenuation=(1.0, 0.0, 0.05),
)
FIXTURE_RADIUS_M = 0.3
TOP_FACE = 4  # +z in lightmap.FACES


def _world(boxes: tuple[StaticBox, ...], lights: tuple[Light, ...], ambient: float = 0.0) -> World:
    grid = OccupancyGrid((-3.0, -3.0), 0.1, np.zeros((60, 60), dtype=bool))
    return World(
        boxes,
        (),
        lights,
        grid,
        (-3.0, -3.0, -0.1),
        (3.0, 3.0, 3.0),
        ambience=Ambience((ambient,) * 3, (0.0, 0.0, 0.0)),
    )


def _floor(material: Material) -> StaticBox:
    return StaticBox(
        "floor", "floor", 1, (0.0, 0.0, FLOOR_TOP_M - 0.05), (2.0, 2.0, 0.05), 0.0, material
    )


def _cube() -> StaticBox:
    # Off the light's axis, so its shadow falls on the floor beside it.
    return StaticBox(
        "cube", "furniture", 2, (0.6, 0.0, CUBE_HALF_M), (CUBE_HALF_M,) * 3, 0.0, BLACK
    )


def _config(**changes: object) -> BakeConfig:
    base = BakeConfig(
        texel_m=0.05,
        light_samples=48,
        hemisphere_samples=4,
        fixture_radius_m=FIXTURE_RADIUS_M,
        ambient_scale=1.0,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def _hits_cube(origin: FloatArray, target: FloatArray) -> bool:
    """Slab test: does the segment origin -> target cross the cube?"""
    lo = np.array([0.6 - CUBE_HALF_M, -CUBE_HALF_M, 0.0])
    hi = np.array([0.6 + CUBE_HALF_M, CUBE_HALF_M, 2 * CUBE_HALF_M])
    d = target - origin
    with np.errstate(divide="ignore", invalid="ignore"):
        t1, t2 = (lo - origin) / d, (hi - origin) / d
    t_near = np.nanmax(np.minimum(t1, t2))
    t_far = np.nanmin(np.maximum(t1, t2))
    return bool(t_near <= t_far and t_far > 1e-6 and t_near < 1.0)


def _reference(point: FloatArray, samples: int = 20000) -> float:
    """Monte Carlo irradiance at a floor point (normal +z): MuJoCo's spot formula over the
    fixture's disc, occluded by the cube."""
    rng = np.random.default_rng(123)
    a = 2 * math.pi * rng.random(samples)
    r = FIXTURE_RADIUS_M * np.sqrt(rng.random(samples))
    total = 0.0
    for k in range(samples):
        q = np.array([r[k] * math.cos(a[k]), r[k] * math.sin(a[k]), LIGHT_Z_M])
        v = q - point
        d = float(np.linalg.norm(v))
        ldir = v / d
        cos_spot = ldir[2]  # the light aims straight down: -ldir . (0, 0, -1)
        if cos_spot < math.cos(math.radians(LIGHT.cutoff_deg)) or _hits_cube(point, q):
            continue
        k0, k1, k2 = LIGHT.attenuation
        total += ldir[2] * cos_spot**LIGHT.exponent / (k0 + k1 * d + k2 * d * d)
    return LIGHT.diffuse_rgb[0] * total / samples


def _floor_value(world: World, maps: Lightmaps, x: float, y: float) -> tuple[float, FloatArray]:
    """The floor's top-face texel nearest (x, y): its irradiance and centre."""
    grid = next(
        g for g in face_grids(world, _config().texel_m) if g.box == 0 and g.face == TOP_FACE
    )
    k = int(np.argmin(np.linalg.norm(grid.points_xyz[:, :2] - [x, y], axis=1)))
    value = maps.faces[(0, TOP_FACE)].reshape(-1, 3)[k]
    return float(value[0]), grid.points_xyz[k]


@pytest.mark.slow
def test_box_under_an_area_light_matches_a_monte_carlo_reference() -> None:
    world = _world((_floor(BLACK), _cube()), (LIGHT,))
    maps = bake_lightmaps(world, _config())
    lit, lit_at = _floor_value(world, maps, -0.8, 0.3)
    # Behind the cube as seen from the light: the umbra, then the penumbra further out.
    penumbra, pen_at = _floor_value(world, maps, 1.2, 0.0)
    umbra, umbra_at = _floor_value(world, maps, 0.95, 0.0)
    ref_lit, ref_pen, ref_umbra = (_reference(p) for p in (lit_at, pen_at, umbra_at))
    assert ref_pen < 0.8 * ref_lit  # really a penumbra point
    assert ref_pen > 0.1 * ref_lit
    assert lit == pytest.approx(ref_lit, rel=0.1)
    assert penumbra == pytest.approx(ref_pen, rel=0.1)
    assert umbra == pytest.approx(ref_umbra, abs=0.1 * ref_lit)
    assert umbra < 0.3 * lit


def test_ambient_occlusion_darkens_a_corner() -> None:
    walls = (
        StaticBox("wall_x", "wall", 3, (-2.05, 0.0, 1.0), (0.05, 2.0, 1.0), 0.0, GREY),
        StaticBox("wall_y", "wall", 4, (0.0, -2.05, 1.0), (2.0, 0.05, 1.0), 0.0, GREY),
    )
    world = _world((_floor(GREY), *walls), (), ambient=0.5)
    maps = bake_lightmaps(world, _config(hemisphere_samples=64, ao_distance_m=1.0))
    corner, _ = _floor_value(world, maps, -1.95, -1.95)
    open_floor, _ = _floor_value(world, maps, 1.0, 1.0)
    assert open_floor == pytest.approx(0.5, rel=0.05)  # sees the whole sky: AO = 1
    assert corner < 0.75 * open_floor


def _small_world() -> World:
    return _world((_floor(GREY), _cube()), (LIGHT,), ambient=0.2)


def test_same_seed_gives_the_same_bytes_and_another_seed_differs() -> None:
    world = _small_world()
    config = _config(texel_m=0.1, light_samples=4, hemisphere_samples=8)
    first = bake_lightmaps(world, config, threads=2)
    again = bake_lightmaps(world, config, threads=1)
    other = bake_lightmaps(world, dataclasses.replace(config, seed=1))
    assert first.faces.keys() == again.faces.keys()
    for key, value in first.faces.items():
        assert value.tobytes() == again.faces[key].tobytes()
    assert any(not np.array_equal(v, other.faces[k]) for k, v in first.faces.items())


def test_the_cache_is_reused_and_keyed_by_lights(tmp_path: Path) -> None:
    world = _small_world()
    config = _config(texel_m=0.1, light_samples=4, hemisphere_samples=8)
    first, cached = baked_lightmaps(world, config, tmp_path, show_progress=False)
    assert not cached
    again, cached = baked_lightmaps(world, config, tmp_path, show_progress=False)
    assert cached
    for key, value in first.faces.items():
        assert value.tobytes() == again.faces[key].tobytes()
    brighter = dataclasses.replace(
        world, lights=(dataclasses.replace(LIGHT, diffuse_rgb=(1.0,) * 3),)
    )
    assert bake_key(brighter, config) != bake_key(world, config)
    # The texture density is applied after the bake: the same lightmaps serve it.
    assert bake_key(world, dataclasses.replace(config, texture_px_per_m=20.0)) == bake_key(
        world, config
    )
    assert len(list(tmp_path.glob("*.npz"))) == 1
