"""The part atlas: every part in one Embree scene, each ray cast on its own part only."""

from __future__ import annotations

import numpy as np
import pytest

from grade_sim.engine import tessellate
from grade_sim.sensors.lidar.part_atlas import PartAtlas
from grade_sim.sensors.lidar.raycast import EmbreeDevice

pytest.importorskip("embreex")


def test_each_ray_meets_only_its_own_part_at_the_analytic_range() -> None:
    # Part 0: a 1 m cube centred on its origin; part 1: a thin slab offset from its origin.
    cube = tessellate.box(np.array([0.5, 0.5, 0.5]))
    slab = tessellate.box(np.array([0.05, 1.0, 1.0])) + np.array([2.0, 0.0, 0.0])
    tris = [cube, slab]
    centres = np.array([[0.0, 0.0, 0.0], [2.0, 0.0, 0.0]])
    radii = np.array([np.sqrt(0.75), np.sqrt(0.05**2 + 2.0)])
    atlas = PartAtlas(tris, centres, radii, EmbreeDevice())
    # Body-frame rays along +x from 10 m before each part's centre, cast over the stretch
    # inside the part's sphere only.
    part = np.array([0, 1, 0, 1])
    origin = np.array([[-10.0, 0.1, 0.0], [-8.0, 0.2, 0.3], [-10.0, 0.0, 0.9], [-8.0, 0.0, 1.5]])
    direction = np.tile([1.0, 0.0, 0.0], (4, 1))
    to_centre = centres[part] - origin
    t_mid = np.einsum("ij,ij->i", to_centre, direction)
    half = np.sqrt(np.maximum(radii[part] ** 2 - (np.sum(to_centre**2, 1) - t_mid**2), 0.0))
    found = atlas.cast(part, origin, direction, t_mid - half, t_mid + half)
    # Rays 0 and 1 hit their part's near face; rays 2 and 3 pass above it (inside the sphere).
    np.testing.assert_array_equal(found.which, [0, 1])
    np.testing.assert_allclose(found.range_m, [9.5, 9.95], atol=1e-5)
    np.testing.assert_array_equal(found.part, [0, 1])
    np.testing.assert_allclose(found.cos_incidence, [1.0, 1.0], atol=1e-6)
    # The slots lie farther apart than any sphere's diameter, so a ray kept inside its own
    # sphere can never reach a neighbour's triangles.
    slots = atlas.shift + centres
    gap = np.linalg.norm(slots[0] - slots[1])
    assert gap > radii.sum()
