"""Tabletop segmentation from a depth image: back-projection, the table plane, Euclidean clusters.

The method is the classical one of PCL's tabletop pipelines: the depth image becomes a point
cloud in the world frame; points outside the table's footprint or far above it are cropped; the
table plane is found by RANSAC (seeded) and refined by least squares; the points more than
`above_table_m` over it are grouped by **Euclidean cluster extraction** (PCL's
EuclideanClusterExtraction: the connected components of the graph joining points closer than
`cluster_radius_m`), and components of fewer than `min_points` points are dropped.
numpy and scipy only.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components
from scipy.spatial import cKDTree

from grade_common.schema import Checked, Wording, bounds
from grade_common.types import FloatArray
from grade_scenes.errors import ObjectSetError


@dataclass(frozen=True)
class SegmentConfig(Checked):
    WORDING = Wording(error=ObjectSetError, root="segment")

    plane_iterations: int = field(default=200, metadata=bounds(1, 100000))
    plane_tolerance_m: float = field(default=0.004, metadata=bounds(1e-4, 0.1))
    plane_samples: int = field(default=4000, metadata=bounds(3, 10000000))  # points RANSAC scores
    above_table_m: float = field(default=0.006, metadata=bounds(0.0, 0.1))
    max_height_m: float = field(default=0.33, metadata=bounds(0.01, 2.0))  # over the table top
    cluster_radius_m: float = field(default=0.008, metadata=bounds(1e-3, 0.1))
    min_points: int = field(default=80, metadata=bounds(1, 1000000))


@dataclass(frozen=True)
class CameraView:
    """A pinhole camera: MuJoCo's convention (looks along -z, y up), planar depth."""

    width: int
    height: int
    fovy_deg: float
    transform_world_camera: FloatArray  # (4, 4)

    @property
    def focal_px(self) -> float:
        return float(self.height / 2 / np.tan(np.radians(self.fovy_deg) / 2))

    def project(self, points_world: FloatArray) -> FloatArray:
        """(n, 2) pixel coordinates (column, row) of world points in front of the camera."""
        inv = np.linalg.inv(self.transform_world_camera)
        p = points_world @ inv[:3, :3].T + inv[:3, 3]
        f = self.focal_px
        depth = -p[:, 2]
        u = self.width / 2 + f * p[:, 0] / depth - 0.5
        v = self.height / 2 - f * p[:, 1] / depth - 0.5
        out: FloatArray = np.stack([u, v], axis=1)
        return out


def back_project(depth_m: FloatArray, view: CameraView) -> tuple[FloatArray, np.ndarray]:
    """World points of every pixel with a finite positive depth, and their flat pixel indices."""
    h, w = depth_m.shape
    v, u = np.mgrid[0:h, 0:w]
    valid = np.isfinite(depth_m) & (depth_m > 0)
    d = depth_m[valid]
    f = view.focal_px
    x = (u[valid] + 0.5 - w / 2) / f * d
    y = -(v[valid] + 0.5 - h / 2) / f * d
    camera = np.stack([x, y, -d], axis=1)
    t = view.transform_world_camera
    points: FloatArray = camera @ t[:3, :3].T + t[:3, 3]
    return points, np.flatnonzero(valid)


def fit_plane(
    points: FloatArray, config: SegmentConfig, rng: np.random.Generator
) -> tuple[FloatArray, float]:
    """The dominant plane (unit normal pointing up, offset: n . x = offset) by RANSAC, refined
    by least squares over its inliers.

    Raises:
        ObjectSetError: fewer than 3 points.
    """
    if len(points) < 3:
        raise ObjectSetError(f"table plane: {len(points)} points, at least 3 are needed")
    best: tuple[int, FloatArray, float] = (-1, np.array([0.0, 0.0, 1.0]), 0.0)
    # hypotheses are scored on a seeded subsample: the table is most of the points
    scored = points[
        rng.choice(len(points), size=min(len(points), config.plane_samples), replace=False)
    ]
    for _ in range(config.plane_iterations):
        a, b, c = scored[rng.choice(len(scored), size=3, replace=False)]
        normal = np.cross(b - a, c - a)
        size = float(np.linalg.norm(normal))
        if size < 1e-9:
            continue
        normal /= size
        count = int(
            np.count_nonzero(np.abs(scored @ normal - normal @ a) < config.plane_tolerance_m)
        )
        if count > best[0]:
            best = (count, normal, float(normal @ a))
    _, normal, offset = best
    inliers = points[np.abs(points @ normal - offset) < config.plane_tolerance_m]
    centre = inliers.mean(axis=0)
    # least squares: the normal is the direction of least spread of the inliers
    normal = np.linalg.svd(inliers - centre, full_matrices=False)[2][-1]
    if normal[2] < 0:
        normal = -normal
    return normal, float(normal @ centre)


def euclidean_clusters(points: FloatArray, radius_m: float, min_points: int) -> list[np.ndarray]:
    """Index arrays of the connected components (points closer than radius_m joined) with at
    least min_points points, largest first (ties by first index, so the order is stable)."""
    if len(points) == 0:
        return []
    pairs = cKDTree(points).query_pairs(radius_m, output_type="ndarray")
    graph = coo_matrix(
        (np.ones(len(pairs), dtype=np.int8), (pairs[:, 0], pairs[:, 1])),
        shape=(len(points), len(points)),
    )
    _, labels = connected_components(graph, directed=False)
    groups = [np.flatnonzero(labels == label) for label in np.unique(labels)]
    groups = [g for g in groups if len(g) >= min_points]
    groups.sort(key=lambda g: (-len(g), int(g[0])))
    return groups


@dataclass(frozen=True)
class Segments:
    """The table plane and the object clusters of one view."""

    normal: FloatArray  # the table plane's unit normal (up)
    offset_m: float  # n . x = offset on the plane
    points_world: FloatArray  # (n, 3) the points above the table
    pixels: np.ndarray  # (n,) their flat pixel indices in the image
    clusters: list[np.ndarray]  # index arrays into points_world


def segment_table(
    depth_m: FloatArray,
    view: CameraView,
    table_center_xy: tuple[float, float],
    table_size_m: tuple[float, float],
    table_top_m: float,
    config: SegmentConfig,
    rng: np.random.Generator,
) -> Segments:
    """Crop to the table's footprint, find the plane, cluster what stands on it (module doc)."""
    points, pixels = back_project(depth_m, view)
    on = (
        (np.abs(points[:, 0] - table_center_xy[0]) < table_size_m[0] / 2)
        & (np.abs(points[:, 1] - table_center_xy[1]) < table_size_m[1] / 2)
        & (points[:, 2] > table_top_m - 0.05)
        & (points[:, 2] < table_top_m + config.max_height_m)
    )
    points, pixels = points[on], pixels[on]
    normal, offset = fit_plane(points, config, rng)
    above = points @ normal - offset > config.above_table_m
    points, pixels = points[above], pixels[above]
    clusters = euclidean_clusters(points, config.cluster_radius_m, config.min_points)
    return Segments(normal, offset, points, pixels, clusters)
