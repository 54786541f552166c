"""Backend-neutral description of a world: static geometry, lights, free space.

Engines (MuJoCo) build their scene from this; generators (procedural rooms, mesh files)
produce it. Poses are in the `world` frame, z up, metres.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from grade_common.occupancy import OccupancyGrid
from grade_common.textures import TextureKind
from grade_common.types import FloatArray
from grade_people.seat import Seat
from grade_sim.world.light_units import INDOOR_EV100
from grade_sim.world.terrain import Terrain


@dataclass(frozen=True)
class Material:
    """A surface's look: colour, texture kind, second texture colour and texture tile size.

    Procedural kinds draw their image from rgba's colour and rgb2 (grain, grout, mortar...);
    `seed` picks one variant of that image, so two floors of one kind and colour can differ.
    """

    rgba: tuple[float, float, float, float]
    texture: TextureKind = TextureKind.NONE
    rgb2: tuple[float, float, float] = (0.0, 0.0, 0.0)  # second texture colour
    texrepeat_m: float = 1.0  # texture tile size: metres the texture image spans
    seed: int = 0


class StaticShape(enum.Enum):
    """The solid a StaticBox stands for; a cylinder's radius is half_size_xyz[0]."""

    BOX = "box"
    CYLINDER = "cylinder"


@dataclass(frozen=True)
class StaticBox:
    """An axis-aligned (then yawed) box of the environment (or the cylinder inside it).

    Several boxes may share one instance id: the parts of one piece of furniture or one tree.
    Part names are `<piece>/<part>`; the piece name is the instance's name.
    """

    name: str
    label: str  # class label: floor, wall, ceiling, furniture
    instance_id: int
    center_xyz: tuple[float, float, float]
    half_size_xyz: tuple[float, float, float]
    yaw_rad: float
    material: Material
    shape: StaticShape = StaticShape.BOX


@dataclass(frozen=True)
class StaticMesh:
    """A triangle mesh of the environment (loaded from a file or generated: terrain, trees)."""

    name: str
    label: str
    instance_id: int
    vertices_xyz: FloatArray  # (n, 3), world frame
    faces: NDArray[np.int32]  # (m, 3)
    material: Material
    # Per-vertex texture coordinates, image convention (v = 0 is the image's first row). With a
    # procedural material kind they are in metres (the kind's tile size applies); with
    # texture_rgb they address that image (0..1).
    texcoords_uv: FloatArray | None = None
    texture_rgb: NDArray[np.uint8] | None = None  # (h, w, 3) image from the mesh file
    # Engines collide meshes as their convex hull: concave or flat surfaces (terrain, grass, a
    # floor plane) are drawn and seen by sensors but only collide when this is True.
    collides: bool = True


@dataclass(frozen=True)
class FreeBody:
    """A loose rigid object of the environment (tabletop objects): it falls, rests and is pushed.

    Its mesh is in the body frame, whose origin is the centre of mass.
    """

    name: str
    label: str
    instance_id: int
    vertices_xyz: FloatArray  # (n, 3), body frame
    faces: NDArray[np.int32]
    mass_kg: float
    inertia_kg_m2: tuple[float, float, float, float, float, float]  # ixx iyy izz ixy ixz iyz
    position_xyz: tuple[float, float, float]
    quat_wxyz: tuple[float, float, float, float]
    material: Material


@dataclass(frozen=True)
class Light:
    """A light source: a spot (a ceiling fixture when cutoff_deg is wide) or directional (sun)."""

    position_xyz: tuple[float, float, float]
    diffuse_rgb: tuple[float, float, float]
    directional: bool = False
    direction_xyz: tuple[float, float, float] = (0.0, 0.0, -1.0)
    cutoff_deg: float = 45.0  # spot cone half-angle
    exponent: float = 10.0  # spot fall-off towards the cone's edge
    # Constant, linear, quadratic fall-off with distance (1, 0, 0: none).
    attenuation: tuple[float, float, float] = (1.0, 0.0, 0.0)
    casts_shadow: bool = True  # when the scenario turns shadows on


@dataclass(frozen=True)
class Sky:
    """A gradient sky with a sun disc, seen where no geometry covers the view."""

    zenith_rgb: tuple[float, float, float]
    horizon_rgb: tuple[float, float, float]
    ground_rgb: tuple[float, float, float]  # below the horizon (hidden by terrain mostly)
    sun_direction_xyz: tuple[float, float, float]  # unit vector towards the sun
    sun_rgb: tuple[float, float, float]


@dataclass(frozen=True)
class Ambience:
    """Light that comes from no single source: ambient fill and the camera's headlight.

    The defaults are the old fixed look (a strong headlight); generated worlds set a small
    ambient and no headlight so that their own lights shape the image.
    """

    ambient_rgb: tuple[float, float, float] = (0.3, 0.3, 0.3)
    headlight_rgb: tuple[float, float, float] = (0.35, 0.35, 0.35)


@dataclass(frozen=True)
class World:
    """Everything static about a scene."""

    boxes: tuple[StaticBox, ...]
    meshes: tuple[StaticMesh, ...]
    lights: tuple[Light, ...]
    free_space: OccupancyGrid
    bounds_min_xyz: tuple[float, float, float]
    bounds_max_xyz: tuple[float, float, float]
    # Where robots fly through: a loop of points in free space (room centres for procedural).
    tour_xy: tuple[tuple[float, float], ...] = field(default=())
    ceiling_height_m: float = 2.7
    free_bodies: tuple[FreeBody, ...] = field(default=())
    ambience: Ambience = field(default=Ambience())
    sky: Sky | None = None  # None: no sky is drawn (indoor worlds)
    # Ground height of outdoor worlds (None: flat at z = 0); see world/terrain.py.
    terrain: Terrain | None = None
    # Chairs people can sit on: each with free floor in front of it (procedural rooms).
    seats: tuple[Seat, ...] = field(default=())
    # The camera exposure the lights' raster values are exact at (world/light_units.py).
    exposure_ev100: float = INDOOR_EV100

    def terrain_height(self, x: float | FloatArray, y: float | FloatArray) -> FloatArray:
        """Ground z under (x, y): the terrain's drawn surface, or 0 in worlds without one."""
        if self.terrain is None:
            out: FloatArray = np.zeros(np.broadcast(np.asarray(x), np.asarray(y)).shape)
            return out
        return self.terrain.height_at(x, y)
