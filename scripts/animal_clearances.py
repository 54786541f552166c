"""Measure how far apart a scene's animals and people stay (the numbers in docs/animals.md).

    python scripts/animal_clearances.py config/outdoor_savanna.yaml [--people 8] [--stride 4]

Builds the scene (no simulation: scripted people are planned in full; reactive people are
stepped here with the animals' discs, as the simulator's loop does) and prints the animal
placement (draws, rejections with their reasons), then the smallest FCL distance between the
true bodies of any two animals and of any animal and person, over every `stride`-th physics
step.
"""

from __future__ import annotations

import argparse
import time
from itertools import combinations

from grade_sim.actors.animal_group import Animals
from grade_sim.actors.animal_placement import animal_trace, min_distance, person_trace
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import load_scenario
from grade_sim.scene import build_scene

CAP_M = 2.0  # distances beyond this are not measured ("at least 2 m")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("scenario")
    parser.add_argument("--people", type=int, default=None, help="override people.count")
    parser.add_argument("--reactive", action="store_true", help="people.mode: reactive")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--stride", type=int, default=4, help="measure every n-th step")
    args = parser.parse_args()
    overrides: dict[str, object] = {}
    base = load_scenario(args.scenario)
    if args.people is not None or args.reactive:
        people = {"count": base.people.count if args.people is None else args.people}
        if args.reactive:
            people["mode"] = "reactive"  # type: ignore[assignment]
        overrides["people"] = people
    if args.seed is not None:
        overrides["seed"] = args.seed
    scenario = load_scenario(args.scenario, overrides)
    t0 = time.perf_counter()
    scene = build_scene(scenario).started()
    if scene.group(People).crowd is not None:
        crowd = scene.group(People).crowd
        for k in range(1, scene.n_steps):
            crowd.advance(k, scene.group(Animals).discs(k) if crowd.updates_at(k) else [])
    print(f"scene built in {time.perf_counter() - t0:.1f} s, {scene.n_steps} steps")
    report = scene.placement
    print(
        f"animals kept {len(scene.group(Animals).specs)} of {scenario.animals.count} "
        f"({report.animal_draws} timelines drawn); people kept {len(scene.group(People).specs)} "
        f"of {scenario.people.count}"
    )
    for r in report.rejected:
        print(f"  rejected {r.name}: {r.reason}")
    n = scene.n_steps
    animals = [animal_trace(a, t, n, 0.0) for a, t in scene.group(Animals).with_timelines()]
    people = [person_trace(p, t, n) for p, t in scene.group(People).with_timelines()]
    pairs = [(min_distance(a, b, CAP_M, args.stride), a.name, b.name)
             for a, b in combinations(animals, 2)]  # fmt: skip
    if pairs:
        (d, k), a, b = min(pairs)
        print(f"minimum animal-animal {d:.3f} m ({a}, {b}, step {k})")
    pairs = [(min_distance(a, p, CAP_M, args.stride), a.name, p.name)
             for a in animals for p in people]  # fmt: skip
    if pairs:
        (d, k), a, b = min(pairs)
        print(f"minimum animal-person {d:.3f} m ({a}, {b}, step {k})")


if __name__ == "__main__":
    main()
