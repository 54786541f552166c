"""Trajectory metrics: known transforms, noise, and equality with evo on the same inputs."""

from __future__ import annotations

import numpy as np
import pytest
from evo.core import metrics as evo_metrics
from evo.core import sync as evo_sync
from evo.core.trajectory import PoseTrajectory3D
from scipy.spatial.transform import Rotation

from conftest import make_trajectory, perturbed
from grade_eval.core.align import AlignConfig, AlignMode, align, umeyama
from grade_eval.core.metrics import (
    DeltaUnit,
    PoseRelation,
    RpeConfig,
    Statistics,
    ape,
    rpe,
)
from grade_eval.core.sync import SyncConfig, associate, matching_time_indices
from grade_eval.core.trajectory import PoseTrajectory, se3_from
from grade_eval.errors import (
    AlignmentError,
    AssociationError,
    EvalConfigError,
    TrajectoryError,
)

EVO_RELATION = {
    PoseRelation.TRANSLATION: evo_metrics.PoseRelation.translation_part,
    PoseRelation.ROTATION_ANGLE_DEG: evo_metrics.PoseRelation.rotation_angle_deg,
    PoseRelation.ROTATION_ANGLE_RAD: evo_metrics.PoseRelation.rotation_angle_rad,
    PoseRelation.ROTATION_PART: evo_metrics.PoseRelation.rotation_part,
    PoseRelation.FULL: evo_metrics.PoseRelation.full_transformation,
}


def to_evo(traj: PoseTrajectory) -> PoseTrajectory3D:
    return PoseTrajectory3D(
        traj.positions_xyz.copy(), traj.orientations_quat_wxyz.copy(), traj.stamps_s.copy()
    )


def evo_stats(metric: evo_metrics.PE) -> dict[str, float]:
    return {k: float(v) for k, v in metric.get_all_statistics().items()}


def moved(
    traj: PoseTrajectory, rotvec: list[float], translation: list[float], scale: float = 1.0
) -> PoseTrajectory:
    rot = Rotation.from_rotvec(rotvec).as_matrix()
    return traj.transformed(se3_from(rot, np.asarray(translation)), scale)


@pytest.mark.parametrize(("mode", "scale"), [(AlignMode.SE3, 1.0), (AlignMode.SIM3, 0.37)])
def test_alignment_recovers_known_transform(
    gt_traj: PoseTrajectory, mode: AlignMode, scale: float
) -> None:
    est = moved(gt_traj, [0.3, -0.2, 1.1], [4.0, -1.0, 2.5], scale)
    aligned, alignment = align(gt_traj, est, AlignConfig(mode))
    # est = s R gt + t  =>  the alignment is its inverse.
    rot = Rotation.from_rotvec([0.3, -0.2, 1.1]).as_matrix()
    np.testing.assert_allclose(alignment.rotation, rot.T, atol=1e-9)
    np.testing.assert_allclose(alignment.scale, 1 / scale, rtol=1e-9)
    np.testing.assert_allclose(aligned.positions_xyz, gt_traj.positions_xyz, atol=1e-9)
    assert ape(gt_traj, aligned).stats.max < 1e-9
    assert ape(gt_traj, aligned, PoseRelation.ROTATION_ANGLE_DEG).stats.max < 1e-6


def test_origin_alignment_maps_first_pose_exactly(gt_traj: PoseTrajectory) -> None:
    est = moved(gt_traj, [0.0, 0.0, 0.8], [1.0, 2.0, 0.0])
    aligned, _ = align(gt_traj, est, AlignConfig(AlignMode.ORIGIN))
    np.testing.assert_allclose(aligned.poses_se3, gt_traj.poses_se3, atol=1e-9)


def test_se3_alignment_leaves_scale_error(gt_traj: PoseTrajectory) -> None:
    est = moved(gt_traj, [0, 0, 0], [0, 0, 0], 2.0)
    aligned, alignment = align(gt_traj, est, AlignConfig(AlignMode.SE3))
    assert alignment.scale == 1.0
    assert ape(gt_traj, aligned).stats.rmse > 0.5


