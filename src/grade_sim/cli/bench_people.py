"""`grade bench people`: the default scenario's real-time factor with skinned people vs. the
first wave's rigid-part people, measured side by side in one process.

Runs config/indoor_uav.yaml (8 people) without ROS publishing, alternating people.body =
parts / skinned for --rounds rounds, and prints each run's real-time factor, the actors and
rendering stage times, and the ratio of the medians (target: skinned >= 0.9 x parts).
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
from pathlib import Path

from grade_common.cli_args import bench_parser, parse_bench_args
from grade_sim.bench import add_scenario_argument, default_scenario_path
from grade_sim.config.scenario import PersonBody, load_scenario
from grade_sim.scene import build_scene
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


def main(argv: list[str]) -> int:
    parser = bench_parser("people", __doc__)
    add_scenario_argument(parser)
    parser.add_argument("--duration-s", type=float, default=10.0, help="simulated s per run (10)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each kind (2)")
    args = parse_bench_args(parser, argv)
    path = args.scenario or default_scenario_path()
    tmp = Path(tempfile.mkdtemp(prefix="grade-bench-people-"))
    results: dict[PersonBody, list[dict[str, float]]] = {
        PersonBody.PARTS: [],
        PersonBody.SKINNED: [],
    }
    try:
        for r in range(args.rounds):
            for body in (PersonBody.PARTS, PersonBody.SKINNED):
                m = _one(path, body, args.duration_s, tmp / f"{body.value}-{r}")
                results[body].append(m)
                print(
                    f"{body.value:<8} round {r}: real-time factor {m['rtf']:.3f}, actors "
                    f"{m['actors']:.2f} s, rendering {m['rendering']:.2f} s of {m['wall']:.1f} s"
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    med = {b: statistics.median(m["rtf"] for m in v) for b, v in results.items()}
    ratio = med[PersonBody.SKINNED] / med[PersonBody.PARTS]
    print(
        f"scenario: {path} ({args.duration_s:.0f} s simulated per run, no ROS publishing)\n"
        f"median real-time factor: parts {med[PersonBody.PARTS]:.3f}, skinned "
        f"{med[PersonBody.SKINNED]:.3f}; skinned / parts = {ratio:.3f} (target >= 0.90)"
    )
    return 0
