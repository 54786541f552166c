"""`grade eval traj|map|gtmap|overlap|batch`: SLAM trajectory and map evaluation."""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from tqdm import tqdm

from grade_common.cli_args import add_choice, command_parser
from grade_common.output_guard import check_output
from grade_common.rundir import RunLayout
from grade_common.textfile import read_yaml
from grade_eval.core.align import AlignConfig, AlignMode, align
from grade_eval.core.ame import AmeResult, RaycastConfig, ame_nearest, ame_raycast
from grade_eval.core.evaluate import TrajectoryEval, TrajectoryEvalConfig, evaluate_trajectory
from grade_eval.core.gtmap import GtMapConfig, build_gt_map
from grade_eval.core.metrics import DeltaUnit, RpeConfig
from grade_eval.core.overlap import PairSpec, ground_cells, overlap_iou, select_pairs
from grade_eval.core.pointmap import PointMap
from grade_eval.core.sync import SyncConfig, associate, matching_time_indices
from grade_eval.core.tracking import GAP_THRESHOLD_S, TrackingConfig
from grade_eval.core.trajectory import PoseTrajectory
from grade_eval.errors import EvalConfigError, EvalOutputExistsError, FormatError, MapError
from grade_eval.io.pointcloud import read_map, write_map
from grade_eval.io.run import (
    CameraStream,
    dynamic_instance_ids,
    list_cameras,
    list_robots,
    read_robot_trajectory,
)
from grade_eval.io.tum import read_tum
from grade_eval.report import Row, format_table, write_rows


def load_trajectory(
    source: str | Path,
    topic: str | None = None,
    child_frame: str | None = None,
    robot: str | None = None,
    camera: str | None = None,
) -> PoseTrajectory:
    """A TUM file, a run directory (robot base_link, or a camera's optical frame), or a bag."""
    path = Path(source)
    if path.is_dir() and RunLayout(path).gt.is_dir():
        if camera:
            return CameraStream.open(path, robot, camera).trajectory
        return read_robot_trajectory(path, robot)
    if path.is_dir() and (path / "metadata.yaml").is_file():
        from grade_eval.io.bag import read_bag_trajectory

        if not topic:
            raise FormatError(f"{path}: a bag; give the topic to read (--*-topic)")
        return read_bag_trajectory(path, topic, child_frame)
    return read_tum(path)


def _window_cap(text: str) -> float | None:
    return None if text.lower() == "none" else float(text)


def _add_traj_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-diff", type=float, default=0.01, help="association max |dt| [s]")
    p.add_argument("--offset", type=float, default=0.0, help="added to estimate stamps [s]")
    add_choice(
        p,
        "--align",
        AlignMode,
        AlignMode.SE3,
        help="how the estimate is aligned to the reference before scoring",
    )
    p.add_argument("--n-align", type=int, default=None, help="align on the first n poses only")
    p.add_argument("--delta", type=float, default=1.0, help="RPE delta")
    add_choice(
        p, "--delta-unit", DeltaUnit, DeltaUnit.FRAMES, help="f (frames) or m (metres travelled)"
    )
    p.add_argument("--all-pairs", action="store_true", help="RPE over all pairs (evo -a)")
    p.add_argument(
        "--window-start",
        type=_window_cap,
        default=0.0,
        help="tracking window lower cap [s] or 'none' (GRADE: 0)",
    )
    p.add_argument(
        "--window-end",
        type=_window_cap,
        default=60.0,
        help="tracking window upper cap [s] or 'none' (GRADE: 60)",
    )
    p.add_argument(
        "--gap-threshold",
        type=float,
        default=GAP_THRESHOLD_S,
        help="gaps longer than this are lost track [s] (GRADE: 1/30 + 1e-5, for 30 Hz input)",
    )


def _traj_config(args: argparse.Namespace) -> TrajectoryEvalConfig:
    return TrajectoryEvalConfig(
        sync=SyncConfig(args.max_diff, args.offset),
        align=AlignConfig(AlignMode(args.align), args.n_align),
        rpe=RpeConfig(args.delta, DeltaUnit(args.delta_unit), all_pairs=args.all_pairs),
        tracking=TrackingConfig(args.window_start, args.window_end, args.gap_threshold),
    )


def _row(sequence: str, method: str, result: TrajectoryEval) -> Row:
    row: Row = {"sequence": sequence, "method": method}
    row.update(result.summary())
    return row


