"""The tabletop scene file (SceneReplica): a table, objects resting on it, the robot's camera.

grade_scenes writes these files (`grade scenes generate`/`select`); the simulator loads one as
a `tabletop` environment. Object meshes are files beside the scene file (their frame's origin is
the object's centre of mass); poses are in the world frame (robot base at the origin, x forward,
z up, metres).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from grade_common.errors import ConfigError
from grade_common.names import ros_name
from grade_common.schema import Wording, bounds, from_mapping, named_items
from grade_common.textfile import read_yaml

WORDING = Wording(root="tabletop scene")


@dataclass(frozen=True)
class TableSpec:
    size_m: tuple[float, float] = field(default=(1.0, 1.0), metadata=bounds(0.2, 5.0))
    top_height_m: float = field(default=0.745, metadata=bounds(0.1, 2.0))
    thickness_m: float = field(default=0.04, metadata=bounds(0.005, 0.5))
    center_xy: tuple[float, float] = field(default=(0.8, 0.0), metadata=bounds(-50.0, 50.0))


@dataclass(frozen=True)
class SceneObjectSpec:
    name: str = field(metadata=ros_name())
    mesh: str
    mass_kg: float = field(metadata=bounds(1e-4, 100.0))
    # ixx, iyy, izz, ixy, ixz, iyz about the centre of mass (MuJoCo's fullinertia order)
    inertia_kg_m2: tuple[float, float, float, float, float, float] = field(
        metadata=bounds(-10.0, 10.0)
    )
    position_xyz: tuple[float, float, float] = field(metadata=bounds(-50.0, 50.0))
    quaternion_wxyz: tuple[float, float, float, float] = field(metadata=bounds(-1.0, 1.0))
    rgba: tuple[float, float, float, float] = field(
        default=(0.7, 0.7, 0.7, 1.0), metadata=bounds(0.0, 1.0)
    )
    stable_pose: int = field(default=0, metadata=bounds(0, 10000))


@dataclass(frozen=True)
class SceneCameraSpec:
    """The robot's camera that reference images are rendered from (looks at `target_xyz`)."""

    position_xyz: tuple[float, float, float] = (0.0, 0.0, 1.45)
    target_xyz: tuple[float, float, float] = (0.75, 0.0, 0.745)
    hfov_deg: float = field(default=69.4, metadata=bounds(10.0, 170.0))
    width: int = field(default=640, metadata=bounds(16, 4096))
    height: int = field(default=480, metadata=bounds(16, 4096))


@dataclass(frozen=True)
class TabletopSceneFile:
    name: str = field(metadata=ros_name())
    objects: tuple[SceneObjectSpec, ...] = field(metadata=named_items("name"))
    table: TableSpec = field(default_factory=TableSpec)
    robot: str = "panda"  # the arm whose reachability the scene was made for (not simulated)
    camera: SceneCameraSpec = field(default_factory=SceneCameraSpec)
    # SceneReplica's fixed ordering: every object once, drawn per scene when it was generated
    # (empty in files written before orderings existed)
    pick_order: tuple[str, ...] = ()

    def validate(self, path: str) -> None:
        names = [o.name for o in self.objects]
        if len(set(names)) != len(names):
            raise ConfigError(f"objects: duplicate object names {names}")
        if self.pick_order and sorted(self.pick_order) != sorted(names):
            unknown = sorted(set(self.pick_order) - set(names))
            raise ConfigError(
                f"pick_order: {list(self.pick_order)} must name every object of the scene once "
                f"(objects: {names}; unknown: {unknown})"
            )


def load_tabletop_scene(path: str | Path) -> TabletopSceneFile:
    """Read and validate a tabletop scene file; mesh paths become absolute.

    Raises:
        ConfigError: missing file, not YAML, an invalid value, or a mesh file that is missing.
    """
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"tabletop scene {str(file)!r} does not exist")
    data = read_yaml(file, "tabletop scene", error=ConfigError)
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: expected a mapping at the top level")
    try:
        scene = from_mapping(TabletopSceneFile, data, wording=WORDING)
    except ConfigError as err:
        raise ConfigError(f"{file}: {err}") from None
    objects = []
    for obj in scene.objects:
        mesh = Path(obj.mesh)
        mesh = mesh if mesh.is_absolute() else (file.parent / mesh).resolve()
        if not mesh.is_file():
            raise ConfigError(f"{file}: objects.{obj.name}.mesh: {str(mesh)!r} does not exist")
        objects.append(replace(obj, mesh=str(mesh)))
    return replace(scene, objects=tuple(objects))
