"""Triangle meshes of the primitive shapes the engine renders, in the shape's own frame.

Ray casting (the lidar) needs triangles; MuJoCo's primitives are analytic. Curved surfaces are
revolved from a profile with `segments` steps around and segments / 2 steps from pole to pole,
vertices on the true surface, so the largest radial (chord) error is r * (1 - cos(pi / segments)).
All functions return (n, 3, 3) arrays: n triangles of three xyz vertices.
"""

from __future__ import annotations

import numpy as np

from grade_common.types import FloatArray

INFINITE_PLANE_HALF_SIZE_M = 1000.0  # a MuJoCo plane of size 0 is infinite; rays need an edge


def lathe(radius: FloatArray, z: FloatArray, segments: int) -> FloatArray:
    """Revolve the profile (radius[i], z[i]) (bottom to top) about the z axis."""
    theta = np.linspace(0.0, 2.0 * np.pi, segments, endpoint=False)
    ring = np.stack([np.cos(theta), np.sin(theta)], axis=1)  # (S, 2)
    verts = np.empty((len(radius), segments, 3))
    verts[..., :2] = radius[:, None, None] * ring[None]
    verts[..., 2] = z[:, None]
    nxt = np.roll(np.arange(segments), -1)
    a, b = verts[:-1], verts[:-1][:, nxt]
    c, d = verts[1:], verts[1:][:, nxt]
    tris = np.concatenate([np.stack([a, b, d], axis=2), np.stack([a, d, c], axis=2)], axis=1)
    out: FloatArray = tris.reshape(-1, 3, 3)
    return out


def _half_sphere_profile(segments: int, upper: bool) -> tuple[FloatArray, FloatArray]:
    stacks = max(2, segments // 4)
    phi = np.linspace(0.0, np.pi / 2, stacks + 1)  # from the equator to the pole
    r, z = np.cos(phi), np.sin(phi)
    return (r, z) if upper else (r[::-1], -z[::-1])


def sphere(radius_m: float, segments: int) -> FloatArray:
    return ellipsoid(np.array([radius_m] * 3), segments)


def ellipsoid(radii_m: FloatArray, segments: int) -> FloatArray:
    r_lo, z_lo = _half_sphere_profile(segments, upper=False)
    r_hi, z_hi = _half_sphere_profile(segments, upper=True)
    unit = lathe(np.concatenate([r_lo, r_hi[1:]]), np.concatenate([z_lo, z_hi[1:]]), segments)
    out: FloatArray = unit * np.asarray(radii_m, dtype=np.float64)
    return out


def capsule(radius_m: float, half_length_m: float, segments: int) -> FloatArray:
    """A cylinder of half length `half_length_m` along z closed by two hemispheres."""
    r_lo, z_lo = _half_sphere_profile(segments, upper=False)
    r_hi, z_hi = _half_sphere_profile(segments, upper=True)
    r = np.concatenate([r_lo, r_hi]) * radius_m
    z = np.concatenate([z_lo * radius_m - half_length_m, z_hi * radius_m + half_length_m])
    return lathe(r, z, segments)


def cylinder(radius_m: float, half_length_m: float, segments: int) -> FloatArray:
    h = half_length_m
    return lathe(np.array([0.0, radius_m, radius_m, 0.0]), np.array([-h, -h, h, h]), segments)


_BOX_FACES = np.array(
    [
        [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
        [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3],
    ]
)  # fmt: skip


def box(half_size_m: FloatArray) -> FloatArray:
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    verts = corners * np.asarray(half_size_m, dtype=np.float64)
    out: FloatArray = verts[_BOX_FACES]
    return out


def plane(half_x_m: float, half_y_m: float) -> FloatArray:
    hx = half_x_m if half_x_m > 0 else INFINITE_PLANE_HALF_SIZE_M
    hy = half_y_m if half_y_m > 0 else INFINITE_PLANE_HALF_SIZE_M
    v = np.array([[-hx, -hy, 0.0], [hx, -hy, 0.0], [hx, hy, 0.0], [-hx, hy, 0.0]])
    out: FloatArray = v[np.array([[0, 1, 2], [0, 2, 3]])]
    return out


def transform(triangles: FloatArray, rotation: FloatArray, translation: FloatArray) -> FloatArray:
    """Triangles moved by x -> rotation @ x + translation."""
    out: FloatArray = triangles @ np.asarray(rotation).T + np.asarray(translation)
    return out