def _cmd_traj(args: argparse.Namespace) -> int:
    ref = load_trajectory(args.ref, args.ref_topic, args.ref_frame, args.robot, args.camera)
    est = load_trajectory(args.est, args.est_topic, args.est_frame)
    result = evaluate_trajectory(ref, est, _traj_config(args))
    row = _row(args.sequence or Path(args.ref).stem, args.method or Path(args.est).stem, result)
    print(format_table([row]))
    if args.out:
        write_rows(args.out, [row])
    if args.plot_dir:
        from grade_eval import plots

        d = Path(args.plot_dir)
        d.mkdir(parents=True, exist_ok=True)
        plots.plot_trajectory_top(result, d / "trajectory_top.png", str(row["method"]))
        plots.plot_error_over_time(result, d / "error_over_time.png", str(row["method"]))
    return 0


def _points_in_gt_frame(est_map: PointMap, args: argparse.Namespace) -> PointMap:
    if not args.est_traj:
        return est_map
    if not args.gt_traj:
        raise EvalConfigError("--est-traj needs --gt-traj to align the estimated map")
    ref = load_trajectory(args.gt_traj)
    est = load_trajectory(args.est_traj)
    r, e = associate(ref, est, SyncConfig(args.max_diff))
    _, alignment = align(r, e, AlignConfig(AlignMode(args.align)))
    return est_map.transformed(alignment.transform_se3, alignment.scale)


def _raycast(est_map_gt: PointMap, gt_map: PointMap, args: argparse.Namespace) -> AmeResult:
    if not (args.observations and args.est_traj and args.gt_traj):
        raise EvalConfigError(
            "raycast association needs --observations, --est-traj and "
            "--gt-traj (camera trajectories)"
        )
    with np.load(args.observations) as obs:
        pts = np.asarray(obs["points_xyz"], dtype=np.float64)
        stamps = np.asarray(obs["stamps_s"], dtype=np.float64)
    if pts.shape[0] != est_map_gt.size:
        raise MapError(
            f"{args.observations}: {pts.shape[0]} observations but the estimated map "
            f"has {est_map_gt.size} points; they must correspond one to one"
        )
    est_tr = load_trajectory(args.est_traj)
    gt_tr = load_trajectory(args.gt_traj)
    poses = []
    for traj in (est_tr, gt_tr):
        order = np.argsort(stamps, kind="stable")
        ids_p, ids_t = matching_time_indices(stamps[order], traj.stamps_s, args.max_diff)
        if ids_p.size != stamps.size:
            raise MapError(
                f"{traj.name}: {stamps.size - ids_p.size} observation stamps have no "
                f"pose within {args.max_diff} s"
            )
        se3 = np.empty((stamps.size, 4, 4))
        se3[order[ids_p]] = traj.poses_se3[ids_t]
        poses.append(se3)
    return ame_raycast(
        est_map_gt.points_xyz,
        pts,
        poses[0],
        poses[1],
        gt_map,
        RaycastConfig(voxel_size_m=args.voxel),
    )


def _cmd_map(args: argparse.Namespace) -> int:
    est_map = _points_in_gt_frame(read_map(args.est), args)
    gt_map = read_map(args.gt)
    rows: list[Row] = []
    results: list[AmeResult] = []
    if args.association in ("nn", "both"):
        results.append(ame_nearest(est_map, gt_map, args.symmetric, args.max_dist))
    if args.association in ("raycast", "both"):
        results.append(_raycast(est_map, gt_map, args))
    for res in results:
        row: Row = {
            "sequence": args.sequence or Path(args.gt).stem,
            "method": args.method or Path(args.est).stem,
            "association": res.association.value,
            "ame_rmse_m": res.stats.rmse,
            "ame_mean_m": res.stats.mean,
            "ame_median_m": res.stats.median,
            "matched": float(res.stats.count),
            "unmatched": float(res.num_unmatched),
        }
        if res.symmetric_stats is not None:
            row["ame_gt_to_est_rmse_m"] = res.symmetric_stats.rmse
            row["ame_gt_to_est_mean_m"] = res.symmetric_stats.mean
        rows.append(row)
    print(format_table(rows))
    if args.out:
        write_rows(args.out, rows)
    if args.plot_dir:
        from grade_eval import plots

        d = Path(args.plot_dir)
        d.mkdir(parents=True, exist_ok=True)
        for res in results:
            plots.plot_map_error(est_map, res, d / f"map_error_{res.association.value}.png")
    return 0


