"""Light probes: the baked light at points in the air, for moving things (people, animals,
robots, flying objects) to be shaded by it.

A coarse grid of probes over the world (`probe_spacing_m` apart, at a few heights above the
ground) is gathered during the bake, with the same rays as the lightmaps: at each probe the
irradiance of six surfaces facing +-x, +-y, +-z (direct light with soft shadows, ambient x AO,
sky, one bounce; clamped to 1 per channel as the renderer does), and their mean. Beside it the
probe keeps the *live* level the raster renderer gives an unshadowed surface there (the same
lights without shadows, the full ambient and half the headlight, clamped likewise). Their ratio,
the probe's gain, is what a moving thing's colour is scaled by at render time: in a shadowed
corner it falls below 1, under a lamp it stays near 1, and the live lights keep the shading's
direction (the fixed-function renderer has one light set for the whole scene).

Probes inside opaque boxes (walls, furniture) are marked invalid and left out of the
interpolation, so a person beside a wall is not darkened by the wall's inside.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.config.scenario import BakeConfig
from grade_sim.world.model import StaticBox, World

# The six surface normals gathered per probe: +x, -x, +y, -y, +z, -z.
PROBE_NORMALS: FloatArray = np.array(
    [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]], dtype=np.float64
)
LOWEST_M = 0.25  # the lowest probe above the ground
HIGHEST_M = 3.0  # and the highest (flying objects above it use the top layer)
INSIDE_MARGIN_M = 0.02
# The headlight lights the side of a thing facing the camera: on average about half of it.
HEADLIGHT_SHARE = 0.5
MAX_GAIN = 2.0
MIN_LIVE = 1e-3


@dataclass(frozen=True)
class ProbeLayout:
    """Where the probes are: a grid in x, y (from `origin_xy`, `spacing_m` apart) by heights
    above the ground."""

    origin_xy: tuple[float, float]
    spacing_m: float
    nx: int
    ny: int
    heights_m: tuple[float, ...]

    @property
    def shape(self) -> tuple[int, int, int]:
        """(heights, rows along y, columns along x)."""
        return (len(self.heights_m), self.ny, self.nx)

    def points_xyz(self, world: World) -> FloatArray:
        """(nz * ny * nx, 3) world points, height then y then x (C order of `shape`)."""
        xs = self.origin_xy[0] + self.spacing_m * np.arange(self.nx)
        ys = self.origin_xy[1] + self.spacing_m * np.arange(self.ny)
        hh, yy, xx = np.meshgrid(np.asarray(self.heights_m), ys, xs, indexing="ij")
        ground = world.terrain_height(xx.ravel(), yy.ravel())
        return np.stack([xx.ravel(), yy.ravel(), ground + hh.ravel()], axis=1)


@dataclass(frozen=True)
class ProbeGrid:
    """Baked and live levels of every probe (renderer units, RGB, (nz, ny, nx, 3))."""

    layout: ProbeLayout
    baked_rgb: NDArray[np.float32]
    live_rgb: NDArray[np.float32]
    valid: NDArray[np.bool_]  # (nz, ny, nx): False inside opaque boxes

    @property
    def gain_rgb(self) -> NDArray[np.float32]:
        """How much a moving thing's colour is scaled at each probe (0..MAX_GAIN)."""
        return self._gain_rgb.copy()

    @cached_property
    def _gain_rgb(self) -> NDArray[np.float32]:
        # Read at every frame (per person, per contact shadow): computed once per grid.
        out = np.clip(self.baked_rgb / np.maximum(self.live_rgb, MIN_LIVE), 0.0, MAX_GAIN)
        return np.ascontiguousarray(out, dtype=np.float32)

    def gain_at(self, points_xyz: FloatArray, world: World) -> FloatArray:
        """(n, 3) gain at world points: trilinear over the valid probes around each (1 where
        none is valid), clamped to the grid's edges."""
        pts = np.ascontiguousarray(np.asarray(points_xyz, dtype=np.float64).reshape(-1, 3))
        lay = self.layout
        height = pts[:, 2] - world.terrain_height(pts[:, 0], pts[:, 1])
        out = np.empty((len(pts), 3))
        _trilinear(
            pts,
            np.ascontiguousarray(height, dtype=np.float64),
            np.asarray(lay.origin_xy, dtype=np.float64),
            float(lay.spacing_m),
            np.asarray(lay.heights_m, dtype=np.float64),
            self._gain_rgb,
            np.ascontiguousarray(self.valid),
            out,
        )
        return out


