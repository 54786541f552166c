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

from grade_sim.actors.people import sit_weights
from grade_sim.actors.placement import seat_in_use
from grade_sim.bench import default_scenario_path
from grade_sim.config.scenario import load_scenario
from grade_sim.scene import build_scene

TILE_W, TILE_H = 360, 400


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stops", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("MUJOCO_GL", "egl")
    import mujoco

    from grade_sim.engine.mujoco.builder import build_model

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
    model = build_model(scene).model
    data = mujoco.MjData(model)
    gl = mujoco.GLContext(4 * TILE_W, TILE_H)
    gl.make_current()
    con = mujoco.MjrContext(model, mujoco.mjtFontScale.mjFONTSCALE_100.value)
    mujoco.mjr_setBuffer(mujoco.mjtFramebuffer.mjFB_OFFSCREEN.value, con)
    vscene = mujoco.MjvScene(model, maxgeom=5000)
    vscene.flags[mujoco.mjtRndFlag.mjRND_SHADOW] = True
    opt = mujoco.MjvOption()
    names = [f"{p.name}/{j}" for p in scene.people for j in p.body_names()]
    names += [o.name for o in scene.objects]
    mocap = np.array(
        [model.body_mocapid[mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, n)] for n in names]
    )

    def render(step: int, lookat: np.ndarray, az_deg: float, dist: float) -> np.ndarray:
        pos, quat = scene.actor_body_poses(step)
        data.mocap_pos[mocap] = pos
        data.mocap_quat[mocap] = quat
        mujoco.mj_forward(model, data)
        cam = mujoco.MjvCamera()
        cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        cam.lookat[:] = lookat
        cam.elevation = -12.0
        cam.azimuth = az_deg
        cam.distance = dist
        mujoco.mjv_updateScene(
            model, data, opt, None, cam, mujoco.mjtCatBit.mjCAT_ALL.value, vscene
        )
        rect = mujoco.MjrRect(0, 0, TILE_W, TILE_H)
        mujoco.mjr_render(rect, vscene, con)
        img = np.empty((TILE_H, TILE_W, 3), dtype=np.uint8)
        mujoco.mjr_readPixels(img, None, rect, con)
        return img[::-1].copy()

    def free_distance(lookat: np.ndarray, az_deg: float) -> float:
        """How far a camera at this azimuth can stand back before a wall (a cone of rays)."""
        out = 2.4
        for spread in (-10.0, 0.0, 10.0):
            az = np.radians(az_deg + spread)
            back = np.array([np.cos(az), np.sin(az), np.sin(np.radians(12.0))])
            geom = np.zeros(1, dtype=np.int32)
            hit = mujoco.mj_ray(model, data, lookat, back / np.linalg.norm(back), None, 1, -1, geom)
            out = min(out, 2.4 if hit < 0 else float(hit) - 0.2)
        return max(out, 0.8)

    rows = []
    for i, tl in enumerate(scene.person_timelines):
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
            for k, az in ((steps[0], facing + 215), (steps[1], facing + 215)):
                tiles.append(render(k, lookat, az, free_distance(lookat, az + 180)))
            for az in (facing + 215, facing + 270):
                tiles.append(render(mid, lookat, az, free_distance(lookat, az + 180)))
            label = f"{scene.people[i].name} on {seat.name} (seat {seat.height_m:.2f} m)"
            cv2.putText(tiles[0], label, (6, 18), cv2.FONT_HERSHEY_SIMPLEX, 0.45, (255, 255, 0), 1)
            rows.append(np.concatenate(tiles, axis=1))
            print(label, "steps", steps, mid)
    if not rows:
        print("nobody sat in this scenario; try another --seed")
        return 1
    sheet = np.concatenate(rows, axis=0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(args.out), cv2.cvtColor(sheet, cv2.COLOR_RGB2BGR))
    print(f"wrote {args.out} ({sheet.shape[1]}x{sheet.shape[0]})")
    con.free()
    gl.free()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
