"""The 2D free-space map of the ground plane that robots, people and animals plan on."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray


class Footprint(Protocol):
    """What `OccupancyGrid.from_boxes` reads of a box (grade_sim.world.model.StaticBox)."""

    @property
    def label(self) -> str: ...
    @property
    def center_xyz(self) -> tuple[float, float, float]: ...
    @property
    def half_size_xyz(self) -> tuple[float, float, float]: ...
    @property
    def yaw_rad(self) -> float: ...


@dataclass(frozen=True)
class OccupancyGrid:
    """2D free-space map of the ground plane: True = blocked (walls, furniture)."""

    origin_xy: tuple[float, float]  # world coordinates of cell (0, 0)'s lower corner
    resolution_m: float
    blocked: NDArray[np.bool_]  # (nx, ny)

    def cell_of(self, xy: FloatArray) -> NDArray[np.int64]:
        idx = np.floor((np.asarray(xy) - np.asarray(self.origin_xy)) / self.resolution_m)
        out: NDArray[np.int64] = idx.astype(np.int64)
        return out

    def center_of(self, ij: NDArray[np.int64]) -> FloatArray:
        return (
            np.asarray(self.origin_xy)
            + (np.asarray(ij, dtype=np.float64) + 0.5) * self.resolution_m
        )

    def is_free(self, xy: FloatArray) -> bool:
        i, j = (int(v) for v in self.cell_of(xy))
        nx, ny = self.blocked.shape
        return 0 <= i < nx and 0 <= j < ny and not bool(self.blocked[i, j])

    def inflated(self, radius_m: float) -> OccupancyGrid:
        """A copy with obstacles grown by radius_m (so a disc of that radius fits in free cells)."""
        from scipy.ndimage import binary_dilation

        r = int(np.ceil(radius_m / self.resolution_m))
        yy, xx = np.mgrid[-r : r + 1, -r : r + 1]
        disc = (xx**2 + yy**2) <= r * r
        grown = binary_dilation(self.blocked, structure=disc) if r > 0 else self.blocked.copy()
        return OccupancyGrid(self.origin_xy, self.resolution_m, grown)

    @classmethod
    def from_boxes(
        cls,
        boxes: Sequence[Footprint],
        lo_xy: tuple[float, float],
        hi_xy: tuple[float, float],
        resolution_m: float,
        ignore_labels: Sequence[str],
        walkable_below_m: float,
    ) -> OccupancyGrid:
        """Cells covered by the (yawed) footprint of any box reaching below `walkable_below_m`.

        Boxes with a label in `ignore_labels` (floors, ceilings, ground) and boxes whose bottom is
        higher (door lintels, tree crowns) leave the ground free. A cell the footprint only grazes
        is blocked too (half a cell of margin).
        """
        nx = math.ceil((hi_xy[0] - lo_xy[0]) / resolution_m)
        ny = math.ceil((hi_xy[1] - lo_xy[1]) / resolution_m)
        grid = cls(lo_xy, resolution_m, np.zeros((nx, ny), dtype=bool))
        for box in boxes:
            if (
                box.label in ignore_labels
                or box.center_xyz[2] - box.half_size_xyz[2] > walkable_below_m
            ):
                continue
            c = np.asarray(box.center_xyz[:2])
            h = np.asarray(box.half_size_xyz[:2])
            reach = float(np.linalg.norm(h)) + resolution_m
            lo = np.clip(grid.cell_of(c - reach), 0, [nx - 1, ny - 1])
            hi = np.clip(grid.cell_of(c + reach), 0, [nx - 1, ny - 1])
            ii, jj = np.mgrid[lo[0] : hi[0] + 1, lo[1] : hi[1] + 1]
            centres = grid.center_of(np.stack([ii.ravel(), jj.ravel()], axis=1)) - c
            cos, sin = math.cos(box.yaw_rad), math.sin(box.yaw_rad)
            local_x = cos * centres[:, 0] + sin * centres[:, 1]
            local_y = -sin * centres[:, 0] + cos * centres[:, 1]
            margin = resolution_m / 2
            inside = (np.abs(local_x) <= h[0] + margin) & (np.abs(local_y) <= h[1] + margin)
            grid.blocked[ii.ravel()[inside], jj.ravel()[inside]] = True
        return grid

    def segment_is_free(self, a_xy: FloatArray, b_xy: FloatArray) -> bool:
        length = float(np.linalg.norm(np.asarray(b_xy) - np.asarray(a_xy)))
        n = max(2, int(np.ceil(length / (0.5 * self.resolution_m))) + 1)
        pts = np.linspace(a_xy, b_xy, n)
        # is_free for every point at once (the planners call this thousands of times).
        ij = self.cell_of(pts)
        nx, ny = self.blocked.shape
        inside = (ij[:, 0] >= 0) & (ij[:, 0] < nx) & (ij[:, 1] >= 0) & (ij[:, 1] < ny)
        return bool(inside.all()) and not bool(self.blocked[ij[:, 0], ij[:, 1]].any())
