"""`grade bvh FILE.bvh`: what a motion capture file maps to on the person skeleton.

Reads a BVH file, retargets it onto a skeleton of --height metres and prints the joint mapping
(which skeleton joints it drives, which follow their parent), frames, duration, distance the
root travels and the foot slip of the retargeted motion. --out writes the retargeted motion as
a new BVH file on the project's skeleton (a clean, named hierarchy other tools read).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from grade_common.atomic import StagedOutput
from grade_common.cli_args import add_choice, command_parser
from grade_common.errors import ConfigError
from grade_people.bvh import BvhAxes, BvhError, parse_bvh, retarget, write_bvh
from grade_people.motion import foot_slip
from grade_people.skeleton import (
    JOINT_INDEX,
    JOINT_NAMES,
    REFERENCE_HEIGHT_M,
    BodyParams,
    forward_kinematics,
    rest_offsets,
)

FEET = ("ankle_l", "ankle_r", "toe_l", "toe_r")


def build_parser() -> argparse.ArgumentParser:
    parser = command_parser("grade bvh", __doc__)
    parser.add_argument("file", type=Path, help="a BVH motion capture file")
    parser.add_argument("--height", type=float, default=REFERENCE_HEIGHT_M, help="metres (1.75)")
    add_choice(
        parser,
        "--axes",
        BvhAxes,
        BvhAxes.Y_UP,
        help="file convention: y_up (+Z forward, the usual) or z_up (+X forward)",
    )
    parser.add_argument("--out", type=Path, default=None, help="write the retargeted BVH (new)")
    return parser


def main(argv: list[str]) -> int:
    return run(build_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """Report (and optionally write) the retargeted motion of args.file."""
    if not 0.5 <= args.height <= 2.5:
        raise ConfigError(f"--height: {args.height} m is out of range; allowed [0.5, 2.5]")
    try:
        text = args.file.read_text()
    except OSError as err:
        raise BvhError(f"{args.file}: cannot read the BVH file: {err}") from err
    motion = parse_bvh(text)
    body = BodyParams(args.height, 0.5, 1.0, 1.0, 1.0)
    out = retarget(motion, body, BvhAxes(args.axes))
    pos, _ = forward_kinematics(rest_offsets(body), out.local_rot, out.root_position)
    duration = motion.n_frames * motion.frame_time_s
    travel = float(np.linalg.norm(np.diff(out.root_position[:, :2], axis=0), axis=1).sum())
    print(
        f"{args.file}: {len(motion.joints)} joints, {motion.n_frames} frames at "
        f"{1 / motion.frame_time_s:.1f} Hz ({duration:.2f} s), root travels {travel:.2f} m"
    )
    for joint in JOINT_NAMES:
        print(f"  {joint:<11} <- {out.mapped.get(joint, '(follows its parent)')}")
    slip = foot_slip(pos[:, [JOINT_INDEX[f] for f in FEET]], motion.frame_time_s, 0.002)
    if len(slip):
        print(
            f"foot slip while planted: median {np.median(slip):.3f} m/s, "
            f"95th percentile {np.percentile(slip, 95):.3f} m/s"
        )
    if args.out is not None:
        with StagedOutput(args.out) as staged:
            staged.write_text(
                write_bvh(body, out.local_rot, out.root_position, motion.frame_time_s)
            )
        print(f"wrote {args.out}")
    return 0
