"""`grade lidar fit-raydrop`: fit the learned ray-drop model from pairs of range images.

Each pair is a simulated scan (.npz with range_m, cos_incidence, reflectivity images) and the
real scan of the same view (.npz with a range_m image, 0 where nothing returned). The model file
is then used with `ray_drop: learned` and `ray_drop_model: FILE` on a lidar of the scenario.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grade_common.cli_args import command_parser
from grade_common.errors import GradeError
from grade_sim.sensors.lidar.learned_drop import fit, load_pair


def build_parser() -> argparse.ArgumentParser:
    """The `grade lidar` argument parser."""
    parser = command_parser("grade lidar", __doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fit-raydrop", help="fit the learned ray-drop model")
    f.add_argument("--sim", type=Path, nargs="+", required=True, help="simulated .npz images")
    f.add_argument("--real", type=Path, nargs="+", required=True, help="real .npz, same order")
    f.add_argument("--range-max-m", type=float, required=True, help="the lidar's maximum range")
    f.add_argument("--out", type=Path, required=True, help="model file to write (new path)")
    return parser


def run(args: argparse.Namespace) -> int:
    """Fit and save the model; print its drop rate on the training rays."""
    if len(args.sim) != len(args.real):
        raise GradeError(
            f"fit-raydrop: {len(args.sim)} simulated and {len(args.real)} real images; "
            "give them in pairs, same order"
        )
    if args.range_max_m <= 0:
        raise GradeError(f"fit-raydrop: --range-max-m {args.range_max_m} must be positive")
    pairs = [load_pair(s, r) for s, r in zip(args.sim, args.real, strict=True)]
    model = fit(pairs, args.range_max_m)
    model.save(args.out)
    print(f"ray-drop model ({len(pairs)} pairs) written to {args.out}")
    return 0


def main(argv: list[str]) -> int:
    """Run `grade lidar` with argv; return the exit code."""
    return run(build_parser().parse_args(argv))
