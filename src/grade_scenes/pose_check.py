"""Physics check of every stable pose: each object alone on the table in each of its poses.

trimesh's quasi-static poses include marginal ones: the lemon's second pose has its centre of
mass 0.5 mm inside its contact face and rolls 10 deg; a bread pose topples 40 deg. A pose is
kept only if, settled alone at the table's centre for `duration_s` in the simulator's physics
(`grade_scenes.settle`), the object drifts less than DRIFT_TOLERANCE_M and tilts less than
TILT_TOLERANCE_DEG.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from grade_scenes.catalog import CatalogEntry
from grade_scenes.generate import PlacedObject, Scene
from grade_scenes.scenefile import SCENE_DIR, scene_name, write_candidates
from grade_scenes.settle import SettleResult, settle
from grade_scenes.table import TableConfig


@dataclass(frozen=True)
class PoseCheck:
    object_name: str
    pose_index: int  # in the catalog before the check
    result: SettleResult


def check_poses(
    catalog: tuple[CatalogEntry, ...], table: TableConfig, duration_s: float = 2.0
) -> tuple[PoseCheck, ...]:
    """Settle every (object, stable pose) alone on the table; one check each, catalog order."""
    scenes: list[Scene] = []
    keys: list[tuple[str, int]] = []
    for object_index, entry in enumerate(catalog):
        for pose_index, pose in enumerate(entry.poses):
            transform = pose.transform_table_object.copy()
            transform[0, 3] = table.center_x_m
            transform[2, 3] += table.top_height_m
            scenes.append(Scene(len(scenes), (PlacedObject(object_index, pose_index, transform),)))
            keys.append((entry.obj.name, pose_index))
    with tempfile.TemporaryDirectory(prefix="grade_pose_check_") as tmp:
        folder = Path(tmp) / "poses"
        write_candidates(folder, tuple(scenes), catalog, table, {})
        return tuple(
            PoseCheck(
                name, pose_index, settle(folder / SCENE_DIR / f"{scene_name(k)}.yaml", duration_s)
            )
            for k, (name, pose_index) in enumerate(keys)
        )


def settled_catalog(
    catalog: tuple[CatalogEntry, ...], checks: tuple[PoseCheck, ...]
) -> tuple[CatalogEntry, ...]:
    """The catalog without the poses whose check failed (the others keep their order).

    An object none of whose poses stays keeps none; generation then cannot place it.
    """
    failed = {(c.object_name, c.pose_index) for c in checks if not c.result.stays}
    out = []
    for entry in catalog:
        poses = tuple(p for k, p in enumerate(entry.poses) if (entry.obj.name, k) not in failed)
        out.append(replace(entry, poses=poses))
    return tuple(out)


def describe_failures(checks: tuple[PoseCheck, ...]) -> list[str]:
    """One line per rejected pose: object, pose, drift and tilt."""
    return [
        f"{c.object_name} pose {c.pose_index}: drift {1000 * c.result.max_displacement_m:.2f} mm, "
        f"tilt {c.result.max_tilt_deg:.2f} deg"
        for c in checks
        if not c.result.stays
    ]


__all__ = ["PoseCheck", "check_poses", "describe_failures", "settled_catalog"]
