"""`grade bench slam --live`: each SLAM backend as its own slam_node process, live on sim_node's
topics, over a static world, people, and people + flying objects, N seeds each.

The simulator runs in lockstep with an acknowledgement link (`lockstep_acks`
/<robot>/<camera>/depth/image_raw:/<robot>/slam/ack): it publishes the next depth image only
after slam_node has tracked the previous one, so a slow backend keeps every frame (frames
received = frames published). The simulator leaves world -> odom out (publish_world_odom:=false)
and slam_node owns map -> odom (REP 105). Each run is scored like `grade eval traj` (ATE RMSE
and RPE after SE(3) alignment, GRADE's missing time and tracking rate) and gets slam_node's
process CPU time per frame (all of the backend's threads).

The LiDAR backends (`kiss_icp`, `genz_icp`) run as lidar_odometry_node on the same worlds with
a Velodyne VLP-16 (`BENCH_LIDAR`) instead of the camera, acknowledged on
/<robot>/lidar_odometry/ack, and are scored against the LiDAR's own ground truth
(gt/<robot>/<lidar>/groundtruth.txt), frames being scans.
"""

from __future__ import annotations

import argparse
import math
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from grade_common.rundir import RunLayout
from grade_common.tum import GROUNDTRUTH_TXT
from grade_eval.core.align import AlignConfig, AlignMode
from grade_eval.core.evaluate import TrajectoryEval, TrajectoryEvalConfig, evaluate_trajectory
from grade_eval.core.tracking import TrackingConfig
from grade_eval.core.trajectory import PoseTrajectory
from grade_eval.errors import AlignmentError
from grade_eval.io.run import CameraStream
from grade_eval.io.tum import read_tum
from grade_eval.report import Row
from grade_sim.config.lidar import PRESETS
from grade_slam.bench_worlds import PACINGS, WORLDS, bench_scenario, work_dir

# name in the table -> the node's parameters
LIVE_BACKENDS: dict[str, dict[str, str]] = {
    "open3d_rgbd": {"backend": "open3d_rgbd"},
    "orb_slam3_rgbd": {"backend": "orb_slam3_rgbd"},
    "orb_slam3_rgbd_masked": {"backend": "orb_slam3_rgbd", "mask_dynamic": "true"},
    "orb_slam3_rgbd_inertial": {"backend": "orb_slam3_rgbd_inertial"},
    "kiss_icp": {"backend": "kiss_icp"},
    "genz_icp": {"backend": "genz_icp"},
}
# backends of lidar_odometry_node (the others are slam_node's)
LIDAR_BACKENDS = frozenset({"kiss_icp", "genz_icp"})
# the LiDAR the LiDAR backends get (the robot flies without a camera then)
BENCH_LIDAR: dict[str, Any] = {"name": "lidar", "preset": "vlp16", "mount": {"xyz": [0, 0, 0.15]}}
_SCORES = ("ate_rmse_m", "rpe_trans_rmse_m", "rpe_rot_rmse_deg", "missing_time_s", "tracking_rate")
_RECEIVED = re.compile(
    r"frames received (\d+), tracked (\d+), restarts (\d+), cpu_s_per_frame ([0-9.]+)"
)


def _executable(name: str) -> str:
    from ament_index_python.packages import get_package_prefix

    return str(Path(get_package_prefix("grade")) / "lib" / "grade" / name)


@dataclass(frozen=True)
class LiveSetup:
    """How one backend runs live: its node, the sensor it follows, the lockstep link."""

    node: str  # the executable
    sensor: str  # the camera or LiDAR name
    rate_hz: float  # frames (images or scans) per second the simulator publishes
    lockstep_acks: str  # sim_node's `lockstep_acks`: input topic:acknowledgement topic
    params: dict[str, str]  # the node's parameters (besides trajectory_output, vocabulary)


def live_setup(data: dict[str, Any], backend: str) -> LiveSetup:
    """The node and parameters of `backend` on the scenario `data`, which it adapts in place:
    a LiDAR backend's robot carries BENCH_LIDAR instead of its camera."""
    robot_data = data["robots"][0]
    robot = str(robot_data["name"])
    params = {**LIVE_BACKENDS[backend], "robot": robot}
    if backend in LIDAR_BACKENDS:
        robot_data["cameras"] = []
        robot_data["lidars"] = [dict(BENCH_LIDAR)]
        sensor = str(BENCH_LIDAR["name"])
        params["lidar"] = sensor
        return LiveSetup(
            "lidar_odometry_node",
            sensor,
            PRESETS[str(BENCH_LIDAR["preset"])].rate_hz,
            f"/{robot}/{sensor}/points:/{robot}/lidar_odometry/ack",
            params,
        )
    sensor = str(robot_data["cameras"][0]["name"])
    params["camera"] = sensor
    if LIVE_BACKENDS[backend]["backend"] == "orb_slam3_rgbd_inertial":
        params["imu_rate_hz"] = str(float(data["rates"]["imu_hz"]))
    return LiveSetup(
        "slam_node",
        sensor,
        float(robot_data["cameras"][0]["rate_hz"]),
        f"/{robot}/{sensor}/depth/image_raw:/{robot}/slam/ack",
        params,
    )


