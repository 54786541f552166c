"""What an actor group hands to the layers above it, in grade_sim's own neutral types.

The engine builds its model from `RigidPart`, `SkinnedFigure` and `ActorMaterial`; the sensors take
`Box3D`; the scene's instance table takes `InstanceInfo`; the baked contact shadows take
`ShadowCaster`. None of these know MuJoCo, so a group never imports the engine, the sensors or
the recording, and those never need to know which kinds of actor exist.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from grade_common.types import FloatArray
from grade_people.body_mesh import Clothing
from grade_people.skeleton import BodyParams


def significant(values: float | Iterable[float] | FloatArray, digits: int = 9) -> list[float]:
    """`values` rounded to `digits` significant digits.

    Model sizes go through this before they reach the engine, so the compiled model (and every
    rendered pixel) does not depend on the last bits of a float drawn from a generator.
    """
    arr = np.atleast_1d(np.asarray(values, dtype=np.float64))
    return [float(f"{v:.{digits}g}") for v in arr]


@dataclass(frozen=True)
class InstanceInfo:
    """One instance of the scene: its id in the instance masks, its name and its class label."""

    instance_id: int
    name: str
    label: str


@dataclass(frozen=True)
class Box3D:
    """An oriented 3D box in the world frame (ground-truth boxes of actors and objects)."""

    instance_id: int
    center_xyz: FloatArray  # world frame
    size_xyz: FloatArray  # full extents along the box axes
    rotation_world_box: FloatArray  # 3x3

    def transform_world_box(self) -> FloatArray:
        t = np.eye(4)
        t[:3, :3] = self.rotation_world_box
        t[:3, 3] = self.center_xyz
        return t

    def corners_world(self) -> FloatArray:
        signs = np.array(
            [[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=np.float64
        )
        return self.center_xyz + (signs * self.size_xyz / 2) @ self.rotation_world_box.T


def heading_rotation(heading_rad: float) -> FloatArray:
    """The rotation about world z by a heading (an upright actor's box frame)."""
    c, s = np.cos(heading_rad), np.sin(heading_rad)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


@dataclass(frozen=True)
class CubeTexture:
    """A cube texture: six square faces stacked vertically, `dark` where the second colour is."""

    name: str
    dark: np.ndarray  # (6 * px, px) booleans
    light_rgb: tuple[float, float, float]
    dark_rgb: tuple[float, float, float]


@dataclass(frozen=True)
class ActorMaterial:
    """A material the parts after it may name: a plain colour, or a cube texture."""

    name: str
    specular: float
    rgba: tuple[float, float, float, float] | None = None
    texture: CubeTexture | None = None


@dataclass(frozen=True)
class RigidPart:
    """One rigid actor body with one geom, posed kinematically and colliding with nothing.

    `size` is the engine's geom size for `shape` (already rounded with `significant`); the colour
    is `rgba`, else the named material's."""

    body_name: str
    instance_id: int
    shape: str  # box, sphere, capsule, cylinder or ellipsoid
    size: tuple[float, ...]
    rgba: tuple[float, ...] | None = None
    material: str = ""


@dataclass(frozen=True)
class SkinnedFigure:
    """A skinned person: one posed body per skeleton joint (`<name>/<joint>`) and a textured
    skin over them."""

    name: str
    instance_id: int
    body: BodyParams
    clothing: Clothing


ActorGeometry = ActorMaterial | RigidPart | SkinnedFigure


@dataclass(frozen=True)
class ShadowCaster:
    """An actor that casts a baked contact shadow: a blob under the body `body_name`."""

    body_name: str
    actor_name: str
    radius_m: float
    height_m: float
