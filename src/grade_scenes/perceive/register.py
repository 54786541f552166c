"""Model-based 6D pose: a known mesh registered to an observed cluster (Open3D).

Global registration first (FPFH features on 5 mm voxels, RANSAC over feature correspondences
with edge-length and distance checks), then point-to-plane ICP at 4, 2 and 1 times the
threshold. Up to `restarts` RANSAC seeds per pair
(the best fit wins). The observed cluster is the
source and the full model the target, so a partial view fits inside the model: fitness is the
share of observed points that found a model point within the ICP threshold. Open3D's RANSAC is
seeded per call (`open3d.utility.random.seed`), and the whole registration runs on one Open3D
thread: ICP's and the features' OpenMP reductions otherwise add in an order that depends on the
threads' timing, which changed the last bits of an estimate between two runs of one seed on a
busy machine. So the estimate is the same, bit for bit, for the same inputs.

Fitness alone cannot tell a partial view of one box from a partial view of a bigger one (both
fit inside the bigger model). So each fit is also checked against the depth image: the
model's points that face the camera are projected into it; a point is *supported* when the
observed depth there is the model's within `depth_tolerance_m`, *violated* when the camera
sees through it (observed farther), and occluded otherwise. Coverage = supported /
(supported + violated).

Which cluster is which object: every (cluster, model) pair is registered and the assignment
with the least total cost (1 - fitness) + (1 - coverage) + rmse / threshold is chosen
(Hungarian method); a pair with fitness or coverage under `min_fitness` is no match.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import trimesh
from scipy.optimize import linear_sum_assignment

from grade_common.schema import Checked, Wording, bounds
from grade_common.types import FloatArray
from grade_scenes.errors import ObjectSetError
from grade_scenes.perceive.cloud import CameraView

if TYPE_CHECKING:
    import open3d as o3d


@dataclass(frozen=True)
class RegisterConfig(Checked):
    WORDING = Wording(error=ObjectSetError, root="register")

    voxel_m: float = field(default=0.005, metadata=bounds(5e-4, 0.05))
    model_points: int = field(default=3000, metadata=bounds(100, 1000000))
    ransac_iterations: int = field(default=20000, metadata=bounds(10, 10000000))
    icp_threshold_m: float = field(default=0.006, metadata=bounds(1e-4, 0.1))
    min_fitness: float = field(default=0.6, metadata=bounds(0.0, 1.0))
    depth_tolerance_m: float = field(default=0.01, metadata=bounds(1e-4, 0.1))
    restarts: int = field(default=4, metadata=bounds(1, 100))  # RANSAC seeds per pair at most
    good_enough: float = field(default=0.97, metadata=bounds(0.0, 1.0))  # fitness and coverage


def surface_samples(
    mesh: trimesh.Trimesh, count: int, rng: np.random.Generator
) -> tuple[FloatArray, np.ndarray]:
    """`count` points uniform over the mesh's surface (area-weighted faces, uniform in each
    triangle) and the face each lies on; seeded."""
    areas = mesh.area_faces
    faces = rng.choice(len(areas), size=count, p=areas / areas.sum())
    tri = mesh.triangles[faces]
    a, b = rng.uniform(size=(2, count))
    flip = a + b > 1
    a[flip], b[flip] = 1 - a[flip], 1 - b[flip]
    points: FloatArray = (
        tri[:, 0] + a[:, None] * (tri[:, 1] - tri[:, 0]) + b[:, None] * (tri[:, 2] - tri[:, 0])
    )
    return points, faces


@dataclass(frozen=True)
class Model:
    """A known object: points and outward normals sampled on its mesh (object frame)."""

    name: str
    points: FloatArray  # (n, 3)
    normals: FloatArray  # (n, 3)
    diameter_m: float

    @staticmethod
    def from_mesh(name: str, mesh: trimesh.Trimesh, count: int, rng: np.random.Generator) -> Model:
        """Area-weighted seeded samples on the mesh surface."""
        points, faces = surface_samples(mesh, count, rng)
        hull = np.asarray(mesh.convex_hull.vertices)
        diameter = float(np.max(np.linalg.norm(hull[:, None] - hull[None], axis=2)))
        return Model(name, points, np.asarray(mesh.face_normals[faces]), diameter)


@dataclass(frozen=True)
class Fit:
    transform_world_object: FloatArray  # (4, 4)
    fitness: float  # share of observed points within the ICP threshold of the model
    rmse_m: float  # of those points
    coverage: float = 1.0  # the depth image's support of the model's visible side (module doc)

    def cost(self, threshold_m: float) -> float:
        return 2.0 - self.fitness - self.coverage + self.rmse_m / threshold_m


def coverage(
    model: Model,
    transform_world_object: FloatArray,
    depth_m: FloatArray,
    view: CameraView,
    tolerance_m: float,
) -> float:
    """Share of the model's camera-facing points that the depth image sees where the model
    puts them, among those it sees at or behind them (module doc)."""
    t = transform_world_object
    points = model.points @ t[:3, :3].T + t[:3, 3]
    normals = model.normals @ t[:3, :3].T
    eye = view.transform_world_camera[:3, 3]
    to_eye = eye - points
    to_eye /= np.linalg.norm(to_eye, axis=1, keepdims=True)
    # grazing faces say little and fall on silhouette pixels: only points facing the camera
    facing = np.einsum("ij,ij->i", normals, to_eye) > 0.3
    points = points[facing]
    inv = np.linalg.inv(view.transform_world_camera)
    predicted = -(points @ inv[2, :3] + inv[2, 3])
    pixels = np.round(view.project(points)).astype(int)
    h, w = depth_m.shape
    inside = (
        (pixels[:, 0] >= 1) & (pixels[:, 0] < w - 1) & (pixels[:, 1] >= 1) & (pixels[:, 1] < h - 1)
    )
    pixels, predicted = pixels[inside], predicted[inside]
    # the 3 x 3 neighbourhood forgives the rounding at edges: supported if any pixel agrees,
    # violated only if every one sees farther
    gaps = np.stack(
        [
            depth_m[pixels[:, 1] + dv, pixels[:, 0] + du] - predicted
            for dv in (-1, 0, 1)
            for du in (-1, 0, 1)
        ]
    )
    supported = int(np.count_nonzero(np.any(np.abs(gaps) < tolerance_m, axis=0)))
    violated = int(np.count_nonzero(np.all(gaps >= tolerance_m, axis=0)))
    return supported / (supported + violated) if supported + violated else 0.0


def _cloud(points: FloatArray, normals: FloatArray | None = None) -> o3d.geometry.PointCloud:
    import open3d as o3d

    cloud = o3d.geometry.PointCloud(o3d.utility.Vector3dVector(np.asarray(points, np.float64)))
    if normals is not None:
        cloud.normals = o3d.utility.Vector3dVector(np.asarray(normals, np.float64))
    return cloud


def _features(cloud: o3d.geometry.PointCloud, voxel_m: float) -> o3d.pipelines.registration.Feature:
    import open3d as o3d

    reg = o3d.pipelines.registration
    return reg.compute_fpfh_feature(  # type: ignore[call-arg]  # the stub wants `indices`
        cloud, o3d.geometry.KDTreeSearchParamHybrid(radius=5 * voxel_m, max_nn=100)
    )


@contextmanager
def _one_open3d_thread() -> Iterator[None]:
    """Open3D on one thread inside the block (module doc: bit-identical estimates)."""
    import open3d as o3d

    before = o3d.utility.get_max_threads()
    o3d.utility.set_max_threads(1)
    try:
        yield
    finally:
        o3d.utility.set_max_threads(before)


def register(observed_world: FloatArray, model: Model, config: RegisterConfig, seed: int) -> Fit:
    """The model's pose in the world that best explains the observed points (module doc)."""
    with _one_open3d_thread():
        return _register(observed_world, model, config, seed)


