"""Map error (AME): nearest-neighbour and MAOMaps ray-casting association."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.spatial import cKDTree

from grade_common.types import FloatArray
from grade_eval.core.metrics import Statistics
from grade_eval.core.pointmap import PointMap, check_voxel_size, pack_keys, voxel_indices
from grade_eval.errors import EvalConfigError, MapError


class Association(enum.Enum):
    """How an estimated point is matched with the ground truth."""

    NEAREST = "nn"
    RAYCAST = "raycast"


@dataclass(frozen=True)
class AmeResult:
    """Per-point distances (matched points only), statistics, and the unmatched count.

    matched_gt_xyz holds the associated ground-truth point of each matched estimated point.
    """

    association: Association
    distances_m: FloatArray
    stats: Statistics
    matched_mask: NDArray[np.bool_]
    matched_gt_xyz: FloatArray
    num_unmatched: int
    symmetric_stats: Statistics | None = None


def ame_nearest(
    estimate: PointMap,
    ground_truth: PointMap,
    symmetric: bool = False,
    max_distance_m: float = np.inf,
    workers: int = -1,
) -> AmeResult:
    """Distance of each estimated point (already in the ground-truth frame) to its nearest GT point.

    Args:
        max_distance_m: points farther than this from every GT point count as unmatched.
        symmetric: also report GT -> estimate statistics (completeness).

    Raises:
        MapError: either map empty, or every point unmatched.
    """
    if not max_distance_m > 0:  # NaN too
        raise EvalConfigError(
            f"max_distance_m (--max-dist) = {max_distance_m} is not allowed; use a distance "
            "> 0 in metres (inf: no limit)"
        )
    estimate.require_points()
    ground_truth.require_points()
    tree = cKDTree(ground_truth.points_xyz)
    dist, idx = tree.query(
        estimate.points_xyz, k=1, workers=workers, distance_upper_bound=max_distance_m
    )
    matched = np.isfinite(dist)
    if not matched.any():
        raise MapError(f"no estimated point lies within {max_distance_m} m of the ground truth")
    sym = None
    if symmetric:
        back, _ = cKDTree(estimate.points_xyz).query(ground_truth.points_xyz, k=1, workers=workers)
        sym = Statistics.of(np.asarray(back, dtype=np.float64))
    d = np.asarray(dist[matched], dtype=np.float64)
    return AmeResult(
        Association.NEAREST,
        d,
        Statistics.of(d),
        matched,
        ground_truth.points_xyz[idx[matched]],
        int((~matched).sum()),
        sym,
    )


@dataclass(frozen=True)
class RaycastConfig:
    """Ray marching through the voxelised ground truth.

    voxel_size_m: surface voxel size (the GT map's, default 0.05 m); step_fraction: march step
    as a fraction of the voxel (<= 0.5 so no voxel face is jumped); min/max_range_m: alpha
    range along the ray (MAOMaps keeps 0.01-10 m).
    """

    voxel_size_m: float = 0.05
    step_fraction: float = 0.25
    min_range_m: float = 0.01
    max_range_m: float = 10.0
    chunk_rays: int = 65536  # rays marched at once (bounds the memory of a batch)
    block_steps: int = 16  # samples per block between two empty-space skips
    refine_neighbours: int = 64  # GT points near a first hit searched for the exact one

    def __post_init__(self) -> None:
        check_voxel_size(self.voxel_size_m)
        if not (0 < self.step_fraction <= 0.5):
            raise EvalConfigError(f"step_fraction = {self.step_fraction}: allowed (0, 0.5]")
        if not (0 <= self.min_range_m < self.max_range_m):
            raise EvalConfigError(
                f"min_range_m = {self.min_range_m}, max_range_m = "
                f"{self.max_range_m}: need 0 <= min < max"
            )
        if self.refine_neighbours < 1:
            raise EvalConfigError(f"refine_neighbours = {self.refine_neighbours}: must be >= 1")
        if self.block_steps < 1:
            raise EvalConfigError(f"block_steps = {self.block_steps}: must be >= 1")
        if self.chunk_rays < 1:
            raise EvalConfigError(f"chunk_rays = {self.chunk_rays}: must be >= 1")


class VoxelSurface:
    """Occupied voxels of a ground-truth map, each pointing back to one GT point in it."""

    def __init__(self, ground_truth: PointMap, voxel_size_m: float, coarse_factor: int = 8) -> None:
        ground_truth.require_points()
        self.voxel_size_m = voxel_size_m
        keys = pack_keys(voxel_indices(ground_truth.points_xyz, voxel_size_m))
        order = np.argsort(keys, kind="stable")
        sorted_keys = keys[order]
        first = np.concatenate([[True], sorted_keys[1:] != sorted_keys[:-1]])
        self._keys = sorted_keys[first]
        self._point_index = order[first]
        self._points = ground_truth.points_xyz
        self._coarse_m = coarse_factor * voxel_size_m
        centres = voxel_indices(ground_truth.points_xyz[self._point_index], voxel_size_m)
        coarse = np.unique(
            np.floor(centres * voxel_size_m / self._coarse_m).astype(np.int64), axis=0
        )
        shifts = np.stack(
            np.meshgrid([-1, 0, 1], [-1, 0, 1], [-1, 0, 1], indexing="ij"), axis=-1
        ).reshape(-1, 3)
        self._coarse_keys = np.unique(pack_keys((coarse[:, None, :] + shifts).reshape(-1, 3)))

    def clearance(self, points_xyz: FloatArray) -> FloatArray:
        """A safe lower bound of the distance from each point to any occupied voxel.

        Coarse cells (coarse_factor voxels wide) next to an occupied voxel are marked; a point
        in an unmarked cell is at least one coarse cell minus half a voxel diagonal away.
        """
        cells = pack_keys(np.floor(points_xyz / self._coarse_m).astype(np.int64))
        pos = np.minimum(np.searchsorted(self._coarse_keys, cells), self._coarse_keys.size - 1)
        near = self._coarse_keys[pos] == cells
        free = self._coarse_m - 0.5 * np.sqrt(3.0) * self.voxel_size_m
        return np.where(near, 0.0, free)

    def lookup(self, points_xyz: FloatArray) -> NDArray[np.intp]:
        """Index of the GT point in each point's voxel, -1 where the voxel is empty."""
        keys = pack_keys(voxel_indices(points_xyz, self.voxel_size_m))
        pos = np.searchsorted(self._keys, keys)
        pos_c = np.minimum(pos, self._keys.size - 1)
        hit = self._keys[pos_c] == keys
        return np.where(hit, self._point_index[pos_c], -1).astype(np.intp)

    def point(self, index: NDArray[np.intp]) -> FloatArray:
        """GT points by index."""
        return np.asarray(self._points[index], dtype=np.float64)


def raycast_hits(
    surface: VoxelSurface,
    origins_xyz: FloatArray,
    directions_xyz: FloatArray,
    config: RaycastConfig,
) -> NDArray[np.intp]:
    """Index of the first GT point along each ray origin + alpha dir (unit dir), -1 for none.

    Marches in steps of step_fraction * voxel, in blocks of `block_steps` samples, and before
    each block skips empty space safely by the surface's clearance bound.
    """
    n = origins_xyz.shape[0]
    step = config.voxel_size_m * config.step_fraction
    offsets = np.arange(config.block_steps) * step
    result = np.full(n, -1, dtype=np.intp)
    for start in range(0, n, config.chunk_rays):
        active = np.arange(start, min(start + config.chunk_rays, n))
        alpha = np.full(active.size, config.min_range_m)
        while active.size:
            here = origins_xyz[active] + alpha[:, None] * directions_xyz[active]
            alpha = alpha + surface.clearance(here)
            samples = alpha[:, None] + offsets[None, :]
            pts = (
                origins_xyz[active, None, :] + samples[..., None] * directions_xyz[active, None, :]
            )
            hit = surface.lookup(pts.reshape(-1, 3)).reshape(samples.shape)
            hit[samples > config.max_range_m] = -1
            found_any = (hit >= 0).any(axis=1)
            first = np.argmax(hit >= 0, axis=1)
            rows = np.flatnonzero(found_any)
            result[active[rows]] = hit[rows, first[rows]]
            alpha = alpha + config.block_steps * step
            keep = ~found_any & (alpha <= config.max_range_m)
            active, alpha = active[keep], alpha[keep]
    return result


def _surface_point_on_ray(
    ground_truth: PointMap,
    first_hit_xyz: FloatArray,
    origins_xyz: FloatArray,
    directions_xyz: FloatArray,
    config: RaycastConfig,
) -> FloatArray:
    """Refine a first-hit voxel to the GT point closest to the ray near that voxel.

    The voxel only says where the surface starts; among the GT points within two voxel
    diagonals of its representative, the one with the smallest distance to the ray line (ties:
    smallest alpha) is the surface point the ray meets.
    """
    tree = cKDTree(ground_truth.points_xyz)
    k = min(config.refine_neighbours, ground_truth.size)
    radius = 2.0 * np.sqrt(3.0) * config.voxel_size_m
    _, idx = tree.query(first_hit_xyz, k=k, distance_upper_bound=radius, workers=-1)
    idx = np.asarray(idx).reshape(first_hit_xyz.shape[0], k)
    valid = idx < ground_truth.size
    cand = ground_truth.points_xyz[np.where(valid, idx, 0)]
    rel = cand - origins_xyz[:, None, :]
    alpha = np.einsum("nkj,nj->nk", rel, directions_xyz)
    perp = np.linalg.norm(rel - alpha[..., None] * directions_xyz[:, None, :], axis=2)
    perp = np.where(valid & (alpha > config.min_range_m), perp, np.inf)
    # Prefer the nearest-to-ray point; among near-equal ones (within 1e-9 m) the first along it.
    best = np.lexsort((alpha, np.round(perp, 9)), axis=-1)[:, 0]
    rows = np.arange(first_hit_xyz.shape[0])
    refined = cand[rows, best]
    keep_voxel = ~np.isfinite(perp[rows, best])
    refined[keep_voxel] = first_hit_xyz[keep_voxel]
    return np.asarray(refined, dtype=np.float64)


def ame_raycast(
    estimate_world_xyz: FloatArray,
    observation_est_xyz: FloatArray,
    pose_est_world_camera: FloatArray,
    pose_gt_world_camera: FloatArray,
    ground_truth: PointMap,
    config: RaycastConfig | None = None,
) -> AmeResult:
    """MAOMaps ray-casting AME.

    For estimated point m* (in the estimate's map frame, `observation_est_xyz`) seen from the
    estimated camera pose (R_est, p_est), the viewing ray r = R_gt R_est^-1 (m* - p_est) is cast
    from the true camera position p_gt; the first GT surface voxel on p_gt + alpha r (alpha >
    min range) is its match. The error is the distance from the estimated point moved into the
    GT frame (`estimate_world_xyz`, same global alignment as for nearest neighbour) to that
    match, so a wall point drifted next to the floor is still compared with the wall.
    Rays that hit nothing within max_range_m are counted as unmatched, never dropped silently.

    Args:
        pose_*_world_camera: (N, 4, 4) camera pose per estimated point (at its observation time).

    Raises:
        MapError: empty maps, mismatched shapes, or no ray hitting the ground truth.
    """
    cfg = config or RaycastConfig()
    n = estimate_world_xyz.shape[0]
    if n == 0:
        raise MapError("estimated map is empty (0 points)")
    for label, arr, shape in (
        ("observation_est_xyz", observation_est_xyz, (n, 3)),
        ("pose_est_world_camera", pose_est_world_camera, (n, 4, 4)),
        ("pose_gt_world_camera", pose_gt_world_camera, (n, 4, 4)),
    ):
        if arr.shape != shape:
            raise MapError(f"{label} has shape {arr.shape}, expected {shape}")
    surface = VoxelSurface(ground_truth, cfg.voxel_size_m)
    rel = np.einsum(
        "nji,nj->ni",
        pose_est_world_camera[:, :3, :3],
        observation_est_xyz - pose_est_world_camera[:, :3, 3],
    )
    ray = np.einsum("nij,nj->ni", pose_gt_world_camera[:, :3, :3], rel)
    length = np.linalg.norm(ray, axis=1)
    ok = length > 1e-12
    directions = np.zeros_like(ray)
    directions[ok] = ray[ok] / length[ok, None]
    hits = np.full(n, -1, dtype=np.intp)
    hits[ok] = raycast_hits(surface, pose_gt_world_camera[ok, :3, 3], directions[ok], cfg)
    matched = hits >= 0
    if not matched.any():
        raise MapError(
            f"none of the {n} viewing rays hits the ground-truth map within "
            f"{cfg.max_range_m} m; check poses and frames"
        )
    gt_xyz = _surface_point_on_ray(
        ground_truth,
        surface.point(hits[matched]),
        pose_gt_world_camera[matched, :3, 3],
        directions[matched],
        cfg,
    )
    d = np.asarray(np.linalg.norm(estimate_world_xyz[matched] - gt_xyz, axis=1), dtype=np.float64)
    return AmeResult(
        Association.RAYCAST, d, Statistics.of(d), matched, gt_xyz, int((~matched).sum())
    )
