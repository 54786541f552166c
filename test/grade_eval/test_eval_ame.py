"""Map error: exact and shifted maps, MAOMaps' wall-vs-floor case, bad input."""

from __future__ import annotations

import numpy as np
import pytest

from grade_eval.core.ame import Association, RaycastConfig, ame_nearest, ame_raycast
from grade_eval.core.pointmap import PointMap, voxelise
from grade_eval.errors import EvalConfigError, MapError


def grid(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> np.ndarray:
    xx, yy, zz = np.meshgrid(x, y, z, indexing="ij")
    return np.stack([xx.ravel(), yy.ravel(), zz.ravel()], axis=1)


def floor_and_wall(spacing: float = 0.01) -> np.ndarray:
    """Floor z = 0 over x in [0, 3), y in [-1, 1]; wall x = 3 over y in [-1, 1], z in [0, 2]."""
    floor = grid(np.arange(0.0, 3.0, spacing), np.arange(-1.0, 1.0 + 1e-9, spacing), np.zeros(1))
    wall = grid(
        np.array([3.0]), np.arange(-1.0, 1.0 + 1e-9, spacing), np.arange(0.0, 2.0 + 1e-9, spacing)
    )
    return np.concatenate([floor, wall])


def floor_only() -> PointMap:
    return PointMap(grid(np.arange(-2, 2, 0.02), np.arange(-2, 2, 0.02), np.zeros(1)), None, "gt")


def test_exact_map_has_zero_error() -> None:
    gt = floor_only()
    result = ame_nearest(PointMap(gt.points_xyz.copy()), gt, symmetric=True)
    assert result.stats.rmse == 0.0
    assert result.symmetric_stats is not None
    assert result.symmetric_stats.rmse == 0.0
    assert result.num_unmatched == 0


def test_map_shifted_along_normal_gives_the_shift() -> None:
    gt = floor_only()
    result = ame_nearest(PointMap(gt.points_xyz + np.array([0.0, 0.0, 0.03])), gt)
    assert result.stats.rmse == pytest.approx(0.03, abs=1e-12)
    assert result.stats.mean == pytest.approx(0.03, abs=1e-12)


def test_map_shifted_in_plane_by_half_spacing() -> None:
    gt = floor_only()
    result = ame_nearest(PointMap(gt.points_xyz + np.array([0.01, 0.0, 0.0])), gt)
    assert result.stats.rmse == pytest.approx(0.01, abs=1e-9)


def test_noisy_map_rmse_matches_noise() -> None:
    gt = floor_only()
    rng = np.random.default_rng(11)
    est = PointMap(
        gt.points_xyz
        + np.stack([np.zeros(gt.size), np.zeros(gt.size), rng.normal(0, 0.004, gt.size)], axis=1)
    )
    # Out-of-plane noise far below the grid spacing: the distance is |dz|.
    assert ame_nearest(est, gt).stats.rmse == pytest.approx(0.004, rel=0.03)


def test_nearest_neighbour_limit_counts_unmatched() -> None:
    gt = floor_only()
    pts = np.concatenate([gt.points_xyz[:10], [[0.0, 0.0, 5.0]]])
    result = ame_nearest(PointMap(pts), gt, max_distance_m=1.0)
    assert result.num_unmatched == 1
    assert result.stats.count == 10


@pytest.fixture
def wall_scene() -> PointMap:
    return voxelise(PointMap(floor_and_wall(), None, "gt"), 0.05)


def _camera(position: list[float]) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, 3] = position
    return pose[None]


