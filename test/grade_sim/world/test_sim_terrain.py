"""Outdoor terrain: flat walk area, gentle seeded hills around it, heights exact on the mesh."""

from __future__ import annotations

import numpy as np

from grade_sim.world.terrain import Terrain, generate_terrain


def make(seed: int = 0, hill: float = 5.0) -> Terrain:
    return generate_terrain((20.0, 15.0), 25.0, hill, 1.0, np.random.default_rng(seed))


def test_walk_area_is_flat_and_hills_rise_around_it() -> None:
    terrain = make()
    rng = np.random.default_rng(1)
    xy = rng.uniform((-20.0, -15.0), (20.0, 15.0), (2000, 2))
    np.testing.assert_array_equal(terrain.height_at(xy[:, 0], xy[:, 1]), 0.0)
    ring = terrain.heights_m.copy()
    assert ring.min() >= 0.0
    assert 1.5 < ring.max() <= 5.0
    # Gentle: no slope steeper than 45 degrees between neighbouring grid points.
    for axis in (0, 1):
        assert np.abs(np.diff(ring, axis=axis)).max() / terrain.spacing_m < 1.0


def test_height_at_lies_on_the_drawn_triangles() -> None:
    terrain = make(3)
    vertices, faces, uv = terrain.mesh()
    assert uv.shape == (len(vertices), 2)
    rng = np.random.default_rng(2)
    tri = vertices[faces[rng.integers(len(faces), size=500)]]
    w = rng.dirichlet(np.ones(3), size=500)
    points = np.einsum("nk,nkd->nd", w, tri)
    np.testing.assert_allclose(
        terrain.height_at(points[:, 0], points[:, 1]), points[:, 2], atol=1e-9
    )
    # Faces point up (counter-clockwise seen from above).
    normal = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    assert np.all(normal[:, 2] > 0)


def test_same_seed_same_terrain() -> None:
    np.testing.assert_array_equal(make(5).heights_m, make(5).heights_m)
    assert not np.array_equal(make(5).heights_m, make(6).heights_m)


def test_no_hills_is_flat() -> None:
    assert make(0, 0.0).heights_m.max() == 0.0
