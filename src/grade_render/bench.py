"""`grade bench render`: seconds per frame of both engines, side by side in one run.

Records the default scenario (config/indoor_uav.yaml) briefly with one camera (640x480 by
default) and renders the same frames with Filament, with Cycles as it was set before the speed
work and with Cycles at its defaults (or at each --samples). Prints each engine's start-up
(worker start to its first word: loading the engine and the scene) apart from its steady
seconds per frame (wall, and the CPU time of the worker's threads: on a shared machine the
steadier of the two), how busy the machine was (`load`: processes waiting for a core), and how
long GRADE's sequence (60 s of one camera at 30 Hz = 1800 frames) would take.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path

from grade_common.bench_results import Cell, ResultTable, add_json_argument, write_results
from grade_common.cli_args import add_choice, bench_parser, parse_bench_args
from grade_render.render import render_run
from grade_render.settings import PREVIOUS_CYCLES, Device, Engine, RenderSettings
from grade_sim.config.scenario import load_scenario
from grade_sim.scenarios import default_scenario_path
from grade_sim.sim.run import run_scenario

GRADE_FRAMES = 60 * 30


def _steady_mean(times: tuple[float, ...]) -> float:
    """Mean over the frames after the first (which also builds the engine's scene: BVH,
    shaders, textures), or the first alone."""
    steady = times[1:] or times
    return sum(steady) / max(len(steady), 1)


def main(argv: list[str]) -> int:
    parser = bench_parser("render", __doc__)
    parser.add_argument("--width", type=int, default=640, help="camera width (640)")
    parser.add_argument("--height", type=int, default=480, help="camera height (480)")
    parser.add_argument(
        "--samples", type=int, nargs="+", default=[], help="Cycles sample counts (the default)"
    )
    parser.add_argument(
        "--no-before",
        action="store_true",
        help="skip Cycles with the settings before the speed work (16 samples, noise "
        "threshold 0.01, 6 bounces)",
    )
    parser.add_argument("--frames", type=int, default=2, help="frames per sample count (2)")
    parser.add_argument("--keep", type=Path, default=None, help="keep the renders in this folder")
    add_choice(parser, "--device", Device, Device.AUTO, help="(auto)")
    parser.add_argument(
        "--engines",
        nargs="+",
        choices=[e.value for e in Engine],
        default=["filament", "cycles"],
        help="renderers to time (filament cycles)",
    )
    add_json_argument(parser)
    args = parse_bench_args(parser, argv)
    # The default scenario (its rooms, lights and skinned people), short and at the bench size.
    scenario = load_scenario(
        default_scenario_path(),
        {
            "duration_s": 0.2 + args.frames / 30,
            "bootstrap_s": 0.2,
            "robots.0.cameras.0.width": args.width,
            "robots.0.cameras.0.height": args.height,
        },
    )
    print(
        f"{args.frames} frame(s) of one {args.width}x{args.height} camera per sample count; "
        "colour + depth + instance passes per frame"
    )
    with tempfile.TemporaryDirectory(prefix="grade-bench-render-") as tmp:
        root = args.keep or Path(tmp)
        run = run_scenario(scenario, root / "run").path
        print(
            f"  {'engine':>8} {'samples':>12} {'device':>18} {'start-up s':>10} {'s/frame':>8} "
            f"{'CPU s/frame':>11} {'GRADE 1800 frames [h]':>22} {'load':>5}"
        )
        runs: list[tuple[str, RenderSettings]] = []
        rows: list[tuple[Cell, ...]] = []
        if Engine.FILAMENT in args.engines:
            runs.append(("-", RenderSettings(engine=Engine.FILAMENT, frames=f"0:{args.frames}")))
        if Engine.CYCLES in args.engines:
            frames, device = f"0:{args.frames}", Device(args.device)
            if not args.no_before:
                before = replace(PREVIOUS_CYCLES, frames=frames, device=device)
                runs.append((f"{before.samples} (before)", before))
            for samples in args.samples or [RenderSettings().samples]:
                settings = RenderSettings(samples=samples, device=device, frames=frames)
                runs.append((str(samples), settings))
        for k, (samples_text, settings) in enumerate(runs):
            result = render_run(run, root / f"out{k}", settings)
            # The first frame of a worker also pays for building Cycles' scene (BVH, shaders and
            # textures): the steady rate is that of the later frames.
            per_frame = _steady_mean(result.seconds_per_frame)
            cpu = _steady_mean(result.cpu_seconds_per_frame)
            print(
                f"  {settings.engine.value:>8} {samples_text:>12} {result.device:>18} "
                f"{result.startup_s:>10.1f} {per_frame:>8.2f} {cpu:>11.2f} "
                f"{per_frame * GRADE_FRAMES / 3600:>22.1f} {os.getloadavg()[0]:>5.1f}"
            )
            rows.append(
                (
                    settings.engine.value,
                    samples_text,
                    result.device,
                    round(result.startup_s, 1),
                    round(per_frame, 2),
                    round(cpu, 2),
                    round(per_frame * GRADE_FRAMES / 3600, 1),
                )
            )
    title = f"{args.frames} frame(s) of one {args.width}x{args.height} camera per engine setting"
    columns = (
        "engine",
        "samples",
        "device",
        "start-up s",
        "s/frame",
        "CPU s/frame",
        "GRADE's 1800 frames [h]",
    )
    write_results(args.json, "render", argv, [ResultTable(title, columns, tuple(rows))])
    return 0
