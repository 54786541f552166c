"""`grade replay RUN_DIR --out NEW_DIR [changes]`: exact replay with changed surroundings.

Examples:
  grade replay runs/demo --out runs/demo_replay                      # exact copy, fidelity 1
  grade replay runs/demo --out runs/no_people --hide person
  grade replay runs/demo --out runs/dim --light-scale 0.5 --light-color 1,0.9,0.8
  grade replay runs/demo --out runs/wide --camera uav1/wide:width=320,height=240,hfov_deg=110
  grade replay runs/demo --out runs/lidar --lidar uav1/lidar:preset=hdl64e,mount_z=0.2
  grade replay runs/demo --out runs/vel --mode velocity --rate imu_hz=120 --noise-seed 3
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grade_common.cli_args import add_choice, add_quiet, add_recorded_run, command_parser
from grade_common.progress import step_bar
from grade_common.signals import stopped_exit_code
from grade_replay.changes import (
    CAMERA_KEYS,
    LIDAR_KEYS,
    MOUNT_KEYS,
    RATE_KEYS,
    ReplayChanges,
    parse_camera_change,
    parse_lidar_change,
    parse_rate,
    parse_rgb,
)
from grade_replay.replay import ReplayConfig, ReplayMode, ReplayResult, replay_run


def build_parser() -> argparse.ArgumentParser:
    """The `grade replay` argument parser."""
    parser = command_parser("grade replay", __doc__)
    add_recorded_run(parser)
    parser.add_argument(
        "--out", type=Path, required=True, help="new run directory (must not exist)"
    )
    add_choice(
        parser,
        "--mode",
        ReplayMode,
        ReplayMode.TELEPORT,
        help="teleport: set the recorded joint state each step (exact); velocity: drive the "
        "recorded velocity commands through the physics (default: teleport)",
    )
    parser.add_argument(
        "--light-scale",
        type=float,
        default=1.0,
        metavar="F",
        help="multiply every light's intensity by F (default 1)",
    )
    parser.add_argument(
        "--light-color",
        type=parse_rgb,
        default=None,
        metavar="R,G,B",
        help="multiply every light's colour channel-wise (1,1,1 = unchanged)",
    )
    parser.add_argument(
        "--hide",
        action="append",
        default=[],
        metavar="CLASS",
        help="hide every instance of a class (person, object, furniture, ...)",
    )
    parser.add_argument(
        "--hide-id",
        action="append",
        type=int,
        default=[],
        metavar="ID",
        help="hide one instance id (see gt/instances.yaml)",
    )
    parser.add_argument(
        "--camera",
        action="append",
        type=parse_camera_change,
        default=[],
        metavar="ROBOT/NAME:KEY=VALUE,...",
        help="change a camera, or add it when NAME is new; keys: "
        f"{', '.join(CAMERA_KEYS + MOUNT_KEYS)} (streams as rgb+depth+instance)",
    )
    parser.add_argument(
        "--remove-camera",
        action="append",
        default=[],
        metavar="ROBOT/NAME",
        help="drop a camera from the replay",
    )
    parser.add_argument(
        "--lidar",
        action="append",
        type=parse_lidar_change,
        default=[],
        metavar="ROBOT/NAME:KEY=VALUE,...",
        help="add a lidar (or change one) cast at the recorded poses; keys: "
        f"{', '.join(LIDAR_KEYS + MOUNT_KEYS)} (elevations_deg as -10+0+10)",
    )
    parser.add_argument(
        "--remove-lidar",
        action="append",
        default=[],
        metavar="ROBOT/NAME",
        help="drop a lidar from the replay",
    )
    parser.add_argument(
        "--rate",
        action="append",
        type=parse_rate,
        default=[],
        metavar="NAME=HZ",
        help=f"change a sensor rate: {', '.join(RATE_KEYS)} (physics_hz is fixed)",
    )
    parser.add_argument(
        "--noise-seed",
        type=int,
        default=None,
        metavar="N",
        help="seed for sensor noise only, stored in run.yaml (the world seed stays)",
    )
    add_quiet(parser)
    return parser


def print_result(result: ReplayResult) -> None:
    s = result.run.summary
    state = "complete" if result.complete else "interrupted"
    print(f"replay {state}: {result.path}")
    print(
        f"  replayed {result.run.stats.steps}/{result.recorded_steps} recorded steps, "
        f"{s['sim_time_s']:.2f} s simulated in {s['wall_time_s']:.2f} s "
        f"(real-time factor {s['real_time_factor']:.2f}), "
        f"{s['camera_frames_rendered']} camera frames rendered"
    )
    print(result.fidelity.format_table())
    print(f"  report: {result.path / 'fidelity.json'}")


def run(args: argparse.Namespace) -> int:
    """Replay the run with the changes, print the fidelity table; 130 when interrupted."""
    changes = ReplayChanges(
        light_scale=args.light_scale,
        light_color_rgb=args.light_color,
        hide_classes=tuple(args.hide),
        hide_ids=tuple(args.hide_id),
        cameras=tuple(args.camera),
        remove_cameras=tuple(args.remove_camera),
        lidars=tuple(args.lidar),
        remove_lidars=tuple(args.remove_lidar),
        rates_hz=tuple(args.rate),
        noise_seed=args.noise_seed,
    )
    config = ReplayConfig(args.run_dir, args.out, ReplayMode(args.mode), changes)
    with step_bar("replaying", quiet=args.quiet) as progress:
        result = replay_run(config, progress=progress)
    print_result(result)
    return 0 if result.complete else stopped_exit_code()


def main(argv: list[str]) -> int:
    """Run `grade replay` with argv; return the exit code."""
    return run(build_parser().parse_args(argv))