def sim_node_parameters(
    scenario_file: Path, run_dir: Path, setup: LiveSetup, pacing: str, timeout_s: float
) -> list[str]:
    """sim_node's `-p` arguments. `lockstep`: each frame waits for the backend's ack, so a slow
    backend keeps every frame; `realtime`: the simulator keeps wall-clock pace and a backend
    slower than the frame rate gets fewer frames than were published (what a robot would)."""
    if pacing not in PACINGS:
        raise ValueError(f"--pacing {pacing!r}: allowed values {list(PACINGS)}")
    pace = (
        [
            "lockstep:=true",
            f"lockstep_acks:={setup.lockstep_acks}",
            f"lockstep_timeout_s:={timeout_s}",
        ]
        if pacing == "lockstep"
        else ["realtime:=true"]
    )
    values = [
        f"scenario:={scenario_file}",
        f"output_dir:={run_dir}",
        "publish_world_odom:=false",
        *pace,
        "start_delay_s:=1.0",
    ]
    return [a for v in values for a in ("-p", v)]


def run_one_live(
    base: dict[str, Any],
    world: str,
    seed: int,
    backend: str,
    args: argparse.Namespace,
    work: Path,
    repeat: int = 0,
) -> Row:
    """Simulate with the backend's node live (args.pacing: lockstep or realtime), evaluate: one
    table row (`repeat`: which run of this input it is)."""
    # the semantic stream: the masked backend's dynamic mask
    size = (args.width, args.height)
    data = bench_scenario(base, world, seed, args.duration_s, size, ("rgb", "depth", "semantic"))
    name = f"{backend}_{world.replace('+', '_')}_seed{seed}_run{repeat}"
    row: Row = {"backend": backend, "world": world, "seed": float(seed), "repeat": float(repeat)}
    row.update(run_live(data, name, backend, args, work))
    return row


