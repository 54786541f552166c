"""Depth of a static world seen by a free MuJoCo camera (no robots, people or objects in view):
one helper for the tests that compare worlds loaded from different files."""

from __future__ import annotations

import numpy as np

from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.scene import Scene
from grade_sim.world.model import World


def world_depth(
    world: World,
    lookat_xyz: tuple[float, float, float],
    distance_m: float,
    azimuth_deg: float = 90.0,
    elevation_deg: float = -90.0,
    size_px: int = 9,
) -> np.ndarray:
    """(size, size) depth in metres of the world alone, from a camera `distance_m` from
    `lookat_xyz` (MuJoCo's free camera angles; the default looks straight down)."""
    import mujoco

    from grade_sim.engine.mujoco.builder import build_model

    scenario = scenario_from_mapping(
        {
            "duration_s": 0.1,
            "environment": {"type": "mesh", "mesh": {"path": "unused.obj"}},
            "people": {"count": 0},
            "flying_objects": {"count": 0},
            # Far outside any test world, so the robot never shows.
            "robots": [{"name": "uav1", "start_xyz": [-500.0, -500.0, 5.0]}],
        }
    )
    model = build_model(Scene(scenario=scenario, world=world, n_steps=1)).model
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    with mujoco.Renderer(model, size_px, size_px) as renderer:
        renderer.enable_depth_rendering()
        cam = mujoco.MjvCamera()
        cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        cam.lookat[:] = lookat_xyz
        cam.distance, cam.azimuth, cam.elevation = distance_m, azimuth_deg, elevation_deg
        renderer.update_scene(data, cam)
        return np.asarray(renderer.render(), dtype=np.float64)