def test_first_n_alignment_uses_only_first_poses(gt_traj: PoseTrajectory) -> None:
    est_pos = gt_traj.positions_xyz.copy()
    est_pos[300:] += [5.0, 0.0, 0.0]  # a jump after the alignment segment
    est = PoseTrajectory(gt_traj.stamps_s, est_pos, gt_traj.orientations_quat_wxyz)
    aligned, _ = align(gt_traj, est, AlignConfig(AlignMode.SE3, first_n=100))
    err = ape(gt_traj, aligned).errors
    assert err[:300].max() < 1e-9
    np.testing.assert_allclose(err[300:], 5.0, atol=1e-9)


def test_position_noise_gives_expected_ate() -> None:
    gt = make_trajectory(20000, 60.0)
    est = perturbed(gt, np.random.default_rng(3), sigma_m=0.05, sigma_rad=0.0)
    result = ape(gt, est)
    # |N(0, s^2 I3)| has E[d^2] = 3 s^2.
    assert result.stats.rmse == pytest.approx(0.05 * np.sqrt(3), rel=0.01)
    assert result.stats.count == 20000


def test_rotation_noise_gives_expected_angle() -> None:
    gt = make_trajectory(20000, 60.0)
    est = perturbed(gt, np.random.default_rng(4), sigma_m=0.0, sigma_rad=0.01)
    result = ape(gt, est, PoseRelation.ROTATION_ANGLE_DEG)
    assert result.stats.rmse == pytest.approx(np.degrees(0.01 * np.sqrt(3)), rel=0.01)


def test_constant_drift_gives_exact_rpe(gt_traj: PoseTrajectory) -> None:
    est_pos = gt_traj.positions_xyz + np.arange(gt_traj.num_poses)[:, None] * [0.001, 0, 0]
    est = PoseTrajectory(gt_traj.stamps_s, est_pos, gt_traj.orientations_quat_wxyz)
    result = rpe(gt_traj, est, PoseRelation.TRANSLATION, RpeConfig(delta=10))
    np.testing.assert_allclose(result.errors, 0.01, atol=1e-12)


@pytest.mark.parametrize("relation", list(PoseRelation))
@pytest.mark.parametrize("mode", [AlignMode.NONE, AlignMode.ORIGIN, AlignMode.SE3, AlignMode.SIM3])
def test_ape_equals_evo(relation: PoseRelation, mode: AlignMode) -> None:
    gt = make_trajectory(400)
    est = moved(
        perturbed(gt, np.random.default_rng(5), 0.05, 0.02), [0.1, 0.2, -0.4], [1, 2, 3], 1.3
    )
    aligned, _ = align(gt, est, AlignConfig(mode))
    ours = ape(gt, aligned, relation)
    ref_e, est_e = to_evo(gt), to_evo(est)
    if mode is AlignMode.ORIGIN:
        est_e.align_origin(ref_e)
    elif mode is not AlignMode.NONE:
        est_e.align(ref_e, correct_scale=mode is AlignMode.SIM3)
    metric = evo_metrics.APE(EVO_RELATION[relation])
    metric.process_data((ref_e, est_e))
    np.testing.assert_allclose(ours.errors, metric.error, rtol=1e-9, atol=1e-9)
    expected = evo_stats(metric)
    got = ours.stats.as_dict()
    for key in ("rmse", "mean", "median", "std", "min", "max", "sse"):
        assert got[key] == pytest.approx(expected[key], rel=1e-9, abs=1e-12), key


