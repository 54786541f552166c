"""Render one frame of the default scenario as every ground-truth stream and camera model sees it.

    python scripts/ground_truth_sheet.py OUT.png [--seed 3] [--step 600]   # after env.sh

Top row: RGB, semantic classes (colours of gt/classes.yaml), optical-frame normals, backward
optical flow (hue = direction, brightness = magnitude), all from one pinhole camera of the
robot. Bottom row: the same view through a plumb_bob lens, an equidistant 190 deg fisheye and
its depth (range), and the instance mask. Everything comes from MujocoEngine.render, the call
the simulator makes.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path

import cv2
import numpy as np

os.environ.setdefault("MUJOCO_GL", "egl")

W, H = 320, 240


def _flow_image(flow: np.ndarray) -> np.ndarray:
    mag = np.linalg.norm(np.nan_to_num(flow), axis=-1)
    hsv = np.zeros((*flow.shape[:2], 3), dtype=np.uint8)
    hsv[..., 0] = (np.degrees(np.arctan2(flow[..., 1], flow[..., 0])) % 360 / 2).astype(np.uint8)
    hsv[..., 1] = 255
    hsv[..., 2] = np.clip(255 * mag / max(float(np.percentile(mag, 99)), 1e-6), 0, 255)
    hsv[np.isnan(flow[..., 0])] = 0
    return np.asarray(cv2.cvtColor(hsv, cv2.COLOR_HSV2RGB))


def _ids_image(ids: np.ndarray) -> np.ndarray:
    rng = np.random.default_rng(0)
    lut = rng.integers(40, 255, (int(ids.max()) + 1, 3), dtype=np.uint8)
    lut[0] = 0
    return np.asarray(lut[ids])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--step", type=int, default=600)
    args = parser.parse_args()
    from grade_sim.config.scenario import Stream, load_scenario
    from grade_sim.engine.mujoco.engine import MujocoEngine
    from grade_sim.scenarios import default_scenario_path
    from grade_sim.scene import build_scene

    scenario = load_scenario(default_scenario_path(), {"seed": args.seed})
    robot = scenario.robots[0]
    base = dataclasses.replace(robot.cameras[0], width=W, height=H)
    cameras = (
        dataclasses.replace(base, name="pinhole", streams=tuple(Stream)),
        dataclasses.replace(
            base, name="plumb_bob", model=type(base.model)("plumb_bob"), hfov_deg=90.0,
            distortion=(-0.2, 0.04, 0.0, 0.0, 0.0),
        ),
        dataclasses.replace(
            base, name="fisheye", model=type(base.model)("equidistant"), hfov_deg=190.0,
            fov_deg=190.0, distortion=(0.0, 0.0, 0.0, 0.0),
        ),
    )  # fmt: skip
    robot = dataclasses.replace(robot, cameras=cameras)
    scene = build_scene(dataclasses.replace(scenario, robots=(robot, *scenario.robots[1:])))
    engine = MujocoEngine(scene)
    try:
        tiles = []
        for step in (args.step - 8, args.step):  # flow needs the frame before
            pos, quat = scene.actor_body_poses(step)
            engine.set_actor_poses(pos, quat)
            setup = scene.robots[0]
            if setup.follower is not None:  # on its path, as in a teleport run
                names = tuple(j.name for j in setup.model.joints)
                q, qd, qdd = setup.follower.joint_trajectory(
                    step * scenario.physics_dt_s, names, scenario.physics_dt_s
                )
                engine.set_robot_kinematics(setup.model.name, q, qd, qdd)
            engine.update_kinematic_sensors()
            frame = engine.render(robot.name, "pinhole", frozenset(Stream))
        assert frame.rgb is not None
        assert frame.semantic is not None
        assert frame.normals_cam is not None
        assert frame.flow_px is not None
        tiles.append(frame.rgb)
        tiles.append(_ids_image(frame.semantic))
        tiles.append(((frame.normals_cam + 1) * 127.5).astype(np.uint8))
        tiles.append(_flow_image(frame.flow_px))
        plumb = engine.render(robot.name, "plumb_bob", frozenset({Stream.RGB}))
        fish = engine.render(
            robot.name, "fisheye", frozenset({Stream.RGB, Stream.DEPTH, Stream.INSTANCE})
        )
        assert plumb.rgb is not None
        assert fish.rgb is not None
        assert fish.depth_m is not None
        assert frame.instance is not None
        tiles.append(plumb.rgb)
        tiles.append(fish.rgb)
        depth = np.clip(fish.depth_m / 8.0, 0, 1)
        tiles.append(np.asarray(cv2.applyColorMap((255 * depth).astype(np.uint8), 20))[..., ::-1])
        tiles.append(_ids_image(frame.instance))
    finally:
        engine.close()
    sheet = np.concatenate([np.concatenate(tiles[:4], 1), np.concatenate(tiles[4:], 1)], 0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    ok = cv2.imwrite(str(args.out), cv2.cvtColor(sheet, cv2.COLOR_RGB2BGR))
    assert ok
    print(args.out)


if __name__ == "__main__":
    main()
