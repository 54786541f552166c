"""Overlap of two runs (IoU of ground-plane projections) and map-merging pair selection."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from grade_common.schema import Checked, Wording, bounds
from grade_eval.core.pointmap import PointMap, check_voxel_size
from grade_eval.errors import EVAL_WORDING, EvalConfigError, MapError

_B = 31
_OFF = 1 << (_B - 1)


def ground_cells(point_map: PointMap, cell_size_m: float = 0.05) -> NDArray[np.int64]:
    """Sorted unique ground-plane cells (x, y packed) covered by the map."""
    check_voxel_size(cell_size_m)
    point_map.require_points()
    ij = np.round(point_map.points_xyz[:, :2] / cell_size_m).astype(np.int64) + _OFF
    return np.unique((ij[:, 0] << _B) | ij[:, 1])


def ground_iou(cells_a: NDArray[np.int64], cells_b: NDArray[np.int64]) -> float:
    """IoU of two cell sets (sorted unique)."""
    if cells_a.size == 0 or cells_b.size == 0:
        raise MapError("cannot compute overlap of an empty map")
    inter = np.intersect1d(cells_a, cells_b, assume_unique=True).size
    return inter / (cells_a.size + cells_b.size - inter)


def overlap_iou(map_a: PointMap, map_b: PointMap, cell_size_m: float = 0.05) -> float:
    """Ground-plane IoU of two maps (MAOMaps' overlap of two runs)."""
    return ground_iou(ground_cells(map_a, cell_size_m), ground_cells(map_b, cell_size_m))


@dataclass(frozen=True)
class PairSpec(Checked):
    """Requested IoU range [min_iou, max_iou] within [0, 1] and optional cap on pairs."""

    WORDING: ClassVar[Wording] = EVAL_WORDING

    min_iou: float = field(default=0.1, metadata=bounds(0.0, 1.0))
    max_iou: float = field(default=0.9, metadata=bounds(0.0, 1.0))
    max_pairs: int | None = field(default=None, metadata=bounds(1))

    def validate(self, path: str) -> None:
        """The range must not be empty (called by the schema check after the field checks)."""
        if self.min_iou > self.max_iou:
            raise EvalConfigError(
                f"min_iou = {self.min_iou}, max_iou = {self.max_iou}: need "
                "0 <= min_iou <= max_iou <= 1"
            )


@dataclass(frozen=True)
class RunPair:
    """Two runs of the same world and their ground-plane IoU."""

    run_a: str
    run_b: str
    world: str
    iou: float


def select_pairs(
    cells_by_run: Mapping[str, NDArray[np.int64]],
    world_by_run: Mapping[str, str],
    spec: PairSpec,
    rng: np.random.Generator,
) -> list[RunPair]:
    """Pairs of runs in the same world whose overlap lies in the requested range.

    With max_pairs, a uniform random subset is drawn with `rng` (same seed, same pairs).
    """
    missing = sorted(set(cells_by_run) - set(world_by_run))
    if missing:
        raise EvalConfigError(f"runs without a world: {missing}")
    pairs = []
    for a, b in itertools.combinations(sorted(cells_by_run), 2):
        if world_by_run[a] != world_by_run[b]:
            continue
        iou = ground_iou(cells_by_run[a], cells_by_run[b])
        if spec.min_iou <= iou <= spec.max_iou:
            pairs.append(RunPair(a, b, world_by_run[a], iou))
    if spec.max_pairs is not None and len(pairs) > spec.max_pairs:
        chosen = np.sort(rng.choice(len(pairs), size=spec.max_pairs, replace=False))
        pairs = [pairs[int(i)] for i in chosen]
    return pairs
