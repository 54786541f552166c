"""Collision-free paths on the ground plane: A* on the occupancy grid, then shortcutting."""

from __future__ import annotations

import heapq
import math

import numpy as np
from numpy.typing import NDArray

from grade_common.errors import GradeError
from grade_common.occupancy import OccupancyGrid
from grade_common.types import FloatArray

SQRT2 = math.sqrt(2.0)


class NoFreeSpaceError(GradeError):
    """The world has no free space for what must be placed."""


def sample_free_point(
    grid: OccupancyGrid, rng: np.random.Generator, tries: int = 500
) -> FloatArray:
    """A uniformly drawn free point (cell centre plus jitter) of an (already inflated) grid."""
    free = np.argwhere(~grid.blocked)
    if len(free) == 0:
        raise NoFreeSpaceError(
            "no free cell in the occupancy grid (world too small or too cluttered)"
        )
    for _ in range(tries):
        ij = free[int(rng.integers(len(free)))]
        p = grid.center_of(ij) + rng.uniform(-0.4, 0.4, 2) * grid.resolution_m
        if grid.is_free(p):
            return p
    return grid.center_of(free[0])


def astar(
    grid: OccupancyGrid, start_xy: FloatArray, goal_xy: FloatArray
) -> list[FloatArray] | None:
    """Shortest 8-connected path of cell centres from start to goal, or None if unreachable."""
    nx, ny = grid.blocked.shape
    s = tuple(int(v) for v in grid.cell_of(start_xy))
    g = tuple(int(v) for v in grid.cell_of(goal_xy))
    for c in (s, g):
        if not (0 <= c[0] < nx and 0 <= c[1] < ny) or grid.blocked[c]:
            return None
    blocked = grid.blocked
    open_heap: list[tuple[float, float, tuple[int, int]]] = [(0.0, 0.0, (s[0], s[1]))]
    came: dict[tuple[int, int], tuple[int, int]] = {}
    cost = {(s[0], s[1]): 0.0}
    steps = [
        (1, 0, 1.0),
        (-1, 0, 1.0),
        (0, 1, 1.0),
        (0, -1, 1.0),
        (1, 1, SQRT2),
        (1, -1, SQRT2),
        (-1, 1, SQRT2),
        (-1, -1, SQRT2),
    ]
    goal = (g[0], g[1])
    while open_heap:
        _, c_cost, cur = heapq.heappop(open_heap)
        if cur == goal:
            cells = [cur]
            while cur in came:
                cur = came[cur]
                cells.append(cur)
            cells.reverse()
            pts = [grid.center_of(np.array(c)) for c in cells]
            pts[0] = np.asarray(start_xy, dtype=np.float64)
            pts[-1] = np.asarray(goal_xy, dtype=np.float64)
            return pts
        if c_cost > cost.get(cur, math.inf):
            continue
        for di, dj, w in steps:
            n = (cur[0] + di, cur[1] + dj)
            if not (0 <= n[0] < nx and 0 <= n[1] < ny) or blocked[n]:
                continue
            if di and dj and (blocked[cur[0] + di, cur[1]] or blocked[cur[0], cur[1] + dj]):
                continue  # no corner cutting
            new_cost = c_cost + w
            if new_cost < cost.get(n, math.inf):
                cost[n] = new_cost
                came[n] = cur
                h = math.hypot(goal[0] - n[0], goal[1] - n[1])
                heapq.heappush(open_heap, (new_cost + h, new_cost, n))
    return None


def shortcut(grid: OccupancyGrid, points: list[FloatArray]) -> list[FloatArray]:
    """Drop intermediate points while the straight segment stays free (line of sight)."""
    out = [points[0]]
    i = 0
    while i < len(points) - 1:
        j = len(points) - 1
        while j > i + 1 and not grid.segment_is_free(points[i], points[j]):
            j -= 1
        out.append(points[j])
        i = j
    return out


def plan_path(
    grid: OccupancyGrid, start_xy: FloatArray, goal_xy: FloatArray
) -> list[FloatArray] | None:
    """A collision-free polyline from start to goal on an inflated grid, or None."""
    raw = astar(grid, start_xy, goal_xy)
    return None if raw is None else shortcut(grid, raw)


def coarsen(grid: OccupancyGrid, factor: int) -> OccupancyGrid:
    """A grid with cells `factor` times larger; a coarse cell is blocked if any fine cell is."""
    nx, ny = grid.blocked.shape
    px, py = (-nx) % factor, (-ny) % factor
    padded = np.pad(grid.blocked, ((0, px), (0, py)), constant_values=True)
    coarse = padded.reshape(padded.shape[0] // factor, factor, padded.shape[1] // factor, factor)
    blocked: NDArray[np.bool_] = np.asarray(coarse.any(axis=(1, 3)), dtype=bool)
    return OccupancyGrid(grid.origin_xy, grid.resolution_m * factor, blocked)