def _register(observed_world: FloatArray, model: Model, config: RegisterConfig, seed: int) -> Fit:
    import open3d as o3d

    reg = o3d.pipelines.registration
    # its "too few correspondences" warnings on small clusters are expected: RANSAC then uses
    # all correspondences, and the fit's cost decides
    o3d.utility.set_verbosity_level(o3d.utility.VerbosityLevel.Error)
    o3d.utility.random.seed(seed)
    source = _cloud(observed_world).voxel_down_sample(config.voxel_m)
    source.estimate_normals(
        o3d.geometry.KDTreeSearchParamHybrid(radius=3 * config.voxel_m, max_nn=30)
    )
    target = _cloud(model.points, model.normals).voxel_down_sample(config.voxel_m)
    distance = 1.5 * config.voxel_m
    # the observed cloud is moved onto the model around its own centroid, so RANSAC's
    # hypotheses stay well conditioned
    coarse = reg.registration_ransac_based_on_feature_matching(
        source,
        target,
        _features(source, config.voxel_m),
        _features(target, config.voxel_m),
        True,
        distance,
        reg.TransformationEstimationPointToPoint(False),
        3,
        [
            reg.CorrespondenceCheckerBasedOnEdgeLength(0.9),
            reg.CorrespondenceCheckerBasedOnDistance(distance),
        ],
        reg.RANSACConvergenceCriteria(config.ransac_iterations, 0.999),
    )
    # coarse to fine: RANSAC's estimate can sit a few millimetres off, beyond the final
    # threshold on flat faces
    transformation = coarse.transformation
    for scale in (4.0, 2.0, 1.0):
        fine = reg.registration_icp(
            source,
            target,
            scale * config.icp_threshold_m,
            transformation,
            reg.TransformationEstimationPointToPlane(),
            reg.ICPConvergenceCriteria(max_iteration=30),
        )
        transformation = fine.transformation
    transform_object_world = np.asarray(fine.transformation, dtype=np.float64)
    transform_world_object = np.asarray(np.linalg.inv(transform_object_world), dtype=np.float64)
    return Fit(transform_world_object, float(fine.fitness), float(fine.inlier_rmse))


