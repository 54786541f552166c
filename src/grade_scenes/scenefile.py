"""Scene files: generated scenes written in the simulator's tabletop format, and read back.

A candidate folder holds `meshes/` (each object's mesh in its centre-of-mass frame, written
once), `scenes/scene_NNN.yaml` (one tabletop scene file each, grade_sim.config.tabletop) and
`candidates.yaml` (seed, object names, stable-pose counts).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import yaml
from scipy.spatial.transform import Rotation

from grade_common.schema import to_mapping
from grade_scenes.catalog import CatalogEntry
from grade_scenes.errors import ScenesError
from grade_scenes.generate import PlacedObject, Scene
from grade_scenes.table import TableConfig
from grade_sim.config.tabletop import (
    SceneCameraSpec,
    SceneObjectSpec,
    TableSpec,
    TabletopSceneFile,
    load_tabletop_scene,
)

MESH_DIR = "meshes"
SCENE_DIR = "scenes"
INDEX_FILE = "candidates.yaml"


def scene_name(index: int) -> str:
    return f"scene_{index:03d}"


def table_spec(table: TableConfig) -> TableSpec:
    return TableSpec(
        size_m=table.size_m,
        top_height_m=table.top_height_m,
        thickness_m=table.thickness_m,
        center_xy=(table.center_x_m, 0.0),
    )


ORDER_STREAM = 1  # the fixed ordering's random stream, apart from the placement's


def fixed_order(names: list[str], seed: int, scene_index: int) -> tuple[str, ...]:
    """SceneReplica's fixed ordering of one scene: a permutation drawn once from (seed, scene).

    Its own stream (not the generator that placed the objects), so adding it changed no scene.
    """
    rng = np.random.default_rng(np.random.SeedSequence([seed, scene_index, ORDER_STREAM]))
    return tuple(names[k] for k in rng.permutation(len(names)))


def to_scene_file(
    scene: Scene, catalog: tuple[CatalogEntry, ...], table: TableConfig, order_seed: int = 0
) -> TabletopSceneFile:
    """The tabletop scene file of a generated scene (mesh paths relative to the scene file),
    with its fixed pick order drawn from (order_seed, scene index)."""
    objects = []
    for placed in scene.objects:
        entry = catalog[placed.object_index]
        t = placed.transform_world_object
        x, y, z, w = Rotation.from_matrix(t[:3, :3]).as_quat()
        inertia = entry.obj.inertia_kg_m2
        objects.append(
            SceneObjectSpec(
                name=entry.obj.name,
                mesh=f"../{MESH_DIR}/{entry.obj.name}.stl",
                mass_kg=round(entry.obj.mass_kg, 9),
                inertia_kg_m2=tuple(  # type: ignore[arg-type]
                    float(v)
                    for v in (
                        inertia[0, 0],
                        inertia[1, 1],
                        inertia[2, 2],
                        inertia[0, 1],
                        inertia[0, 2],
                        inertia[1, 2],
                    )
                ),
                position_xyz=(float(t[0, 3]), float(t[1, 3]), float(t[2, 3])),
                quaternion_wxyz=(float(w), float(x), float(y), float(z)),
                rgba=entry.obj.rgba,
                stable_pose=placed.pose_index,
            )
        )
    return TabletopSceneFile(
        name=scene_name(scene.index),
        objects=tuple(objects),
        pick_order=fixed_order([o.name for o in objects], order_seed, scene.index),
        table=table_spec(table),
        camera=SceneCameraSpec(target_xyz=(table.center_x_m - 0.05, 0.0, table.top_height_m)),
    )


def write_candidates(
    folder: Path,
    scenes: tuple[Scene, ...],
    catalog: tuple[CatalogEntry, ...],
    table: TableConfig,
    header: dict[str, Any],
    order_seed: int = 0,
) -> None:
    """Write meshes, one scene file per scene and the index into `folder` (a new folder);
    `order_seed` draws each scene's fixed pick order (`fixed_order`)."""
    (folder / MESH_DIR).mkdir(parents=True)
    (folder / SCENE_DIR).mkdir()
    for entry in catalog:
        entry.obj.mesh.export(folder / MESH_DIR / f"{entry.obj.name}.stl")
    for scene in scenes:
        data = to_mapping(to_scene_file(scene, catalog, table, order_seed))
        (folder / SCENE_DIR / f"{scene_name(scene.index)}.yaml").write_text(
            yaml.safe_dump(data, sort_keys=False)
        )
    index = {
        **header,
        "objects": [e.obj.name for e in catalog],
        "stable_poses": {e.obj.name: len(e.poses) for e in catalog},
        "scenes": [scene_name(s.index) for s in scenes],
    }
    (folder / INDEX_FILE).write_text(yaml.safe_dump(index, sort_keys=False))


def read_candidates(folder: str | Path) -> tuple[list[str], tuple[Scene, ...]]:
    """Object names and scenes of a candidate folder (poses as written, indices by name).

    Raises:
        ScenesError: the folder is not a candidate folder.
    """
    root = Path(folder)
    try:
        index = yaml.safe_load((root / INDEX_FILE).read_text())
        names = [str(n) for n in index["objects"]]
        scene_names = [str(n) for n in index["scenes"]]
    except (OSError, KeyError, TypeError, yaml.YAMLError) as err:
        raise ScenesError(
            f"{root}: not a candidate folder ({err}); make one with `grade scenes generate`"
        ) from err
    scenes = []
    for k, name in enumerate(scene_names):
        file = load_tabletop_scene(root / SCENE_DIR / f"{name}.yaml")
        placed = []
        for obj in file.objects:
            t = np.eye(4)
            w, x, y, z = obj.quaternion_wxyz
            t[:3, :3] = Rotation.from_quat([x, y, z, w]).as_matrix()
            t[:3, 3] = obj.position_xyz
            placed.append(PlacedObject(names.index(obj.name), obj.stable_pose, t))
        scenes.append(Scene(int(name.split("_")[-1]) if name[-1].isdigit() else k, tuple(placed)))
    return names, tuple(scenes)
