"""`grade bench eval`: ATE+RPE on a 100k-pose trajectory, AME on a 1M-point map.

The trajectory numbers and time are compared with evo on the same input when evo is installed
(evo is a reference for this benchmark only; grade_eval never imports it otherwise).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.spatial.transform import Rotation

from grade_common.bench_results import Cell, ResultTable, add_json_argument, write_results
from grade_common.cli_args import bench_parser, parse_bench_args
from grade_eval.core.align import align
from grade_eval.core.ame import RaycastConfig, ame_nearest, ame_raycast
from grade_eval.core.evaluate import TrajectoryEvalConfig, evaluate_trajectory
from grade_eval.core.metrics import PoseRelation, ape, rpe
from grade_eval.core.pointmap import PointMap
from grade_eval.core.sync import associate
from grade_eval.core.tracking import TrackingConfig
from grade_eval.core.trajectory import PoseTrajectory


def synthetic_pair(
    num_poses: int,
    rng: np.random.Generator,
) -> tuple[PoseTrajectory, PoseTrajectory]:
    """A smooth 60 Hz ground truth and a noisy, rigidly moved estimate at slightly offset stamps."""
    t = np.arange(num_poses) / 60.0
    pos = np.stack([3 * np.sin(0.05 * t), 2 * np.cos(0.03 * t), 0.1 * np.sin(0.2 * t)], axis=1)
    rot = Rotation.from_euler(
        "zyx", np.stack([0.05 * t, 0.1 * np.sin(0.1 * t), 0.05 * np.cos(0.2 * t)], axis=1)
    )
    q = rot.as_quat()[:, [3, 0, 1, 2]]
    gt = PoseTrajectory(t, pos, q, "gt")
    noise = Rotation.from_rotvec(rng.normal(0, 0.01, (num_poses, 3)))
    offset = Rotation.from_euler("z", 0.3)
    est_rot = offset * rot * noise
    est_pos = offset.apply(pos + rng.normal(0, 0.02, pos.shape)) + np.array([1.0, -2.0, 0.5])
    est = PoseTrajectory(
        t + rng.uniform(-0.002, 0.002, num_poses),
        est_pos,
        est_rot.as_quat()[:, [3, 0, 1, 2]],
        "est",
    )
    return gt, est


def _evo(gt: PoseTrajectory, est: PoseTrajectory) -> tuple[dict[str, float], float] | None:
    try:
        from evo.core import metrics as evo_metrics  # type: ignore[import-untyped]
        from evo.core import sync as evo_sync  # type: ignore[import-untyped]
        from evo.core.trajectory import PoseTrajectory3D  # type: ignore[import-untyped]
    except ImportError:
        return None
    t0 = time.perf_counter()
    ref = PoseTrajectory3D(gt.positions_xyz, gt.orientations_quat_wxyz, gt.stamps_s)
    e = PoseTrajectory3D(est.positions_xyz, est.orientations_quat_wxyz, est.stamps_s)
    ref, e = evo_sync.associate_trajectories(ref, e, max_diff=0.01)
    e.align(ref)
    out = {}
    for key, metric in (
        ("ate_rmse_m", evo_metrics.APE(evo_metrics.PoseRelation.translation_part)),
        ("rpe_trans_rmse_m", evo_metrics.RPE(evo_metrics.PoseRelation.translation_part)),
        ("rpe_rot_rmse_deg", evo_metrics.RPE(evo_metrics.PoseRelation.rotation_angle_deg)),
    ):
        metric.process_data((ref, e))
        out[key] = float(metric.get_statistic(evo_metrics.StatisticsType.rmse))
    return out, time.perf_counter() - t0


def main(argv: list[str]) -> int:
    """Run the benchmark and print the measurements."""
    parser = bench_parser("eval", __doc__)
    parser.add_argument("--poses", type=int, default=100_000, help="poses per trajectory")
    parser.add_argument("--points", type=int, default=1_000_000, help="points per map")
    parser.add_argument("--rays", type=int, default=100_000, help="rays of the ray-cast AME")
    parser.add_argument("--no-evo", action="store_true", help="skip the evo comparison")
    add_json_argument(parser)
    args = parse_bench_args(parser, argv)
    rng = np.random.default_rng(7)
    gt, est = synthetic_pair(args.poses, rng)

    t0 = time.perf_counter()
    ref_a, est_a = associate(gt, est)
    est_al, _ = align(ref_a, est_a)
    ours = {
        "ate_rmse_m": ape(ref_a, est_al).stats.rmse,
        "rpe_trans_rmse_m": rpe(ref_a, est_al).stats.rmse,
        "rpe_rot_rmse_deg": rpe(ref_a, est_al, PoseRelation.ROTATION_ANGLE_DEG).stats.rmse,
    }
    ours_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    full = evaluate_trajectory(
        gt, est, TrajectoryEvalConfig(tracking=TrackingConfig(window_end_max_s=None))
    )
    full_s = time.perf_counter() - t0
    print(f"trajectory: {args.poses} poses, {full.ate.stats.count} associated")
    print(f"  grade_eval ATE+RPE(trans, rot): {ours_s:.3f} s  {ours}")
    print(
        f"  grade_eval full evaluation (ATE trans+rot, RPE trans+rot, tracking): {full_s:.3f} s"
        f"; tracking rate {full.tracking.tracking_rate:.4f}"
    )
    rows: list[tuple[Cell, ...]] = [
        ("grade_eval ATE + RPE (trans, rot)", args.poses, round(ours_s, 3)),
        ("grade_eval full evaluation (with tracking)", args.poses, round(full_s, 3)),
    ]
    notes = ""
    if not args.no_evo:
        evo = _evo(gt, est)
        if evo is None:
            print("  evo not installed: no comparison")
        else:
            evo_vals, evo_s = evo
            diff = max(abs(evo_vals[k] - ours[k]) for k in ours)
            print(f"  evo 1.x same steps: {evo_s:.3f} s  {evo_vals}")
            print(
                f"  max |difference| {diff:.3e}; speed ratio evo / grade_eval {evo_s / ours_s:.1f}x"
            )
            rows.append(("evo, the same steps", args.poses, round(evo_s, 3)))
            notes = f"Largest difference between evo's and grade_eval's values: {diff:.3e}."

    side = int(np.sqrt(args.points / 6) + 0.5)
    u = (np.arange(side) + 0.5) / side * 10.0
    uu, vv = np.meshgrid(u, u)
    faces = []
    for axis in range(3):
        for value in (0.0, 10.0):
            f = np.zeros((uu.size, 3))
            others = [a for a in range(3) if a != axis]
            f[:, others[0]] = uu.ravel()
            f[:, others[1]] = vv.ravel()
            f[:, axis] = value
            faces.append(f)
    gt_pts = np.concatenate(faces)
    gt_map = PointMap(gt_pts, None, "room")
    est_map = PointMap(gt_pts + rng.normal(0, 0.02, gt_pts.shape), None, "est")
    t0 = time.perf_counter()
    nn = ame_nearest(est_map, gt_map)
    nn_s = time.perf_counter() - t0
    print(f"map: {gt_map.size} GT points, {est_map.size} estimated points")
    print(
        f"  AME nearest neighbour: {nn_s:.3f} s  rmse {nn.stats.rmse:.4f} m "
        f"(noise sigma 0.02 m per axis)"
    )

    n = min(args.rays, est_map.size)
    pick = rng.choice(est_map.size, n, replace=False)
    cams = np.tile(np.eye(4), (n, 1, 1))
    cams[:, :3, 3] = [5.0, 5.0, 5.0]
    t0 = time.perf_counter()
    rc = ame_raycast(
        est_map.points_xyz[pick],
        est_map.points_xyz[pick],
        cams,
        cams,
        gt_map,
        RaycastConfig(voxel_size_m=0.05),
    )
    rc_s = time.perf_counter() - t0
    print(
        f"  AME ray-cast: {n} rays in {rc_s:.3f} s  rmse {rc.stats.rmse:.4f} m, "
        f"unmatched {rc.num_unmatched}"
    )
    rows += [
        ("AME nearest neighbour", gt_map.size, round(nn_s, 3)),
        ("AME ray-cast", n, round(rc_s, 3)),
    ]
    table = ResultTable(
        "Wall time per evaluation", ("evaluation", "poses / points / rays", "s"), tuple(rows)
    )
    write_results(args.json, "eval", argv, [table], notes)
    return 0
