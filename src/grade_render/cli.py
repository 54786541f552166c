"""`grade render RUN --out NEW`: photoreal re-rendering of a recorded run.

Engines: cycles (Blender's path tracer; `make setup-render`) and filament (MuJoCo's PBR
rasteriser through Vulkan, seconds a frame; `make setup-filament`).

Examples:
  grade render runs/demo --out runs/demo_pt                           # every camera and frame
  grade render runs/demo --out runs/demo_pt --frames 0:300:10
  grade render runs/demo --out runs/demo_pt --cameras uav1/camera --device gpu --motion-blur-s 0.01
  grade render runs/demo --out runs/demo_fil --engine filament

Running the same command again renders only the frames OUT lacks (resume).
Samples, seed, denoising, motion blur and device are Cycles settings; --reflections and --shadows
Filament's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tqdm import tqdm

from grade_common.cli_args import add_choice, add_recorded_run, command_parser
from grade_render.render import RenderResult, render_run
from grade_render.settings import (
    DEFAULT_EXPOSURE_EV,
    Device,
    Engine,
    RenderSettings,
    check_frames,
)


def build_parser() -> argparse.ArgumentParser:
    """The `grade render` argument parser."""
    parser = command_parser("grade render", __doc__)
    add_recorded_run(parser)
    parser.add_argument("--out", type=Path, required=True, help="new (or resumed) run directory")
    add_choice(parser, "--engine", Engine, Engine.CYCLES, help="renderer")
    default = RenderSettings()
    parser.add_argument(
        "--samples",
        type=int,
        default=default.samples,
        help=f"most samples a pixel takes (default {default.samples})",
    )
    parser.add_argument(
        "--noise-threshold",
        type=float,
        default=default.noise_threshold,
        help=f"adaptive sampling: a pixel stops below this noise (default "
        f"{default.noise_threshold:g}; 0: every pixel takes --samples)",
    )
    parser.add_argument(
        "--max-bounces",
        type=int,
        default=default.max_bounces,
        help=f"longest light path (default {default.max_bounces})",
    )
    add_choice(
        parser,
        "--device",
        Device,
        Device.AUTO,
        help="auto: a GPU when Cycles finds one (OptiX/CUDA/HIP/oneAPI), else the CPU",
    )
    parser.add_argument("--seed", type=int, default=0, help="Cycles sampling seed (default 0)")
    parser.add_argument(
        "--cameras", nargs="+", default=[], metavar="ROBOT/CAMERA", help="default: every camera"
    )
    parser.add_argument(
        "--frames",
        type=check_frames,
        default="",
        metavar="A:B:STEP",
        help="frames of each camera, by index in its groundtruth.txt (Python slice; default all)",
    )
    parser.add_argument(
        "--motion-blur-s",
        type=float,
        default=0.0,
        metavar="S",
        help="shutter time in seconds, from the recorded motion (default 0: off)",
    )
    parser.add_argument("--no-denoise", action="store_true", help="turn OpenImageDenoise off")
    parser.add_argument(
        "--exposure",
        type=float,
        default=DEFAULT_EXPOSURE_EV,
        help=f"film exposure in stops (default {DEFAULT_EXPOSURE_EV:g}: as bright as the raster)",
    )
    parser.add_argument(
        "--reflections",
        action="store_true",
        help="filament: screen-space reflections (a full pass per reflective material)",
    )
    parser.add_argument(
        "--shadows",
        action="store_true",
        help="filament: every light casts (hard) shadows, not only the scenario's shadow casters",
    )
    return parser


def settings_from_args(args: argparse.Namespace) -> RenderSettings:
    return RenderSettings(
        engine=Engine(args.engine),
        samples=args.samples,
        noise_threshold=args.noise_threshold,
        max_bounces=args.max_bounces,
        device=Device(args.device),
        seed=args.seed,
        denoise=not args.no_denoise,
        motion_blur_s=args.motion_blur_s,
        frames=args.frames,
        cameras=tuple(args.cameras),
        exposure=args.exposure,
        reflections=args.reflections,
        shadows=args.shadows,
    )


def run(args: argparse.Namespace) -> RenderResult:
    settings = settings_from_args(args)
    with tqdm(desc="render", unit="frame", file=sys.stderr) as bar:

        def progress(done: int, total: int, seconds: float) -> None:
            bar.total = total
            if done:
                bar.set_postfix_str(f"last frame {seconds:.1f} s")
            bar.update(done - bar.n)

        return render_run(args.run_dir, args.out, settings, progress)


def main(argv: list[str]) -> int:
    """Parse argv, render, print a summary; return the exit code."""
    args = build_parser().parse_args(argv)
    result = run(args)
    mean = sum(result.seconds_per_frame) / max(len(result.seconds_per_frame), 1)
    print(
        f"rendered {result.rendered} frame(s) on {result.device or '-'} "
        f"({mean:.1f} s/frame), {result.skipped} already there -> {result.path}"
    )
    return 0
