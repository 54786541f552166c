"""Ground-plane path planning: A*, shortcutting, free-point sampling, grid coarsening."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from grade_common.occupancy import OccupancyGrid
from grade_people.paths import (
    NoFreeSpaceError,
    astar,
    coarsen,
    plan_path,
    sample_free_point,
    shortcut,
)


def wall_grid() -> OccupancyGrid:
    """5 x 5 m, a wall at x = 2.5 with a gap near y = 4.5."""
    blocked = np.zeros((50, 50), dtype=bool)
    blocked[24:26, :40] = True
    return OccupancyGrid((0.0, 0.0), 0.1, blocked)


def test_astar_goes_around_the_wall() -> None:
    grid = wall_grid()
    path = astar(grid, np.array([1.0, 1.0]), np.array([4.0, 1.0]))
    assert path is not None
    np.testing.assert_array_equal(path[0], [1.0, 1.0])
    np.testing.assert_array_equal(path[-1], [4.0, 1.0])
    assert all(grid.is_free(p) for p in path)
    assert max(p[1] for p in path) >= 4.0  # through the gap
    # Cell to neighbouring cell (the exact start and goal replace the end cells' centres).
    steps = np.linalg.norm(np.diff(np.array(path[1:-1]), axis=0), axis=1)
    assert np.all(steps <= np.sqrt(2) * 0.1 + 1e-9)


def test_plan_path_segments_are_free_and_short() -> None:
    grid = wall_grid()
    path = plan_path(grid, np.array([1.0, 1.0]), np.array([4.0, 1.0]))
    assert path is not None
    assert len(path) <= 5
    for a, b in itertools.pairwise(path):
        assert grid.segment_is_free(a, b)


def test_unreachable_or_blocked_endpoints_give_none() -> None:
    blocked = np.zeros((50, 50), dtype=bool)
    blocked[24:26, :] = True
    grid = OccupancyGrid((0.0, 0.0), 0.1, blocked)
    assert plan_path(grid, np.array([1.0, 1.0]), np.array([4.0, 1.0])) is None
    assert astar(grid, np.array([2.5, 1.0]), np.array([1.0, 1.0])) is None
    assert astar(grid, np.array([1.0, 1.0]), np.array([9.0, 1.0])) is None  # off the grid


def test_shortcut_on_open_grid_is_a_straight_line() -> None:
    grid = OccupancyGrid((0.0, 0.0), 0.1, np.zeros((30, 30), dtype=bool))
    pts = [np.array([0.5 + 0.1 * k, 0.5 + 0.05 * k]) for k in range(20)]
    out = shortcut(grid, pts)
    assert len(out) == 2
    np.testing.assert_array_equal(out[-1], pts[-1])


def test_sample_free_point_is_free_and_seeded() -> None:
    grid = wall_grid()
    a = [sample_free_point(grid, np.random.default_rng(4)) for _ in range(3)]
    rng = np.random.default_rng(4)
    b = [sample_free_point(grid, rng) for _ in range(200)]
    np.testing.assert_array_equal(a[0], b[0])
    assert all(grid.is_free(p) for p in b)
    xs = np.array(b)[:, 0]
    assert xs.min() < 1.0
    assert xs.max() > 4.0


def test_sample_free_point_without_free_space() -> None:
    grid = OccupancyGrid((0.0, 0.0), 0.1, np.ones((5, 5), dtype=bool))
    with pytest.raises(NoFreeSpaceError, match="no free cell"):
        sample_free_point(grid, np.random.default_rng(0))


def test_coarsen_blocks_a_cell_if_any_fine_cell_is_blocked() -> None:
    blocked = np.zeros((5, 7), dtype=bool)
    blocked[0, 0] = True
    blocked[3, 5] = True
    coarse = coarsen(OccupancyGrid((1.0, 2.0), 0.1, blocked), 2)
    assert coarse.blocked.shape == (3, 4)
    assert coarse.resolution_m == pytest.approx(0.2)
    assert coarse.origin_xy == (1.0, 2.0)
    expected = np.zeros((3, 4), dtype=bool)
    expected[0, 0] = expected[1, 2] = True
    expected[2, :] = True  # padding beyond the fine grid counts as blocked
    expected[:, 3] = True
    np.testing.assert_array_equal(coarse.blocked, expected)


def test_inflated_grid_grows_obstacles_by_the_radius() -> None:
    blocked = np.zeros((41, 41), dtype=bool)
    blocked[20, 20] = True
    grid = OccupancyGrid((0.0, 0.0), 0.1, blocked).inflated(0.3)
    centre = np.array([2.05, 2.05])
    assert not grid.is_free(centre + np.array([0.3, 0.0]))
    assert grid.is_free(centre + np.array([0.45, 0.0]))
    assert not grid.is_free(centre + np.array([0.2, 0.2]))
    assert grid.is_free(centre + np.array([0.3, 0.3]))
