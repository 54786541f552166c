"""Before/after contact sheets of the baked lighting (docs/images/bake_rooms.jpg, bake_savanna.jpg).

    python scripts/bake_contact_sheet.py OUT.jpg [--world rooms|savanna] [--people N]
                                         [--views N] [--no-probes] [--no-contact-shadows]
    # after source scripts/env.sh

Each row is one view through the robot's own camera, rendered by the simulator's engine
(grade_sim.engine.mujoco): on the left the live lights (lights.bake off), on the right the
bake with its light probes and contact shadows (as the flags say). The views look at people
(the camera placed up to 3.2 m from a person, 1.9 m up and tilted down, on the side with
the most free space), so
the sheet shows how moving things sit in the baked light.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path
from typing import Any

import numpy as np

from grade_sim.actors.people_group import People

os.environ.setdefault("MUJOCO_GL", "egl")

from sheet_kit import write_image

DISTANCE_M = 3.2
CAMERA_Z_M = 1.9
WIDTH, HEIGHT = 480, 360
PITCH_RAD = 0.35  # the camera looks down a little, at the feet and their shadows


def _scenario(world: str, people: int, bake: dict[str, Any]) -> Any:
    import yaml

    from grade_common.share import shipped_file
    from grade_sim.config.scenario import scenario_from_mapping
    from grade_sim.scenarios import default_scenario_path

    path = (
        default_scenario_path() if world == "rooms" else shipped_file("config/outdoor_savanna.yaml")
    )
    mapping = yaml.safe_load(path.read_text())
    mapping["people"] = {**mapping.get("people", {}), "count": people}
    mapping["lights"] = {**mapping.get("lights", {}), "bake": bake}
    mapping["render"] = {**mapping.get("render", {}), "supersample": 1.5}
    robot = mapping["robots"][0]
    robot["motion"] = {"mode": "commands"}
    robot["cameras"] = [
        {
            **robot["cameras"][0],
            "width": WIDTH,
            "height": HEIGHT,
            "mount": {"xyz": [0.2, 0, 0], "rpy": [0, PITCH_RAD, 0]},
        }
    ]
    mapping["robots"] = [robot]
    return scenario_from_mapping(mapping)


def _views(scene: Any, engine: Any, n: int) -> list[tuple[int, np.ndarray, float]]:
    """(step, camera xyz, yaw) looking at person k at step k * stride, from its freest side."""
    import mujoco

    out = []
    stride = max(1, scene.n_steps // max(n, 1))
    for k in range(n):
        step = k * stride
        person = scene.group(People).specs[k % len(scene.group(People).specs)]
        pos, quat = scene.actor_body_poses(step)
        engine.set_actor_poses(pos, quat)
        mujoco.mj_forward(engine.model, engine.data)
        body = mujoco.mj_name2id(
            engine.model, mujoco.mjtObj.mjOBJ_BODY, f"{person.name}/{person.body_names()[0]}"
        )
        centre = engine.data.xpos[body].copy()
        best, best_free = 0.0, -1.0
        for a in np.linspace(0.0, 2 * math.pi, 16, endpoint=False):
            d = np.array([math.cos(a), math.sin(a), 0.0])
            geom = np.zeros(1, np.int32)
            origin = np.array([centre[0], centre[1], CAMERA_Z_M])
            hit = mujoco.mj_ray(engine.model, engine.data, origin, d, None, 1, body, geom)
            free = DISTANCE_M * 2 if hit < 0 else hit
            if free > best_free:
                best, best_free = a, free
        dist = min(DISTANCE_M, max(0.8, best_free - 0.3))
        xyz = np.array([centre[0], centre[1], CAMERA_Z_M]) + dist * np.array(
            [math.cos(best), math.sin(best), 0.0]
        )
        xyz[2] += scene.world.terrain_height(xyz[0], xyz[1])
        out.append((step, xyz, best + math.pi))
    return out


def _render(scene: Any, views: list[tuple[int, np.ndarray, float]]) -> list[np.ndarray]:
    from grade_sim.config.scenario import Stream
    from grade_sim.engine.mujoco.engine import MujocoEngine

    engine = MujocoEngine(scene)
    setup = scene.robots[0]
    names = [j.name for j in setup.model.joints]
    images = []
    for step, xyz, yaw in views:
        pos, quat = scene.actor_body_poses(step)
        engine.set_actor_poses(pos, quat)
        q = np.zeros(len(names))
        for i, name in enumerate(names):
            if name in ("x", "y", "z"):
                q[i] = xyz["xyz".index(name)]
            elif name == "yaw":
                q[i] = yaw
        zeros = np.zeros(len(names))
        engine.set_robot_kinematics(setup.model.name, q, zeros, zeros)
        engine.update_kinematic_sensors()
        cam = setup.model.config.cameras[0].name
        frame = engine.render(setup.model.name, cam, frozenset({Stream.RGB}))
        images.append(frame.rgb)
    engine.close()
    return images


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--world", choices=("rooms", "savanna"), default="rooms")
    parser.add_argument("--people", type=int, default=8)
    parser.add_argument("--views", type=int, default=4)
    parser.add_argument("--no-probes", action="store_true")
    parser.add_argument("--no-contact-shadows", action="store_true")
    args = parser.parse_args()
    from grade_sim.scene import build_scene

    baked = {
        "enabled": True,
        "probes": not args.no_probes,
        "contact_shadows": not args.no_contact_shadows,
    }
    plain_scene = build_scene(_scenario(args.world, args.people, {"enabled": False}))
    baked_scene = build_scene(_scenario(args.world, args.people, baked))
    from grade_sim.engine.mujoco.engine import MujocoEngine

    probe_engine = MujocoEngine(plain_scene)
    views = _views(plain_scene, probe_engine, args.views)
    probe_engine.close()
    left, right = _render(plain_scene, views), _render(baked_scene, views)
    rows = [np.concatenate([a, b], axis=1) for a, b in zip(left, right, strict=True)]
    write_image(args.out, np.concatenate(rows, axis=0))
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
