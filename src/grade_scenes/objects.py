"""The object set: which objects a scene draws from, their meshes and physical properties.

An object-set file (YAML) lists objects by name; each is a mesh file (`robosuite:NAME` for the
meshes robosuite ships, or a path such as a downloaded YCB model) or a primitive box/cylinder.
Every mesh is moved so that its centre of mass is the object frame's origin; mass comes from the
density and the volume (the convex hull's where the mesh is not watertight), the inertia tensor
from trimesh.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import trimesh

from grade_common.names import ros_name
from grade_common.schema import Wording, bounds, from_mapping, named_items
from grade_common.share import shipped_file
from grade_common.textfile import read_yaml
from grade_common.types import FloatArray
from grade_scenes.assets import resolve_mesh
from grade_scenes.errors import ObjectSetError

WORDING = Wording(error=ObjectSetError, root="object set")


class Shape(enum.Enum):
    MESH = "mesh"
    BOX = "box"  # size_m: [x, y, z] full extents
    CYLINDER = "cylinder"  # size_m: [radius, height], axis z


@dataclass(frozen=True)
class ObjectSpec:
    """One entry of an object-set file."""

    name: str = field(metadata=ros_name())
    shape: Shape = Shape.MESH
    mesh: str | None = None  # `robosuite:NAME` or a mesh file path (relative to the set file)
    size_m: tuple[float, ...] = field(default=(), metadata=bounds(0.005, 1.0))
    scale: tuple[float, float, float] = field(default=(1.0, 1.0, 1.0), metadata=bounds(1e-4, 1e3))
    density_kg_m3: float = field(default=500.0, metadata=bounds(1.0, 25000.0))
    rgba: tuple[float, float, float, float] = field(
        default=(0.7, 0.7, 0.7, 1.0), metadata=bounds(0.0, 1.0)
    )

    def validate(self, path: str) -> None:
        sizes = {Shape.MESH: 0, Shape.BOX: 3, Shape.CYLINDER: 2}
        if (self.shape is Shape.MESH) != (self.mesh is not None):
            raise ObjectSetError(
                f"{path}.mesh: {self.mesh!r}; a mesh file is required for shape 'mesh' and "
                "not allowed for primitives"
            )
        if len(self.size_m) != sizes[self.shape]:
            raise ObjectSetError(
                f"{path}.size_m: {list(self.size_m)} for shape {self.shape.value!r}; expected "
                f"{sizes[self.shape]} values (box [x, y, z], cylinder [radius, height], mesh none)"
            )


@dataclass(frozen=True)
class ObjectSetConfig:
    """An object-set file: the objects and the stable-pose probability threshold."""

    objects: tuple[ObjectSpec, ...] = field(metadata=named_items("name"))
    # SceneReplica drops stable poses less likely than this (trimesh compute_stable_poses).
    stable_pose_threshold: float = field(default=0.02, metadata=bounds(0.0, 0.5))

    def validate(self, path: str) -> None:
        names = [o.name for o in self.objects]
        if len(names) < 1:
            raise ObjectSetError(f"{path or 'object set'}.objects: empty; list at least one")
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ObjectSetError(f"objects: duplicate names {dupes}; each name must be unique")


@dataclass(frozen=True)
class PhysicalObject:
    """An object ready for placement: its mesh in the centre-of-mass frame and its properties."""

    name: str
    mesh: trimesh.Trimesh  # vertices in the object frame (origin = centre of mass)
    mass_kg: float
    inertia_kg_m2: FloatArray  # (3, 3) about the centre of mass, object axes
    rgba: tuple[float, float, float, float]


def load_object_set(path: str | Path) -> tuple[ObjectSetConfig, Path]:
    """Read and validate an object-set YAML file; returns it and its folder (mesh paths' base).

    Raises:
        ObjectSetError: the file is missing or not YAML, or an entry is invalid.
    """
    file = Path(path)
    if not file.is_file():
        raise ObjectSetError(f"object set {str(file)!r} does not exist")
    data = read_yaml(file, "object set", error=ObjectSetError)
    return object_set_from_mapping(data, str(file)), file.parent


def default_object_set() -> ObjectSetConfig:
    """The shipped 16-object set, config/scene_objects.yaml (validated like a user's file)."""
    config, _ = load_object_set(shipped_file("config/scene_objects.yaml"))
    return config


def object_set_from_mapping(data: Any, source: str = "object set") -> ObjectSetConfig:
    """Validate plain data into an ObjectSetConfig (errors name the key path and the value)."""
    if not isinstance(data, dict):
        raise ObjectSetError(f"{source}: expected a mapping with 'objects', got {data!r}")
    try:
        return from_mapping(ObjectSetConfig, data, wording=WORDING)
    except ObjectSetError as err:
        raise ObjectSetError(f"{source}: {err}") from None


def _raw_mesh(spec: ObjectSpec, base: Path | None) -> trimesh.Trimesh:
    if spec.shape is Shape.BOX:
        box: trimesh.Trimesh = trimesh.creation.box(extents=spec.size_m)
        return box
    if spec.shape is Shape.CYLINDER:
        cylinder: trimesh.Trimesh = trimesh.creation.cylinder(
            radius=spec.size_m[0], height=spec.size_m[1], sections=48
        )
        return cylinder
    assert spec.mesh is not None
    file = resolve_mesh(spec.mesh, base)
    if not file.is_file():
        raise ObjectSetError(f"objects.{spec.name}.mesh: file {str(file)!r} does not exist")
    loaded = trimesh.load(file, force="mesh")
    if not isinstance(loaded, trimesh.Trimesh) or len(loaded.faces) == 0:
        raise ObjectSetError(f"objects.{spec.name}.mesh: {str(file)!r} holds no triangle mesh")
    return loaded


def physical_object(spec: ObjectSpec, base: Path | None = None) -> PhysicalObject:
    """Build the object: scaled mesh, moved to its centre of mass, mass and inertia.

    A mesh that is not watertight has no defined volume; its convex hull stands in for it (for
    mass, inertia and the centre of mass), which is also what the stable poses use.
    """
    mesh = _raw_mesh(spec, base).copy()
    mesh.apply_transform(np.diag([*spec.scale, 1.0]))
    solid = mesh if mesh.is_watertight and mesh.volume > 0 else mesh.convex_hull
    solid.density = spec.density_kg_m3
    com = np.asarray(solid.center_mass, dtype=np.float64)
    mesh.apply_translation(-com)
    return PhysicalObject(
        name=spec.name,
        mesh=mesh,
        mass_kg=float(solid.mass),
        inertia_kg_m2=np.asarray(solid.moment_inertia, dtype=np.float64),
        rgba=spec.rgba,
    )
