"""`grade bench slam`: RGB-D backends (Open3D odometry by default) on the same flight through a
static world, with walking people, and with people + flying objects, N seeds each, scored like
`grade eval traj`.

Each run is the default indoor scenario (same world and robot path for a given seed: the world
and the robot's tour come from their own seed streams, the actors from others), with a smaller
camera (default 320 x 240 at 30 Hz, so GRADE's 1/30 s tracking gap applies) and no bag. Each
backend tracks every recorded frame offline, exactly as `grade slam track` does: this is the
cross-check of the live node without the transport's frame loss. ATE/RPE after SE(3) alignment,
missing time and tracking rate as GRADE defines them. With `--repeats N` every backend tracks
each recorded run N times (ORB-SLAM3's threads make runs differ), and the summary gives the
median and the range (min-max) per backend, world and seed, and per backend and world
(`grade_slam.bench_summary`).

With `--live`, each backend instead runs as its own slam_node process on sim_node's live
topics, in lockstep so that it keeps every frame (`grade_slam.bench_live`); the camera is
640 x 480 by default there, since ORB-SLAM3 needs it to initialise in our rooms.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

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
from grade_slam import grade_table
from grade_slam.bench_summary import spread
from grade_slam.bench_worlds import PACINGS, WORLDS, bench_scenario, work_dir
from grade_slam.config import SlamConfig
from grade_slam.offline import track_camera_folder
from grade_slam.trajectory_file import write_trajectory

# the backends the offline benchmark runs (the --live names; the inertial one needs a bag)
OFFLINE_BACKENDS: dict[str, dict[str, Any]] = {
    "open3d_rgbd": {"backend": "open3d_rgbd"},
    "orb_slam3_rgbd": {"backend": "orb_slam3_rgbd"},
    "orb_slam3_rgbd_masked": {"backend": "orb_slam3_rgbd", "mask_dynamic": True},
}


def run_one(
    base: dict[str, Any], world: str, seed: int, args: argparse.Namespace, work: Path
) -> list[Row]:
    """Simulate once, then track offline and evaluate with each backend, `args.repeats` times:
    one table row per backend and repeat."""
    masked = any(OFFLINE_BACKENDS[b].get("mask_dynamic") for b in args.backends)
    streams = ("rgb", "depth", "semantic") if masked else ("rgb", "depth")
    scenario = scenario_from_mapping(
        bench_scenario(base, world, seed, args.duration_s, (args.width, args.height), streams)
    )
    run_dir = work / f"{world.replace('+', '_')}_seed{seed}"
    start = time.perf_counter()
    run_scenario(scenario, run_dir)
    sim_s = time.perf_counter() - start
    robot = scenario.robots[0].name
    camera = scenario.robots[0].cameras[0].name
    reference = CameraStream.open(run_dir, robot, camera).trajectory
    rows: list[Row] = []
    for backend in args.backends:
        config = SlamConfig(
            method=args.method, vocabulary=args.vocabulary, **OFFLINE_BACKENDS[backend]
        )
        for repeat in range(args.repeats):
            start = time.perf_counter()
            tracker = track_camera_folder(RunLayout(run_dir).camera_dir(robot, camera), config)
            slam_s = time.perf_counter() - start
            estimate = work / f"{run_dir.name}_{backend}_{repeat}_slam.txt"
            write_trajectory(estimate, tracker.trajectory, f"{backend} estimate of {run_dir.name}")
            summary = evaluate_trajectory(reference, read_tum(estimate)).summary()
            rows.append(
                {
                    "backend": backend,
                    "world": world,
                    "seed": float(seed),
                    "repeat": float(repeat),
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
            )
    return rows


def print_summary(rows: list[Row]) -> None:
    """The per-run rows, then the medians and ranges over repeats (per seed) and over seeds."""
    print(format_table(rows))
    print()
    print("median and range (min-max) over the repeats of each seed:")
    print(format_table(spread(rows, ("backend", "world", "seed"))))
    print()
    print("median and range (min-max) over all seeds and repeats:")
    print(format_table(spread(rows, ("backend", "world"))))


def _main_live(args: argparse.Namespace) -> int:
    from grade_slam.bench_live import LIVE_BACKENDS, main_live, plot

    unknown = sorted(set(args.backends) - set(LIVE_BACKENDS))
    if unknown:
        print(f"grade bench slam: --backends {unknown} unknown; allowed {list(LIVE_BACKENDS)}")
        return 2
    if any(LIVE_BACKENDS[b]["backend"].startswith("orb_slam3") for b in args.backends):
        from grade_slam.vocabulary_set import resolve_vocabulary

        # once, before any node starts (a node would build it while sim_node waits for it)
        args.vocabulary = str(resolve_vocabulary(args.vocabulary, log=print))
    base = yaml.safe_load(shipped_file("config/slam_benchmark.yaml").read_text())
    rows = main_live(args, base)
    print(f"pacing: {args.pacing} (frames received of published in each row)")
    print_summary(rows)
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
    parser.add_argument(
        "--duration-s", type=float, help="simulated seconds (20; --grade-table: the preset's, 60)"
    )
    parser.add_argument("--width", type=int, help="camera width (320; --live: 640)")
    parser.add_argument("--height", type=int, help="camera height (240; --live: 480)")
    parser.add_argument("--method", default="point_to_plane", help="Open3D odometry method")
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="runs of each backend on each input (1); the summary gives the median and the "
        "range over them (ORB-SLAM3's threads make runs differ)",
    )
    parser.add_argument(
        "--backends",
        nargs="*",
        help=f"offline: {list(OFFLINE_BACKENDS)} (default open3d_rgbd; ORB-SLAM3 needs "
        "--width 640 --height 480); --live: open3d_rgbd, orb_slam3_rgbd, "
        "orb_slam3_rgbd_masked, orb_slam3_rgbd_inertial and, on a VLP-16 instead of the "
        "camera, kiss_icp, genz_icp (default open3d_rgbd orb_slam3_rgbd orb_slam3_rgbd_masked)",
    )
    parser.add_argument(
        "--vocabulary", default="", help="ORB-SLAM3 vocabulary (default: grade's own)"
    )
    parser.add_argument(
        "--worlds",
        nargs="*",
        help=f"{list(WORLDS)} (default all; --grade-table: the preset's worlds, rooms and hall)",
    )
    parser.add_argument("--out", type=Path, help="also write the table (.csv or .json)")
    parser.add_argument("--keep", type=Path, help="keep runs and trajectories in this new folder")
    live = parser.add_argument_group(
        "live runs (--live: slam_node processes on sim_node, lockstep or realtime)"
    )
    live.add_argument(
        "--live", action="store_true", help="run each backend live (grade_slam.bench_live)"
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
    grade_table.add_arguments(parser)
    return parser


def main(argv: list[str]) -> int:
    """Run `grade bench slam` with argv; print the tables; return the exit code."""
    args, _ = build_parser().parse_known_args(argv)
    if args.repeats < 1:
        print(f"grade bench slam: --repeats {args.repeats} is invalid: at least 1")
        return 2
    args.duration_s_given = args.duration_s is not None
    args.worlds_given = args.worlds is not None
    if args.grade_table is not None:
        return grade_table.main_grade_table(args)
    args.duration_s = 20.0 if args.duration_s is None else args.duration_s
    args.worlds = list(WORLDS) if args.worlds is None else args.worlds
    unknown_worlds = sorted(set(args.worlds) - set(WORLDS))
    if unknown_worlds:
        print(f"grade bench slam: --worlds {unknown_worlds} unknown; allowed {list(WORLDS)}")
        return 2
    # ORB-SLAM3 RGB-D needs 640 x 480 to find the 500 features it initialises from in our rooms
    args.width = args.width or (640 if args.live else 320)
    args.height = args.height or (480 if args.live else 240)
    if args.live:
        args.backends = args.backends or ["open3d_rgbd", "orb_slam3_rgbd", "orb_slam3_rgbd_masked"]
        return _main_live(args)
    args.backends = args.backends or ["open3d_rgbd"]
    unknown = sorted(set(args.backends) - set(OFFLINE_BACKENDS))
    if unknown:
        print(f"grade bench slam: --backends {unknown} unknown; allowed {list(OFFLINE_BACKENDS)}")
        return 2
    base = yaml.safe_load(default_scenario_path().read_text())
    rows: list[Row] = []
    with work_dir(args.keep, "grade_bench_slam_") as work:
        for world in args.worlds:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                for row in run_one(base, world, seed, args, work):
                    print(
                        f"  {row['backend']} {world} seed {seed} run {int(row['repeat']) + 1}: "
                        f"ATE {float(row['ate_rmse_m']):.3f} m",
                        flush=True,
                    )
                    rows.append(row)
    print_summary(rows)
    if args.out is not None:
        print(f"table: {write_rows(args.out, rows)}")
    return 0
