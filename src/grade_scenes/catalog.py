"""Objects ready for scenes: each object's physical model and its stable poses, built once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from grade_scenes.objects import ObjectSetConfig, PhysicalObject, physical_object
from grade_scenes.stable import StablePose, stable_poses


@dataclass(frozen=True)
class CatalogEntry:
    obj: PhysicalObject
    poses: tuple[StablePose, ...]


def build_catalog(config: ObjectSetConfig, base: Path | None = None) -> tuple[CatalogEntry, ...]:
    """Physical models and stable poses of every object of the set, in the set's order."""
    entries = []
    for spec in config.objects:
        obj = physical_object(spec, base)
        entries.append(
            CatalogEntry(obj, tuple(stable_poses(obj.mesh, config.stable_pose_threshold)))
        )
    return tuple(entries)
