"""`grade bench render`: seconds per frame of both engines, side by side in one run.

Records a short default-like scenario with one camera (640x480 by default) and renders the same
frames with Filament and with Cycles (denoised) at each sample count; prints each engine's
start-up (worker start to its first word: loading the engine and the scene) apart from its
steady seconds per frame, and the total GRADE's sequence length would take (60 s of one camera
at 30 Hz = 1800 frames).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from grade_common.cli_args import add_choice, bench_parser, parse_bench_args
from grade_render.render import render_run
from grade_render.settings import Device, Engine, RenderSettings
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
    parser.add_argument(
        "--engines", nargs="+", choices=[e.value for e in Engine], default=["filament", "cycles"]
    )
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
        "colour + depth + instance passes per frame"
    )
    with tempfile.TemporaryDirectory(prefix="grade-bench-render-") as tmp:
        root = Path(tmp)
        run = run_scenario(scenario, root / "run").path
        print(
            f"  {'engine':>8} {'samples':>7} {'device':>18} {'start-up s':>10} {'s/frame':>8} "
            f"{'GRADE 1800 frames [h]':>22}"
        )
        runs: list[tuple[str, RenderSettings]] = []
        if Engine.FILAMENT in args.engines:
            runs.append(("-", RenderSettings(engine=Engine.FILAMENT, frames=f"0:{args.frames}")))
        if Engine.CYCLES in args.engines:
            for samples in args.samples:
                settings = RenderSettings(
                    samples=samples, device=Device(args.device), frames=f"0:{args.frames}"
                )
                runs.append((str(samples), settings))
        for k, (samples_text, settings) in enumerate(runs):
            result = render_run(run, root / f"out{k}", settings)
            # The first frame of a worker also pays for building Cycles' scene (BVH, shaders and
            # textures): the steady rate is that of the later frames.
            times = result.seconds_per_frame
            steady = times[1:] or times
            per_frame = sum(steady) / len(steady)
            print(
                f"  {settings.engine.value:>8} {samples_text:>7} {result.device:>18} "
                f"{result.startup_s:>10.1f} {per_frame:>8.2f} "
                f"{per_frame * GRADE_FRAMES / 3600:>22.1f}"
            )
    return 0
