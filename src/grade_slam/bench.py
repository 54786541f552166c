"""`grade bench slam`: Open3D RGB-D odometry on the same flight through a static world, with
walking people, and with people + flying objects, N seeds each, scored like `grade eval traj`.

Each run is the default indoor scenario (same world and robot path for a given seed: the world
and the robot's tour come from their own seed streams, the actors from others), with a smaller
camera (default 320 x 240 at 30 Hz, so GRADE's 1/30 s tracking gap applies) and no bag. The
backend tracks every recorded frame offline, exactly as `grade slam track` does: this is the
cross-check of the live node without the transport's frame loss. ATE/RPE after SE(3) alignment,
missing time and tracking rate as GRADE defines them.

With `--live`, each backend instead runs as its own slam_node process on sim_node's live
topics, in lockstep so that it keeps every frame (`grade_slam.bench_live`); the camera is
640 x 480 by default there, since ORB-SLAM3 needs it to initialise in our rooms.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from grade_common.rundir import RunLayout
from grade_common.share import shipped_file
from grade_eval.core.evaluate import evaluate_trajectory
from grade_eval.io.run import CameraStream
from grade_eval.io.tum import read_tum
from grade_eval.report import Row, format_table, write_rows
from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.scenarios import default_scenario_path
from grade_sim.sim.run import run_scenario
from grade_slam.bench_worlds import PACINGS, WORLDS, bench_scenario, work_dir
from grade_slam.config import SlamConfig
from grade_slam.offline import track_camera_folder
from grade_slam.trajectory_file import write_trajectory


def run_one(
    base: dict[str, Any], world: str, seed: int, args: argparse.Namespace, work: Path
) -> Row:
    """Simulate, track offline, evaluate: one table row."""
    scenario = scenario_from_mapping(
        bench_scenario(base, world, seed, args.duration_s, (args.width, args.height))
    )
    run_dir = work / f"{world.replace('+', '_')}_seed{seed}"
    start = time.perf_counter()
    run_scenario(scenario, run_dir)
    sim_s = time.perf_counter() - start
    robot = scenario.robots[0].name
    camera = scenario.robots[0].cameras[0].name
    config = SlamConfig(method=args.method)
    start = time.perf_counter()
    tracker = track_camera_folder(RunLayout(run_dir).camera_dir(robot, camera), config)
    slam_s = time.perf_counter() - start
    estimate = work / f"{run_dir.name}_slam.txt"
    write_trajectory(estimate, tracker.trajectory, f"{config.backend} estimate of {run_dir.name}")
    result = evaluate_trajectory(
        CameraStream.open(run_dir, robot, camera).trajectory, read_tum(estimate)
    )
    summary = result.summary()
    return {
        "world": world,
        "seed": float(seed),
        "frames": float(tracker.stats.frames),
        "failures": float(tracker.stats.failures),
        "ate_rmse_m": summary["ate_rmse_m"],
        "rpe_trans_rmse_m": summary["rpe_trans_rmse_m"],
        "rpe_rot_rmse_deg": summary["rpe_rot_rmse_deg"],
        "missing_time_s": summary["missing_time_s"],
        "tracking_rate": summary["tracking_rate"],
        "slam_ms_per_frame": 1000.0 * slam_s / max(1, tracker.stats.frames),
        "sim_s": sim_s,
    }


def _means(rows: list[Row]) -> list[Row]:
    out: list[Row] = []
    for world in WORLDS:
        mine = [r for r in rows if r["world"] == world]
        if not mine:
            continue
        mean: Row = {"world": f"{world} (mean of {len(mine)})"}
        for key in ("ate_rmse_m", "rpe_trans_rmse_m", "rpe_rot_rmse_deg", "tracking_rate"):
            mean[key] = float(np.mean([float(r[key]) for r in mine]))
        out.append(mean)
    return out


def _main_live(args: argparse.Namespace) -> int:
    from grade_slam.bench_live import LIVE_BACKENDS, main_live, plot

    unknown = sorted(set(args.backends) - set(LIVE_BACKENDS))
    if unknown:
        print(f"grade bench slam: --backends {unknown} unknown; allowed {list(LIVE_BACKENDS)}")
        return 2
    base = yaml.safe_load(shipped_file("config/slam_benchmark.yaml").read_text())
    rows = main_live(args, base)
    print(f"pacing: {args.pacing} (frames received of published in each row)")
    print(format_table(rows))
    if args.out is not None:
        print(f"table: {write_rows(args.out, rows)}")
    if args.plot is not None:
        print(f"plot: {plot(rows, args.plot)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The `grade bench slam` argument parser."""
    parser = argparse.ArgumentParser(prog="grade bench slam", description=__doc__)
    parser.add_argument("--seeds", type=int, default=2, help="seeds per world (2)")
    parser.add_argument("--first-seed", type=int, default=42)
    parser.add_argument("--duration-s", type=float, default=20.0, help="simulated seconds (20)")
    parser.add_argument("--width", type=int, help="camera width (320; --live: 640)")
    parser.add_argument("--height", type=int, help="camera height (240; --live: 480)")
    parser.add_argument("--method", default="point_to_plane", help="Open3D odometry method")
    parser.add_argument("--worlds", nargs="*", default=list(WORLDS), choices=list(WORLDS))
    parser.add_argument("--out", type=Path, help="also write the table (.csv or .json)")
    parser.add_argument("--keep", type=Path, help="keep runs and trajectories in this new folder")
    live = parser.add_argument_group(
        "live runs (--live: slam_node processes on sim_node, lockstep or realtime)"
    )
    live.add_argument(
        "--live", action="store_true", help="run each backend live (grade_slam.bench_live)"
    )
    live.add_argument(
        "--backends",
        nargs="*",
        default=["open3d_rgbd", "orb_slam3_rgbd", "orb_slam3_rgbd_masked"],
        help="live backends (open3d_rgbd, orb_slam3_rgbd, orb_slam3_rgbd_masked, "
        "orb_slam3_rgbd_inertial; LiDAR, on a VLP-16 instead of the camera: kiss_icp, genz_icp)",
    )
    live.add_argument(
        "--vocabulary", default="", help="ORB-SLAM3 vocabulary (default: grade slam vocab's)"
    )
    live.add_argument(
        "--pacing",
        choices=list(PACINGS),
        default="lockstep",
        help="lockstep: the simulator waits for each frame's ack (every frame kept); realtime: "
        "wall-clock pace, a slow backend gets fewer frames (frames received says how many)",
    )
    live.add_argument("--timeout-s", type=float, default=120.0, help="lockstep wait per frame")
    live.add_argument("--plot", type=Path, help="--live: also save the ATE plot (.png)")
    return parser


def main(argv: list[str]) -> int:
    """Run `grade bench slam` with argv; print the table; return the exit code."""
    args, _ = build_parser().parse_known_args(argv)
    # ORB-SLAM3 RGB-D needs 640 x 480 to find the 500 features it initialises from in our rooms
    args.width = args.width or (640 if args.live else 320)
    args.height = args.height or (480 if args.live else 240)
    if args.live:
        return _main_live(args)
    base = yaml.safe_load(default_scenario_path().read_text())
    rows: list[Row] = []
    with work_dir(args.keep, "grade_bench_slam_") as work:
        for world in args.worlds:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                row = run_one(base, world, seed, args, work)
                print(f"  {world} seed {seed}: ATE {float(row['ate_rmse_m']):.3f} m", flush=True)
                rows.append(row)
    print(format_table(rows))
    print()
    print(format_table(_means(rows)))
    if args.out is not None:
        print(f"table: {write_rows(args.out, rows)}")
    return 0
