"""A simple frontier explorer: depth images + camera poses -> 2D occupancy grid -> next goal.

A stand-in for FUEL so a closed loop can run on a laptop. What it does:
- back-projects (subsampled) depth pixels with the camera pose; returns whose height is within
  [min_obstacle_height_m, max_obstacle_height_m] mark their cell occupied, and the cells along
  the horizontal projection of the ray up to them free (log-odds, so later views can revise);
  returns below the band (floor) mark only free cells along their ray;
- frontiers are free cells next to unknown ones, grouped 8-connected, small groups dropped;
- the goal is the frontier cell reachable first by a breadth-first wavefront through free cells
  that are at least `robot_radius_m` away from any occupied cell; the answer is the path of
  grid cells to it (thinned every `path_step_m`), so straight legs never cut through known walls.

Its limits, on purpose: a single 2D slice at one flight altitude (no 3D map, nothing above or
below the band blocks the path), no probabilistic sensor model beyond fixed log-odds steps,
pixels without a return (0) never mark space free, unknown cells are not traversable, no
information-gain or yaw planning, no replanning around moving people (they are mapped as
obstacles while seen and cleared when seen through later), and a fixed map extent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy import ndimage

from grade_common.schema import Checked, Wording, bounds
from grade_common.types import FloatArray
from grade_control.config import PARAMETER_WORDING
from grade_control.errors import ControlConfigError

UNKNOWN, FREE, OCCUPIED = -1, 0, 100  # nav_msgs/OccupancyGrid values
_LOG_FREE, _LOG_OCC, _LOG_MIN, _LOG_MAX = -0.4, 0.85, -2.0, 3.5


_POSITIVE = bounds(0.0, exclusive_min=True)


@dataclass(frozen=True)
class ExplorerConfig(Checked):
    """Map extent and explorer settings (metres, world frame)."""

    WORDING: ClassVar[Wording] = PARAMETER_WORDING

    origin_xy_m: tuple[float, float] = (-10.0, -10.0)
    size_xy_m: tuple[float, float] = field(default=(20.0, 20.0), metadata=_POSITIVE)
    resolution_m: float = field(default=0.1, metadata=_POSITIVE)
    min_obstacle_height_m: float = 0.15
    max_obstacle_height_m: float = 2.0
    max_range_m: float = field(default=4.0, metadata=_POSITIVE)
    pixel_stride: int = field(default=8, metadata=bounds(1))
    robot_radius_m: float = field(default=0.3, metadata=bounds(0.0))
    min_frontier_cells: int = field(default=5, metadata=bounds(1))
    path_step_m: float = field(default=0.5, metadata=_POSITIVE)

    def validate(self, path: str) -> None:
        if not self.min_obstacle_height_m < self.max_obstacle_height_m:
            raise ControlConfigError(
                f"min_obstacle_height_m = {self.min_obstacle_height_m} must be < "
                f"max_obstacle_height_m = {self.max_obstacle_height_m}"
            )

    @property
    def shape(self) -> tuple[int, int]:
        """Grid shape (rows = y, columns = x)."""
        return (
            math.ceil(self.size_xy_m[1] / self.resolution_m),
            math.ceil(self.size_xy_m[0] / self.resolution_m),
        )


@dataclass(frozen=True)
class ExplorationGoal:
    """The chosen frontier and the path of waypoints (x, y in metres) that reaches it."""

    goal_xy_m: FloatArray
    path_xy_m: FloatArray
    frontier_cells: int


class FrontierExplorer:
    """Keeps the occupancy grid and picks frontier goals."""

    def __init__(self, config: ExplorerConfig) -> None:
        self.config = config
        self.log_odds = np.zeros(config.shape)
        self.observed = np.zeros(config.shape, dtype=bool)
        # stamp (s) of the depth image that first observed each cell; inf: never (coverage)
        self.first_seen_s = np.full(config.shape, np.inf)

    def cell_of(self, xy_m: FloatArray) -> NDArray[np.int64]:
        """(…, 2) world x, y -> (…, 2) grid (row, col); may be outside the grid."""
        xy = np.asarray(xy_m, dtype=np.float64)
        col = np.floor((xy[..., 0] - self.config.origin_xy_m[0]) / self.config.resolution_m)
        row = np.floor((xy[..., 1] - self.config.origin_xy_m[1]) / self.config.resolution_m)
        return np.stack([row, col], axis=-1).astype(np.int64)

    def center_of(self, cells: NDArray[np.int64]) -> FloatArray:
        """(…, 2) grid (row, col) -> (…, 2) world x, y of the cell centres."""
        cells = np.asarray(cells)
        res = self.config.resolution_m
        x = self.config.origin_xy_m[0] + (cells[..., 1] + 0.5) * res
        y = self.config.origin_xy_m[1] + (cells[..., 0] + 0.5) * res
        return np.stack([x, y], axis=-1)

    def grid(self) -> NDArray[np.int8]:
        """The map as nav_msgs/OccupancyGrid values (row-major, row = y)."""
        out = np.full(self.config.shape, UNKNOWN, dtype=np.int8)
        out[self.observed & (self.log_odds < -0.2)] = FREE
        out[self.observed & (self.log_odds > 0.5)] = OCCUPIED
        return out

    def integrate_depth(
        self,
        depth_m: FloatArray,
        camera_matrix: FloatArray,
        pose_world_optical: FloatArray,
        stamp_s: float = 0.0,
    ) -> int:
        """Add one depth image (metres to the image plane, 0 or NaN = no return).

        Args:
            camera_matrix: 3x3 intrinsics K.
            pose_world_optical: 4x4 transform of the optical frame (z forward) in the world.
            stamp_s: the image's stamp, kept for cells seen for the first time (coverage).

        Returns:
            The number of rays used.
        """
        stride = self.config.pixel_stride
        depth = np.asarray(depth_m, dtype=np.float64)[::stride, ::stride]
        rows, cols = np.mgrid[0 : depth.shape[0], 0 : depth.shape[1]]
        u, v = cols * stride, rows * stride
        valid = np.isfinite(depth) & (depth > 0.0) & (depth <= self.config.max_range_m)
        z = depth[valid]
        fx, fy, cx, cy = (
            camera_matrix[0, 0],
            camera_matrix[1, 1],
            camera_matrix[0, 2],
            camera_matrix[1, 2],
        )
        points_optical = np.stack([(u[valid] - cx) * z / fx, (v[valid] - cy) * z / fy, z], axis=1)
        rotation, origin = pose_world_optical[:3, :3], pose_world_optical[:3, 3]
        points = points_optical @ rotation.T + origin
        height = points[:, 2]
        obstacle = (height >= self.config.min_obstacle_height_m) & (
            height <= self.config.max_obstacle_height_m
        )
        floor = height < self.config.min_obstacle_height_m
        rays = points[obstacle | floor]
        if len(rays) == 0:
            return 0
        # free cells along each ray's horizontal projection, sampled at half a cell
        lengths = np.linalg.norm(rays[:, :2] - origin[:2], axis=1)
        steps = max(1, math.ceil(float(np.max(lengths)) / (self.config.resolution_m / 2)))
        fractions = np.linspace(0.0, 1.0, steps + 1)[:-1]
        samples = origin[:2] + fractions[None, :, None] * (rays[:, None, :2] - origin[:2])
        free_cells = self._inside(self.cell_of(samples.reshape(-1, 2)))
        hit_cells = self._inside(self.cell_of(rays[obstacle[obstacle | floor], :2]))
        floor_cells = self._inside(self.cell_of(rays[floor[obstacle | floor], :2]))
        free_flat = np.unique(
            np.ravel_multi_index(
                tuple(np.concatenate([free_cells, floor_cells]).T), self.config.shape
            )
        )
        hit_flat = np.unique(np.ravel_multi_index(tuple(hit_cells.T), self.config.shape))
        free_flat = np.setdiff1d(free_flat, hit_flat)
        flat_odds, flat_seen = self.log_odds.reshape(-1), self.observed.reshape(-1)
        flat_odds[free_flat] += _LOG_FREE
        flat_odds[hit_flat] += _LOG_OCC
        np.clip(flat_odds, _LOG_MIN, _LOG_MAX, out=flat_odds)
        flat_seen[free_flat] = True
        flat_seen[hit_flat] = True
        flat_first = self.first_seen_s.reshape(-1)
        for cells in (free_flat, hit_flat):
            flat_first[cells] = np.minimum(flat_first[cells], stamp_s)
        return len(rays)

    def _inside(self, cells: NDArray[np.int64]) -> NDArray[np.int64]:
        rows, cols = self.config.shape
        keep = (cells[:, 0] >= 0) & (cells[:, 0] < rows) & (cells[:, 1] >= 0) & (cells[:, 1] < cols)
        return cells[keep]

    def frontiers(self) -> tuple[NDArray[np.int32], int]:
        """Label image of frontier groups (0 = none) and the number of groups kept."""
        grid = self.grid()
        free = grid == FREE
        unknown = grid == UNKNOWN
        near_unknown = ndimage.binary_dilation(
            unknown, structure=ndimage.generate_binary_structure(2, 1)
        )
        frontier = free & near_unknown
        labels, count = ndimage.label(frontier, structure=np.ones((3, 3)))
        sizes = np.bincount(labels.ravel(), minlength=count + 1)
        small = sizes < self.config.min_frontier_cells
        small[0] = True
        labels[small[labels]] = 0
        kept = int(np.count_nonzero(~small))
        return labels.astype(np.int32), kept

    def traversable(self) -> NDArray[np.bool_]:
        """Free cells at least robot_radius_m away from every occupied cell."""
        grid = self.grid()
        radius = math.ceil(self.config.robot_radius_m / self.config.resolution_m)
        yy, xx = np.mgrid[-radius : radius + 1, -radius : radius + 1]
        disk = xx**2 + yy**2 <= radius**2
        inflated = (
            ndimage.binary_dilation(grid == OCCUPIED, structure=disk)
            if radius
            else (grid == OCCUPIED)
        )
        return np.asarray((grid == FREE) & ~inflated, dtype=bool)

    def next_goal(
        self,
        position_xy_m: FloatArray,
        min_distance_m: float = 0.0,
        excluded_xy_m: FloatArray | None = None,
        excluded_radius_m: float = 0.5,
    ) -> ExplorationGoal | None:
        """The nearest reachable frontier and a path to it; None when nothing is left to explore
        (or nothing reachable: the caller should then stop or turn to look around).

        Args:
            min_distance_m: ignore frontier cells closer than this (straight line) to the robot;
                the camera's blind sides always leave some right next to it.
            excluded_xy_m: (N, 2) goals given up on (unreachable in practice); frontier cells
                within excluded_radius_m of one are ignored.
        """
        labels, kept = self.frontiers()
        if kept == 0:
            return None
        position = np.asarray(position_xy_m, dtype=np.float64)[:2]
        centres = self.center_of(np.indices(self.config.shape).transpose(1, 2, 0))
        too_close = np.linalg.norm(centres - position, axis=-1) < min_distance_m
        if excluded_xy_m is not None:
            for xy in np.asarray(excluded_xy_m, dtype=np.float64).reshape(-1, 2):
                too_close |= np.linalg.norm(centres - xy, axis=-1) < excluded_radius_m
        labels = np.where(too_close, 0, labels)
        passable = self.traversable()
        start = self.cell_of(position)
        rows, cols = self.config.shape
        if not (0 <= start[0] < rows and 0 <= start[1] < cols):
            return None
        # The robot stands where it is, so that spot is free, whatever the map says: with the
        # camera ahead of the body (0.2 m on the UAV) the first image never sees the robot's own
        # cell, and an unknown start cell with unknown neighbours stopped the wavefront at once
        # ("no reachable frontier left" after the first frame, the robot never moved).
        footprint = np.linalg.norm(centres - position, axis=-1) <= max(
            self.config.robot_radius_m, 1.5 * self.config.resolution_m
        )
        passable |= footprint & (self.grid() != OCCUPIED)
        passable[start[0], start[1]] = True
        distance = np.full(self.config.shape, -1, dtype=np.int64)
        distance[start[0], start[1]] = 0
        wave = np.zeros(self.config.shape, dtype=bool)
        wave[start[0], start[1]] = True
        reached = np.zeros_like(wave)
        cross = ndimage.generate_binary_structure(2, 1)
        step = 0
        goal: tuple[int, int] | None = None
        while wave.any():
            hits = wave & (labels > 0)
            if hits.any():
                candidates = np.argwhere(hits)
                goal = (int(candidates[0][0]), int(candidates[0][1]))
                break
            reached |= wave
            step += 1
            wave = ndimage.binary_dilation(wave, structure=cross) & passable & ~reached
            distance[wave] = step
        if goal is None:
            return None
        # walk back down the wavefront distances
        path = [goal]
        cell = goal
        while distance[cell] > 0:
            r, c = cell
            for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                nr, nc = r + dr, c + dc
                if 0 <= nr < rows and 0 <= nc < cols and distance[nr, nc] == distance[cell] - 1:
                    cell = (nr, nc)
                    break
            path.append(cell)
        path.reverse()
        every = max(1, round(self.config.path_step_m / self.config.resolution_m))
        thinned = path[every::every]
        if not thinned or thinned[-1] != goal:
            thinned.append(goal)
        return ExplorationGoal(
            self.center_of(np.array(goal)),
            self.center_of(np.array(thinned)),
            int(np.count_nonzero(labels == labels[goal])),
        )
