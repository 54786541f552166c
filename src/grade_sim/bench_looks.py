"""`grade bench looks`: what antialiasing, shadows and baked lighting cost per camera frame.

Builds the default scenario's world once and renders its camera (RGB, depth and instances, as the
simulator does) along the robots' tour with each render setting in turn: supersampling 1 (off),
1.5, 2, 1.5 with shadows, and 1.5 with the baked lighting (lights.bake). The settings take turns
in short blocks over several rounds, so load from other processes affects them alike; the ratios
to supersampling 1 are the result. The time the bake took (or its cache read) is printed too.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from grade_common.cli_args import bench_parser, parse_bench_args
from grade_sim.bench import add_scenario_argument, default_scenario_path
from grade_sim.config.scenario import IMAGE_STREAMS, load_scenario
from grade_sim.engine.bake.switch import with_bake
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.scene import Scene, build_scene

# label, supersample, shadows, baked lighting
VARIANTS: tuple[tuple[str, float, bool, bool], ...] = (
    ("supersample 1", 1.0, False, False),
    ("supersample 1.5", 1.5, False, False),
    ("supersample 2", 2.0, False, False),
    ("supersample 1.5 + shadows", 1.5, True, False),
    ("supersample 1.5 + baked", 1.5, False, True),
)


def _variant(scene: Scene, supersample: float, shadows: bool, baked: bool) -> Scene:
    sc = scene.scenario
    scenario = dataclasses.replace(
        sc,
        render=dataclasses.replace(sc.render, supersample=supersample),
        lights=dataclasses.replace(sc.lights, shadows=shadows),
    )
    return with_bake(dataclasses.replace(scene, scenario=scenario), baked)


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
    engines, build_s = [], []
    for _, ss, sh, baked in VARIANTS:
        t0 = time.perf_counter()
        engines.append(MujocoEngine(_variant(scene, ss, sh, baked)))
        build_s.append(time.perf_counter() - t0)
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
    for (label, *_), s, b in zip(VARIANTS, seconds, build_s, strict=True):
        ms = 1000.0 * s / n
        print(
            f"  {label:28s} {ms:7.1f} ms/frame   x{s / n / base:4.2f}   model built in {b:5.1f} s"
        )
    today = [v[0] for v in VARIANTS].index("supersample 1.5")
    print(f"  baked / unbaked at supersample 1.5: x{seconds[-1] / seconds[today]:4.2f}")
    print(
        "  (the baked model's build time includes the bake, or reading it from the cache "
        "when this world was baked before)"
    )
    return 0
