"""Triangle meshes of MuJoCo's primitive geom shapes, in the geom's own frame (metres).

MuJoCo draws primitives analytically; a path tracer needs triangles. The rings are fine enough
that the chord error stays well under a millimetre for the sizes in our scenes (radius 0.2 m,
48 segments: r (1 - cos(pi / 48)) = 0.4 mm), so depth compared with the rasteriser agrees.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray

SEGMENTS = 48
RINGS = 24

Mesh = tuple[FloatArray, NDArray[np.int32]]


def box(half_xyz: FloatArray) -> Mesh:
    """A box of half sizes `half_xyz`, 12 outward-facing triangles."""
    signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float)
    faces = np.array(
        [
            [0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5],  # -x, +x
            [0, 4, 5], [0, 5, 1], [2, 3, 7], [2, 7, 6],  # -y, +y
            [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3],  # -z, +z
        ],
        dtype=np.int32,
    )  # fmt: skip
    return signs * np.asarray(half_xyz, float), faces


def _lathe(profile_rz: FloatArray, segments: int = SEGMENTS) -> Mesh:
    """Revolve a (radius, z) profile about z; the first and last points lie on the axis."""
    n = len(profile_rz)
    ang = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    verts = [np.array([[0.0, 0.0, profile_rz[0, 1]]])]
    for r, z in profile_rz[1:-1]:
        verts.append(np.stack([r * np.cos(ang), r * np.sin(ang), np.full(segments, z)], axis=1))
    verts.append(np.array([[0.0, 0.0, profile_rz[-1, 1]]]))
    faces: list[list[int]] = []
    rings = n - 2
    for s in range(segments):
        t = (s + 1) % segments
        faces.append([0, 1 + t, 1 + s])  # bottom cap (normal -z)
        for k in range(rings - 1):
            a, b = 1 + k * segments, 1 + (k + 1) * segments
            faces += [[a + s, a + t, b + t], [a + s, b + t, b + s]]
        last = 1 + (rings - 1) * segments
        faces.append([last + s, last + t, 1 + rings * segments])  # top cap (normal +z)
    return np.concatenate(verts), np.array(faces, dtype=np.int32)


def sphere(radius: float) -> Mesh:
    return ellipsoid(np.array([radius, radius, radius]))


def ellipsoid(radii_xyz: FloatArray) -> Mesh:
    theta = np.linspace(np.pi, 0.0, RINGS + 1)  # south pole to north pole
    profile = np.stack([np.sin(theta), np.cos(theta)], axis=1)
    profile[0, 0] = profile[-1, 0] = 0.0
    verts, faces = _lathe(profile)
    return verts * np.asarray(radii_xyz, float), faces


def cylinder(radius: float, half_height: float) -> Mesh:
    profile = np.array(
        [[0.0, -half_height], [radius, -half_height], [radius, half_height], [0.0, half_height]]
    )
    return _lathe(profile)


def capsule(radius: float, half_height: float) -> Mesh:
    """A cylinder of half length `half_height` between two hemispheres (MuJoCo's capsule)."""
    half = RINGS // 2
    lower = np.linspace(np.pi, np.pi / 2, half + 1)
    upper = np.linspace(np.pi / 2, 0.0, half + 1)
    profile = np.concatenate(
        [
            np.stack([radius * np.sin(lower), radius * np.cos(lower) - half_height], axis=1),
            np.stack([radius * np.sin(upper), radius * np.cos(upper) + half_height], axis=1),
        ]
    )
    profile[0, 0] = profile[-1, 0] = 0.0
    return _lathe(profile)
