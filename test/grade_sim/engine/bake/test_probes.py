"""Light probes: the baked light in the air against an analytic reference (one spot light, a
wall casting a shadow), the gains that shade moving things, the probes inside walls, the cache."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest

from grade_common.occupancy import OccupancyGrid
from grade_common.types import FloatArray
from grade_sim.config.scenario import BakeConfig
from grade_sim.engine.bake.cache import baked_lightmaps
from grade_sim.engine.bake.lightmap import bake_lightmaps
from grade_sim.engine.bake.probes import PROBE_NORMALS, ProbeGrid
from grade_sim.world.model import Ambience, Light, Material, StaticBox, World

BLACK = Material((0.0, 0.0, 0.0, 1.0))  # no bounce: the probes see the direct light alone
LIGHT = Light(
    position_xyz=(-1.0, 0.0, 2.5),
    diffuse_rgb=(0.9, 0.9, 0.9),
    cutoff_deg=85.0,
    exponent=1.0,
    attenuation=(1.0, 0.0, 0.05),
)
WALL_X_M = 0.5  # a wall from the floor to above the light, between x 0.4 and 0.6
UNDER_LAMP = (-1.0, 0.0, 1.0)
BEHIND_WALL = (1.5, 0.0, 0.5)  # the wall hides the light's whole disc from here
CONFIG = BakeConfig(
    texel_m=0.2, light_samples=4, hemisphere_samples=8, fixture_radius_m=0.0, probe_spacing_m=0.5
)


def _world() -> World:
    floor = StaticBox("floor", "floor", 1, (0.0, 0.0, -0.05), (3.0, 3.0, 0.05), 0.0, BLACK)
    wall = StaticBox("wall", "wall", 2, (WALL_X_M, 0.0, 1.5), (0.1, 3.0, 1.5), 0.0, BLACK)
    grid = OccupancyGrid((-3.0, -3.0), 0.1, np.zeros((60, 60), dtype=bool))
    return World(
        (floor, wall),
        (),
        (LIGHT,),
        grid,
        (-3.0, -3.0, -0.1),
        (3.0, 3.0, 3.0),
        ceiling_height_m=3.0,
        ambience=Ambience((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    )


def _analytic_level(point: FloatArray) -> float:
    """Mean over the six probe normals of MuJoCo's spot formula, unshadowed, clamped to 1."""
    to_light = np.asarray(LIGHT.position_xyz) - point
    d = float(np.linalg.norm(to_light))
    unit = to_light / d
    cos_spot = unit[2]  # the light aims straight down
    k0, k1, k2 = LIGHT.attenuation
    spot = cos_spot**LIGHT.exponent if cos_spot >= math.cos(math.radians(LIGHT.cutoff_deg)) else 0
    per_normal = LIGHT.diffuse_rgb[0] * np.maximum(PROBE_NORMALS @ unit, 0.0) * spot
    return float(np.minimum(per_normal / (k0 + k1 * d + k2 * d * d), 1.0).mean())


def _nearest_probe(grid: ProbeGrid, world: World, point: tuple[float, float, float]) -> tuple:
    points = grid.layout.points_xyz(world)
    k = int(np.argmin(np.linalg.norm(points - np.asarray(point), axis=1)))
    return np.unravel_index(k, grid.layout.shape), points[k]


def test_probes_see_the_lamp_and_the_shadow_behind_a_wall() -> None:
    world = _world()
    grid = bake_lightmaps(world, CONFIG).probes
    assert grid is not None
    lamp, lamp_at = _nearest_probe(grid, world, UNDER_LAMP)
    hidden, hidden_at = _nearest_probe(grid, world, BEHIND_WALL)
    reference = _analytic_level(lamp_at)
    assert reference > 0.1
    # Under the lamp nothing is in the way: baked == live == the analytic level.
    assert grid.baked_rgb[lamp][0] == pytest.approx(reference, rel=0.02)
    assert grid.live_rgb[lamp][0] == pytest.approx(reference, rel=0.02)
    # Behind the wall the live renderer would light it all the same; the bake does not.
    assert grid.live_rgb[hidden][0] == pytest.approx(_analytic_level(hidden_at), rel=0.02)
    assert grid.baked_rgb[hidden][0] < 0.02 * grid.live_rgb[hidden][0]
    lit_gain = grid.gain_at(np.array([lamp_at]), world)[0, 0]
    dark_gain = grid.gain_at(np.array([hidden_at]), world)[0, 0]
    assert lit_gain == pytest.approx(1.0, abs=0.03)
    assert dark_gain < 0.05


def test_probes_inside_the_wall_are_left_out() -> None:
    world = _world()
    grid = bake_lightmaps(world, CONFIG).probes
    assert grid is not None
    points = grid.layout.points_xyz(world).reshape(*grid.layout.shape, 3)
    in_wall = np.abs(points[..., 0] - WALL_X_M) < 0.1
    assert in_wall.any()
    assert not grid.valid[in_wall].any()
    assert grid.valid[~in_wall].all()
    # Beside the wall, on the lit side: its inside does not darken the interpolation.
    beside = np.array([[WALL_X_M - 0.2, 0.0, 1.0]])
    assert grid.gain_at(beside, world)[0, 0] > 0.9


def test_probes_are_seeded_and_cached(tmp_path: Path) -> None:
    world = _world()
    first, cached = baked_lightmaps(world, CONFIG, tmp_path, show_progress=False)
    again, cached_again = baked_lightmaps(world, CONFIG, tmp_path, show_progress=False)
    fresh = bake_lightmaps(world, CONFIG, threads=1)
    assert (cached, cached_again) == (False, True)
    for grid in (again.probes, fresh.probes):
        assert grid is not None
        assert first.probes is not None
        assert grid.layout == first.probes.layout
        assert grid.baked_rgb.tobytes() == first.probes.baked_rgb.tobytes()
        assert grid.live_rgb.tobytes() == first.probes.live_rgb.tobytes()
        assert grid.valid.tobytes() == first.probes.valid.tobytes()


def test_too_many_probes_widen_the_grid() -> None:
    world = _world()
    few = bake_lightmaps(world, dataclasses.replace(CONFIG, max_probes=64)).probes
    assert few is not None
    assert math.prod(few.layout.shape) <= 64
    assert few.layout.spacing_m > CONFIG.probe_spacing_m
