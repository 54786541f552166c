"""Render the README's sheets of MakeHuman people (people.body: makehuman).

    python scripts/makehuman_sheet.py closeup docs/images/makehuman_closeup.jpg [--seed 4]
    python scripts/makehuman_sheet.py crowd docs/images/makehuman_crowd.jpg [--seed 42]

closeup: 8 people of the default scenario, each from the front and from the side, 1.7 m away,
alone in an empty room (the others moved out of the way), in their own pose at a step where
they stand or walk. crowd: the default scenario with 20 people, seen from four free cameras
at head height.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
from sheet_kit import FreeCameraRenderer, write_image

from grade_sim.actors.people_group import People
from grade_sim.config.scenario import load_scenario
from grade_sim.scenarios import default_scenario_path
from grade_sim.scene import build_scene

TILE_W, TILE_H = 240, 400


def closeup(out: Path, seed: int) -> None:
    scenario = load_scenario(
        default_scenario_path(),
        {
            "seed": seed,
            "duration_s": 20.0,
            "environment": {
                "procedural": {"rooms_x": 1, "rooms_y": 1, "furniture_per_room": [0, 0]}
            },
            "flying_objects": {"count": 0},
            "people": {"count": 8, "body": "makehuman", "motions": ["walk", "stand", "look"]},
        },
    )
    scene = build_scene(scenario)
    cams = FreeCameraRenderer(scene, TILE_W, TILE_H)
    n_joints = len(scene.group(People).specs[0].body_names())
    centre = np.asarray(scene.world.tour_xy[0] if scene.world.tour_xy else (0.0, 0.0))
    tiles = []
    for i, tl in enumerate(scene.group(People).timelines):
        standing = np.flatnonzero(tl.amplitude < 0.05)
        k = int(standing[len(standing) // 2]) if len(standing) else len(tl.motion) // 2
        cams.pose(k)
        pos = cams.data.mocap_pos.copy()
        # Everybody else out of sight, this person to the room's centre.
        mine = cams.mocap_ids[i * n_joints : (i + 1) * n_joints]
        others = np.setdiff1d(cams.mocap_ids[: len(scene.group(People).specs) * n_joints], mine)
        cams.data.mocap_pos[others] = pos[others] + np.array([0.0, 0.0, -50.0])
        shift = np.array([*(centre - pos[mine[0], :2]), 0.0])
        cams.data.mocap_pos[mine] = pos[mine] + shift
        cams.refresh()
        heading = float(np.degrees(tl.heading_rad[k]))
        lookat = np.array(
            [centre[0], centre[1], 0.95 * scene.group(People).specs[i].height_m / 1.75]
        )
        for az in (heading + 180.0, heading + 90.0):
            tiles.append(cams.render(None, lookat, az, -4.0, 2.1, (TILE_W, TILE_H)))
    rows = [np.concatenate(tiles[r * 8 : r * 8 + 8], axis=1) for r in range(len(tiles) // 8)]
    write_image(out, np.concatenate(rows, axis=0))
    cams.close()


def crowd(out: Path, seed: int) -> None:
    scenario = load_scenario(
        default_scenario_path(),
        {"seed": seed, "duration_s": 9.0, "people": {"count": 20, "body": "makehuman"}},
    )
    scene = build_scene(scenario)
    w, h = 640, 400
    cams = FreeCameraRenderer(scene, w, h)
    tiles = []
    for r in range(4):
        # A moment and a person per tile; the camera where the room is most open behind it.
        k = int((0.3 + 0.23 * r) * (scene.n_steps - 1))
        lookat = np.array([*scene.group(People).skeleton_poses(k)[0][5 * r, 0, :2], 1.0])
        cams.pose(k)
        az = max(range(0, 360, 30), key=lambda a: cams.clearance_m(lookat, a, -12.0, 15.0))
        free = cams.clearance_m(lookat, az, -12.0, 15.0)
        dist = float(np.clip(free - 0.3, 1.5, 4.5))
        tiles.append(cams.render(k, lookat, float(az), -12.0, dist, (w, h)))
    top = np.concatenate(tiles[:2], axis=1)
    bottom = np.concatenate(tiles[2:], axis=1)
    write_image(out, np.concatenate([top, bottom], axis=0))
    cams.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("kind", choices=["closeup", "crowd"])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    os.environ.setdefault("MUJOCO_GL", "egl")
    if args.kind == "closeup":
        closeup(args.out, 4 if args.seed is None else args.seed)
    else:
        crowd(args.out, 42 if args.seed is None else args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