@pytest.mark.parametrize("relation", list(PoseRelation))
@pytest.mark.parametrize(
    ("delta", "unit", "all_pairs"),
    [
        (1, DeltaUnit.FRAMES, False),
        (7, DeltaUnit.FRAMES, False),
        (7, DeltaUnit.FRAMES, True),
        (0.5, DeltaUnit.METRES, False),
        (0.5, DeltaUnit.METRES, True),
    ],
)
def test_rpe_equals_evo(
    relation: PoseRelation, delta: float, unit: DeltaUnit, all_pairs: bool
) -> None:
    gt = make_trajectory(300)
    est = perturbed(gt, np.random.default_rng(6), 0.03, 0.02)
    ours = rpe(gt, est, relation, RpeConfig(delta, unit, all_pairs=all_pairs))
    evo_unit = evo_metrics.Unit.frames if unit is DeltaUnit.FRAMES else evo_metrics.Unit.meters
    metric = evo_metrics.RPE(EVO_RELATION[relation], delta, evo_unit, all_pairs=all_pairs)
    metric.process_data((to_evo(gt), to_evo(est)))
    assert ours.errors.shape == metric.error.shape
    np.testing.assert_allclose(ours.errors, metric.error, rtol=1e-9, atol=1e-9)
    assert ours.stats.rmse == pytest.approx(evo_stats(metric)["rmse"], rel=1e-9)


@pytest.mark.parametrize("offset_s", [0.0, 0.013, -0.02])
def test_association_equals_evo(offset_s: float) -> None:
    rng = np.random.default_rng(8)
    gt = make_trajectory(500, 60.0)
    est_stamps = np.sort(rng.uniform(0.5, 7.0, 200))
    est_stamps = est_stamps[np.concatenate([[True], np.diff(est_stamps) > 0.03])]
    n = est_stamps.size
    est = PoseTrajectory(est_stamps, gt.positions_xyz[:n], gt.orientations_quat_wxyz[:n], "est")
    ref_a, est_a = associate(gt, est, SyncConfig(0.008, offset_s))
    ref_e, est_e = evo_sync.associate_trajectories(
        to_evo(gt), to_evo(est), max_diff=0.008, offset_2=offset_s
    )
    np.testing.assert_array_equal(ref_a.stamps_s, ref_e.timestamps)
    np.testing.assert_array_equal(est_a.stamps_s, est_e.timestamps)
    assert ref_a.num_poses > 20


def test_matching_indices_equal_evo_on_random_stamps() -> None:
    rng = np.random.default_rng(9)
    s1 = np.sort(rng.uniform(0, 10, 300))
    s2 = np.sort(rng.uniform(0, 10, 1000))
    ours = matching_time_indices(s1, s2, 0.004, 0.001)
    theirs = evo_sync.matching_time_indices(s1, s2, 0.004, 0.001)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_no_overlapping_time_is_an_error(gt_traj: PoseTrajectory) -> None:
    late = PoseTrajectory(
        gt_traj.stamps_s + 1000.0, gt_traj.positions_xyz, gt_traj.orientations_quat_wxyz, "late"
    )
    with pytest.raises(AssociationError, match=r"no overlapping time: gt \[0\.000000.*late"):
        associate(gt_traj, late)


@pytest.mark.parametrize(
    ("stamps", "match"),
    [
        ([0.0, 0.2, 0.1], r"strictly increasing.*pose 2 has stamp 0\.1"),
        ([0.0, 0.1, 0.1], r"strictly increasing.*pose 2"),
        ([0.0, np.nan, 0.2], r"stamps_s has a non-finite value at pose 1"),
    ],
)
def test_bad_stamps_raise(stamps: list[float], match: str) -> None:
    with pytest.raises(TrajectoryError, match=match):
        PoseTrajectory(np.array(stamps), np.zeros((3, 3)), np.tile([1.0, 0, 0, 0], (3, 1)))


def test_non_unit_quaternion_raises() -> None:
    with pytest.raises(TrajectoryError, match=r"quaternion at pose 1 has norm 2"):
        PoseTrajectory(
            np.array([0.0, 1.0]), np.zeros((2, 3)), np.array([[1.0, 0, 0, 0], [2.0, 0, 0, 0]])
        )


