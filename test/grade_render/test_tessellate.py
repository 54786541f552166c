"""Primitive meshes: closed, outward-facing, on the analytic surface within the chord error."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from grade_render import tessellate


def _signed_volume(verts: np.ndarray, faces: np.ndarray) -> float:
    a, b, c = verts[faces[:, 0]], verts[faces[:, 1]], verts[faces[:, 2]]
    return float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)


def _closed(faces: np.ndarray) -> bool:
    edges = Counter()
    for f in faces:
        for i in range(3):
            edges[tuple(sorted((int(f[i]), int(f[(i + 1) % 3]))))] += 1
    return all(n == 2 for n in edges.values())


@pytest.mark.parametrize(
    ("mesh", "volume"),
    [
        (tessellate.box(np.array([0.5, 1.0, 1.5])), 6.0),
        (tessellate.sphere(0.3), 4 / 3 * np.pi * 0.3**3),
        (tessellate.ellipsoid(np.array([0.2, 0.3, 0.4])), 4 / 3 * np.pi * 0.2 * 0.3 * 0.4),
        (tessellate.cylinder(0.2, 0.5), np.pi * 0.2**2 * 1.0),
        (tessellate.capsule(0.1, 0.3), np.pi * 0.1**2 * 0.6 + 4 / 3 * np.pi * 0.1**3),
    ],
    ids=["box", "sphere", "ellipsoid", "cylinder", "capsule"],
)
def test_meshes_are_closed_outward_and_of_the_right_volume(
    mesh: tessellate.Mesh, volume: float
) -> None:
    verts, faces = mesh
    assert _closed(faces)
    # Positive signed volume: every triangle is wound counter-clockwise seen from outside.
    assert _signed_volume(verts, faces) == pytest.approx(volume, rel=0.01)


def test_curved_surfaces_stay_within_a_millimetre_of_the_shape() -> None:
    verts, _ = tessellate.capsule(0.2, 0.5)
    # Distance of each vertex to the capsule's axis segment is the radius (vertices lie on it).
    z = np.clip(verts[:, 2], -0.5, 0.5)
    d = np.linalg.norm(verts - np.stack([0 * z, 0 * z, z], axis=1), axis=1)
    assert np.allclose(d, 0.2, atol=1e-9)
    # The chord sagitta between neighbouring vertices of a ring stays below 1 mm.
    assert 0.2 * (1 - np.cos(np.pi / tessellate.SEGMENTS)) < 1e-3
