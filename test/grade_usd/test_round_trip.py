"""A run's world exported to USD and loaded back as a mesh world: the same depth from the same
views (top-down and oblique, through the rooms), every part labelled with its class."""

from __future__ import annotations

import numpy as np
import pytest

from depth_kit import world_depth
from grade_sim.config.scenario import LightsConfig, MeshEnvironmentConfig, Scenario
from grade_sim.scene import build_scene
from grade_sim.world.meshes import load_mesh_world
from grade_usd.export import UsdExportResult

pytest.importorskip("pxr")


def test_exported_world_loads_back_with_the_same_depth(
    exported: UsdExportResult, usd_scenario: Scenario
) -> None:
    original = build_scene(usd_scenario).world
    config = MeshEnvironmentConfig(path=str(exported.path))
    loaded = load_mesh_world(config, LightsConfig(count=1), np.random.default_rng(0))
    # The procedural world's bounds are its rooms' inside; the file's, its solids' outside.
    np.testing.assert_allclose(loaded.bounds_min_xyz[:2], original.bounds_min_xyz[:2], atol=0.2)
    np.testing.assert_allclose(loaded.bounds_max_xyz[:2], original.bounds_max_xyz[:2], atol=0.2)
    labels = {m.label for m in loaded.meshes}
    assert {"floor", "wall", "ceiling"} <= labels
    lo, hi = np.array(original.bounds_min_xyz), np.array(original.bounds_max_xyz)
    centre = (lo + hi) / 2
    views = [
        ((lo[0] + (hi[0] - lo[0]) / 4, centre[1], 0.0), 1.5, 90.0, -90.0),  # onto the floor
        ((lo[0] + 3.0, lo[1] + 2.5, 1.0), 1.5, 30.0, -25.0),  # across a room to its walls
        ((hi[0] - 3.0, hi[1] - 2.5, 1.0), 1.5, 210.0, -10.0),
    ]
    for lookat, distance, azimuth, elevation in views:
        a = world_depth(original, lookat, distance, azimuth, elevation, size_px=32)
        b = world_depth(loaded, lookat, distance, azimuth, elevation, size_px=32)
        assert 0.3 < np.median(a) < 10.0  # the view sees the rooms, not the void
        assert np.median(np.abs(a - b)) < 1e-3, (lookat, azimuth)
        assert np.mean(np.abs(a - b) < 0.01) > 0.97
