"""Seeded lights for generated worlds: ceiling fixtures indoors, a sun and a sky outdoors.

Every draw (count, intensity, colour temperature, ambient fill, time of day) comes from the
generator passed in, within the ranges of `LightsConfig`; the same generator state gives the same
lights. Colours come from a colour temperature (Kelvin) and are scaled to unit luminance, so the
intensity alone sets how bright a light is and the temperature only its hue.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from grade_sim.config.scenario import LightsConfig
from grade_sim.world.model import Ambience, Light, Sky

MAX_LIGHTS = 8  # MuJoCo's renderer lights a scene with at most 8 lights
FIXTURE_DROP_M = 0.05  # fixtures hang this far below the ceiling
# Indoor fixtures: a wide cone (most of the room, walls included) with gentle quadratic fall-off.
FIXTURE_CUTOFF_DEG = (70.0, 85.0)
FIXTURE_EXPONENT = 2.0
FIXTURE_ATTENUATION = (1.0, 0.0, 0.02)
SUN_DISTANCE_M = 60.0
SUNRISE_H, SUNSET_H = 6.0, 18.0
MAX_SUN_ELEVATION_DEG = 65.0
MIN_SUN_ELEVATION_DEG = 8.0

RGB = tuple[float, float, float]


def kelvin_to_rgb(kelvin: float) -> RGB:
    """Colour of a black body at `kelvin` (1000-40000 K), scaled to unit luminance (Rec. 709).

    Tanner Helland's fit of the CIE black-body colours; good to a few percent, which is all a
    light's tint needs.
    """
    t = float(np.clip(kelvin, 1000.0, 40000.0)) / 100.0
    if t <= 66.0:
        r = 255.0
        g = 99.4708025861 * math.log(t) - 161.1195681661
        b = 0.0 if t <= 19.0 else 138.5177312231 * math.log(t - 10.0) - 305.0447927307
    else:
        r = 329.698727446 * (t - 60.0) ** -0.1332047592
        g = 288.1221695283 * (t - 60.0) ** -0.0755148492
        b = 255.0
    rgb = np.clip(np.array([r, g, b]) / 255.0, 0.0, 1.0)
    luminance = float(np.dot(rgb, (0.2126, 0.7152, 0.0722)))
    out = rgb / max(luminance, 1e-6)
    return (float(out[0]), float(out[1]), float(out[2]))


def draw_count(config: LightsConfig, rng: np.random.Generator) -> int:
    """How many lights: count +- count_jitter, within [1, MAX_LIGHTS]."""
    n = config.count + int(rng.integers(-config.count_jitter, config.count_jitter + 1))
    return int(np.clip(n, 1, MAX_LIGHTS))


def _tinted(config: LightsConfig, rng: np.random.Generator, kelvin: float, intensity: float) -> RGB:
    tint = 1.0 + rng.uniform(-config.color_jitter, config.color_jitter, 3)
    rgb = np.clip(np.asarray(kelvin_to_rgb(kelvin)) * intensity * tint, 0.0, 2.0)
    return (float(rgb[0]), float(rgb[1]), float(rgb[2]))


def indoor_ambience(config: LightsConfig, rng: np.random.Generator) -> Ambience:
    """A small grey ambient fill and no headlight."""
    a = float(rng.uniform(*config.ambient))
    return Ambience(ambient_rgb=(a, a, a), headlight_rgb=(0.0, 0.0, 0.0))


def ceiling_lights(
    config: LightsConfig,
    rng: np.random.Generator,
    rooms_xy: Sequence[tuple[float, float, float, float]],
    ceiling_m: float,
) -> tuple[Light, ...]:
    """Ceiling fixtures spread over rooms (x0, y0, x1, y1): every room gets one before any gets
    two, in a random room order. One colour temperature per world (one kind of bulb), each
    fixture within +-300 K of it."""
    n = draw_count(config, rng)
    order = rng.permutation(len(rooms_xy))
    kelvin = float(rng.uniform(*config.color_temperature_k))
    lights = []
    for k in range(n):
        x0, y0, x1, y1 = rooms_xy[int(order[k % len(rooms_xy)])]
        # First fixture of a room near its centre, further ones anywhere in the inner 60 %.
        spread = 0.15 if k < len(rooms_xy) else 0.3
        x = (x0 + x1) / 2 + rng.uniform(-spread, spread) * (x1 - x0)
        y = (y0 + y1) / 2 + rng.uniform(-spread, spread) * (y1 - y0)
        intensity = float(rng.uniform(*config.intensity))
        lights.append(
            Light(
                position_xyz=(float(x), float(y), float(ceiling_m - FIXTURE_DROP_M)),
                diffuse_rgb=_tinted(config, rng, kelvin + rng.uniform(-300, 300), intensity),
                cutoff_deg=float(rng.uniform(*FIXTURE_CUTOFF_DEG)),
                exponent=FIXTURE_EXPONENT,
                attenuation=FIXTURE_ATTENUATION,
            )
        )
    return tuple(lights)


def sun_direction(time_of_day_h: float, azimuth_offset_rad: float) -> tuple[float, float, float]:
    """Unit vector towards the sun: rising in the east (+x rotated by the offset) at SUNRISE_H,
    highest at noon, setting in the west at SUNSET_H."""
    phase = (time_of_day_h - SUNRISE_H) / (SUNSET_H - SUNRISE_H)  # 0 sunrise .. 1 sunset
    elevation = math.radians(
        max(MIN_SUN_ELEVATION_DEG, MAX_SUN_ELEVATION_DEG * math.sin(math.pi * phase))
    )
    azimuth = azimuth_offset_rad + math.pi * phase
    return (
        math.cos(elevation) * math.cos(azimuth),
        math.cos(elevation) * math.sin(azimuth),
        math.sin(elevation),
    )


def outdoor_lights(
    config: LightsConfig, rng: np.random.Generator
) -> tuple[tuple[Light, ...], Ambience, Sky]:
    """A sun at a random time of day, a faint blue sky fill light, ambient, and the sky.

    A low sun is warmer (down to ~2500 K) and weaker than a high one (~5800 K).
    """
    hour = float(rng.uniform(*config.time_of_day_h))
    to_sun = sun_direction(hour, float(rng.uniform(-math.pi, math.pi)))
    height = max(to_sun[2], math.sin(math.radians(MIN_SUN_ELEVATION_DEG)))
    kelvin = 2500.0 + 3300.0 * min(1.0, height / math.sin(math.radians(45.0)))
    intensity = float(rng.uniform(*config.intensity)) * (0.55 + 0.45 * height)
    sun_rgb = _tinted(config, rng, kelvin, intensity)
    sun = Light(
        position_xyz=tuple(SUN_DISTANCE_M * v for v in to_sun),  # type: ignore[arg-type]
        diffuse_rgb=sun_rgb,
        directional=True,
        direction_xyz=(-to_sun[0], -to_sun[1], -to_sun[2]),
    )
    fill_level = 0.2 * (0.5 + height)
    sky_fill = Light(
        position_xyz=(0.0, 0.0, SUN_DISTANCE_M),
        diffuse_rgb=(0.8 * fill_level, 0.9 * fill_level, 1.1 * fill_level),
        directional=True,
        casts_shadow=False,
    )
    a = float(rng.uniform(*config.ambient)) * (1.2 + 1.2 * height)  # open sky: more fill
    ambience = Ambience(ambient_rgb=(0.9 * a, 0.95 * a, 1.05 * a), headlight_rgb=(0.0, 0.0, 0.0))
    # Sky: deep blue overhead at noon, paler and warmer towards the horizon and a low sun.
    warm = 1.0 - min(1.0, height / 0.5)
    day = 0.55 + 0.45 * min(1.0, height / 0.6)
    zenith = np.array([0.22, 0.42, 0.78]) * day
    horizon = (np.array([0.72, 0.82, 0.92]) * (1 - warm) + np.array([0.95, 0.72, 0.5]) * warm) * day
    ground = np.array([0.35, 0.33, 0.3]) * day
    sky = Sky(
        zenith_rgb=_rgb(zenith),
        horizon_rgb=_rgb(horizon),
        ground_rgb=_rgb(ground),
        sun_direction_xyz=to_sun,
        sun_rgb=_rgb(np.clip(np.asarray(kelvin_to_rgb(kelvin)) / 1.2, 0, 1)),
    )
    return (sun, sky_fill), ambience, sky


def _rgb(values: np.ndarray) -> RGB:
    c = np.clip(values, 0.0, 1.0)
    return (float(c[0]), float(c[1]), float(c[2]))
