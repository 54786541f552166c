"""Physical light units and camera exposure, read the same way by every renderer.

A world's lights are drawn (lighting.py) as the raster renderer's values: a light of diffuse
colour `d` lights a surface of albedo `a` with `a * d * cos(incidence) * spot * att`, where
`spot = cos(angle to the axis) ** exponent` inside the cone and `att = 1 / (a0 + a1 r + a2 r^2)`
(MuJoCo's fixed-function model). Those values are exact at the world's reference exposure
`World.exposure_ev100`, the exposure its light levels were chosen for. In physical units:

- a camera of exposure EV100 maps scene luminance `L` (cd/m^2) to the linear pixel value
  `L / (1.2 * 2^EV100)` (the saturation-based convention of ISO 12232, as Filament uses it);
- a diffuse surface under illuminance `E` (lux) has luminance `a E / pi`;
- so a light of luminous intensity `I` (cd, on its axis) gives `E = I cos spot att` lux
  (att with r in metres, a0 in 1/m^2 units: (0, 0, 1) is the inverse-square law) and the raster
  value `d = I / (pi * 1.2 * 2^EV100)`; a directional light (the sun) of illuminance `E` lux
  has `d = E / (pi * 1.2 * 2^EV100)`.

The luminous power of a spot is `I * 2 pi (1 - cos^(n+1) cutoff) / (n + 1)` lm (its intensity
integrated over the cone). Colour: `d = I_rel * rgb`, with `rgb` of unit luminance (Rec. 709).
A camera exposure `EV` other than the world's scales every light (and the ambient fill) by
`2^(EV_world - EV)`: exactly 1 at the reference, so the default raster look is unchanged.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

# The world's reference exposures: indoor rooms lit by lamps (an office is EV100 6-8: the
# default fixtures give 150-300 lx on the floor) and sunny outdoor scenes ("sunny 16": EV100 15).
INDOOR_EV100 = 7.0
OUTDOOR_EV100 = 15.0
# ISO 12232 saturation-based sensitivity: L_max = 1.2 * 2^EV100 cd/m^2 maps to 1.
SATURATION_K = 1.2
REC709_LUMA = (0.2126, 0.7152, 0.0722)


def luminance(rgb: Sequence[float]) -> float:
    """Rec. 709 relative luminance of a linear colour."""
    return float(sum(w * float(c) for w, c in zip(REC709_LUMA, rgb, strict=True)))


def raster_per_unit(ev100: float) -> float:
    """Raster value per cd (at 1 m) or per lux at exposure `ev100`: 1 / (pi 1.2 2^EV100)."""
    return float(1.0 / (math.pi * SATURATION_K * 2.0**ev100))


def exposure_scale(camera_ev100: float | None, world_ev100: float) -> float:
    """Factor on every raster light at the camera's exposure (1.0 for None or the world's)."""
    if camera_ev100 is None or camera_ev100 == world_ev100:
        return 1.0
    return float(2.0 ** (world_ev100 - camera_ev100))


def intensity_cd(diffuse_rgb: Sequence[float], world_ev100: float) -> float:
    """Luminous intensity on the axis (cd) of a point or spot light of raster colour `d`
    (or the illuminance in lux of a directional one)."""
    return luminance(diffuse_rgb) / raster_per_unit(world_ev100)


def cone_solid_angle_sr(cutoff_deg: float, exponent: float) -> float:
    """Integral of cos(angle)^exponent over the cone of half-angle `cutoff_deg` (sr)."""
    c = math.cos(math.radians(min(cutoff_deg, 180.0)))
    if cutoff_deg > 90.0 and exponent > 0:
        c = 0.0  # cos^n is taken as 0 past 90 degrees (MuJoCo clamps the spot term)
    return 2.0 * math.pi * (1.0 - math.copysign(abs(c) ** (exponent + 1.0), c)) / (exponent + 1.0)


def light_units(light: Any, world_ev100: float) -> dict[str, Any]:
    """One light (grade_sim.world.model.Light) in physical units, for run.yaml."""
    rgb = [float(v) for v in light.diffuse_rgb]
    y = luminance(rgb)
    colour = [round(v / y, 6) if y > 0 else 0.0 for v in rgb]
    value = intensity_cd(rgb, world_ev100)
    if light.directional:
        return {
            "type": "directional",
            "illuminance_lx": round(value, 3),
            "rgb": colour,
            "direction_xyz": [float(v) for v in light.direction_xyz],
        }
    power_lm = value * cone_solid_angle_sr(light.cutoff_deg, light.exponent)
    return {
        "type": "spot",
        "luminous_power_lm": round(power_lm, 3),
        "intensity_cd": round(value, 3),
        "rgb": colour,
        "cone_half_angle_deg": float(light.cutoff_deg),
        "spot_exponent": float(light.exponent),
        "attenuation": [float(v) for v in light.attenuation],
        "position_xyz": [float(v) for v in light.position_xyz],
    }


def lighting_record(world: Any, camera_ev100: float | None) -> dict[str, Any]:
    """run.yaml's `lighting` key: the camera exposure and every light in physical units."""
    ev = world.exposure_ev100 if camera_ev100 is None else float(camera_ev100)
    return {
        "exposure_ev100": ev,
        "world_exposure_ev100": world.exposure_ev100,
        "ambient_lx": round(intensity_cd(world.ambience.ambient_rgb, world.exposure_ev100), 3),
        "lights": [light_units(light, world.exposure_ev100) for light in world.lights],
    }


def exposed_world(world: Any, camera_ev100: float | None) -> Any:
    """`world` (a grade_sim.world.model.World) with its lights and ambient fill as a camera of
    exposure `camera_ev100` sees them; the same object at the reference exposure (or None).
    The drawn sky's colours are not scaled (it is a texture, not a light)."""
    scale = exposure_scale(camera_ev100, world.exposure_ev100)
    if scale == 1.0:
        return world

    def times(rgb: Sequence[float]) -> tuple[float, float, float]:
        return (float(rgb[0]) * scale, float(rgb[1]) * scale, float(rgb[2]) * scale)

    lights = tuple(dataclasses.replace(v, diffuse_rgb=times(v.diffuse_rgb)) for v in world.lights)
    amb = world.ambience
    ambience = dataclasses.replace(
        amb, ambient_rgb=times(amb.ambient_rgb), headlight_rgb=times(amb.headlight_rgb)
    )
    return dataclasses.replace(world, lights=lights, ambience=ambience)
