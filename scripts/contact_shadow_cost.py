"""What the contact shadows cost per frame: the default scenario with N people, baked, with
contact shadows on and off, alternating frame by frame on the same poses.

    python scripts/contact_shadow_cost.py [--people 20] [--frames 40] [--supersample 1.5]
    # after source scripts/env.sh

Two kinds of frames: the robot's tour (as `grade bench looks`), and a crowd view with every
person moved onto a grid 2.5-8 m in front of the camera (all footprints in view: the worst
case). Prints ms per frame of `MujocoEngine.render` (RGB + depth + instances, 640x480) with and
without, and the time of the shadow pass itself (`ContactShadows.darken`).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from grade_sim.actors.people_group import People

os.environ.setdefault("MUJOCO_GL", "egl")


def main() -> int:
    from grade_sim.bench_looks import _pose
    from grade_sim.config.scenario import IMAGE_STREAMS, load_scenario
    from grade_sim.engine.mujoco import contact_shadows
    from grade_sim.engine.mujoco.engine import MujocoEngine
    from grade_sim.scenarios import default_scenario_path
    from grade_sim.scene import build_scene

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--people", type=int, default=20)
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--supersample", type=float, default=1.5)
    args = parser.parse_args()
    sets = {
        "people.count": args.people,
        "lights.bake.enabled": True,
        "render.supersample": args.supersample,
    }
    engines = {}
    for on in (False, True):
        scenario = load_scenario(
            default_scenario_path(), {**sets, "lights.bake.contact_shadows": on}
        )
        scene = build_scene(scenario)
        engines[on] = MujocoEngine(scene)
    spent: list[float] = []
    original = contact_shadows.ContactShadows.darken

    def timed(self: object, *a: object, **kw: object) -> None:
        t0 = time.perf_counter()
        original(self, *a, **kw)  # type: ignore[arg-type]
        spent.append(time.perf_counter() - t0)

    contact_shadows.ContactShadows.darken = timed  # type: ignore[method-assign]
    setup = scene.robots[0]
    robot, camera = setup.model.name, setup.model.config.cameras[0].name
    per_person = len(scene.group(People).specs[0].body_names())
    for view in ("tour", "crowd"):
        total = {False: 0.0, True: 0.0}
        spent.clear()
        for k in range(args.frames):
            step = (k * 37) % scene.n_steps
            pos, quat = scene.actor_body_poses(step)
            for on, engine in engines.items():
                _pose(engine, scene, k, args.frames)
                p = pos.copy()
                if view == "crowd":
                    cam_xy, _ = engine.camera_pose(robot, camera)
                    forward = engine.data.cam_xmat[engine._cameras[(robot, camera)].cam_id]
                    ahead = -np.asarray(forward).reshape(3, 3)[:2, 2]
                    ahead /= np.linalg.norm(ahead)
                    side = np.array([-ahead[1], ahead[0]])
                    for i in range(len(scene.group(People).specs)):
                        row, col = divmod(i, 5)
                        spot = cam_xy[:2] + (2.5 + 1.4 * row) * ahead + (col - 2) * 1.0 * side
                        rows = slice(i * per_person, (i + 1) * per_person)
                        p[rows, :2] += spot - p[i * per_person, :2]
                engine.set_actor_poses(p, quat)
                engine.update_kinematic_sensors()
                t0 = time.perf_counter()
                engine.render(robot, camera, IMAGE_STREAMS)
                if k > 0:  # the first frame makes the GL context
                    total[on] += time.perf_counter() - t0
        n = args.frames - 1
        off_ms, on_ms = (1000 * total[b] / n for b in (False, True))
        shadow_ms = 1000 * float(np.median(spent[1:]))
        print(
            f"{view:5s}: {args.people} people, supersample {args.supersample}: "
            f"off {off_ms:6.1f} ms/frame, on {on_ms:6.1f} ms/frame (x{on_ms / off_ms:5.3f}); "
            f"shadow pass median {shadow_ms:5.2f} ms, max {1000 * max(spent[1:]):5.2f} ms"
        )
    for engine in engines.values():
        engine.close()
    print(f"load average: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
