"""`grade bench looks`: what antialiasing and shadows cost per camera frame, side by side.

Builds the default scenario's world once and renders its camera (RGB, depth and instances, as the
simulator does) along the robots' tour with each render setting in turn: supersampling 1 (off),
1.5, 2, and 1.5 with shadows. The settings take turns in short blocks over several rounds, so
load from other processes affects them alike; the ratios to supersampling 1 are the result.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from grade_common.cli_args import bench_parser, parse_bench_args
from grade_sim.bench import add_scenario_argument, default_scenario_path
from grade_sim.config.scenario import IMAGE_STREAMS, load_scenario
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.scene import Scene, build_scene

VARIANTS: tuple[tuple[str, float, bool], ...] = (
    ("supersample 1", 1.0, False),
    ("supersample 1.5", 1.5, False),
    ("supersample 2", 2.0, False),
    ("supersample 1.5 + shadows", 1.5, True),
)


def _variant(scene: Scene, supersample: float, shadows: bool) -> Scene:
    sc = scene.scenario
    scenario = dataclasses.replace(
        sc,
        render=dataclasses.replace(sc.render, supersample=supersample),
        lights=dataclasses.replace(sc.lights, shadows=shadows),
    )
    return dataclasses.replace(scene, scenario=scenario)


def _pose(engine: MujocoEngine, scene: Scene, k: int, frames: int) -> None:
    """Put the first robot on the tour (fraction k / frames of it), turning as it goes."""
    setup = scene.robots[0]
    tour = np.asarray(scene.world.tour_xy or ((0.0, 0.0),))
    at = tour[int(k * len(tour) / frames) % len(tour)]
    q = np.zeros(len(setup.model.joints))
    for i, joint in enumerate(setup.model.joints):
        q[i] = {"x": at[0], "y": at[1], "z": 1.4, "yaw": 0.9 * k}.get(joint.name, 0.0)
    engine.set_robot_kinematics(setup.model.name, q, np.zeros_like(q), np.zeros_like(q))
    engine.update_kinematic_sensors()


def main(argv: list[str]) -> int:
    parser = bench_parser("looks", __doc__)
    add_scenario_argument(parser)
    parser.add_argument("--frames", type=int, default=40, help="frames per setting (40)")
    parser.add_argument("--rounds", type=int, default=4, help="turns per setting (4)")
    args = parse_bench_args(parser, argv)
    scenario = load_scenario(args.scenario or default_scenario_path(), {})
    scene = build_scene(scenario)
    setup = scene.robots[0]
    camera = setup.model.config.cameras[0]
    engines = [MujocoEngine(_variant(scene, ss, sh)) for _, ss, sh in VARIANTS]
    seconds = np.zeros(len(VARIANTS))
    per_round = max(1, args.frames // args.rounds)
    try:
        for r in range(args.rounds):
            for v, engine in enumerate(engines):
                engine.render(setup.model.name, camera.name, IMAGE_STREAMS)  # context, warm
                t0 = time.perf_counter()
                for k in range(r * per_round, (r + 1) * per_round):
                    _pose(engine, scene, k, per_round * args.rounds)
                    engine.render(setup.model.name, camera.name, IMAGE_STREAMS)
                seconds[v] += time.perf_counter() - t0
    finally:
        for engine in engines:
            engine.close()
    n = per_round * args.rounds
    print(
        f"scenario: {args.scenario or default_scenario_path()}; camera {camera.width}x"
        f"{camera.height}, RGB + depth + instances, {n} frames per setting"
    )
    base = seconds[0] / n
    for (label, _, _), s in zip(VARIANTS, seconds, strict=True):
        ms = 1000.0 * s / n
        print(f"  {label:28s} {ms:7.1f} ms/frame   x{s / n / base:4.2f}")
    return 0