@numba.njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _cell(f: float, n: int) -> tuple[int, float]:  # pragma: no cover - compiled
    """The lower grid index of a cell around position f (in probes, clamped) and f's share
    past it."""
    f = min(max(f, 0.0), n - 1.0)
    cell = min(int(np.floor(f)), max(n - 2, 0))
    return cell, f - cell


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _trilinear(
    points: Any,
    height: Any,
    origin_xy: Any,
    spacing: float,
    heights_m: Any,
    gain: Any,
    valid: Any,
    out: Any,
) -> None:  # pragma: no cover - compiled
    nz, ny, nx = valid.shape
    for p in range(points.shape[0]):
        h = height[p]
        # Position among the heights as np.interp(h, heights_m, arange(nz)) gives it.
        if h <= heights_m[0]:
            fz = 0.0
        elif h >= heights_m[nz - 1]:
            fz = nz - 1.0
        else:
            k = np.searchsorted(heights_m, h, side="right") - 1
            fz = 1.0 / (heights_m[k + 1] - heights_m[k]) * (h - heights_m[k]) + k
        cz, tz = _cell(fz, nz)
        cy, ty = _cell((points[p, 1] - origin_xy[1]) / spacing, ny)
        cx, tx = _cell((points[p, 0] - origin_xy[0]) / spacing, nx)
        total = np.zeros(3)
        weight = 0.0
        for dz in range(2):
            for dy in range(2):
                for dx in range(2):
                    iz, iy, ix = min(cz + dz, nz - 1), min(cy + dy, ny - 1), min(cx + dx, nx - 1)
                    w = (
                        (tz if dz else 1.0 - tz)
                        * (ty if dy else 1.0 - ty)
                        * (tx if dx else 1.0 - tx)
                        * valid[iz, iy, ix]
                    )
                    for c in range(3):
                        total[c] += w * gain[iz, iy, ix, c]
                    weight += w
        for c in range(3):
            out[p, c] = total[c] / max(weight, 1e-6) if weight > 1e-6 else 1.0


def probe_layout(world: World, config: BakeConfig) -> ProbeLayout:
    """A grid over the world's bounds, `probe_spacing_m` apart (wider where more than
    `max_probes` would be needed)."""
    x0, y0, _ = world.bounds_min_xyz
    x1, y1, _ = world.bounds_max_xyz
    top = float(np.clip(world.ceiling_height_m - LOWEST_M, LOWEST_M + 0.25, HIGHEST_M))
    spacing = config.probe_spacing_m
    while True:
        nx = max(2, math.floor((x1 - x0) / spacing) + 1)
        ny = max(2, math.floor((y1 - y0) / spacing) + 1)
        nz = max(2, round((top - LOWEST_M) / spacing) + 1)
        if nx * ny * nz <= config.max_probes:
            break
        spacing *= 1.25
    heights = tuple(float(h) for h in np.linspace(LOWEST_M, top, nz))
    # Centred in the bounds (the grid's last column may fall short of x1).
    ox = x0 + 0.5 * ((x1 - x0) - (nx - 1) * spacing)
    oy = y0 + 0.5 * ((y1 - y0) - (ny - 1) * spacing)
    return ProbeLayout((float(ox), float(oy)), float(spacing), nx, ny, heights)


def _inside_box(points: FloatArray, box: StaticBox) -> NDArray[np.bool_]:
    c, s = math.cos(box.yaw_rad), math.sin(box.yaw_rad)
    d = points - np.asarray(box.center_xyz)
    local = np.stack([c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1], d[:, 2]], axis=1)
    half = np.asarray(box.half_size_xyz) + INSIDE_MARGIN_M
    out: NDArray[np.bool_] = np.all(np.abs(local) <= half, axis=1)
    return out


def inside_opaque(world: World, points: FloatArray) -> NDArray[np.bool_]:
    """Which points lie inside an opaque static box (a probe there sees only its inside)."""
    inside = np.zeros(len(points), dtype=bool)
    for box in world.boxes:
        if box.material.rgba[3] >= 1.0:
            inside |= _inside_box(points, box)
    return inside


def live_level(world: World, per_normal_rgb: FloatArray) -> FloatArray:
    """(n, 3) live level of n probes from their six normals' unshadowed direct light
    ((6n, 3), probe-major): plus the full ambient and headlight share, clamped, averaged."""
    amb = world.ambience
    extra = np.asarray(amb.ambient_rgb) + HEADLIGHT_SHARE * np.asarray(amb.headlight_rgb)
    lit = np.minimum(per_normal_rgb + extra[None, :], 1.0)
    out: FloatArray = lit.reshape(-1, len(PROBE_NORMALS), 3).mean(axis=1)
    return out


def probe_grid(
    world: World,
    layout: ProbeLayout,
    baked_per_normal: FloatArray,
    live_per_normal: FloatArray,
    clamp: float,
) -> ProbeGrid:
    """The grid from the bake's per-normal irradiance (baked, and live unshadowed light)."""
    shape = layout.shape
    baked = np.minimum(baked_per_normal, clamp).reshape(-1, len(PROBE_NORMALS), 3).mean(axis=1)
    live = live_level(world, live_per_normal)
    valid = ~inside_opaque(world, layout.points_xyz(world))
    return ProbeGrid(
        layout,
        baked.reshape(*shape, 3).astype(np.float32),
        live.reshape(*shape, 3).astype(np.float32),
        valid.reshape(shape),
    )
