"""Seeded triangle meshes of outdoor things: tree trunks and layered crowns, bushes, rocks, grass.

Each maker returns a `Shape` in a local frame whose origin is on the ground under the object,
z up; texture coordinates are in metres (engines repeat procedural textures by their tile size).
Lumps come from per-vertex radial noise drawn from the generator passed in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray


@dataclass(frozen=True)
class Shape:
    vertices_xyz: FloatArray  # (n, 3), local frame
    faces: NDArray[np.int32]  # (m, 3), counter-clockwise seen from outside
    texcoords_uv: FloatArray  # (n, 2), metres

    def moved(self, xyz: tuple[float, float, float], yaw_rad: float = 0.0) -> Shape:
        c, s = math.cos(yaw_rad), math.sin(yaw_rad)
        rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        return Shape(self.vertices_xyz @ rot.T + np.asarray(xyz), self.faces, self.texcoords_uv)


def merge(shapes: list[Shape]) -> Shape:
    """One mesh of several shapes (faces re-indexed)."""
    offsets = np.cumsum([0] + [len(s.vertices_xyz) for s in shapes[:-1]])
    return Shape(
        np.concatenate([s.vertices_xyz for s in shapes]),
        np.concatenate([s.faces + o for s, o in zip(shapes, offsets, strict=True)]).astype(
            np.int32
        ),
        np.concatenate([s.texcoords_uv for s in shapes]),
    )


def _grid_faces(rows: int, cols: int) -> NDArray[np.int32]:
    """Quads of a (rows + 1) x (cols + 1) vertex grid, columns wrapping around (a closed ring)."""
    faces = []
    for r in range(rows):
        for c in range(cols):
            a = r * (cols + 1) + c
            b, d = a + 1, a + cols + 1
            faces += [(a, b, d + 1), (a, d + 1, d)]
    return np.asarray(faces, dtype=np.int32)


def ellipsoid(
    radii_xyz: tuple[float, float, float],
    rng: np.random.Generator,
    lumpiness: float,
    rings: int = 7,
    segments: int = 12,
) -> Shape:
    """A lumpy ellipsoid centred on the origin (a latitude-longitude grid)."""
    theta = np.linspace(0.0, math.pi, rings + 1)  # from the top pole down
    phi = np.linspace(0.0, 2 * math.pi, segments + 1)
    th, ph = np.meshgrid(theta, phi, indexing="ij")
    bump = 1.0 + rng.uniform(-lumpiness, lumpiness, th.shape)
    bump[:, -1] = bump[:, 0]  # the seam's duplicate column moves with the first
    bump[0, :], bump[-1, :] = bump[0, 0], bump[-1, 0]  # poles stay single points
    x = radii_xyz[0] * np.sin(th) * np.cos(ph) * bump
    y = radii_xyz[1] * np.sin(th) * np.sin(ph) * bump
    z = radii_xyz[2] * np.cos(th) * bump
    vertices = np.stack([x.ravel(), y.ravel(), z.ravel()], axis=1)
    mean_r = (radii_xyz[0] + radii_xyz[1]) / 2
    uv = np.stack([(ph * mean_r).ravel(), (th * radii_xyz[2]).ravel()], axis=1)
    # Rows run down from the top pole: flip the winding to face outwards.
    return Shape(vertices, _grid_faces(rings, segments)[:, ::-1].copy(), uv)


def frustum(
    r_bottom: float, r_top: float, height: float, segments: int = 10, rows: int = 3
) -> Shape:
    """An open tapered cylinder from z = 0 to height (a trunk or branch)."""
    phi = np.linspace(0.0, 2 * math.pi, segments + 1)
    zs = np.linspace(0.0, height, rows + 1)
    zz, ph = np.meshgrid(zs, phi, indexing="ij")
    r = r_bottom + (r_top - r_bottom) * zz / height
    vertices = np.stack([(r * np.cos(ph)).ravel(), (r * np.sin(ph)).ravel(), zz.ravel()], 1)
    uv = np.stack([(ph * r_bottom).ravel(), zz.ravel()], axis=1)
    return Shape(vertices, _grid_faces(rows, segments), uv)


def trunk(rng: np.random.Generator, radius_m: float, height_m: float) -> Shape:
    """A trunk: a tapered cylinder sunk a little into the ground."""
    base = frustum(radius_m, radius_m * float(rng.uniform(0.45, 0.7)), height_m + 0.1)
    return base.moved((0.0, 0.0, -0.1))


def crown_layers(
    rng: np.random.Generator, radius_m: float, bottom_m: float, height_m: float, flat: bool
) -> list[Shape]:
    """Stacked lumpy ellipsoids from bottom_m up to bottom_m + height_m.

    flat: the wide, flat-topped layers of savanna acacias; else a rounded canopy of layers
    shrinking upwards.
    """
    n = int(rng.integers(2, 4))
    layers = []
    for k in range(n):
        f = k / max(n - 1, 1)
        if flat:
            r = radius_m * (1.0 - 0.3 * f) * float(rng.uniform(0.85, 1.0))
            half_h = height_m / (2 * n) * 1.3
        else:
            r = radius_m * (1.0 - 0.45 * f) * float(rng.uniform(0.85, 1.0))
            half_h = height_m / (n + 1)
        zc = bottom_m + half_h + f * (height_m - 2 * half_h)
        offset = rng.uniform(-0.15, 0.15, 2) * radius_m
        shape = ellipsoid((r, r * float(rng.uniform(0.8, 1.0)), half_h), rng, 0.12, 6, 10)
        yaw = float(rng.uniform(0, 2 * math.pi))
        layers.append(shape.moved((float(offset[0]), float(offset[1]), zc), yaw))
    return layers


def bush(rng: np.random.Generator, size_xy: tuple[float, float], height_m: float) -> Shape:
    """Two to four overlapping lumpy blobs filling a size_xy footprint."""
    n = int(rng.integers(2, 5))
    blobs = []
    for _ in range(n):
        r = 0.5 * min(size_xy) * float(rng.uniform(0.6, 0.9))
        cx = float(rng.uniform(-1, 1)) * (size_xy[0] / 2 - r) if size_xy[0] > 2 * r else 0.0
        cy = float(rng.uniform(-1, 1)) * (size_xy[1] / 2 - r) if size_xy[1] > 2 * r else 0.0
        hz = height_m / 2 * float(rng.uniform(0.8, 1.0))
        blobs.append(ellipsoid((r, r, hz), rng, 0.15, 5, 8).moved((cx, cy, hz * 0.9)))
    return merge(blobs)


def rock(rng: np.random.Generator, size_xy: tuple[float, float], height_m: float) -> Shape:
    """A flattened, faceted boulder, its bottom a little under the ground."""
    shape = ellipsoid((size_xy[0] / 2, size_xy[1] / 2, height_m / 2), rng, 0.18, 5, 8)
    return shape.moved((0.0, 0.0, height_m / 2 - 0.1 * height_m))


def grass_patch(rng: np.random.Generator, radius_m: float, blades: int) -> Shape:
    """Thin blades (two-sided triangles) leaning every way inside a disc of radius_m."""
    r = radius_m * np.sqrt(rng.random(blades))
    a = rng.uniform(0, 2 * math.pi, blades)
    base = np.stack([r * np.cos(a), r * np.sin(a), np.zeros(blades)], axis=1)
    heading = rng.uniform(0, 2 * math.pi, blades)
    width = rng.uniform(0.03, 0.07, blades)
    height = rng.uniform(0.2, 0.6, blades)
    lean = rng.uniform(0.0, 0.4, blades) * height
    side = np.stack([np.cos(heading), np.sin(heading), np.zeros(blades)], axis=1)
    bend = np.stack([-np.sin(heading), np.cos(heading), np.zeros(blades)], axis=1)
    left = base - side * width[:, None] / 2
    right = base + side * width[:, None] / 2
    tip = base + bend * lean[:, None] + np.array([0.0, 0.0, 1.0]) * height[:, None]
    vertices = np.stack([left, right, tip], axis=1).reshape(-1, 3)
    k = np.arange(blades)[:, None] * 3
    front = k + np.array([0, 1, 2])
    back = k + np.array([0, 2, 1])
    faces = np.concatenate([front, back]).astype(np.int32)
    uv = np.stack([vertices[:, 0] + vertices[:, 1], vertices[:, 2]], axis=1)
    return Shape(vertices, faces, uv)
