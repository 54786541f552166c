"""Outdoor ground as a height map: flat where things walk, gentle seeded hills around it.

The walk area (the outdoor world's `size_m`, where people, animals and ground robots move and the
occupancy grid lives) stays exactly at z = 0, so every actor that assumes flat ground stands on
it. Beyond it the ground rises smoothly into hills built from seeded value noise, out to a border
that the cameras see as the horizon. `Terrain.height_at` is exact on the triangle mesh that
engines draw (each grid cell is split along the same diagonal), so decorations placed with it sit
on the drawn surface.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray

# Noise octaves (wavelength in metres, weight): long hills with some smaller bumps.
OCTAVES = ((24.0, 1.0), (9.0, 0.35), (3.5, 0.1))


@dataclass(frozen=True)
class Terrain:
    """Heights on a regular grid; vertex (i, j) is at origin + (i, j) * spacing."""

    origin_xy: tuple[float, float]
    spacing_m: float
    heights_m: FloatArray  # (nx + 1, ny + 1)

    def height_at(self, x: float | FloatArray, y: float | FloatArray) -> FloatArray:
        """Ground z under (x, y), on the drawn triangles; points outside clamp to the edge."""
        nx, ny = (n - 1 for n in self.heights_m.shape)
        u = np.clip((np.asarray(x, dtype=np.float64) - self.origin_xy[0]) / self.spacing_m, 0, nx)
        v = np.clip((np.asarray(y, dtype=np.float64) - self.origin_xy[1]) / self.spacing_m, 0, ny)
        i = np.minimum(np.floor(u).astype(np.int64), nx - 1)
        j = np.minimum(np.floor(v).astype(np.int64), ny - 1)
        fu, fv = u - i, v - j
        h = self.heights_m
        h00, h10, h01, h11 = h[i, j], h[i + 1, j], h[i, j + 1], h[i + 1, j + 1]
        # Cells are split along the (0,0)-(1,1) diagonal: lower triangle where fu >= fv.
        lower = h00 + fu * (h10 - h00) + fv * (h11 - h10)
        upper = h00 + fv * (h01 - h00) + fu * (h11 - h01)
        out: FloatArray = np.where(fu >= fv, lower, upper)
        return out

    def mesh(self) -> tuple[FloatArray, NDArray[np.int32], FloatArray]:
        """Vertices (world frame), faces (counter-clockwise from above) and texcoords in metres."""
        nx1, ny1 = self.heights_m.shape
        ii, jj = np.meshgrid(np.arange(nx1), np.arange(ny1), indexing="ij")
        x = self.origin_xy[0] + ii * self.spacing_m
        y = self.origin_xy[1] + jj * self.spacing_m
        vertices = np.stack([x.ravel(), y.ravel(), self.heights_m.ravel()], axis=1)
        idx = (ii * ny1 + jj)[:-1, :-1].ravel()
        a, b, c, d = idx, idx + ny1, idx + ny1 + 1, idx + 1  # (i,j) (i+1,j) (i+1,j+1) (i,j+1)
        faces = np.concatenate([np.stack([a, b, c], 1), np.stack([a, c, d], 1)]).astype(np.int32)
        uv = np.stack([x.ravel(), y.ravel()], axis=1)
        return vertices, faces, uv


def value_noise(
    shape: tuple[int, int], spacing_m: float, wavelength_m: float, rng: np.random.Generator
) -> FloatArray:
    """Smooth noise in [0, 1] on a grid: random values every wavelength, cubic in between."""
    from scipy.ndimage import map_coordinates

    coarse_shape = tuple(math.ceil(n * spacing_m / wavelength_m) + 4 for n in shape)
    coarse = rng.random(coarse_shape)
    ii, jj = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), indexing="ij")
    coords = np.stack([ii, jj]).astype(np.float64) * spacing_m / wavelength_m + 1.0
    out: FloatArray = np.clip(map_coordinates(coarse, coords, order=3, mode="nearest"), 0, 1)
    return out


def generate_terrain(
    walk_half_xy: tuple[float, float],
    border_m: float,
    hill_height_m: float,
    spacing_m: float,
    rng: np.random.Generator,
) -> Terrain:
    """A flat walk area of half-size walk_half_xy inside a border of hills up to hill_height_m.

    The hills fade in over the first half of the border (smoothstep), so the ground leaving the
    walk area is tangent to it and the slope stays gentle.
    """
    hx, hy = walk_half_xy[0] + border_m, walk_half_xy[1] + border_m
    nx, ny = math.ceil(2 * hx / spacing_m), math.ceil(2 * hy / spacing_m)
    origin = (-nx * spacing_m / 2, -ny * spacing_m / 2)
    noise = np.zeros((nx + 1, ny + 1))
    total = 0.0
    for wavelength_m, weight in OCTAVES:
        noise += weight * value_noise((nx + 1, ny + 1), spacing_m, wavelength_m, rng)
        total += weight
    noise /= total
    x = origin[0] + np.arange(nx + 1) * spacing_m
    y = origin[1] + np.arange(ny + 1) * spacing_m
    # Distance outside the walk rectangle (0 inside it).
    dx = np.maximum(np.abs(x) - walk_half_xy[0], 0.0)[:, None]
    dy = np.maximum(np.abs(y) - walk_half_xy[1], 0.0)[None, :]
    s = np.clip(np.hypot(dx, dy) / max(border_m / 2, 1e-9), 0.0, 1.0)
    ramp = s * s * (3 - 2 * s)
    return Terrain(origin, spacing_m, hill_height_m * ramp * noise)
