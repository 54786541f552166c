"""Candidate scenes: objects placed one by one in stable poses, collision-free, on reachable blocks.

As SceneReplica: each scene takes `objects_per_scene` distinct objects; the first lands on a
random reachable block, each next one near an object already placed (within
`neighbour_radius_m`), each in a stable pose drawn by its probability with a uniform random yaw.
A placement is kept when its convex hull stays `clearance_m` away from every placed hull (FCL
distance; the hulls are what the simulator collides), its footprint stays on the table and its
centre lies on a reachable block; otherwise it is redrawn (up to `max_tries`, then the scene
starts over).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import trimesh
from scipy.spatial.transform import Rotation

from grade_common.schema import Checked, Wording, bounds
from grade_common.types import FloatArray
from grade_scenes.catalog import CatalogEntry
from grade_scenes.errors import GenerationError, ObjectSetError
from grade_scenes.reach.reachability import ReachabilityMap


@dataclass(frozen=True)
class GenerateConfig(Checked):
    WORDING = Wording(error=ObjectSetError, root="generate")

    scenes: int = field(default=164, metadata=bounds(1, 100000))
    objects_per_scene: int = field(default=5, metadata=bounds(1, 50))
    neighbour_radius_m: float = field(default=0.2, metadata=bounds(0.01, 2.0))
    clearance_m: float = field(default=0.005, metadata=bounds(0.0, 0.2))
    max_tries: int = field(default=99, metadata=bounds(1, 100000))
    max_restarts: int = field(default=50, metadata=bounds(1, 100000))


@dataclass(frozen=True)
class PlacedObject:
    """One object of a scene: which object, which stable pose, where (world frame)."""

    object_index: int
    pose_index: int
    transform_world_object: FloatArray  # (4, 4), object frame = centre of mass


@dataclass(frozen=True)
class Scene:
    index: int
    objects: tuple[PlacedObject, ...]

    def pairs(self) -> set[tuple[int, int]]:
        """(object, stable pose) pairs the scene shows."""
        return {(o.object_index, o.pose_index) for o in self.objects}


def _pose(
    entry: CatalogEntry, pose_index: int, xy: FloatArray, yaw: float, top: float
) -> FloatArray:
    yawed = np.eye(4)
    yawed[:3, :3] = Rotation.from_euler("z", yaw).as_matrix()
    out: FloatArray = yawed @ entry.poses[pose_index].transform_table_object
    out[:2, 3] = xy
    out[2, 3] += top
    return out


def _on_table(hull: trimesh.Trimesh, transform: FloatArray, reach: ReachabilityMap) -> bool:
    points = hull.vertices @ transform[:3, :3].T + transform[:3, 3]
    sx, sy = reach.table.size_m
    dx = np.abs(points[:, 0] - reach.table.center_x_m)
    return bool(np.all(dx <= sx / 2) and np.all(np.abs(points[:, 1]) <= sy / 2))


def _one_scene(
    index: int,
    catalog: tuple[CatalogEntry, ...],
    reach: ReachabilityMap,
    config: GenerateConfig,
    rng: np.random.Generator,
    hulls: list[trimesh.Trimesh],
) -> Scene | None:
    chosen = rng.choice(len(catalog), size=config.objects_per_scene, replace=False)
    cells = np.argwhere(reach.reachable)
    centers = reach.table.cell_centers_xy()
    half = reach.table.cell_size_m / 2
    manager = trimesh.collision.CollisionManager()  # type: ignore[no-untyped-call]
    placed: list[PlacedObject] = []
    for object_index in (int(k) for k in chosen):
        entry = catalog[object_index]
        probs = np.array([p.probability for p in entry.poses])
        for _ in range(config.max_tries):
            pose_index = int(rng.choice(len(entry.poses), p=probs / probs.sum()))
            yaw = float(rng.uniform(-np.pi, np.pi))
            if not placed:
                cell = cells[rng.integers(len(cells))]
                xy = centers[cell[0], cell[1]] + rng.uniform(-half, half, 2)
            else:
                anchor = placed[int(rng.integers(len(placed)))].transform_world_object[:2, 3]
                angle = rng.uniform(-np.pi, np.pi)
                radius = config.neighbour_radius_m * np.sqrt(rng.uniform())
                xy = anchor + radius * np.array([np.cos(angle), np.sin(angle)])
            if not reach.is_reachable_xy(xy):
                continue
            transform = _pose(entry, pose_index, xy, yaw, reach.table.top_height_m)
            hull = hulls[object_index]
            if not _on_table(hull, transform, reach):
                continue
            distance = manager.min_distance_single(hull, transform) if placed else np.inf  # type: ignore[no-untyped-call]
            if distance < config.clearance_m:
                continue
            manager.add_object(str(len(placed)), hull, transform)  # type: ignore[no-untyped-call]
            placed.append(PlacedObject(object_index, pose_index, transform))
            break
        else:
            return None
    return Scene(index, tuple(placed))


def generate_scenes(
    catalog: tuple[CatalogEntry, ...],
    reach: ReachabilityMap,
    config: GenerateConfig,
    rng: np.random.Generator,
) -> tuple[Scene, ...]:
    """`config.scenes` candidate scenes (see module doc); same rng state, same scenes.

    Raises:
        GenerationError: fewer objects than a scene needs, no reachable block, or a scene that
            could not be placed after `max_restarts` attempts.
    """
    if len(catalog) < config.objects_per_scene:
        raise GenerationError(
            f"objects_per_scene {config.objects_per_scene} exceeds the {len(catalog)} objects "
            "of the set; add objects or lower it"
        )
    if not reach.reachable.any():
        raise GenerationError("the reachability map has no reachable block; nothing to place on")
    hulls = [entry.obj.mesh.convex_hull for entry in catalog]
    scenes = []
    for index in range(config.scenes):
        for _ in range(config.max_restarts):
            scene = _one_scene(index, catalog, reach, config, rng, hulls)
            if scene is not None:
                scenes.append(scene)
                break
        else:
            raise GenerationError(
                f"scene {index}: no collision-free placement after {config.max_restarts} "
                "restarts; widen neighbour_radius_m or lower objects_per_scene"
            )
    return tuple(scenes)
