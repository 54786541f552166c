"""`grade bench cameras`: the cost of one camera frame (RGB, depth, instances) per camera model.

Scenario: config/indoor_uav.yaml with its one robot carrying one camera per model, all on the
same mount and the same image size (default 640x480), rendered side by side in one process:
  pinhole          rendered directly (the reference);
  plumb_bob        one wider pinhole view, remapped (k1 -0.2, k2 0.04, small tangential terms);
  equidistant_180  a 180 deg fisheye: five cube faces, remapped;
  equidistant_200  a 200 deg circular fisheye (fov_deg 200): five cube faces, remapped.
Frames are rendered round-robin (pinhole, plumb_bob, ...) at the same simulated instant, after a
warm-up frame. `remap` is the remapping alone (the views rendered once, remapped `--frames`
times); the rest of a frame is the views' rendering. Wall-clock milliseconds of this process.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

from grade_common.bench_results import Cell, ResultTable, add_json_argument, write_results
from grade_common.cli_args import bench_parser, parse_bench_args
from grade_common.schema import from_mapping
from grade_sim.config.scenario import IMAGE_STREAMS, CameraConfig, load_scenario
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.optics.rig import build_rig
from grade_sim.scenarios import add_scenario_argument, default_scenario_path
from grade_sim.scene import build_scene

MODELS: dict[str, dict[str, Any]] = {
    "pinhole": {},
    "plumb_bob": {"model": "plumb_bob", "distortion": [-0.2, 0.04, 0.0005, -0.0005, 0.0]},
    "equidistant_180": {"model": "equidistant", "hfov_deg": 180.0},
    "equidistant_200": {"model": "equidistant", "hfov_deg": 200.0, "fov_deg": 200.0},
}


def _cameras(width: int, height: int, supersample: float) -> tuple[CameraConfig, ...]:
    out = []
    for name, fields in MODELS.items():
        data = {"name": name, "width": width, "height": height, "supersample": supersample}
        out.append(from_mapping(CameraConfig, {**data, **fields}, f"bench.{name}"))
    return tuple(out)


def main(argv: list[str]) -> int:
    parser = bench_parser("cameras", __doc__)
    add_scenario_argument(parser)
    parser.add_argument("--frames", type=int, default=30, help="frames per model (30)")
    parser.add_argument("--width", type=int, default=640, help="camera width (640)")
    parser.add_argument("--height", type=int, default=480, help="camera height (480)")
    parser.add_argument("--supersample", type=float, default=1.0, help="views' focal scale (1)")
    add_json_argument(parser)
    args = parse_bench_args(parser, argv)
    scenario = load_scenario(args.scenario or default_scenario_path())
    cameras = _cameras(args.width, args.height, args.supersample)
    robot = replace(scenario.robots[0], cameras=cameras)
    scenario = replace(scenario, robots=(robot, *scenario.robots[1:]))
    engine = MujocoEngine(build_scene(scenario))
    try:
        for cam in cameras:  # warm-up: GL context, buffers, the rigs' fixed-point maps
            engine.render(robot.name, cam.name, IMAGE_STREAMS)
        seconds = dict.fromkeys(MODELS, 0.0)
        for _ in range(args.frames):
            for cam in cameras:
                t0 = time.perf_counter()
                engine.render(robot.name, cam.name, IMAGE_STREAMS)
                seconds[cam.name] += time.perf_counter() - t0
        print(
            f"{args.width}x{args.height}, RGB + depth + instances, supersample "
            f"{args.supersample}, {args.frames} frames each"
        )
        print(f"{'model':<17}{'views':>24}{'ms/frame':>10}{'remap ms':>10}{'x pinhole':>11}")
        base = seconds["pinhole"] / args.frames
        rows: list[tuple[Cell, ...]] = []
        for cam in cameras:
            ms = 1e3 * seconds[cam.name] / args.frames
            rig = build_rig(cam)
            if rig is None:
                views, remap_ms = "1 (direct)", 0.0
            else:
                size = rig.views[0]
                views = f"{len(rig.views)} x {size.width}x{size.height}"
                frames = [
                    engine.render(robot.name, f"{cam.name}/{v.name}", IMAGE_STREAMS)
                    for v in rig.views
                ]
                t0 = time.perf_counter()
                for _ in range(args.frames):
                    rig.remap(frames)
                remap_ms = 1e3 * (time.perf_counter() - t0) / args.frames
            print(f"{cam.name:<17}{views:>24}{ms:>10.1f}{remap_ms:>10.1f}{ms / 1e3 / base:>11.2f}")
            rows.append(
                (cam.name, views, round(ms, 1), round(remap_ms, 1), round(ms / 1e3 / base, 2))
            )
    finally:
        engine.close()
    title = (
        f"One camera per model, {args.width}x{args.height}, RGB + depth + instances, "
        f"supersample {args.supersample}, {args.frames} frames each"
    )
    columns = ("model", "views", "ms/frame", "remap ms", "x pinhole")
    write_results(args.json, "cameras", argv, [ResultTable(title, columns, tuple(rows))])
    return 0
