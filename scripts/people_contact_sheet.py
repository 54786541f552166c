"""Render the README's contact sheet of skinned people: one tile per person, plus a room view.

    python scripts/people_contact_sheet.py docs/images/people_contact_sheet.jpg [--seed 4]

Builds the default scenario (config/indoor_uav.yaml) with people doing every stationary motion
of the library (wave, look around, phone) between walks, and renders each person from a free
camera 2.6 m in front of them at a step where they do something different.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import cv2
import numpy as np

from grade_sim.bench import default_scenario_path
from grade_sim.config.scenario import load_scenario
from grade_sim.scene import build_scene

TILE_W, TILE_H = 320, 480


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=4)
    args = parser.parse_args()
    os.environ.setdefault("MUJOCO_GL", "egl")
    import mujoco

    from grade_sim.engine.mujoco.builder import build_model

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
    model = build_model(scene).model
    data = mujoco.MjData(model)
    gl = mujoco.GLContext(2 * TILE_W * 2, TILE_H)
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

    def render(step: int, cam: object, width: int, height: int) -> np.ndarray:
        pos, quat = scene.actor_body_poses(step)
        data.mocap_pos[mocap] = pos
        data.mocap_quat[mocap] = quat
        mujoco.mj_forward(model, data)
        mujoco.mjv_updateScene(
            model, data, opt, None, cam, mujoco.mjtCatBit.mjCAT_ALL.value, vscene
        )
        rect = mujoco.MjrRect(0, 0, width, height)
        mujoco.mjr_render(rect, vscene, con)
        img = np.empty((height, width, 3), dtype=np.uint8)
        mujoco.mjr_readPixels(img, None, rect, con)
        return img[::-1]

    tiles = []

    def clearance(lookat: np.ndarray, az_deg: float, el_deg: float) -> float:
        """Free distance from the person towards a camera at this azimuth (3 rays, a cone)."""
        out = 10.0
        for spread in (-12.0, 0.0, 12.0):
            az, el = np.radians(az_deg + spread), np.radians(el_deg)
            forward = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
            geom = np.zeros(1, dtype=np.int32)
            hit = mujoco.mj_ray(model, data, lookat, -forward, None, 1, -1, geom)
            out = min(out, 10.0 if hit < 0 else float(hit))
        return out

    tiles = []
    for i, tl in enumerate(scene.person_timelines):
        # Candidate steps: stationary clips (wave/look/phone) first, then walking ones.
        special = np.flatnonzero(tl.motion >= 5)
        candidates = [int(k) for k in special[:: max(1, len(special) // 6)]][:6]
        candidates += [int(k) for k in np.linspace(0.1, 0.9, 6) * (len(tl.motion) - 1)]
        best = (-1e9, 0, 0.0, 0.0)
        for k in candidates:
            joints = scene.skeleton_poses(k)[0][i]
            lookat = np.array([joints[0, 0], joints[0, 1], 0.9])
            for offset in (20.0, -20.0, 45.0, -45.0, 70.0, -70.0, 110.0, -110.0, 160.0):
                az = float(np.degrees(tl.heading_rad[k])) + 180.0 + offset
                free = min(clearance(lookat, az, -8.0), 3.0)
                # The camera itself must stand in the rooms' free floor, not in or behind a wall.
                dist = float(np.clip(free - 0.3, 1.2, 2.6))
                cam_xy = lookat[:2] + dist * np.array(
                    [np.cos(np.radians(az)), np.sin(np.radians(az))]
                )
                # ... and see the person from there (a ray back does not hit a wall's far side).
                cam_pos = np.array([*cam_xy, lookat[2] + dist * np.sin(np.radians(8.0))])
                back = lookat - cam_pos
                geom = np.zeros(1, dtype=np.int32)
                hit = mujoco.mj_ray(
                    model, data, cam_pos, back / np.linalg.norm(back), None, 1, -1, geom
                )
                seen = hit < 0 or hit > np.linalg.norm(back) - 0.05
                # ... nor through another person (skins are not geoms: mj_ray misses them).
                others = np.array(
                    [t.position_xy[k] for j, t in enumerate(scene.person_timelines) if j != i]
                )
                if len(others):
                    seg = lookat[:2] - cam_xy
                    u = np.clip((others - cam_xy) @ seg / max(seg @ seg, 1e-9), 0.0, 1.0)
                    gap = np.linalg.norm(cam_xy + u[:, None] * seg - others, axis=1)
                    seen = seen and bool(gap.min() > 0.45)
                inside = scene.world.free_space.is_free(cam_xy) and seen
                score = free - 0.005 * abs(offset) + (0.4 if k in special else 0.0)
                score -= 0.0 if inside else 10.0
                if score > best[0]:
                    best = (score, k, az, free)
        _, k, az, free = best
        joints = scene.skeleton_poses(k)[0][i]
        cam = mujoco.MjvCamera()
        cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        cam.lookat[:] = [joints[0, 0], joints[0, 1], 0.9]
        cam.elevation = -8.0
        cam.azimuth = az
        cam.distance = float(np.clip(free - 0.3, 1.2, 2.6))
        tiles.append(render(k, cam, TILE_W, TILE_H))
    rows = [np.concatenate(tiles[r * 4 : r * 4 + 4], axis=1) for r in range(len(tiles) // 4)]
    sheet = np.concatenate(rows, axis=0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(args.out), cv2.cvtColor(sheet, cv2.COLOR_RGB2BGR))
    print(f"wrote {args.out} ({sheet.shape[1]}x{sheet.shape[0]})")
    con.free()
    gl.free()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
