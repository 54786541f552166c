"""Light units and camera exposure (grade_sim.world.light_units): the default exposure draws the
lights exactly as before (same model values, same pixels); one EV more halves every light; the
physical quantities follow from the raster values by the documented convention."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from grade_sim.config.scenario import Stream, load_scenario
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.scene import build_scene
from grade_sim.world.light_units import (
    INDOOR_EV100,
    cone_solid_angle_sr,
    exposure_scale,
    intensity_cd,
    lighting_record,
    luminance,
    raster_per_unit,
)

SMALL = {"robots.0.cameras.0.width": 64, "robots.0.cameras.0.height": 48}
SMALL |= {"people.count": 0, "flying_objects.count": 0}


def _engine(repo_root: Path, exposure: float | None) -> MujocoEngine:
    overrides = {**SMALL, "render.exposure_ev100": exposure}
    return MujocoEngine(build_scene(load_scenario(repo_root / "config/indoor_uav.yaml", overrides)))


def _rgb(engine: MujocoEngine) -> np.ndarray:
    rgb = engine.render("uav1", "camera", frozenset({Stream.RGB})).rgb
    assert rgb is not None
    return rgb


def test_the_default_exposure_draws_the_lights_as_designed_and_one_ev_halves_them(
    repo_root: Path,
) -> None:
    default = _engine(repo_root, None)
    world = build_scene(load_scenario(repo_root / "config/indoor_uav.yaml", SMALL)).world
    assert world.exposure_ev100 == INDOOR_EV100
    # The model holds the world's raster values themselves (no arithmetic on them).
    want = np.array([light.diffuse_rgb for light in world.lights], dtype=np.float32)
    assert default.model.light_diffuse.tobytes() == want.tobytes()
    at_reference = _engine(repo_root, INDOOR_EV100)
    one_more = _engine(repo_root, INDOOR_EV100 + 1.0)
    image = _rgb(default)
    assert _rgb(at_reference).tobytes() == image.tobytes()
    np.testing.assert_allclose(one_more.model.light_diffuse, default.model.light_diffuse / 2)
    ambient = np.asarray(world.ambience.ambient_rgb)
    np.testing.assert_allclose(default.model.vis.headlight.ambient, ambient, rtol=1e-6)
    np.testing.assert_allclose(one_more.model.vis.headlight.ambient, ambient / 2, rtol=1e-6)
    assert _rgb(one_more).mean() < 0.75 * image.mean()
    for engine in (default, at_reference, one_more):
        engine.close()


def test_physical_units_follow_from_the_raster_values() -> None:
    # A white light of raster value 1 at EV100 7: I = pi 1.2 2^7 cd, and back.
    assert intensity_cd((1.0, 1.0, 1.0), 7.0) == pytest.approx(math.pi * 1.2 * 128)
    assert intensity_cd((0.3, 0.6, 0.9), 7.0) * raster_per_unit(7.0) == pytest.approx(
        luminance((0.3, 0.6, 0.9))
    )
    assert exposure_scale(None, 7.0) == 1.0
    assert exposure_scale(7.0, 7.0) == 1.0
    assert exposure_scale(9.0, 7.0) == 0.25
    # Luminous power: the intensity cos^n integrated over the cone, against a quadrature.
    theta = np.linspace(0.0, math.radians(75.0), 200001)
    numeric = 2 * math.pi * np.trapezoid(np.cos(theta) ** 2 * np.sin(theta), theta)
    assert cone_solid_angle_sr(75.0, 2.0) == pytest.approx(numeric, rel=1e-6)
    assert cone_solid_angle_sr(180.0, 0.0) == pytest.approx(4 * math.pi)  # isotropic: 4 pi sr


def test_the_default_fixtures_in_physical_units_are_household_lamps(repo_root: Path) -> None:
    world = build_scene(load_scenario(repo_root / "config/indoor_uav.yaml", SMALL)).world
    record = lighting_record(world, None)
    assert record["exposure_ev100"] == INDOOR_EV100
    powers = [light["luminous_power_lm"] for light in record["lights"]]
    assert all(light["type"] == "spot" for light in record["lights"])
    # 60-150 W incandescent equivalents give 800-2600 lm.
    assert min(powers) >= 500.0
    assert max(powers) <= 3000.0
    colour = record["lights"][0]["rgb"]
    assert luminance(colour) == pytest.approx(1.0, abs=1e-5)
