"""`grade bench looks`: what antialiasing, shadows and baked lighting cost per camera frame.

Builds the default scenario's world once and renders its camera (RGB, depth and instances, as the
simulator does) along the robots' tour with each render setting in turn: supersampling 1 (off),
1 with FXAA (the default antialiasing), 1.5, 2, 1.5 with shadows, and 1.5 with the baked
lighting (lights.bake). The settings take turns
in short blocks over several rounds, so load from other processes affects them alike. Each
frame is timed; the result is each setting's median frame time and its ratio to supersampling 1
(a median, so that a burst of load on a few frames does not move it; the mean is printed too).
The time the bake took (or its cache read) is printed as well.

Last, the one ratio the bake is judged by (baked / unbaked at supersampling 1.5) is measured
again in pairs: the two engines render the same pose one after the other (which goes first
alternates), and the median of the per-pair ratios is printed; load that changes over seconds
moves both frames of a pair alike.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from grade_common.bench_results import ResultTable, add_json_argument, write_results
from grade_common.cli_args import bench_parser, parse_bench_args
from grade_sim.config.scenario import IMAGE_STREAMS, load_scenario
from grade_sim.engine.bake.switch import with_bake
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.scenarios import add_scenario_argument, default_scenario_path
from grade_sim.scene import Scene, build_scene

# label, supersample, shadows, baked lighting, FXAA
VARIANTS: tuple[tuple[str, float, bool, bool, bool], ...] = (
    ("supersample 1", 1.0, False, False, False),
    ("supersample 1 + FXAA", 1.0, False, False, True),
    ("supersample 1.5", 1.5, False, False, False),
    ("supersample 2", 2.0, False, False, False),
    ("supersample 1.5 + shadows", 1.5, True, False, False),
    ("supersample 1.5 + baked", 1.5, False, True, False),
)


def _variant(scene: Scene, supersample: float, shadows: bool, baked: bool, fxaa: bool) -> Scene:
    sc = scene.scenario
    scenario = dataclasses.replace(
        sc,
        render=dataclasses.replace(sc.render, supersample=supersample, fxaa=fxaa),
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


def _pairs(unbaked: MujocoEngine, baked: MujocoEngine, scene: Scene, pairs: int) -> np.ndarray:
    """Seconds of (unbaked, baked) frames rendered back to back on the same pose, per pair."""
    setup = scene.robots[0]
    camera = setup.model.config.cameras[0].name
    out = np.zeros((pairs, 2))
    for k in range(pairs):
        for column in (0, 1) if k % 2 == 0 else (1, 0):
            engine = (unbaked, baked)[column]
            _pose(engine, scene, k, pairs)
            t0 = time.perf_counter()
            engine.render(setup.model.name, camera, IMAGE_STREAMS)
            out[k, column] = time.perf_counter() - t0
    return out


def main(argv: list[str]) -> int:
    parser = bench_parser("looks", __doc__)
    add_scenario_argument(parser)
    parser.add_argument("--frames", type=int, default=40, help="frames per setting (40)")
    parser.add_argument("--rounds", type=int, default=8, help="turns per setting (8)")
    parser.add_argument(
        "--pairs", type=int, default=80, help="baked/unbaked frame pairs at supersample 1.5 (80)"
    )
    add_json_argument(parser)
    args = parse_bench_args(parser, argv)
    scenario = load_scenario(args.scenario or default_scenario_path(), {})
    scene = build_scene(scenario)
    setup = scene.robots[0]
    camera = setup.model.config.cameras[0]
    engines, build_s = [], []
    for _, ss, sh, baked, fx in VARIANTS:
        t0 = time.perf_counter()
        engines.append(MujocoEngine(_variant(scene, ss, sh, baked, fx)))
        build_s.append(time.perf_counter() - t0)
    per_round = max(1, args.frames // args.rounds)
    n = per_round * args.rounds
    today = [v[0] for v in VARIANTS].index("supersample 1.5")
    frame_s = np.zeros((len(VARIANTS), n))
    try:
        for r in range(args.rounds):
            for v, engine in enumerate(engines):
                engine.render(setup.model.name, camera.name, IMAGE_STREAMS)  # context, warm
                for k in range(r * per_round, (r + 1) * per_round):
                    _pose(engine, scene, k, n)
                    t0 = time.perf_counter()
                    engine.render(setup.model.name, camera.name, IMAGE_STREAMS)
                    frame_s[v, k] = time.perf_counter() - t0
        pair_s = _pairs(engines[today], engines[-1], scene, args.pairs)
    finally:
        for engine in engines:
            engine.close()
    print(
        f"scenario: {args.scenario or default_scenario_path()}; camera {camera.width}x"
        f"{camera.height}, RGB + depth + instances, {n} frames per setting"
    )
    median_ms = 1000.0 * np.median(frame_s, axis=1)
    mean_ms = 1000.0 * frame_s.mean(axis=1)
    for (label, *_), med, mean, b in zip(VARIANTS, median_ms, mean_ms, build_s, strict=True):
        print(
            f"  {label:28s} median {med:7.1f} ms/frame   x{med / median_ms[0]:5.2f}   "
            f"(mean {mean:7.1f})   model built in {b:5.1f} s"
        )
    print(
        f"  baked / unbaked at supersample 1.5: x{median_ms[-1] / median_ms[today]:4.2f} "
        f"(medians; means x{mean_ms[-1] / mean_ms[today]:4.2f})"
    )
    ratio = pair_s[:, 1] / pair_s[:, 0]
    q25, q50, q75 = np.percentile(ratio, [25, 50, 75])
    print(
        f"  the same in {len(ratio)} pairs on the same poses: median x{q50:4.2f} "
        f"(quartiles x{q25:4.2f}-x{q75:4.2f}; sums x{pair_s[:, 1].sum() / pair_s[:, 0].sum():4.2f})"
    )
    print(
        "  (the baked model's build time includes the bake, or reading it from the cache "
        "when this world was baked before)"
    )
    rows = tuple(
        (
            label,
            round(float(med), 1),
            round(float(med / median_ms[0]), 2),
            round(float(mean), 1),
            round(b, 1),
        )
        for (label, *_), med, mean, b in zip(VARIANTS, median_ms, mean_ms, build_s, strict=True)
    )
    title = (
        f"{camera.width}x{camera.height}, RGB + depth + instances, {n} frames per setting in "
        f"{args.rounds} rounds"
    )
    columns = ("setting", "median ms/frame", "vs first", "mean ms/frame", "model built in s")
    notes = (
        f"Baked / unbaked at supersample 1.5 in {len(ratio)} pairs on the same poses: median "
        f"x{q50:.2f} (quartiles x{q25:.2f}-x{q75:.2f})."
    )
    write_results(args.json, "looks", argv, [ResultTable(title, columns, rows)], notes)
    return 0
