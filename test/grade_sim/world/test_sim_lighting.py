"""Seeded lights: colour temperature, ceiling fixtures per room, the sun and the sky."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from grade_sim.config.scenario import LightsConfig
from grade_sim.world.lighting import (
    MAX_LIGHTS,
    ceiling_lights,
    draw_count,
    indoor_ambience,
    kelvin_to_rgb,
    outdoor_lights,
    sun_direction,
)

ROOMS = [(0.0, 0.0, 5.0, 6.0), (5.0, 0.0, 11.0, 6.0), (0.0, 6.0, 5.0, 12.0), (5.0, 6.0, 11.0, 12.0)]


def luminance(rgb: tuple[float, float, float]) -> float:
    return float(np.dot(rgb, (0.2126, 0.7152, 0.0722)))


def test_colour_temperature_sets_the_hue_not_the_brightness() -> None:
    candle, noon, sky = kelvin_to_rgb(1900), kelvin_to_rgb(5500), kelvin_to_rgb(10000)
    for rgb in (candle, noon, sky):
        assert luminance(rgb) == pytest.approx(1.0, abs=1e-9)
    assert candle[0] > candle[1] > candle[2]  # warm: orange
    assert sky[2] > sky[0]  # cool: blue
    assert max(noon) / min(noon) < 1.25  # daylight: near white
    # Monotone: the warmer, the redder.
    ratios = [kelvin_to_rgb(k)[0] / kelvin_to_rgb(k)[2] for k in range(2000, 12001, 500)]
    assert all(a >= b for a, b in itertools.pairwise(ratios))


def test_ceiling_lights_light_every_room_within_the_count_range() -> None:
    config = LightsConfig(count=6, count_jitter=2, intensity=(0.6, 1.0))
    counts = set()
    for seed in range(30):
        lights = ceiling_lights(config, np.random.default_rng(seed), ROOMS, 2.7)
        counts.add(len(lights))
        assert 4 <= len(lights) <= 8
        for x0, y0, x1, y1 in ROOMS:
            assert any(
                x0 < lt.position_xyz[0] < x1 and y0 < lt.position_xyz[1] < y1 for lt in lights
            )
        for lt in lights:
            assert lt.position_xyz[2] == pytest.approx(2.65)
            assert not lt.directional
            assert lt.direction_xyz == (0.0, 0.0, -1.0)
    assert counts == {4, 5, 6, 7, 8}  # the count is randomised over its whole range


def test_count_is_clipped_to_what_the_renderer_lights() -> None:
    config = LightsConfig(count=8, count_jitter=4)
    rng = np.random.default_rng(0)
    assert {draw_count(config, rng) for _ in range(200)} == set(range(4, MAX_LIGHTS + 1))


def test_lights_are_reproducible_and_vary_with_the_seed() -> None:
    config = LightsConfig(count=4, count_jitter=1)
    a = ceiling_lights(config, np.random.default_rng(5), ROOMS, 2.7)
    assert a == ceiling_lights(config, np.random.default_rng(5), ROOMS, 2.7)
    assert a != ceiling_lights(config, np.random.default_rng(6), ROOMS, 2.7)
    amb = indoor_ambience(config, np.random.default_rng(5))
    assert amb.headlight_rgb == (0.0, 0.0, 0.0)
    assert config.ambient[0] <= amb.ambient_rgb[0] <= config.ambient[1]


def test_sun_rises_east_peaks_at_noon_and_sets_west() -> None:
    morning, noon, evening = (sun_direction(h, 0.0) for h in (6.0, 12.0, 18.0))
    for d in (morning, noon, evening):
        assert math.isclose(float(np.linalg.norm(d)), 1.0)
    assert noon[2] == pytest.approx(math.sin(math.radians(65.0)))
    assert morning[2] == pytest.approx(evening[2])
    assert morning[2] < 0.2
    assert morning[0] > 0.9
    assert evening[0] < -0.9


def test_outdoor_sun_is_warmer_and_weaker_low_in_the_sky() -> None:
    def at(hour: float) -> tuple[float, float, float, float]:
        config = LightsConfig(intensity=(0.8, 0.8), color_jitter=0.0, time_of_day_h=(hour, hour))
        (sun, fill), amb, sky = outdoor_lights(config, np.random.default_rng(1))
        assert sun.directional
        assert not fill.casts_shadow
        np.testing.assert_allclose(sun.direction_xyz, -np.asarray(sky.sun_direction_xyz))
        r, _g, b = sun.diffuse_rgb
        return luminance(sun.diffuse_rgb), r / b, sky.zenith_rgb[2], amb.ambient_rgb[0]

    dawn, noon = at(6.5), at(12.0)
    assert dawn[0] < noon[0]  # weaker
    assert dawn[1] > noon[1]  # redder
    assert dawn[2] < noon[2]  # darker sky
    assert dawn[3] < noon[3]  # less sky fill
