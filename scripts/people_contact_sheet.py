"""Render the README's contact sheet of the default (MakeHuman) people: a tile per person.

    python scripts/people_contact_sheet.py docs/images/people_contact_sheet.jpg [--seed 4]

Builds the default scenario (config/indoor_uav.yaml) with people doing every stationary motion
of the library (wave, look around, phone) between walks, and renders each person from a free
camera 2.6 m in front of them at a step where they do something different.
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

TILE_W, TILE_H = 320, 480


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=4)
    args = parser.parse_args()
    os.environ.setdefault("MUJOCO_GL", "egl")
    scenario = load_scenario(
        default_scenario_path(),
        {
            "seed": args.seed,
            "duration_s": 30.0,
            "people": {
                "count": 8,
                "motions": ["walk", "stand", "turn", "wave", "look", "phone"],
                "walk_fraction": 0.5,
            },
        },
    )
    scene = build_scene(scenario)
    cams = FreeCameraRenderer(scene, TILE_W, TILE_H)

    tiles = []
    for i, tl in enumerate(scene.group(People).timelines):
        # Candidate steps: stationary clips (wave/look/phone) first, then walking ones.
        special = np.flatnonzero(tl.motion >= 5)
        candidates = [int(k) for k in special[:: max(1, len(special) // 6)]][:6]
        candidates += [int(k) for k in np.linspace(0.1, 0.9, 6) * (len(tl.motion) - 1)]
        # Then, if no view of those is clear, many more steps (a crowded room).
        candidates += [int(k) for k in np.linspace(0.02, 0.98, 40) * (len(tl.motion) - 1)]
        best = (-1e9, 0, 0.0, 0.0)
        for n, k in enumerate(candidates):
            if n == 12 and best[0] > -5.0:
                break
            cams.pose(k)
            joints = scene.group(People).skeleton_poses(k)[0][i]
            lookat = np.array([joints[0, 0], joints[0, 1], 0.9])
            for offset in (20.0, -20.0, 45.0, -45.0, 70.0, -70.0, 110.0, -110.0, 160.0):
                az = float(np.degrees(tl.heading_rad[k])) + 180.0 + offset
                free = min(cams.clearance_m(lookat, az, -8.0, 12.0), 3.0)
                # The camera itself must stand in the rooms' free floor, not in or behind a wall.
                dist = float(np.clip(free - 0.3, 1.2, 2.6))
                # A free camera at azimuth az looks along az: it stands behind lookat.
                cam_xy = lookat[:2] - dist * np.array(
                    [np.cos(np.radians(az)), np.sin(np.radians(az))]
                )
                # ... and see the person from there (a ray back does not hit a wall's far side).
                cam_pos = np.array([*cam_xy, lookat[2] + dist * np.sin(np.radians(8.0))])
                back = lookat - cam_pos
                seen = cams.ray_m(cam_pos, back) > np.linalg.norm(back) - 0.05
                # ... nor past another person in the picture (skins are not geoms: mj_ray misses
                # them): nobody nearer than the subject within the view's half angle (22.5 deg)
                # widened by a body's half width.
                others = np.array(
                    [
                        t.position_xy[k]
                        for j, t in enumerate(scene.group(People).timelines)
                        if j != i
                    ]
                )
                if len(others):
                    view = lookat[:2] - cam_xy
                    reach = float(np.linalg.norm(view))
                    rel = others - cam_xy
                    along = rel @ view / reach
                    across = np.abs(rel @ np.array([-view[1], view[0]]) / reach)
                    near = (along > -0.4) & (along < reach + 0.2)
                    in_view = across < 0.4 + np.tan(np.radians(22.5)) * np.maximum(along, 0.0)
                    seen = seen and not bool(np.any(near & in_view))
                inside = scene.world.free_space.is_free(cam_xy) and seen
                score = free - 0.005 * abs(offset) + (0.4 if k in special else 0.0)
                score -= 0.0 if inside else 10.0
                if score > best[0]:
                    best = (score, k, az, free)
        _, k, az, free = best
        joints = scene.group(People).skeleton_poses(k)[0][i]
        lookat = np.array([joints[0, 0], joints[0, 1], 0.9])
        dist = float(np.clip(free - 0.3, 1.2, 2.6))
        tiles.append(cams.render(k, lookat, az, -8.0, dist, (TILE_W, TILE_H)))
    rows = [np.concatenate(tiles[r * 4 : r * 4 + 4], axis=1) for r in range(len(tiles) // 4)]
    write_image(args.out, np.concatenate(rows, axis=0))
    cams.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
