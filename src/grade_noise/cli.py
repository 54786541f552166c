"""`grade noise`: add sensor noise offline to a recorded bag or a TUM RGB-D ground-truth folder.

grade noise apply BAG OUTPUT_BAG --params config/noise.yaml [--seed N] [--drop-ground-truth]
grade noise apply TUM_FOLDER [OUTPUT] [--seed N] [--rgb-preset P] [--depth-preset P] [--blur-masks]
grade noise presets
"""

from __future__ import annotations

import argparse
from pathlib import Path

from grade_common.cli_args import command_parser
from grade_common.rundir import NOISE_SEED_KEY, RUN_YAML, read_run_yaml, run_root_of
from grade_noise.apply import (
    TUM_DEPTH_TOPIC,
    TUM_MOTION_TOPIC,
    TUM_RGB_TOPIC,
    apply_to_bag,
    apply_to_tum,
)
from grade_noise.config import PRESETS, ModelKind, NoiseConfig, TopicNoise, load_config
from grade_noise.errors import NoiseConfigError, NoiseInputError


def _tum_config(args: argparse.Namespace) -> NoiseConfig:
    topics = []
    if args.rgb_preset != "off":
        topics.append(
            TopicNoise(TUM_RGB_TOPIC, TUM_RGB_TOPIC + "_noisy", ModelKind.RGB, args.rgb_preset)
        )
    if args.depth_preset != "off":
        topics.append(
            TopicNoise(
                TUM_DEPTH_TOPIC, TUM_DEPTH_TOPIC + "_noisy", ModelKind.DEPTH, args.depth_preset
            )
        )
    return NoiseConfig(
        seed=args.seed if args.seed is not None else 42,
        topics=tuple(topics),
        motion_topic=TUM_MOTION_TOPIC,
        camera_hfov_deg=args.hfov_deg,
        blur_plane_depth_m=args.plane_depth_m,
    )


def run_noise_seed(path: Path) -> tuple[int, Path] | None:
    """The `noise_seed` a replay stored in its run.yaml, for a bag or a TUM folder inside a run
    directory (RUN/bag, RUN/gt/<robot>/<camera>), or None."""
    root = run_root_of(path)
    if root is None:
        return None
    run_yaml = root / RUN_YAML
    seed = read_run_yaml(run_yaml, error=NoiseInputError).get(NOISE_SEED_KEY)
    if seed is None:
        return None
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise NoiseConfigError(f"{run_yaml}: noise_seed {seed!r} must be an integer >= 0")
    return seed, run_yaml


def build_parser() -> argparse.ArgumentParser:
    """The `grade noise` argument parser."""
    parser = command_parser("grade noise", __doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    app = sub.add_parser("apply", help="noise a bag (new bag) or a TUM folder (sibling folder)")
    app.add_argument("input", type=Path, help="rosbag2 folder or TUM RGB-D camera folder")
    app.add_argument(
        "output",
        type=Path,
        nargs="?",
        help="new bag path (required for bags); TUM default: INPUT_noisy beside it",
    )
    app.add_argument("--params", type=Path, help="noise_node parameters file (bags)")
    app.add_argument("--seed", type=int, help="override the seed (default: params file / 42)")
    app.add_argument(
        "--drop-ground-truth",
        action="store_true",
        help="bags: leave the exact versions of the noised topics out",
    )
    app.add_argument(
        "--rgb-preset",
        default="online",
        help=f"TUM: RGB preset or 'off' ({sorted(PRESETS[ModelKind.RGB])})",
    )
    app.add_argument(
        "--depth-preset",
        default="stereo_3_5m",
        help=f"TUM: depth preset or 'off' ({sorted(PRESETS[ModelKind.DEPTH])})",
    )
    app.add_argument(
        "--hfov-deg",
        type=float,
        default=88.95,
        help="TUM: field of view when camera_info.yaml is missing",
    )
    app.add_argument(
        "--plane-depth-m",
        type=float,
        default=2.0,
        help="TUM: scene plane depth for translational blur",
    )
    app.add_argument(
        "--blur-masks",
        action="store_true",
        help="TUM: A-GRADE: blur instance/semantic masks and widen 2D boxes like the RGB blur",
    )
    app.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    sub.add_parser("presets", help="list the noise presets per model")
    return parser


def run(args: argparse.Namespace) -> int:
    """List the presets, or noise a bag or TUM folder into a new one and say what it wrote."""
    if args.command == "presets":
        for model, table in PRESETS.items():
            print(f"{model.value}: {', '.join(sorted(table))}")
        return 0
    inp: Path = args.input
    if args.seed is None and (found := run_noise_seed(inp)) is not None:
        # A replay with a new noise seed: the same world, different noise (issue: replay).
        args.seed, source = found
        print(f"using noise_seed {args.seed} from {source}")
    if (inp / "metadata.yaml").is_file():
        if args.output is None or args.params is None:
            raise NoiseConfigError("a bag needs OUTPUT (a new bag path) and --params FILE")
        config = load_config(args.params, args.seed)
        result = apply_to_bag(
            inp,
            args.output,
            config,
            keep_ground_truth=not args.drop_ground_truth,
            progress=not args.no_progress,
        )
    elif (inp / "rgb.txt").is_file() or (inp / "depth.txt").is_file():
        out = args.output or inp.parent / f"{inp.name}_noisy"
        result = apply_to_tum(
            inp,
            out,
            _tum_config(args),
            progress=not args.no_progress,
            blur_masks=args.blur_masks,
        )
    else:
        raise NoiseInputError(
            f"{inp} is neither a rosbag2 folder (metadata.yaml) nor a TUM RGB-D folder (rgb.txt)"
        )
    noised = ", ".join(f"{t}: {n}" for t, n in sorted(result.noised.items()))
    print(f"wrote {result.output} (noised {noised}; copied {result.copied} messages)")
    return 0


def main(argv: list[str]) -> int:
    """Run `grade noise` with argv; return the exit code."""
    return run(build_parser().parse_args(argv))