def run_live(
    data: dict[str, Any], name: str, backend: str, args: argparse.Namespace, work: Path
) -> Row:
    """Simulate the scenario `data` (adapted in place to the backend) with the backend's node
    live (args: pacing, timeout_s, vocabulary), into work/<name>; the scores and frame counts.
    Also the live half of `grade bench slam --grade-table OUT --live-check`."""
    run_dir, estimate = work / name, work / f"{name}_slam.txt"
    setup = live_setup(data, backend)
    params = dict(setup.params)
    robot = params["robot"]
    scenario_file = work / f"{name}.yaml"
    scenario_file.write_text(yaml.safe_dump(data))
    if args.vocabulary and params["backend"].startswith("orb_slam3"):
        params["vocabulary"] = args.vocabulary
    params["trajectory_output"] = str(estimate)
    log = (work / f"{name}_slam.log").open("w")
    slam = subprocess.Popen(
        [
            _executable(setup.node),
            "--ros-args",
            *[a for k, v in params.items() for a in ("-p", f"{k}:={v}")],
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        sim = subprocess.run(
            [
                _executable("sim_node"),
                "--ros-args",
                *sim_node_parameters(scenario_file, run_dir, setup, args.pacing, args.timeout_s),
            ],
            capture_output=True,
            text=True,
            timeout=args.timeout_s * 10,
            check=False,
        )
    finally:
        slam.send_signal(2)  # SIGINT: the node writes its trajectory and stops
        try:
            slam.wait(timeout=120)
        except subprocess.TimeoutExpired:
            slam.kill()
            slam.wait()
        log.close()
    text = (work / f"{name}_slam.log").read_text()
    if sim.returncode != 0:
        raise RuntimeError(f"{name}: sim_node failed ({sim.returncode}):\n{sim.stderr[-3000:]}")
    match = _RECEIVED.search(text)
    if match is None or not estimate.is_file():
        raise RuntimeError(f"{name}: {setup.node} wrote no trajectory:\n{text[-3000:]}")
    bootstrap_s = float(data.get("bootstrap_s", 1.0))
    published = round((bootstrap_s + float(data["duration_s"])) * setup.rate_hz) + 1
    if setup.node == "lidar_odometry_node":
        reference = read_tum(RunLayout(run_dir).robot_dir(robot) / setup.sensor / GROUNDTRUTH_TXT)
    else:
        reference = CameraStream.open(run_dir, robot, setup.sensor).trajectory
    summary, align = score(reference, read_tum(estimate), name, setup.rate_hz)
    return {
        "align": align.value,
        "frames_published": float(published),
        "frames_received": float(match.group(1)),
        "frames_tracked": float(match.group(2)),
        "ate_rmse_m": summary["ate_rmse_m"],
        "rpe_trans_rmse_m": summary["rpe_trans_rmse_m"],
        "rpe_rot_rmse_deg": summary["rpe_rot_rmse_deg"],
        "missing_time_s": summary["missing_time_s"],
        "tracking_rate": summary["tracking_rate"],
        "cpu_ms_per_frame": 1000.0 * float(match.group(4)),
    }


def score(
    reference: PoseTrajectory, estimate: PoseTrajectory, name: str, rate_hz: float
) -> tuple[dict[str, float], AlignMode]:
    """ATE, RPE, missing time and tracking rate after SE(3) alignment; where the flight is too
    straight for it (the LiDAR, mounted on the body axis, flies the first room's straight
    line exactly), after putting the first pose on the reference's (origin), said in the row.
    Too few poses for either: NaN. A gap longer than one frame period of `rate_hz` counts as
    lost (GRADE's 1/30 s for a 30 Hz camera; 0.1 s for a 10 Hz LiDAR)."""
    result, mode = evaluate_aligned(reference, estimate, name, rate_hz)
    if result is None:
        return dict.fromkeys(_SCORES, math.nan), mode
    return result.summary(), mode


def evaluate_aligned(
    reference: PoseTrajectory, estimate: PoseTrajectory, name: str, rate_hz: float
) -> tuple[TrajectoryEval | None, AlignMode]:
    """`score`'s evaluation itself (None: too few poses for any alignment), with the aligned
    estimate the plots draw."""
    tracking = TrackingConfig(gap_threshold_s=1.0 / rate_hz + 1e-5)
    for mode in (AlignMode.SE3, AlignMode.ORIGIN):
        config = TrajectoryEvalConfig(align=AlignConfig(mode=mode), tracking=tracking)
        try:
            return evaluate_trajectory(reference, estimate, config), mode
        except AlignmentError as err:
            print(f"  {name}: no {mode.value} alignment: {err}", flush=True)
    return None, AlignMode.ORIGIN


def plot(rows: list[Row], path: Path) -> Path:
    """ATE RMSE per world, one bar per backend (median over seeds and repeats, runs as dots)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    backends = [b for b in LIVE_BACKENDS if any(r["backend"] == b for r in rows)]
    worlds = [w for w in WORLDS if any(r["world"] == w for r in rows)]
    fig, ax = plt.subplots(figsize=(8.5, 3.5))
    width = 0.8 / max(1, len(backends))
    for i, backend in enumerate(backends):
        for j, world in enumerate(worlds):
            values = [
                float(r["ate_rmse_m"])
                for r in rows
                if r["backend"] == backend and r["world"] == world
            ]
            if not values:
                continue
            x = j + (i - (len(backends) - 1) / 2) * width
            ax.bar(
                x, float(np.median(values)), width, color=f"C{i}", label=backend if j == 0 else None
            )
            ax.plot([x] * len(values), values, "k.", ms=4)
    ax.set_xticks(range(len(worlds)), worlds)
    ax.set_ylabel("ATE RMSE [m] (SE(3), else origin)")
    ax.set_title("live SLAM, lockstep (every frame): median, runs as dots")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))  # clear of the bars
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def main_live(args: argparse.Namespace, base: dict[str, Any]) -> list[Row]:
    """Every backend x world x seed, `args.repeats` times each, live; the rows."""
    rows: list[Row] = []
    with work_dir(args.keep, "grade_bench_slam_live_") as work:
        for world in args.worlds:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                for backend in args.backends:
                    for repeat in range(args.repeats):
                        row = run_one_live(base, world, seed, backend, args, work, repeat)
                        print(
                            f"  {backend} {world} seed {seed} run {repeat + 1}: ATE "
                            f"{float(row['ate_rmse_m']):.3f} m, "
                            f"{int(row['frames_received'])}/{int(row['frames_published'])} "
                            "frames",
                            flush=True,
                        )
                        rows.append(row)
    return rows
