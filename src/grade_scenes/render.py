"""Reference images: each scene seen from the robot's camera after its objects settled.

The simulator's own model of the scene (grade_sim's tabletop world) is rendered offscreen by
MuJoCo from the scene file's camera (position, look-at target, horizontal field of view), so a
user can replicate the scene by matching a live image of the same camera to it.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.atomic import StagedOutput
from grade_scenes.settle import tabletop_scenario
from grade_sim.config.tabletop import load_tabletop_scene
from grade_sim.engine.mujoco.builder import build_model
from grade_sim.scene import build_scene


def offscreen_renderer(model: Any, height: int, width: int) -> Any:
    """A MuJoCo renderer of `model` at height x width, its offscreen framebuffer grown to fit
    (the simulator sizes it for the scenario's own cameras only)."""
    import mujoco

    model.vis.global_.offwidth = max(model.vis.global_.offwidth, width)
    model.vis.global_.offheight = max(model.vis.global_.offheight, height)
    return mujoco.Renderer(model, height, width)


def render_reference(scene_file: str | Path, settle_s: float = 1.0) -> NDArray[np.uint8]:
    """The scene's reference RGB image (height x width x 3) after `settle_s` of physics."""
    os.environ.setdefault("MUJOCO_GL", "egl")
    import mujoco

    spec = load_tabletop_scene(scene_file)
    cam = spec.camera
    scene = build_scene(tabletop_scenario(scene_file, max(settle_s, 0.01)))
    built = build_model(scene)
    model = built.model
    # Aspect ratio: MuJoCo's fovy is vertical; the scene file gives the horizontal one.
    fovy = 2 * math.degrees(
        math.atan(math.tan(math.radians(cam.hfov_deg) / 2) * cam.height / cam.width)
    )
    model.vis.global_.fovy = fovy
    data = mujoco.MjData(model)
    for _ in range(round(settle_s / model.opt.timestep)):
        mujoco.mj_step(model, data)
    mujoco.mj_forward(model, data)
    # Hide the camera rig of the scenario: only the table scene is wanted.
    for k in range(model.ngeom):
        if model.body_rootid[model.geom_bodyid[k]] != 0 and model.body(
            model.geom_bodyid[k]
        ).name not in {b.name for b in scene.world.free_bodies}:
            model.geom_rgba[k, 3] = 0.0
    position, target = np.array(cam.position_xyz), np.array(cam.target_xyz)
    offset = target - position
    camera = mujoco.MjvCamera()
    camera.type = mujoco.mjtCamera.mjCAMERA_FREE
    camera.lookat[:] = target
    camera.distance = float(np.linalg.norm(offset))
    camera.azimuth = math.degrees(math.atan2(offset[1], offset[0]))
    camera.elevation = math.degrees(math.atan2(offset[2], math.hypot(offset[0], offset[1])))
    renderer = offscreen_renderer(model, cam.height, cam.width)
    try:
        renderer.update_scene(data, camera)
        image: NDArray[np.uint8] = renderer.render().copy()
    finally:
        renderer.close()
    return image


def write_png(image: NDArray[np.uint8], path: str | Path) -> Path:
    """Write an RGB image as a new PNG."""
    with StagedOutput(path) as tmp:
        if not cv2.imwrite(str(tmp), cv2.cvtColor(image, cv2.COLOR_RGB2BGR)):
            raise OSError(f"{path}: OpenCV could not write the PNG")
    return Path(path)
