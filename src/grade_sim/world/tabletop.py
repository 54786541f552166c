"""The tabletop environment: a floor, the SceneReplica table and loose objects on it."""

from __future__ import annotations

import numpy as np

from grade_common.occupancy import OccupancyGrid
from grade_common.textures import TextureKind
from grade_sim.config.scenario import LightsConfig, TabletopEnvironmentConfig
from grade_sim.config.tabletop import load_tabletop_scene
from grade_sim.world.model import FreeBody, Light, Material, StaticBox, World

FLOOR_THICKNESS_M = 0.1
GRID_RESOLUTION_M = 0.1


def load_tabletop_world(
    config: TabletopEnvironmentConfig, lights: LightsConfig, rng: np.random.Generator
) -> World:
    """The world of a tabletop scene file: floor and table static, objects free to move.

    Raises:
        ConfigError: the scene file or one of its meshes is missing or invalid.
    """
    import trimesh

    scene = load_tabletop_scene(config.scene or "")
    table = scene.table
    half = config.floor_size_m / 2
    floor = StaticBox(
        "floor",
        "floor",
        1,
        (table.center_xy[0], table.center_xy[1], -FLOOR_THICKNESS_M / 2),
        (half, half, FLOOR_THICKNESS_M / 2),
        0.0,
        Material((0.55, 0.55, 0.55, 1.0), TextureKind.CHECKER, (0.45, 0.45, 0.45), 0.5),
    )
    top = table.top_height_m - table.thickness_m / 2
    boxes = [
        floor,
        StaticBox(
            "table",
            "table",
            2,
            (table.center_xy[0], table.center_xy[1], top),
            (table.size_m[0] / 2, table.size_m[1] / 2, table.thickness_m / 2),
            0.0,
            Material((0.72, 0.58, 0.42, 1.0)),
        ),
    ]
    # Legs: the table stands on the floor (they also show in depth and segmentation).
    leg = 0.03
    for k, (sx, sy) in enumerate(((1, 1), (1, -1), (-1, 1), (-1, -1))):
        x = table.center_xy[0] + sx * (table.size_m[0] / 2 - leg)
        y = table.center_xy[1] + sy * (table.size_m[1] / 2 - leg)
        height = table.top_height_m - table.thickness_m
        boxes.append(
            StaticBox(
                f"table_leg_{k}",
                "table",
                2,
                (x, y, height / 2),
                (leg, leg, height / 2),
                0.0,
                Material((0.4, 0.3, 0.2, 1.0)),
            )
        )
    bodies = []
    for k, obj in enumerate(scene.objects):
        mesh = trimesh.load(obj.mesh, force="mesh")
        assert isinstance(mesh, trimesh.Trimesh)  # force="mesh" always gives one
        bodies.append(
            FreeBody(
                obj.name,
                "tabletop_object",
                3 + k,
                np.asarray(mesh.vertices, dtype=np.float64),
                np.asarray(mesh.faces, dtype=np.int32),
                obj.mass_kg,
                obj.inertia_kg_m2,
                obj.position_xyz,
                obj.quaternion_wxyz,
                Material(obj.rgba),
            )
        )
    world_lights = []
    for k in range(lights.count):
        intensity = rng.uniform(*lights.intensity)
        angle = 2 * np.pi * k / lights.count
        world_lights.append(
            Light(
                (
                    float(table.center_xy[0] + 1.5 * np.cos(angle)),
                    float(table.center_xy[1] + 1.5 * np.sin(angle)),
                    2.5,
                ),
                (float(intensity), float(intensity), float(intensity)),
            )
        )
    lo = (table.center_xy[0] - half, table.center_xy[1] - half)
    hi = (table.center_xy[0] + half, table.center_xy[1] + half)
    grid = OccupancyGrid.from_boxes(boxes, lo, hi, GRID_RESOLUTION_M, ("floor",), 1.9)
    return World(
        boxes=tuple(boxes),
        meshes=(),
        lights=tuple(world_lights),
        free_space=grid,
        bounds_min_xyz=(lo[0], lo[1], 0.0),
        bounds_max_xyz=(hi[0], hi[1], 2.0),
        tour_xy=(),
        ceiling_height_m=3.0,
        free_bodies=tuple(bodies),
    )
