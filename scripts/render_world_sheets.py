"""Render contact sheets of the procedural worlds (docs/images/worlds_*.png).

    python scripts/render_world_sheets.py OUT_DIR [--mesh-obj PATH]   # after source scripts/env.sh

Each sheet tiles free-camera views of worlds drawn from several seeds: indoor rooms with their
furniture, the outdoor savanna, and a textured mesh world (the sample world unless --mesh-obj
names one). Views are rendered with the simulator's own MuJoCo model
(grade_sim.engine.mujoco.builder), as robots' cameras see it.
"""

from __future__ import annotations

import argparse
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("MUJOCO_GL", "egl")

TILE_WH = (480, 360)


def _scene(environment: dict[str, Any], seed: int, people: int) -> Any:
    import yaml

    from grade_sim.config.scenario import scenario_from_mapping
    from grade_sim.scenarios import default_scenario_path
    from grade_sim.scene import build_scene

    mapping: dict[str, Any] = {
        "seed": seed,
        "duration_s": 0.1,
        "environment": environment,
        "people": {"count": people},
        "flying_objects": {"count": 0},
    }
    if "procedural" in environment:  # rooms lit as in the default scenario
        mapping["lights"] = yaml.safe_load(default_scenario_path().read_text())["lights"]
    scenario = scenario_from_mapping(mapping)
    return build_scene(scenario)


def _views(
    scene: Any,
    lookats: list[tuple[tuple[float, float, float], float, float, float]],
    hide_labels: tuple[str, ...] = (),
) -> list[np.ndarray]:
    """Free-camera renders: (look-at point, distance, azimuth deg, elevation deg) each; geoms of
    instances labelled as in hide_labels are not drawn (a ceiling, for a view from above)."""
    import mujoco

    from grade_sim.engine.mujoco.builder import build_model

    built = build_model(scene)
    model = built.model
    model.vis.global_.offwidth = max(model.vis.global_.offwidth, TILE_WH[0])
    model.vis.global_.offheight = max(model.vis.global_.offheight, TILE_WH[1])
    model.vis.map.zfar = 200.0 / max(model.stat.extent, 1.0)
    for geom, instance_id in enumerate(built.geom_instance_ids):
        info = scene.instances.get(int(instance_id))
        if info is not None and info.label in hide_labels:
            model.geom_rgba[geom, 3] = 0.0
            model.geom_matid[geom] = -1
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    out = []
    with mujoco.Renderer(model, TILE_WH[1], TILE_WH[0]) as renderer:
        for lookat, distance, azimuth, elevation in lookats:
            cam = mujoco.MjvCamera()
            cam.type = mujoco.mjtCamera.mjCAMERA_FREE
            cam.lookat[:] = lookat
            cam.distance, cam.azimuth, cam.elevation = distance, azimuth, elevation
            renderer.update_scene(data, cam)
            out.append(renderer.render().copy())
    return out


def _sheet(tiles: list[np.ndarray], columns: int) -> np.ndarray:
    rows = math.ceil(len(tiles) / columns)
    h, w = tiles[0].shape[:2]
    sheet = np.full((rows * h + (rows - 1) * 4, columns * w + (columns - 1) * 4, 3), 255, np.uint8)
    for k, tile in enumerate(tiles):
        r, c = divmod(k, columns)
        sheet[r * (h + 4) : r * (h + 4) + h, c * (w + 4) : c * (w + 4) + w] = tile
    return sheet


def indoor_tiles() -> list[np.ndarray]:
    """Per seed: a cut-away view from above (ceiling hidden) and one from inside a room."""
    tiles = []
    for seed in (1, 2, 3):
        env = {
            "type": "procedural",
            "procedural": {"rooms_x": 2, "rooms_y": 2, "furniture_per_room": [3, 4]},
        }
        scene = _scene(env, seed, people=2)
        world = scene.world
        lo, hi = np.array(world.bounds_min_xyz), np.array(world.bounds_max_xyz)
        mid = (lo + hi) / 2
        room = world.tour_xy[0]
        tiles += _views(
            scene,
            [
                ((mid[0], mid[1], 0.0), 1.25 * float(np.linalg.norm(hi[:2] - lo[:2])), 60.0, -55.0),
                ((room[0], room[1], 0.8), 2.2, 40.0 + 90 * seed, -18.0),
            ],
            hide_labels=("ceiling",),
        )
    return tiles


