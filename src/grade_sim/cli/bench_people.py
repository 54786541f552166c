"""`grade bench people`: the default scenario's real-time factor with skinned people and
MakeHuman people vs. the first wave's rigid-part people, measured side by side in one process.

Runs config/indoor_uav.yaml (8 people) without ROS publishing, alternating people.body =
parts / skinned / makehuman for --rounds rounds, and prints each run's real-time factor, the
actors and rendering stage times, and the ratios of the medians (targets: skinned >= 0.9 x
parts, makehuman >= 0.9 x skinned). Then the
skinned people's feet and gait (grade_people.gait_stats) on the same scenario with --gait-people
people (20) over --gait-duration-s: lowest skin point on stance steps, foot slide per stance,
and cadence / step length by speed.
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from pathlib import Path

import numpy as np

from grade_common.bench_results import ResultTable, add_json_argument, write_results
from grade_common.cli_args import bench_parser, parse_bench_args
from grade_people.config import PersonBody, PersonMotion
from grade_people.gait_stats import PersonGaitSamples, format_gait_stats, gait_stats
from grade_people.motion import feet_in_stance
from grade_people.people import MOTION_CODES
from grade_people.skeleton import JOINT_INDEX
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import load_scenario
from grade_sim.scenarios import add_scenario_argument, default_scenario_path
from grade_sim.scene import Scene, build_scene
from grade_sim.sim.run import SimulatorSpec, run_scenario


def _one(scenario_path: Path, body: PersonBody, duration_s: float, out: Path) -> dict[str, float]:
    scenario = load_scenario(
        scenario_path,
        {"duration_s": duration_s, "realtime": False, "people": {"body": body.value}},
    )
    result = run_scenario(SimulatorSpec(build_scene(scenario)), out)
    s = result.summary
    return {
        "rtf": float(s["real_time_factor"]),
        "actors": float(s["stage_s"].get("actors", 0.0)),
        "rendering": float(s["stage_s"].get("rendering", 0.0)),
        "wall": float(s["wall_time_s"]),
    }


def scene_gait_samples(scene: Scene, every_steps: int) -> list[PersonGaitSamples]:
    """Foot contact samples of every skinned person of `scene`, every `every_steps` physics
    steps after the bootstrap."""
    dt = scene.scenario.physics_dt_s
    first = round(scene.scenario.bootstrap_s / dt)
    steps = np.arange(max(first, 1), scene.n_steps, every_steps)
    skinned = [
        (i, t)
        for i, (p, t) in enumerate(scene.group(People).with_timelines())
        if p.body is not None
    ]
    lowest = np.empty((len(steps), len(skinned)))
    toes = np.empty((len(steps), len(skinned), 2, 2))
    toe_j = [JOINT_INDEX["toe_l"], JOINT_INDEX["toe_r"]]
    for row, k in enumerate(steps):
        skins = scene.group(People).skins_world(int(k))
        lowest[row] = [float(v[:, 2].min()) for v in skins]
        joint_pos, _ = scene.group(People).skeleton_poses(int(k))
        toes[row] = joint_pos[:, toe_j, :2]
    walking = {MOTION_CODES[PersonMotion.WALK], MOTION_CODES[PersonMotion.RUN]}
    out = []
    for col, (_, t) in enumerate(skinned):
        speed = np.linalg.norm(t.position_xy[steps] - t.position_xy[steps - 1], axis=1) / dt
        rate = (t.phase_rad[steps] - t.phase_rad[steps - 1]) / dt
        out.append(
            PersonGaitSamples(
                lowest_z_m=lowest[:, col],
                stance=feet_in_stance(t.phase_rad[steps], speed),
                toe_xy=toes[:, col],
                speed_mps=speed,
                phase_rate_rps=rate,
                walking=np.isin(t.motion[steps], list(walking)),
            )
        )
    return out


def main(argv: list[str]) -> int:
    parser = bench_parser("people", __doc__)
    add_scenario_argument(parser)
    parser.add_argument("--duration-s", type=float, default=10.0, help="simulated s per run (10)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each kind (2)")
    parser.add_argument(
        "--gait-people", type=int, default=20, help="people for the gait (20; 0: no gait part)"
    )
    parser.add_argument(
        "--gait-body",
        choices=[PersonBody.SKINNED.value, PersonBody.MAKEHUMAN.value],
        default=PersonBody.MAKEHUMAN.value,
        help="the bodies of the gait part (makehuman, the default body)",
    )
    parser.add_argument(
        "--gait-duration-s", type=float, default=9.0, help="simulated s for the gait (9)"
    )
    add_json_argument(parser)
    args = parse_bench_args(parser, argv)
    if args.rounds < 1 or args.gait_people < 0:
        parser.error(
            f"--rounds must be >= 1 (got {args.rounds}) and --gait-people >= 0 "
            f"(got {args.gait_people})"
        )
    path = args.scenario or default_scenario_path()
    tmp = Path(tempfile.mkdtemp(prefix="grade-bench-people-"))
    results: dict[PersonBody, list[dict[str, float]]] = {
        PersonBody.PARTS: [],
        PersonBody.SKINNED: [],
        PersonBody.MAKEHUMAN: [],
    }
    try:
        for r in range(args.rounds):
            for body in results:
                m = _one(path, body, args.duration_s, tmp / f"{body.value}-{r}")
                results[body].append(m)
                print(
                    f"{body.value:<9} round {r}: real-time factor {m['rtf']:.3f}, actors "
                    f"{m['actors']:.2f} s, rendering {m['rendering']:.2f} s of {m['wall']:.1f} s"
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {b: statistics.median(m["rtf"] for m in v) for b, v in results.items()}
    ratio = med[PersonBody.SKINNED] / med[PersonBody.PARTS]
    print(
        f"scenario: {path} ({args.duration_s:.0f} s simulated per run, no ROS publishing)\n"
        f"median real-time factor: parts {med[PersonBody.PARTS]:.3f}, skinned "
        f"{med[PersonBody.SKINNED]:.3f}; skinned / parts = {ratio:.3f} (target >= 0.90)\n"
        f"median real-time factor: makehuman {med[PersonBody.MAKEHUMAN]:.3f}; makehuman / "
        f"skinned = {med[PersonBody.MAKEHUMAN] / med[PersonBody.SKINNED]:.3f} (target >= 0.90)"
    )
    rtf = ResultTable(
        f"Median real-time factor over {args.rounds} run(s) of {args.duration_s:g} simulated s, "
        "no ROS publishing",
        ("people", "real-time factor", "vs parts"),
        tuple((b.value, round(med[b], 3), round(med[b] / med[PersonBody.PARTS], 3)) for b in med),
    )
    if args.gait_people == 0:
        write_results(args.json, "people", argv, [rtf])
        return 0
    gait = load_scenario(
        path,
        {
            "duration_s": args.gait_duration_s,
            "people.body": args.gait_body,
            "people.count": args.gait_people,
        },
    )
    print(
        f"feet and gait: {args.gait_people} {args.gait_body} people, {args.gait_duration_s:.0f} s, "
        f"seed {gait.seed}, sampled every 4 physics steps"
    )
    gait_text = format_gait_stats(gait_stats(scene_gait_samples(build_scene(gait), 4)))
    print(gait_text)
    notes = (
        f"Feet and gait, {args.gait_people} {args.gait_body} people, "
        f"{args.gait_duration_s:g} s, seed {gait.seed}: {' '.join(gait_text.split())}"
    )
    write_results(args.json, "people", argv, [rtf], notes)
    return 0
