"""Tabletop segmentation on synthetic points: the plane by RANSAC, Euclidean clusters."""

from __future__ import annotations

import numpy as np

from grade_scenes.perceive.cloud import SegmentConfig, euclidean_clusters, fit_plane


def _grid(corner: list[float], counts: tuple[int, int, int]) -> np.ndarray:
    axes = [c + 0.005 * np.arange(n) for c, n in zip(corner, counts, strict=True)]
    return np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)


def _table_and_boxes(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    table = np.column_stack(
        [rng.uniform(0.3, 1.3, 20000), rng.uniform(-0.5, 0.5, 20000), np.full(20000, 0.745)]
    )
    box_a = _grid([0.6, 0.0, 0.75], (10, 10, 5))  # 5 mm apart
    box_b = _grid([0.8, -0.2, 0.75], (8, 10, 5))
    return np.vstack([table, box_a, box_b]), np.vstack([box_a, box_b])


def test_the_plane_is_the_table_and_the_clusters_are_the_boxes() -> None:
    rng = np.random.default_rng(0)
    points, objects = _table_and_boxes(rng)
    normal, offset = fit_plane(points, SegmentConfig(), np.random.default_rng(1))
    assert normal[2] > 0.9999
    assert abs(offset - 0.745) < 1e-6
    clusters = euclidean_clusters(objects, 0.01, 80)
    assert [len(c) for c in clusters] == [500, 400]
    # points farther apart than the radius are not joined; small groups are dropped
    assert euclidean_clusters(objects, 0.004, 2) == []


def test_same_seed_same_plane() -> None:
    points, _ = _table_and_boxes(np.random.default_rng(0))
    noisy = points + np.random.default_rng(2).normal(scale=0.002, size=points.shape)
    a = fit_plane(noisy, SegmentConfig(), np.random.default_rng(3))
    b = fit_plane(noisy, SegmentConfig(), np.random.default_rng(3))
    assert a[0].tobytes() == b[0].tobytes()
    assert a[1] == b[1]
