"""The SceneReplica table and its grid of blocks (world frame: origin on the floor below the
robot base, x forward towards the table, z up; the base itself is at the table top's height)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from grade_common.schema import Checked, Wording, bounds
from grade_common.types import FloatArray
from grade_scenes.errors import ObjectSetError


@dataclass(frozen=True)
class TableConfig(Checked):
    """The table: 1 m x 1 m, top at 0.745 m, centre 0.8 m in front of the robot; its top is
    split into a grid of square blocks (16 x 16 of 3 cm, centred on the table, by default)."""

    WORDING = Wording(error=ObjectSetError, root="table")

    size_m: tuple[float, float] = field(default=(1.0, 1.0), metadata=bounds(0.2, 5.0))
    top_height_m: float = field(default=0.745, metadata=bounds(0.1, 2.0))
    thickness_m: float = field(default=0.04, metadata=bounds(0.005, 0.5))
    center_x_m: float = field(default=0.8, metadata=bounds(0.1, 5.0))
    grid_cells: int = field(default=16, metadata=bounds(1, 256))
    cell_size_m: float = field(default=0.03, metadata=bounds(0.005, 0.5))

    def validate(self, path: str) -> None:
        if self.grid_cells * self.cell_size_m > min(self.size_m) + 1e-9:
            raise ObjectSetError(
                f"table.grid_cells: {self.grid_cells} blocks of {self.cell_size_m} m do not fit "
                f"on a {list(self.size_m)} m table"
            )

    def cell_centers_xy(self) -> FloatArray:
        """(grid_cells, grid_cells, 2) block centres; [i, j] is row i along x, column j along y."""
        half = self.grid_cells * self.cell_size_m / 2
        offsets = (np.arange(self.grid_cells) + 0.5) * self.cell_size_m - half
        xx, yy = np.meshgrid(self.center_x_m + offsets, offsets, indexing="ij")
        out: FloatArray = np.stack([xx, yy], axis=-1)
        return out

    def cell_of(self, xy: FloatArray) -> tuple[int, int] | None:
        """The block (i, j) under a point, or None when it lies off the grid."""
        half = self.grid_cells * self.cell_size_m / 2
        i = int(np.floor((xy[0] - self.center_x_m + half) / self.cell_size_m))
        j = int(np.floor((xy[1] + half) / self.cell_size_m))
        if 0 <= i < self.grid_cells and 0 <= j < self.grid_cells:
            return i, j
        return None
