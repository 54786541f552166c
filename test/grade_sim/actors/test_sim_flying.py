"""Flying objects: random shapes on keyframed paths in free space, within the height range."""

from __future__ import annotations

import numpy as np
import pytest

from grade_common.occupancy import OccupancyGrid
from grade_sim.actors.flying import (
    ObjectShape,
    plan_object_timeline,
    random_object,
)
from grade_sim.config.scenario import FlyingObjectsConfig, LightsConfig, ProceduralConfig
from grade_sim.world.procedural import generate_rooms

DT_S = 1 / 60
N_STEPS = 60 * 30


@pytest.fixture(scope="module")
def grid() -> OccupancyGrid:
    config = ProceduralConfig(rooms_x=2, rooms_y=2, furniture_per_room=(2, 4))
    return generate_rooms(config, LightsConfig(), np.random.default_rng(2)).free_space


@pytest.mark.parametrize("seed", range(5))
def test_objects_stay_in_free_space_and_height_range(grid: OccupancyGrid, seed: int) -> None:
    config = FlyingObjectsConfig(height_m=(0.8, 2.0), speed_mps=(0.5, 1.0), keyframes=5)
    rng = np.random.default_rng(seed)
    spec = random_object("object_0", 40, config, rng)
    tl = plan_object_timeline(grid, config, spec, N_STEPS, DT_S, rng)
    assert tl.position_xyz.shape == (N_STEPS, 3)
    assert tl.quat_wxyz.shape == (N_STEPS, 4)
    z = tl.position_xyz[:, 2]
    assert np.all((z >= 0.8) & (z <= 2.0))
    free = grid.inflated(max(spec.half_size))
    assert all(free.is_free(p[:2]) for p in tl.position_xyz)
    np.testing.assert_allclose(np.linalg.norm(tl.quat_wxyz, axis=1), 1.0, atol=1e-12)
    speed = np.linalg.norm(np.diff(tl.position_xyz, axis=0), axis=1) / DT_S
    assert 0 < speed.max() <= 1.5 * config.speed_mps[1] + 1e-6  # eased segments peak at 1.5 v
    assert np.ptp(tl.position_xyz[:, :2], axis=0).max() > 0.5  # it goes somewhere
    # Tumbling: the orientation keeps changing.
    assert abs(float(tl.quat_wxyz[0] @ tl.quat_wxyz[120])) < 1 - 1e-6


def test_random_objects_cover_the_shapes_within_size_range() -> None:
    config = FlyingObjectsConfig(size_m=(0.2, 0.4))
    rng = np.random.default_rng(0)
    specs = [random_object(f"o{i}", i, config, rng) for i in range(60)]
    assert {s.shape for s in specs} == set(ObjectShape)
    for s in specs:
        assert max(s.half_size) <= 0.2 + 1e-12
        assert min(s.half_size) >= 0.1 * 0.5 - 1e-12
        assert s.rgba[3] == 1.0


def test_same_seed_same_path(grid: OccupancyGrid) -> None:
    config = FlyingObjectsConfig()

    def make(seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        spec = random_object("o", 1, config, rng)
        tl = plan_object_timeline(grid, config, spec, 600, DT_S, rng)
        return np.hstack([tl.position_xyz, tl.quat_wxyz])

    np.testing.assert_array_equal(make(3), make(3))
    assert not np.array_equal(make(3), make(4))
