"""Exploration coverage: the fraction of a world's free floor an explorer has seen, over time.

The world's free floor comes in as the centres of its free cells (any resolution, world x, y in
metres), so this core needs no simulator; `grade explore coverage` builds them from a run's
scenario. A free-floor cell counts as seen from the stamp of the first depth image that observed
(as free or as occupied) the explorer-map cell its centre falls in; centres outside the
explorer's map are never seen.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import IO

import numpy as np

from grade_common.types import FloatArray
from grade_control.errors import ControlError


@dataclass(frozen=True)
class SeenMap:
    """When each cell of an explorer's grid was first seen (rows = y, columns = x)."""

    origin_xy_m: tuple[float, float]
    resolution_m: float
    first_seen_s: FloatArray  # (rows, cols), inf = never

    def seen_at(self, xy_m: FloatArray) -> FloatArray:
        """(N, 2) world x, y -> (N,) first-seen stamp of the cell each falls in (inf: never)."""
        xy = np.asarray(xy_m, dtype=np.float64).reshape(-1, 2)
        col = np.floor((xy[:, 0] - self.origin_xy_m[0]) / self.resolution_m).astype(np.int64)
        row = np.floor((xy[:, 1] - self.origin_xy_m[1]) / self.resolution_m).astype(np.int64)
        rows, cols = self.first_seen_s.shape
        inside = (row >= 0) & (row < rows) & (col >= 0) & (col < cols)
        out = np.full(len(xy), np.inf)
        out[inside] = self.first_seen_s[row[inside], col[inside]]
        return out


def coverage_over_time(
    seen: SeenMap, free_floor_xy_m: FloatArray, times_s: FloatArray
) -> FloatArray:
    """Fraction (0..1) of the free-floor cells seen by each of `times_s`.

    Raises:
        ControlError: no free-floor cells given (the fraction would be undefined).
    """
    stamps = seen.seen_at(free_floor_xy_m)
    if len(stamps) == 0:
        raise ControlError("coverage needs at least one free-floor cell; the world gave none")
    ordered = np.sort(stamps)
    counts = np.searchsorted(ordered, np.asarray(times_s, dtype=np.float64), side="right")
    return np.asarray(counts / len(stamps), dtype=np.float64)


def save_seen_map(path: Path | IO[bytes], seen: SeenMap, positions_txy: FloatArray) -> None:
    """Write the explorer's seen map and its robot track ((N, 3) t, x, y) as .npz data."""
    np.savez_compressed(
        path,
        origin_xy_m=np.asarray(seen.origin_xy_m, dtype=np.float64),
        resolution_m=np.float64(seen.resolution_m),
        first_seen_s=seen.first_seen_s,
        positions_txy=np.asarray(positions_txy, dtype=np.float64).reshape(-1, 3),
    )


def load_seen_map(path: str | Path | IO[bytes]) -> tuple[SeenMap, FloatArray]:
    """Read what `save_seen_map` wrote: the seen map and the robot track.

    Raises:
        ControlError: the file cannot be read or lacks a field.
    """
    try:
        with np.load(path) as data:
            seen = SeenMap(
                (float(data["origin_xy_m"][0]), float(data["origin_xy_m"][1])),
                float(data["resolution_m"]),
                np.asarray(data["first_seen_s"], dtype=np.float64),
            )
            track = np.asarray(data["positions_txy"], dtype=np.float64)
    except (OSError, KeyError, ValueError) as err:
        raise ControlError(f"{path}: not an explorer map file ({err})") from err
    return seen, track