def _cmd_gtmap(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if out.exists():
        raise EvalConfigError(f"--out {out}: exists already; choose a new path")
    dynamic = (
        dynamic_instance_ids(args.run, tuple(args.dynamic_classes.split(",")))
        if args.remove_dynamic
        else frozenset()
    )
    cfg = GtMapConfig(
        voxel_size_m=args.voxel,
        min_range_m=args.min_range,
        max_range_m=args.max_range,
        dynamic_ids=dynamic,
        pixel_stride=args.stride,
        with_colors=not args.no_color and not args.lidar,
    )
    if args.lidar:
        from grade_eval import gtmap_lidar

        return gtmap_lidar.run(args, out, cfg)
    robots = [args.robot] if args.robot else list_robots(args.run)
    streams = [
        CameraStream.open(args.run, robot, camera)
        for robot in robots
        for camera in ([args.camera] if args.camera else list_cameras(args.run, robot))
    ]
    if not streams:
        raise FormatError(f"{args.run}: no camera with groundtruth.txt under gt/<robot>/")
    num_frames = sum(len(s.depth) for s in streams)
    frames = tqdm(
        itertools.chain.from_iterable(
            s.frames(with_rgb=not args.no_color, with_instances=args.remove_dynamic)
            for s in streams
        ),
        total=num_frames,
        desc="gt map",
        unit="frame",
        file=sys.stderr,
    )
    gt_map = build_gt_map(frames, cfg, name=Path(args.run).name)
    write_map(out, gt_map)
    print(
        f"{out}: {gt_map.size} voxels of {args.voxel} m from {num_frames} frames of "
        f"{len(streams)} camera(s)"
        + (f", removed instance ids {sorted(dynamic)}" if dynamic else "")
    )
    return 0


def _parse_map_entry(entry: str) -> tuple[str, str, Path]:
    world, _, path = entry.rpartition("=")
    p = Path(path)
    return (world or "default"), p.stem if p.suffix else p.name, p


def _cmd_overlap(args: argparse.Namespace) -> int:
    if args.pairs is None:
        if len(args.maps) != 2:
            raise EvalConfigError(f"give two maps (got {len(args.maps)}) or use --pairs")
        a, b = (read_map(_parse_map_entry(m)[2]) for m in args.maps)
        print(f"ground-plane IoU: {overlap_iou(a, b, args.cell):.6f}")
        return 0
    cells, worlds = {}, {}
    for entry in tqdm(args.maps, desc="maps", file=sys.stderr):
        world, name, path = _parse_map_entry(entry)
        if name in cells:
            raise EvalConfigError(f"map name {name!r} appears twice; names must be unique")
        cells[name] = ground_cells(read_map(path), args.cell)
        worlds[name] = world
    lo, hi = args.pairs
    pairs = select_pairs(
        cells, worlds, PairSpec(lo, hi, args.max_pairs), np.random.default_rng(args.seed)
    )
    rows: list[Row] = [
        {"run_a": p.run_a, "run_b": p.run_b, "world": p.world, "iou": p.iou} for p in pairs
    ]
    print(format_table(rows) if rows else f"no pair with IoU in [{lo}, {hi}]")
    if args.out:
        write_rows(args.out, rows)
    return 0


def _cmd_batch(args: argparse.Namespace) -> int:
    spec_path = Path(args.spec)
    entries = read_yaml(spec_path, "batch spec", error=FormatError)
    if not isinstance(entries, list) or not entries:
        raise FormatError(
            f"{spec_path}: expected a non-empty list of entries with sequence, "
            "method, reference, estimate"
        )
    cfg = _traj_config(args)
    rows: list[Row] = []
    for number, entry in enumerate(tqdm(entries, desc="runs", file=sys.stderr), start=1):
        try:
            ref = load_trajectory(
                entry["reference"],
                entry.get("reference_topic"),
                entry.get("reference_frame"),
                entry.get("robot"),
                entry.get("camera"),
            )
            est = load_trajectory(
                entry["estimate"], entry.get("estimate_topic"), entry.get("estimate_frame")
            )
            seq, method = str(entry["sequence"]), str(entry["method"])
        except (KeyError, TypeError) as err:
            raise FormatError(f"{spec_path}: entry {number}: missing field {err}") from err
        row = _row(seq, method, evaluate_trajectory(ref, est, cfg))
        if "estimate_map" in entry and "gt_map" in entry:
            res = ame_nearest(read_map(entry["estimate_map"]), read_map(entry["gt_map"]))
            row.update(
                {
                    "ame_nn_rmse_m": res.stats.rmse,
                    "ame_nn_mean_m": res.stats.mean,
                    "ame_unmatched": float(res.num_unmatched),
                }
            )
        rows.append(row)
    print(format_table(rows))
    if args.out:
        write_rows(args.out, rows)
    return 0


def _cmd_kiss_icp(args: argparse.Namespace) -> int:
    from grade_eval.io.tum import write_tum
    from grade_eval.kiss_icp import kiss_icp_trajectory

    est = kiss_icp_trajectory(args.folder, args.max_range_m, args.min_range_m)
    write_tum(args.out, est)
    print(f"KISS-ICP: {len(est.stamps_s)} scans -> {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The `grade eval` argument parser."""
    parser = command_parser("grade eval", __doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("traj", help="ATE, RPE, missing time and tracking rate of one estimate")
    p.add_argument("--ref", required=True, help="TUM file, run directory or bag directory")
    p.add_argument("--est", required=True, help="TUM file or bag directory")
    p.add_argument(
        "--ref-topic", help="pose topic when --ref is a bag (PoseStamped, Odometry or /tf)"
    )
    p.add_argument(
        "--est-topic", help="pose topic when --est is a bag (PoseStamped, Odometry or /tf)"
    )
    p.add_argument("--ref-frame", help="child frame when --ref-topic is TF")
    p.add_argument("--est-frame", help="child frame when --est-topic is TF")
    p.add_argument("--robot", help="robot of the run directory (if several)")
    p.add_argument("--camera", help="use this camera's optical-frame ground truth")
    p.add_argument("--sequence", help="the row's sequence name (default: --ref's name)")
    p.add_argument("--method", help="the row's method name (default: --est's name)")
    _add_traj_options(p)
    p.add_argument("--out", help="write the row to .csv or .json")
    p.add_argument("--plot-dir", help="write trajectory and error plots here")
    p.set_defaults(func=_cmd_traj)

    p = sub.add_parser("kiss-icp", help="KISS-ICP lidar odometry on a KITTI scan folder -> TUM")
    p.add_argument("folder", help="gt/<robot>/<lidar> of a run, or a bag export --points folder")
    p.add_argument("--out", required=True, help="TUM trajectory to write (new path)")
    p.add_argument(
        "--max-range-m", type=float, default=100.0, help="points farther are dropped [m]"
    )
    p.add_argument("--min-range-m", type=float, default=0.0, help="points nearer are dropped [m]")
    p.set_defaults(func=_cmd_kiss_icp)

    p = sub.add_parser("map", help="map error (AME) of an estimated map")
    p.add_argument("--est", required=True, help="estimated map .ply/.pcd/.npy")
    p.add_argument("--gt", required=True, help="ground-truth map .ply/.pcd/.npy")
    p.add_argument(
        "--association",
        choices=["nn", "raycast", "both"],
        default="nn",
        help="match estimated points to the nearest true point, or along the camera ray",
    )
    p.add_argument("--est-traj", help="estimated camera trajectory (aligns the map, raycast)")
    p.add_argument("--gt-traj", help="true camera trajectory (TUM or run)")
    p.add_argument(
        "--observations",
        help=".npz with points_xyz (estimate frame) and stamps_s "
        "per estimated point, one to one with --est (raycast)",
    )
    add_choice(
        p,
        "--align",
        AlignMode,
        AlignMode.SE3,
        help="how --est-traj is aligned to --gt-traj (the map moves with it)",
    )
    p.add_argument(
        "--max-diff", type=float, default=0.01, help="trajectory association max |dt| [s]"
    )
    p.add_argument("--max-dist", type=float, default=np.inf, help="NN match limit [m]")
    p.add_argument("--symmetric", action="store_true", help="also GT -> estimate")
    p.add_argument("--voxel", type=float, default=0.05, help="raycast surface voxel [m]")
    p.add_argument("--sequence", help="the row's sequence name (default: --gt's name)")
    p.add_argument("--method", help="the row's method name (default: --est's name)")
    p.add_argument("--out", help="write the rows to .csv or .json")
    p.add_argument("--plot-dir", help="write the error plots here")
    p.set_defaults(func=_cmd_map)

    p = sub.add_parser("gtmap", help="ground-truth voxel map of a run (PLY/PCD)")
    p.add_argument("run", help="run directory")
    p.add_argument("--out", required=True, help=".ply or .pcd (must not exist)")
    p.add_argument("--robot", help="only this robot (default: all)")
    p.add_argument("--camera", help="only this camera (default: all)")
    p.add_argument("--voxel", type=float, default=0.05, help="voxel size [m]")
    p.add_argument("--min-range", type=float, default=0.01, help="nearer depth is left out [m]")
    p.add_argument("--max-range", type=float, default=10.0, help="farther depth is left out [m]")
    p.add_argument("--stride", type=int, default=1, help="use every n-th pixel")
    p.add_argument(
        "--remove-dynamic",
        action="store_true",
        help="drop pixels of moving actors (instance masks + gt/instances.yaml)",
    )
    p.add_argument(
        "--dynamic-classes",
        default="person,human,flying_*,robot_*",
        help="comma-separated instance classes (shell patterns) that move; default: "
        "people, flying objects and robots",
    )
    p.add_argument("--no-color", action="store_true", help="no RGB colours in the map")
    p.add_argument(
        "--lidar",
        metavar="ROBOT/LIDAR",
        help="build the map from this lidar's scans (gt/ROBOT/LIDAR) instead of the cameras",
    )
    p.add_argument(
        "--no-deskew",
        action="store_true",
        help="--lidar: put every point of a scan through the pose at the scan stamp",
    )
    p.add_argument("--reference", help="--lidar: score the map against this map (.ply/.pcd)")
    p.set_defaults(func=_cmd_gtmap)

    p = sub.add_parser("overlap", help="ground-plane IoU of two maps, or pick run pairs")
    p.add_argument("maps", nargs="+", help="maps as PATH or WORLD=PATH")
    p.add_argument("--cell", type=float, default=0.05, help="ground cell size [m]")
    p.add_argument(
        "--pairs",
        type=float,
        nargs=2,
        metavar=("MIN_IOU", "MAX_IOU"),
        help="list pairs of the same world with IoU in this range",
    )
    p.add_argument("--max-pairs", type=int, help="--pairs: at most this many, drawn at random")
    p.add_argument("--seed", type=int, default=0, help="seed of that draw")
    p.add_argument("--out", help="write the rows to .csv or .json")
    p.set_defaults(func=_cmd_overlap)

    p = sub.add_parser("batch", help="evaluate many runs from a YAML list -> CSV/JSON")
    p.add_argument(
        "spec",
        help="YAML list of {sequence, method, reference, estimate, "
        "[reference_topic, estimate_topic, robot, camera, estimate_map, gt_map]}",
    )
    _add_traj_options(p)
    p.add_argument("--out", help=".csv or .json")
    p.set_defaults(func=_cmd_batch)
    return parser


# Arguments naming files or folders a command reads; `maps` may be WORLD=PATH.
_INPUT_ARGS = ("ref", "est", "gt", "est_traj", "gt_traj", "observations", "run", "spec", "maps")


def _check_outputs(args: argparse.Namespace) -> None:
    """Refuse bad output paths before any work (grade_common.output_guard): an existing --out,
    one that is, holds or sits in an input, or cannot be created; --plot-dir may exist."""
    inputs: list[Path] = []
    for name in _INPUT_ARGS:
        value = getattr(args, name, None)
        for item in value if isinstance(value, list) else [value]:
            if item:
                inputs.append(_parse_map_entry(item)[2] if name == "maps" else Path(item))
    if getattr(args, "out", None):
        check_output(args.out, inputs=inputs, exists_error=EvalOutputExistsError)
    if getattr(args, "plot_dir", None):
        check_output(args.plot_dir, inputs=inputs, existing_folder_ok=True)


def run(args: argparse.Namespace) -> int:
    """Run the parsed `grade eval` command (each sub-parser sets its handler as `func`)."""
    _check_outputs(args)
    code: int = args.func(args)
    return code


def main(argv: Sequence[str]) -> int:
    """Entry point of `grade eval`."""
    return run(build_parser().parse_args(list(argv)))