def furniture_tiles() -> list[np.ndarray]:
    """One tile per furniture kind: three seeded designs of it side by side on a floor."""
    from grade_common.occupancy import OccupancyGrid
    from grade_sim.config.scenario import scenario_from_mapping
    from grade_sim.scene import Scene
    from grade_sim.world import furniture
    from grade_sim.world.model import Light, Material, StaticBox, World

    floor_mat = Material((0.8, 0.8, 0.78, 1.0))
    floor = StaticBox("floor", "floor", 1, (2.6, 12.0, -0.05), (12.0, 20.0, 0.05), 0.0, floor_mat)
    boxes = [floor]
    views = []
    for row, kind in enumerate(furniture.KINDS):
        y = 4.0 * row
        for col in range(3):
            piece = furniture.design(kind, np.random.default_rng(10 * row + col))
            boxes += furniture.place(piece, f"{kind}_{col}", len(boxes) + 1, (2.6 * col, y), 0)
        views.append(((2.6, y, 0.5), 5.2, 200.0, -22.0))
    world = World(
        boxes=tuple(boxes),
        meshes=(),
        lights=(Light((3.0, 10.0, 8.0), (0.6, 0.6, 0.6), directional=True),),
        free_space=OccupancyGrid((0.0, 0.0), 1.0, np.zeros((1, 1), dtype=bool)),
        bounds_min_xyz=(-2.0, -2.0, 0.0),
        bounds_max_xyz=(8.0, 28.0, 2.5),
    )
    scenario = scenario_from_mapping({"duration_s": 0.1, "people": {"count": 0}})
    return _views(Scene(scenario=scenario, world=world, n_steps=1), views)


def outdoor_tiles() -> list[np.ndarray]:
    tiles = []
    for seed in (1, 2, 3):
        scene = _scene({"type": "outdoor"}, seed, people=3)
        # Cameras inside the robots' loop corridor (free of obstacles), looking out and across.
        tiles += _views(
            scene,
            [
                ((0.0, 0.0, 1.0), 9.0, 30.0 + 70 * seed, -8.0),
                ((0.0, 0.0, 3.0), 9.5, 200.0 + 50 * seed, -25.0),
            ],
        )
    return tiles


def mesh_tiles(obj: Path) -> list[np.ndarray]:
    scene = _scene({"type": "mesh", "mesh": {"path": str(obj)}}, 1, people=0)
    lo, hi = np.array(scene.world.bounds_min_xyz), np.array(scene.world.bounds_max_xyz)
    mid = (lo + hi) / 2
    return _views(scene, [((mid[0], mid[1], 0.3), 6.5, az, -48.0) for az in (240.0, 60.0)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument(
        "--mesh-obj", type=Path, default=None, help="mesh world (default: the sample world)"
    )
    args = parser.parse_args()
    import cv2

    from grade_common.atomic import StagedOutput

    args.out_dir.mkdir(parents=True, exist_ok=True)
    sheets = {
        "worlds_furniture.png": (furniture_tiles, 2),
        "worlds_indoor.png": (indoor_tiles, 2),
        "worlds_outdoor.png": (outdoor_tiles, 2),
    }
    for name, (make, columns) in sheets.items():
        _write(args.out_dir / name, _sheet(make(), columns), cv2, StagedOutput)
    with tempfile.TemporaryDirectory() as tmp:
        obj = args.mesh_obj
        if obj is None:
            from grade_sim.world.sample_world import write_sample_world

            obj = write_sample_world(Path(tmp))
        _write(args.out_dir / "worlds_mesh.png", _sheet(mesh_tiles(obj), 2), cv2, StagedOutput)


def _write(path: Path, rgb: np.ndarray, cv2: Any, staged: Any) -> None:
    ok, png = cv2.imencode(".png", rgb[:, :, ::-1], [cv2.IMWRITE_PNG_COMPRESSION, 9])
    assert ok
    with staged(path) as staging_path:
        staging_path.write_bytes(png.tobytes())
    print(path)


if __name__ == "__main__":
    main()
