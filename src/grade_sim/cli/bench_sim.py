"""`grade bench sim`: real-time factor, stage breakdown and peak memory of the default scenario.

Runs config/indoor_uav.yaml (one 640x480 camera with RGB, depth and instances at 30 Hz, IMU at
240 Hz, odometry, TF, 8 people, 3 flying objects) as fast as possible, recording the bag, the
ground truth and the experiment record (streamed to disk), and by default also publishing every
message on ROS 2 as sim_node does. The run directory is deleted afterwards unless --keep.

`--baseline DIR` compares whole runs of this checkout and another one (e.g. a worktree of an
older commit, set up with its own environment) side by side in pairs (`--pairs`, 4): each pair
starts both sides' `--long-s` runs together, then their `--short-s` runs; each side's figures
are the difference long minus short of its process's wall time and user+sys CPU, and the
ratios yours/baseline are reported per pair and as the median, beside each side run alone.

`--pipeline both` runs the scenario sequential and parallel in turn (`--rounds` times each,
alternating, so a machine's changing load hits both alike) and prints their real-time factors
side by side with the parallel/sequential ratio; `--lidar PRESET` adds a lidar to every robot.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import yaml
from tqdm import tqdm

from grade_common.cli_args import bench_parser, parse_bench_args
from grade_common.errors import ConfigError
from grade_common.rundir import RUN_YAML, SIMULATOR_KEY, RunLayout
from grade_sim.cli import bench_whole_run
from grade_sim.config.scenario import Pipeline, Scenario, SimConfig, load_scenario
from grade_sim.scenarios import (
    add_scenario_argument,
    default_scenario_path,
    with_camera_streams,
    with_lidar,
)
from grade_sim.scene import build_scene
from grade_sim.sensors.observer import SimObserver
from grade_sim.sim.run import SimulatorSpec, run_scenario
from grade_sim.sim.thread_cpu import ThreadCpu

STAGES = ("physics", "actors", "rendering", "sensors", "publishing", "recording")


def main(argv: list[str]) -> int:
    parser = bench_parser("sim", __doc__)
    add_scenario_argument(parser)
    parser.add_argument("--duration-s", type=float, default=60.0, help="simulated seconds (60)")
    parser.add_argument("--no-ros", action="store_true", help="do not publish on ROS 2")
    parser.add_argument("--keep", type=Path, default=None, help="keep the run directory here")
    parser.add_argument(
        "--camera-streams",
        default=None,
        help="comma-separated streams for every camera, e.g. rgb,depth,instance,semantic,flow",
    )
    parser.add_argument(
        "--ground-truth",
        action="store_true",
        help="instead: the per-frame cost of each opt-in ground-truth stream (semantic, normals, "
        "flow) against the default streams, interleaved",
    )
    parser.add_argument("--frames", type=int, default=60, help="frames for --ground-truth (60)")
    parser.add_argument(
        "--pipeline",
        choices=[*(p.value for p in Pipeline), "both"],
        default=None,
        help="the step loop's pipeline (default: the scenario's sim.pipeline); both: "
        "sequential and parallel side by side, alternating",
    )
    parser.add_argument("--rounds", type=int, default=1, help="runs of each with --pipeline both")
    parser.add_argument("--lidar", default=None, help="add a lidar of this preset (e.g. hdl64e)")
    bench_whole_run.add_arguments(parser)
    args = parse_bench_args(parser, argv)
    if args.baseline is not None:
        return bench_whole_run.run(args, argv)
    if args.json is not None:
        parser.error("--json: written by --baseline comparisons only; give --baseline DIR")
    if args.ground_truth:
        from grade_sim.cli.bench_ground_truth import run

        return run(args.scenario or default_scenario_path(), args.frames)
    scenario = load_scenario(
        args.scenario or default_scenario_path(), {"duration_s": args.duration_s, "realtime": False}
    )
    if args.camera_streams:
        scenario = with_camera_streams(scenario, args.camera_streams)
    if args.lidar:
        scenario = with_lidar(scenario, args.lidar)
    node = None
    observers: tuple[SimObserver, ...] = ()
    if not args.no_ros:
        try:
            from grade_sim.node.sim_node import publishing_observer

            # One node for every run of this process (rclpy initialises once); the topics
            # depend on the scenario only, not on the pipeline.
            topics = SimulatorSpec(build_scene(scenario)).streams.topics()
            node, publisher = publishing_observer("grade_bench_sim", topics)
            observers = (publisher,)
        except ImportError:
            print("rclpy not importable: benchmarking without ROS publishing", file=sys.stderr)
    try:
        if args.pipeline == "both":
            return _side_by_side(args, scenario, observers)
        if args.pipeline:
            scenario = replace(scenario, sim=SimConfig(Pipeline(args.pipeline)))
        return _bench_one(args, scenario, observers)
    finally:
        if node is not None:
            node.destroy_node()
            node.context.try_shutdown()


def _side_by_side(
    args: argparse.Namespace, scenario: Scenario, observers: tuple[SimObserver, ...]
) -> int:
    """Sequential and parallel in turn, `rounds` times; factors and their ratio."""
    if args.keep is not None:
        raise ConfigError("--keep: one run directory, but --pipeline both makes several")
    factors: dict[Pipeline, list[float]] = {p: [] for p in Pipeline}
    cpu: dict[Pipeline, list[float]] = {p: [] for p in Pipeline}
    load_start = os.getloadavg()[0]
    for _ in range(max(1, args.rounds)):
        for pipeline in (Pipeline.SEQUENTIAL, Pipeline.PARALLEL):
            print(f"-- pipeline: {pipeline.value}")
            one = replace(scenario, sim=SimConfig(pipeline))
            _bench_one(args, one, observers, factors[pipeline], cpu[pipeline])
    seq = sum(factors[Pipeline.SEQUENTIAL]) / len(factors[Pipeline.SEQUENTIAL])
    par = sum(factors[Pipeline.PARALLEL]) / len(factors[Pipeline.PARALLEL])
    print("== side by side (real-time factor, mean of rounds; CPU s per simulated s)")
    for p, label in ((Pipeline.SEQUENTIAL, "sequential"), (Pipeline.PARALLEL, "parallel  ")):
        mean = sum(factors[p]) / len(factors[p])
        print(f"  {label} {mean:.3f}  {factors[p]}  CPU {sum(cpu[p]) / len(cpu[p]):.2f}")
    print(f"  parallel / sequential: {par / seq if seq > 0 else 0.0:.2f}")
    print(
        f"  load average (1 min): {load_start:.2f} at the start, "
        f"{os.getloadavg()[0]:.2f} at the end"
    )
    return 0


def _bench_one(
    args: argparse.Namespace,
    scenario: Scenario,
    observers: tuple[SimObserver, ...],
    factors: list[float] | None = None,
    cpu_per_sim_s: list[float] | None = None,
) -> int:
    scene = build_scene(scenario)
    tmp = Path(tempfile.mkdtemp(prefix="grade-bench-"))
    out = args.keep or tmp / "run"
    bar = tqdm(total=1, unit="step", desc="bench sim", file=sys.stderr)
    threads = ThreadCpu()  # started at the loop's first step

    def progress(step: int, total: int) -> None:
        if not bar.n and step:
            threads.start()
        bar.total = total
        bar.update(step - bar.n)

    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    try:
        result = run_scenario(SimulatorSpec(scene, observers=observers), out, progress=progress)
    finally:
        bar.close()
    wall = time.perf_counter() - t0
    s = result.summary
    # Every thread's CPU time (llvmpipe's, the writers'), from the loop's first step to the run's
    # end: unlike the real-time factor, it hardly depends on what else the machine runs.
    cpu_report = threads.stop()
    cpu = cpu_report.total_s / max(s["sim_time_s"], 1e-9)
    if cpu_per_sim_s is not None:
        cpu_per_sim_s.append(round(cpu, 3))
    bag_mb = (
        sum(f.stat().st_size for f in RunLayout(result.path).bag.rglob("*") if f.is_file()) / 1e6
    )
    gt_mb = sum(f.stat().st_size for f in RunLayout(result.path).gt.rglob("*") if f.is_file()) / 1e6
    if factors is not None:
        factors.append(s["real_time_factor"])
    gl = yaml.safe_load((result.path / RUN_YAML).read_text())[SIMULATOR_KEY]
    print(
        f"scenario: {args.scenario or default_scenario_path()} ({s['sim_time_s']:.1f} s simulated, "
        f"ROS publishing {'on' if observers else 'off'})"
    )
    print(f"pipeline: {gl['pipeline']}; GL renderer: {gl['gl_renderer']}")
    if args.camera_streams:
        print(f"camera streams: {args.camera_streams}")
    print(
        f"real-time factor: {s['real_time_factor']:.3f} (target >= 0.5); loop wall time "
        f"{s['wall_time_s']:.1f} s, total incl. set-up and closing {wall:.1f} s"
    )
    print(
        f"CPU time: {cpu:.2f} s per simulated s (all threads, from the first step); load "
        f"average {load:.2f} at the start"
    )
    print("CPU s per simulated s by thread:")
    for name, v in cpu_report.per(s["sim_time_s"]).items():
        print(f"  {name:<28} {v:6.3f}")
    print(f"peak memory: {s['peak_memory_mb']:.0f} MB (target < 2048 MB)")
    print(
        f"written: bag {bag_mb:.0f} MB, ground truth {gt_mb:.0f} MB, "
        f"{s['ground_truth_frames_written']} frames"
    )
    print("stage breakdown (seconds, share of loop time):")
    loop = max(s["wall_time_s"], 1e-9)
    for stage in STAGES:
        v = s["stage_s"].get(stage, 0.0)
        print(f"  {stage:<11} {v:8.2f} s  {100 * v / loop:5.1f} %")
    if args.keep is None:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0