def _best_fit(
    points: FloatArray,
    model: Model,
    depth_m: FloatArray,
    view: CameraView,
    config: RegisterConfig,
    seed: int,
) -> Fit:
    """RANSAC + ICP from up to `restarts` seeds (RANSAC on flat faces lands in a wrong local
    optimum now and then); the least cost wins, and a fit that is good enough ends the search."""
    best: Fit | None = None
    for attempt in range(config.restarts):
        fit = register(points, model, config, (seed + 7919 * attempt) % 2**31)
        seen = coverage(model, fit.transform_world_object, depth_m, view, config.depth_tolerance_m)
        fit = Fit(fit.transform_world_object, fit.fitness, fit.rmse_m, seen)
        if best is None or fit.cost(config.icp_threshold_m) < best.cost(config.icp_threshold_m):
            best = fit
        if min(fit.fitness, fit.coverage) >= config.good_enough:
            break
    assert best is not None
    return best


def assign(
    clusters: list[FloatArray],
    models: list[Model],
    depth_m: FloatArray,
    view: CameraView,
    config: RegisterConfig,
    seed: int,
    known: dict[tuple[int, int], Fit] | None = None,
) -> tuple[dict[int, tuple[int, Fit]], dict[tuple[int, int], Fit]]:
    """Model index -> (cluster index, fit) for the models matched to a cluster (module doc),
    and every (model, cluster) fit made.

    Pairs whose cluster is larger than the model (its bounding-box diagonal beyond the
    model's diameter by 2 cm) are not registered; pairs in `known` are not registered again.
    """
    big = 1e6
    cost = np.full((len(models), len(clusters)), big)
    fits: dict[tuple[int, int], Fit] = {}
    for j, points in enumerate(clusters):
        extent = float(np.linalg.norm(points.max(axis=0) - points.min(axis=0)))
        for i, model in enumerate(models):
            if extent > model.diameter_m + 0.02:
                continue
            fit = (known or {}).get((i, j)) or _best_fit(points, model, depth_m, view, config, seed)
            fits[i, j] = fit
            if min(fit.fitness, fit.coverage) >= config.min_fitness:
                cost[i, j] = fit.cost(config.icp_threshold_m)
    if not fits:
        return {}, fits
    rows, cols = linear_sum_assignment(cost)
    matched = {
        int(i): (int(j), fits[int(i), int(j)])
        for i, j in zip(rows, cols, strict=True)
        if cost[i, j] < big
    }
    return matched, fits