def test_raycast_wall_point_drifted_to_floor(wall_scene: PointMap) -> None:
    """MAOMaps' case: a wall point, mapped from a drifted pose, lands next to the floor.

    Nearest neighbour pairs it with the floor (small error); ray casting follows the viewing
    ray from the true pose to the wall and reports the real, large error.
    """
    p_est = [-0.5, 0.0, 0.05]  # estimated camera drifted down and back
    p_gt = [0.0, 0.0, 1.0]
    m_star = np.array([[2.5, 0.0, 0.05]])  # the wall point 3 m ahead, as the estimate maps it
    est = PointMap(m_star)
    nn = ame_nearest(est, wall_scene)
    rc = ame_raycast(m_star, m_star, _camera(p_est), _camera(p_gt), wall_scene)
    np.testing.assert_allclose(nn.matched_gt_xyz[0], [2.5, 0.0, 0.0], atol=1e-9)  # the floor
    assert nn.stats.rmse == pytest.approx(0.05, abs=1e-9)
    assert rc.association is Association.RAYCAST
    np.testing.assert_allclose(rc.matched_gt_xyz[0], [3.0, 0.0, 1.0], atol=1e-9)  # the wall
    assert rc.stats.rmse == pytest.approx(np.hypot(0.5, 0.95), abs=1e-9)
    assert rc.stats.rmse > 10 * nn.stats.rmse


def test_raycast_rotation_transfers_the_ray(wall_scene: PointMap) -> None:
    # The estimated camera is yawed by 90 deg: the observation along its +y is +x of the truth.
    est_pose = np.eye(4)
    est_pose[:3, :3] = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]
    est_pose[:3, 3] = [0.0, 0.0, 1.0]
    obs = np.array([[0.0, 3.0, 1.0]])  # 3 m along the estimated camera's x axis (world +y)
    rc = ame_raycast(
        np.array([[3.0, 0.0, 1.0]]), obs, est_pose[None], _camera([0, 0, 1]), wall_scene
    )
    np.testing.assert_allclose(rc.matched_gt_xyz[0], [3.0, 0.0, 1.0], atol=1e-9)
    assert rc.stats.rmse == pytest.approx(0.0, abs=1e-9)


def test_raycast_exact_map_and_unmatched_rays(wall_scene: PointMap) -> None:
    rng = np.random.default_rng(12)
    pts = wall_scene.points_xyz[rng.choice(wall_scene.size, 300, replace=False)]
    pts = pts[np.linalg.norm(pts - [0.2, 0.0, 1.5], axis=1) > 0.3]
    away = np.array([[-3.0, 0.0, 1.5]])  # behind the camera: the ray leaves the scene
    all_pts = np.concatenate([pts, away])
    cams = np.repeat(_camera([0.2, 0.0, 1.5]), all_pts.shape[0], axis=0)
    rc = ame_raycast(all_pts, all_pts, cams, cams, wall_scene)
    assert rc.num_unmatched == 1
    assert not rc.matched_mask[-1]
    assert rc.stats.count == pts.shape[0]
    assert rc.stats.rmse < 1e-9


@pytest.mark.parametrize("which", ["estimate", "ground_truth"])
def test_empty_maps_raise(which: str) -> None:
    gt = floor_only()
    empty = PointMap(np.zeros((0, 3)), None, "empty")
    est, ref = (empty, gt) if which == "estimate" else (gt, empty)
    with pytest.raises(MapError, match=r"empty: the map is empty \(0 points\)"):
        ame_nearest(est, ref)


def test_raycast_rejects_empty_and_misshaped_input(wall_scene: PointMap) -> None:
    with pytest.raises(MapError, match="estimated map is empty"):
        ame_raycast(
            np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 4, 4)), np.zeros((0, 4, 4)), wall_scene
        )
    with pytest.raises(MapError, match=r"pose_gt_world_camera has shape \(2, 4, 4\)"):
        ame_raycast(
            np.zeros((1, 3)),
            np.zeros((1, 3)),
            _camera([0, 0, 1]),
            np.repeat(_camera([0, 0, 1]), 2, axis=0),
            wall_scene,
        )


def test_non_finite_points_raise() -> None:
    with pytest.raises(MapError, match="NaN or inf"):
        PointMap(np.array([[0.0, np.nan, 0.0]]))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"voxel_size_m": 0.0}, r"voxel_size_m = 0.0: allowed"),
        ({"step_fraction": 0.9}, r"step_fraction = 0.9"),
        ({"min_range_m": 5.0, "max_range_m": 1.0}, r"min_range_m = 5.0"),
    ],
)
def test_raycast_config_validation(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(EvalConfigError, match=match):
        RaycastConfig(**kwargs)  # type: ignore[arg-type]
