"""Backend-neutral description of a world: static geometry, lights, free space.

Engines (MuJoCo today, Isaac Sim later) build their scene from this; generators (procedural
rooms, mesh files) produce it. Poses are in the `world` frame, z up, metres.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.world.terrain import Terrain


class TextureKind(enum.Enum):
    """What a material's texture shows: nothing, one of MuJoCo's builtin patterns (checker,
    gradient, noise), or an image of the procedural library (`grade_sim.world.textures`)."""

    NONE = "none"
    CHECKER = "checker"
    GRADIENT = "gradient"
    NOISE = "noise"
    WOOD = "wood"
    PARQUET = "parquet"
    TILES = "tiles"
    CARPET = "carpet"
    PLASTER = "plaster"
    PAINTED = "painted"  # painted wall with grime
    BRICK = "brick"
    CONCRETE = "concrete"
    FABRIC = "fabric"
    GRASS = "grass"
    DIRT = "dirt"
    BARK = "bark"
    LEAVES = "leaves"
    MARBLE = "marble"
    METAL = "metal"


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
class OccupancyGrid:
    """2D free-space map of the ground plane: True = blocked (walls, furniture)."""

    origin_xy: tuple[float, float]  # world coordinates of cell (0, 0)'s lower corner
    resolution_m: float
    blocked: NDArray[np.bool_]  # (nx, ny)

    def cell_of(self, xy: FloatArray) -> NDArray[np.int64]:
        idx = np.floor((np.asarray(xy) - np.asarray(self.origin_xy)) / self.resolution_m)
        out: NDArray[np.int64] = idx.astype(np.int64)
        return out

    def center_of(self, ij: NDArray[np.int64]) -> FloatArray:
        return (
            np.asarray(self.origin_xy)
            + (np.asarray(ij, dtype=np.float64) + 0.5) * self.resolution_m
        )

    def is_free(self, xy: FloatArray) -> bool:
        i, j = (int(v) for v in self.cell_of(xy))
        nx, ny = self.blocked.shape
        return 0 <= i < nx and 0 <= j < ny and not bool(self.blocked[i, j])

    def inflated(self, radius_m: float) -> OccupancyGrid:
        """A copy with obstacles grown by radius_m (so a disc of that radius fits in free cells)."""
        from scipy.ndimage import binary_dilation

        r = int(np.ceil(radius_m / self.resolution_m))
        yy, xx = np.mgrid[-r : r + 1, -r : r + 1]
        disc = (xx**2 + yy**2) <= r * r
        grown = binary_dilation(self.blocked, structure=disc) if r > 0 else self.blocked.copy()
        return OccupancyGrid(self.origin_xy, self.resolution_m, grown)

    @classmethod
    def from_boxes(
        cls,
        boxes: Sequence[StaticBox],
        lo_xy: tuple[float, float],
        hi_xy: tuple[float, float],
        resolution_m: float,
        ignore_labels: Sequence[str],
        walkable_below_m: float,
    ) -> OccupancyGrid:
        """Cells covered by the (yawed) footprint of any box reaching below `walkable_below_m`.

        Boxes with a label in `ignore_labels` (floors, ceilings, ground) and boxes whose bottom is
        higher (door lintels, tree crowns) leave the ground free. A cell the footprint only grazes
        is blocked too (half a cell of margin).
        """
        nx = math.ceil((hi_xy[0] - lo_xy[0]) / resolution_m)
        ny = math.ceil((hi_xy[1] - lo_xy[1]) / resolution_m)
        grid = cls(lo_xy, resolution_m, np.zeros((nx, ny), dtype=bool))
        for box in boxes:
            if (
                box.label in ignore_labels
                or box.center_xyz[2] - box.half_size_xyz[2] > walkable_below_m
            ):
                continue
            c = np.asarray(box.center_xyz[:2])
            h = np.asarray(box.half_size_xyz[:2])
            reach = float(np.linalg.norm(h)) + resolution_m
            lo = np.clip(grid.cell_of(c - reach), 0, [nx - 1, ny - 1])
            hi = np.clip(grid.cell_of(c + reach), 0, [nx - 1, ny - 1])
            ii, jj = np.mgrid[lo[0] : hi[0] + 1, lo[1] : hi[1] + 1]
            centres = grid.center_of(np.stack([ii.ravel(), jj.ravel()], axis=1)) - c
            cos, sin = math.cos(box.yaw_rad), math.sin(box.yaw_rad)
            local_x = cos * centres[:, 0] + sin * centres[:, 1]
            local_y = -sin * centres[:, 0] + cos * centres[:, 1]
            margin = resolution_m / 2
            inside = (np.abs(local_x) <= h[0] + margin) & (np.abs(local_y) <= h[1] + margin)
            grid.blocked[ii.ravel()[inside], jj.ravel()[inside]] = True
        return grid

    def segment_is_free(self, a_xy: FloatArray, b_xy: FloatArray) -> bool:
        length = float(np.linalg.norm(np.asarray(b_xy) - np.asarray(a_xy)))
        n = max(2, int(np.ceil(length / (0.5 * self.resolution_m))) + 1)
        pts = np.linspace(a_xy, b_xy, n)
        # is_free for every point at once (the planners call this thousands of times).
        ij = self.cell_of(pts)
        nx, ny = self.blocked.shape
        inside = (ij[:, 0] >= 0) & (ij[:, 0] < nx) & (ij[:, 1] >= 0) & (ij[:, 1] < ny)
        return bool(inside.all()) and not bool(self.blocked[ij[:, 0], ij[:, 1]].any())


@dataclass(frozen=True)
class Seat:
    """Where a person can sit: a chair's seat, the way a sitter faces and its height.

    A sitter's legs reach over the seat's front edge, towards `facing_rad`; the backrest is
    on the other side. Only the pieces of furniture named here may be touched by their sitter.
    """

    name: str  # the chair's instance name; its boxes are `<name>/<part>`
    instance_id: int
    centre_xy: tuple[float, float]  # centre of the seat's top
    facing_rad: float  # world yaw a seated person faces (away from the backrest)
    height_m: float  # top of the seat above the floor
    depth_m: float  # along facing_rad
    width_m: float

    def along(self, distance_m: float) -> FloatArray:
        """The floor point `distance_m` from the seat centre towards the front (negative: back)."""
        out: FloatArray = np.asarray(self.centre_xy) + distance_m * np.array(
            [math.cos(self.facing_rad), math.sin(self.facing_rad)]
        )
        return out


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

    def terrain_height(self, x: float | FloatArray, y: float | FloatArray) -> FloatArray:
        """Ground z under (x, y): the terrain's drawn surface, or 0 in worlds without one."""
        if self.terrain is None:
            out: FloatArray = np.zeros(np.broadcast(np.asarray(x), np.asarray(y)).shape)
            return out
        return self.terrain.height_at(x, y)
