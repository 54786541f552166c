"""Overlap of two runs (ground-plane IoU) and the map-merging pair generator."""

from __future__ import annotations

import numpy as np
import pytest

from grade_eval.core.overlap import (
    PairSpec,
    ground_cells,
    overlap_iou,
    select_pairs,
)
from grade_eval.core.pointmap import PointMap
from grade_eval.errors import EvalConfigError, MapError


def square(x0: float, size_cells: int, height: float = 0.0) -> PointMap:
    """A size x size block of 0.05 m cells starting at x0, at any height (IoU ignores z)."""
    i, j = np.meshgrid(np.arange(size_cells), np.arange(size_cells), indexing="ij")
    pts = np.stack([x0 + 0.05 * i.ravel(), 0.05 * j.ravel(), np.full(i.size, height)], axis=1)
    return PointMap(np.concatenate([pts, pts + np.array([0, 0, 1.0])]))


def test_iou_of_shifted_squares_is_exact() -> None:
    a = square(0.0, 20)
    b = square(0.05 * 10, 20, height=2.0)  # half overlapping
    assert overlap_iou(a, b) == pytest.approx(200 / 600)
    assert overlap_iou(a, a) == 1.0
    assert overlap_iou(a, square(5.0, 20)) == 0.0


def test_pairs_in_range_same_world_only() -> None:
    maps = {"a": square(0.0, 20), "b": square(0.5, 20), "c": square(0.05, 20), "d": square(0.5, 20)}
    cells = {k: ground_cells(v) for k, v in maps.items()}
    worlds = {"a": "office", "b": "office", "c": "office", "d": "warehouse"}
    pairs = select_pairs(cells, worlds, PairSpec(0.2, 0.5), np.random.default_rng(0))
    assert [(p.run_a, p.run_b) for p in pairs] == [("a", "b"), ("b", "c")]
    assert pairs[0].iou == pytest.approx(1 / 3)
    assert all(0.2 <= p.iou <= 0.5 for p in pairs)


def test_pair_subset_is_seeded() -> None:
    cells = {f"r{i}": ground_cells(square(0.05 * i, 20)) for i in range(8)}
    worlds = dict.fromkeys(cells, "w")
    spec = PairSpec(0.0, 1.0, max_pairs=5)
    first = select_pairs(cells, worlds, spec, np.random.default_rng(42))
    again = select_pairs(cells, worlds, spec, np.random.default_rng(42))
    assert first == again
    assert len(first) == 5


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"min_iou": 0.8, "max_iou": 0.2}, r"min_iou = 0.8, max_iou = 0.2"),
        ({"max_pairs": 0}, r"max_pairs = 0"),
    ],
)
def test_pair_spec_validation(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(EvalConfigError, match=match):
        PairSpec(**kwargs)  # type: ignore[arg-type]


def test_empty_map_overlap_raises() -> None:
    with pytest.raises(MapError, match="empty"):
        overlap_iou(PointMap(np.zeros((0, 3)), None, "empty"), square(0, 3))
