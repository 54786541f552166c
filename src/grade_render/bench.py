"""`grade bench render`: seconds per path-traced frame (Cycles, denoised) at two sample counts.

Records a short default-like scenario with one camera (640x480 by default), renders the same
frames at each sample count side by side in one run, and prints seconds per frame and the total
this would take for GRADE's sequence length (60 s of one camera at 30 Hz = 1800 frames).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from grade_common.cli_args import add_choice, bench_parser, parse_bench_args
from grade_render.render import render_run
from grade_render.settings import Device, RenderSettings
from grade_sim.bench import small_scenario
from grade_sim.sim.run import run_scenario

GRADE_FRAMES = 60 * 30


def main(argv: list[str]) -> int:
    parser = bench_parser("render", __doc__)
    parser.add_argument("--width", type=int, default=640, help="camera width (640)")
    parser.add_argument("--height", type=int, default=480, help="camera height (480)")
    parser.add_argument(
        "--samples", type=int, nargs="+", default=[16, 64], help="sample counts (16 64)"
    )
    parser.add_argument("--frames", type=int, default=2, help="frames per sample count (2)")
    add_choice(parser, "--device", Device, Device.AUTO, help="(auto)")
    args = parse_bench_args(parser, argv)
    scenario = small_scenario(
        duration_s=0.1 + args.frames / 30,
        bootstrap_s=0.1,
        people=2,
        flying_objects=1,
        width=args.width,
        height=args.height,
    )
    print(
        f"{args.frames} frame(s) of one {args.width}x{args.height} camera per sample count; "
        "colour (denoised) + ground-truth pass per frame"
    )
    with tempfile.TemporaryDirectory(prefix="grade-bench-render-") as tmp:
        root = Path(tmp)
        run = run_scenario(scenario, root / "run").path
        print(f"  {'samples':>7} {'device':>7} {'s/frame':>8} {'GRADE 1800 frames [h]':>22}")
        for samples in args.samples:
            settings = RenderSettings(
                samples=samples, device=Device(args.device), frames=f"0:{args.frames}"
            )
            result = render_run(run, root / f"pt{samples}", settings)
            # The first frame of a worker also pays for building Cycles' scene (BVH, shaders and
            # textures): the steady rate is that of the later frames.
            times = result.seconds_per_frame
            steady = times[1:] or times
            per_frame = sum(steady) / len(steady)
            print(
                f"  {samples:>7} {result.device:>7} {per_frame:>8.1f} "
                f"{per_frame * GRADE_FRAMES / 3600:>22.1f}"
            )
    return 0
