"""Dynamic-pixel share of GRADE-table sequences under other crowds, without the SLAM backends.

    python scripts/slam_crowd_share.py OUT --world rooms --people 16 --toward-robots 0.7 \\
        --seeds 1 2 3 [--duration-s 10]

Builds each sequence `people_N_H` of config/slam_grade_table.yaml with the crowd's count and
toward_robots replaced (in that world), simulates only what the share needs (the camera's RGB
and semantic streams and the ground truth; no LiDAR, depth or bag, which do not change the
people), and prints the share measured as `grade bench slam --grade-table` does
(grade_slam.dynamic_pixels). It also prints, from the planned paths of the same scene, how
many of the people within VIEW_M in front of the UAV (inside its camera's 89 degrees) face it
(`facing`). OUT/<world>_<people>_<toward>_s<seed> holds each run; a run that is already there
is measured again, not simulated again.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import yaml

from grade_common.share import shipped_file
from grade_sim.config.scenario import Scenario, scenario_from_mapping
from grade_sim.scene import build_scene, people_facing_robot
from grade_sim.sim.run import run_scenario
from grade_slam.dynamic_pixels import sequence_pixels
from grade_slam.grade_sequences import PRESET_FILE, load_preset, sequence_scenario
from grade_slam.grade_table import camera_dir

VIEW_M = 6.0
HALF_FOV_RAD = np.radians(44.5)


def scenario(world: str, people: int, toward: float, seed: int, duration_s: float) -> Scenario:
    raw = yaml.safe_load(Path(shipped_file(PRESET_FILE)).read_text())
    crowd = {**raw["crowd"], "count": people, "toward_robots": toward}
    worlds = [{**w, **({"people": people} if w["name"] == world else {})} for w in raw["worlds"]]
    overrides = {"duration_s": duration_s, "crowd": crowd, "worlds": worlds}
    preset = load_preset(shipped_file(PRESET_FILE), overrides)
    base = yaml.safe_load(Path(preset.scenario).read_text())
    data = sequence_scenario(preset, base, world, "people_N_H", seed)
    robot = data["robots"][0]
    robot["cameras"][0]["streams"] = ["rgb", "semantic"]
    robot["lidars"] = []
    data["record"] = {"bag": False, "ground_truth": True, "experiment_record": False}
    return scenario_from_mapping(data)


def facing_share(scenario: Scenario) -> float:
    """Of the (step, person) pairs with the person in front of the UAV, the share facing it."""
    counts = people_facing_robot(build_scene(scenario), VIEW_M, HALF_FOV_RAD)
    return counts.facing / max(counts.in_view, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--world", default="rooms")
    parser.add_argument("--people", type=int, required=True)
    parser.add_argument("--toward-robots", type=float, default=0.0)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--duration-s", type=float, default=10.0)
    args = parser.parse_args()
    for seed in args.seeds:
        run = args.out / f"{args.world}_{args.people}_{args.toward_robots}_s{seed}"
        sequence = scenario(args.world, args.people, args.toward_robots, seed, args.duration_s)
        if not run.is_dir():
            run_scenario(sequence, run)
        pixels = sequence_pixels(camera_dir(run))
        placement = yaml.safe_load((run / "placement.yaml").read_text())
        print(
            json.dumps(
                {
                    "run": run.name,
                    "frames": pixels.frames,
                    "dynamic_share": round(pixels.dynamic_share_mean, 4),
                    "dynamic_share_max": round(pixels.dynamic_share_max, 4),
                    "facing": round(facing_share(sequence), 3),
                    "people_rejected": len(placement["rejected"]),
                }
            ),
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
