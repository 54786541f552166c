"""Render people sitting on the world's chairs: one row per sit stop, four views.

    python scripts/sitting_sheet.py /tmp/sitting.png [--seed 1] [--stops 3]

Builds the default scenario (config/indoor_uav.yaml) with people whose stops are mostly `sit`
and renders, for each of the first sit stops, the sitter turning in front of the chair, half
way down, and seated (from the front at 35 degrees and from the side), with a free camera.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import cv2
import numpy as np
from sheet_kit import FreeCameraRenderer, write_image

from grade_people.people import sit_weights
from grade_sim.actors.people_group import People
from grade_sim.actors.placement import seat_in_use
from grade_sim.config.scenario import load_scenario
from grade_sim.scenarios import default_scenario_path
from grade_sim.scene import build_scene

TILE_W, TILE_H = 360, 400


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stops", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("MUJOCO_GL", "egl")
    scenario = load_scenario(
        default_scenario_path(),
        {
            "seed": args.seed,
            "duration_s": 40.0,
            "people": {"count": 6, "motions": ["walk", "sit", "stand"], "walk_fraction": 0.4},
        },
    )
    scene = build_scene(scenario)
    dt = scenario.physics_dt_s
    cams = FreeCameraRenderer(scene, TILE_W, TILE_H)

    def render(step: int, lookat: np.ndarray, az_deg: float) -> np.ndarray:
        # Back from the chair as far as the room allows, 0.2 m short of a wall, 0.8-2.4 m.
        cams.pose(step)
        dist = float(np.clip(cams.clearance_m(lookat, az_deg, -12.0, 10.0) - 0.2, 0.8, 2.4))
        return cams.render(step, lookat, az_deg, -12.0, dist, (TILE_W, TILE_H))

    rows = []
    for i, tl in enumerate(scene.group(People).timelines):
        use = seat_in_use(scene.world.seats, tl, dt)
        w = sit_weights(tl.motion, dt)
        for s in sorted(set(use[use >= 0].tolist())):
            stop = np.flatnonzero(use == s)
            seated = stop[w[stop] > 0.999]
            if not len(seated) or len(rows) >= args.stops:
                continue
            # Just before sitting down (turned), and half way down.
            before = stop[(w[stop] < 0.01) & (stop < seated[0])]
            half = stop[(w[stop] > 0.5) & (stop < seated[0])]
            steps = [int(before[-1]) if len(before) else int(stop[0]), int(half[0])]
            mid = int(seated[len(seated) // 2])
            seat = scene.world.seats[s]
            lookat = np.array([*seat.centre_xy, 0.6])
            facing = float(np.degrees(seat.facing_rad))
            tiles = []
            # Standing in front of the chair: looked at higher, so a tall person's head shows
            # where a wall keeps the camera close.
            standing = lookat + np.array([0.0, 0.0, 0.12])
            for k, at, az in ((steps[0], standing, facing + 215), (steps[1], lookat, facing + 215)):
                tiles.append(render(k, at, az))
            for az in (facing + 215, facing + 270):
                tiles.append(render(mid, lookat, az))
            label = (
                f"{scene.group(People).specs[i].name} on {seat.name} (seat {seat.height_m:.2f} m)"
            )
            cv2.putText(tiles[0], label, (6, 18), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 0), 1)
            rows.append(np.concatenate(tiles, axis=1))
            print(label, "steps", steps, mid)
    if not rows:
        print("nobody sat in this scenario; try another --seed")
        return 1
    write_image(args.out, np.concatenate(rows, axis=0))
    cams.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