@pytest.mark.parametrize(
    ("points", "match"),
    [
        (np.zeros((2, 3)), r"at least 3 poses, got 2"),
        (np.outer(np.arange(10.0), [1.0, 0, 0]), r"degenerate pose configuration"),
    ],
)
def test_degenerate_alignment_raises(points: np.ndarray, match: str) -> None:
    with pytest.raises(AlignmentError, match=match):
        umeyama(points, points, with_scale=False)


def test_rpe_delta_too_large_raises(gt_traj: PoseTrajectory) -> None:
    with pytest.raises(TrajectoryError, match=r"RPE delta = 1000.*selects no pose pair"):
        rpe(gt_traj, gt_traj, config=RpeConfig(delta=1000))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"delta": 0}, r"delta = 0: must be finite and > 0"),
        ({"delta": 1.5}, r"delta = 1.5: must be an integer"),
        ({"rel_delta_tol": 2.0}, r"rel_delta_tol = 2.0"),
    ],
)
def test_rpe_config_validation(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(EvalConfigError, match=match):
        RpeConfig(**kwargs)  # type: ignore[arg-type]


def test_statistics_refuse_empty_and_nan() -> None:
    with pytest.raises(TrajectoryError, match="empty"):
        Statistics.of(np.array([]))
    with pytest.raises(TrajectoryError, match="NaN"):
        Statistics.of(np.array([1.0, np.nan]))


def test_first_n_alignment_equals_evo() -> None:
    gt = make_trajectory(300)
    est = moved(
        perturbed(gt, np.random.default_rng(13), 0.05, 0.01), [0.2, 0.0, 0.5], [1, 0, 0], 0.8
    )
    ours, _ = align(gt, est, AlignConfig(AlignMode.SIM3, first_n=50))
    theirs = to_evo(est)
    theirs.align(to_evo(gt), correct_scale=True, n=50)
    np.testing.assert_allclose(ours.positions_xyz, theirs.positions_xyz, atol=1e-9)


def test_pose_matched_twice_is_refused() -> None:
    gt = make_trajectory(60, rate_hz=10.0)
    stamps = np.array([0.095, 0.105, 0.3])
    est = PoseTrajectory(stamps, gt.positions_xyz[:3], gt.orientations_quat_wxyz[:3], "est")
    with pytest.raises(AssociationError, match=r"gt: pose 1 \(stamp 0\.100000 s\) matches two"):
        associate(gt, est, SyncConfig(max_diff_s=0.01))


@pytest.mark.parametrize("seed", range(4))
def test_rpe_metres_with_stationary_segments_equals_evo(seed: int) -> None:
    # Standing still makes equal path distances: evo's tie-breaking (first index) must hold.
    rng = np.random.default_rng(seed)
    gt = make_trajectory(200)
    pos = gt.positions_xyz.copy()
    for start in rng.integers(0, 180, 5):
        pos[start : start + 15] = pos[start]
    still = PoseTrajectory(gt.stamps_s, pos, gt.orientations_quat_wxyz)
    est = perturbed(still, rng, 0.01, 0.01)
    for all_pairs in (False, True):
        ours = rpe(
            still,
            est,
            PoseRelation.TRANSLATION,
            RpeConfig(0.3, DeltaUnit.METRES, all_pairs=all_pairs),
        )
        metric = evo_metrics.RPE(
            evo_metrics.PoseRelation.translation_part,
            0.3,
            evo_metrics.Unit.meters,
            all_pairs=all_pairs,
        )
        metric.process_data((to_evo(still), to_evo(est)))
        np.testing.assert_allclose(ours.errors, metric.error, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_matching_with_equidistant_stamps_equals_evo(seed: int) -> None:
    # Stamps on a 5 ms grid put queries exactly between two targets: tie-breaking must match.
    rng = np.random.default_rng(seed)
    s1 = np.unique(rng.integers(0, 400, 150)) * 0.005
    s2 = np.unique(rng.integers(0, 400, 200)) * 0.005 + 0.0025
    ours = matching_time_indices(s1, s2, 0.0025)
    theirs = evo_sync.matching_time_indices(s1, s2, 0.0025)
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
