"""Static environments from mesh files (OBJ+MTL, GLB/GLTF, STL, PLY, USD) with textures, labels.

OBJ files go through a small own reader (world/obj_file.py) that keeps object/group names, USD
stages through usd-core (world/usd_file.py: the stage's static meshes, its metersPerUnit and
upAxis, Isaac Sim semantics), the other formats through trimesh. Every part keeps its texture
coordinates, its diffuse colour and its texture image, and gets a class label: the file's own
(USD semantics), else from its names (world/labels.py: a label map file, else the name's
leading word). Each part is one instance.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common.errors import ConfigError
from grade_common.occupancy import OccupancyGrid
from grade_common.types import FloatArray
from grade_sim.config.scenario import LightsConfig, MeshEnvironmentConfig
from grade_sim.world.labels import LabelMap, class_of
from grade_sim.world.model import Light, Material, StaticMesh, World
from grade_sim.world.usd_file import USD_SUFFIXES, read_usd_world

SUPPORTED_SUFFIXES = (".obj", ".stl", ".glb", ".gltf", ".ply", *USD_SUFFIXES)
DEFAULT_SCALE = 1.0
DEFAULT_UP_AXIS = "z"
_log = logging.getLogger(__name__)
GRID_RESOLUTION_M = 0.1
# Surfaces between these heights above the floor block walking and low flight.
OBSTACLE_BAND_M = (0.15, 1.9)
# A part thinner than this fraction of its size is flat: drawn, but it has no hull to collide.
FLAT_RATIO = 1e-6


@dataclass(frozen=True)
class MeshPart:
    """One part of a mesh file, in the file's own axes and units."""

    name: str  # object / node name ("" when the file names none)
    material_name: str
    vertices_xyz: FloatArray
    faces: NDArray[np.int32]
    rgba: tuple[float, float, float, float] | None  # diffuse colour; None: the file has none
    texcoords_uv: FloatArray | None  # image convention (v = 0: first image row)
    texture_rgb: NDArray[np.uint8] | None
    semantic_class: str | None = None  # the file's own class label (USD semantics)


def load_mesh_world(
    config: MeshEnvironmentConfig,
    lights: LightsConfig,
    rng: np.random.Generator,
    first_instance_id: int = 1,
) -> World:
    """Load a mesh file as the static environment; each part of the file becomes one instance.

    Raises:
        ConfigError: the file (or a texture or label map it needs) is missing or unreadable, of
            an unsupported type, or holds no triangles.
    """
    path = Path(config.path or "")
    if not path.is_file():
        raise ConfigError(f"environment.mesh.path: mesh file {str(path)!r} does not exist")
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise ConfigError(
            f"environment.mesh.path: {path.suffix!r} is not supported; "
            f"use one of {', '.join(SUPPORTED_SUFFIXES)}"
        )
    label_map = LabelMap.load(Path(config.label_map)) if config.label_map else None
    parts, scale, up_axis = _parts_and_axes(path, config)
    meshes: list[StaticMesh] = []
    up_to_z = (
        np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]], dtype=np.float64)
        if up_axis == "y"
        else np.eye(3)
    )
    for k, part in enumerate(parts):
        if len(part.faces) == 0:
            continue
        vertices = (part.vertices_xyz * scale) @ up_to_z.T
        color = part.rgba or _random_color(rng)
        shown = part.name or part.material_name or path.stem
        meshes.append(
            StaticMesh(
                f"mesh_{k}_{shown}",
                _label(part, label_map),
                first_instance_id + len(meshes),
                vertices,
                part.faces,
                Material(rgba=color),
                texcoords_uv=part.texcoords_uv,
                texture_rgb=part.texture_rgb,
                collides=not _is_flat(vertices),
            )
        )
    if not meshes:
        raise ConfigError(f"environment.mesh.path: {str(path)!r} contains no triangles")
    all_v = np.concatenate([m.vertices_xyz for m in meshes])
    lo, hi = all_v.min(axis=0), all_v.max(axis=0)
    grid = _occupancy(meshes, lo, hi)
    world_lights = []
    for _ in range(lights.count):
        xy = rng.uniform(lo[:2], hi[:2])
        intensity = rng.uniform(*lights.intensity)
        tint = 1.0 + rng.uniform(-lights.color_jitter, lights.color_jitter, 3)
        rgb = np.clip(intensity * tint, 0, 2)
        world_lights.append(
            Light(
                (float(xy[0]), float(xy[1]), float(hi[2] + 0.5)),
                (float(rgb[0]), float(rgb[1]), float(rgb[2])),
            )
        )
    return World(
        boxes=(),
        meshes=tuple(meshes),
        lights=tuple(world_lights),
        free_space=grid,
        bounds_min_xyz=(float(lo[0]), float(lo[1]), float(lo[2])),
        bounds_max_xyz=(float(hi[0]), float(hi[1]), float(hi[2])),
        tour_xy=(),
        ceiling_height_m=float(hi[2] - lo[2]),
    )


def _label(part: MeshPart, label_map: LabelMap | None) -> str:
    """A file's own class label (through the label map, if one matches it) wins over names."""
    if part.semantic_class:
        mapped = label_map.match(part.semantic_class) if label_map is not None else None
        return mapped or part.semantic_class
    return class_of(part.name, part.material_name, label_map)


def _parts_and_axes(path: Path, config: MeshEnvironmentConfig) -> tuple[list[MeshPart], float, str]:
    """The file's parts, its scale to metres and its up axis (the scenario's win when set;
    a USD stage brings its own metersPerUnit and upAxis)."""
    if path.suffix.lower() not in USD_SUFFIXES:
        return (
            read_parts(path),
            DEFAULT_SCALE if config.scale is None else config.scale,
            config.up_axis or DEFAULT_UP_AXIS,
        )
    usd = read_usd_world(path)
    if usd.skipped_moving:
        _log.info(
            "%s: %d mesh prim(s) move or are skinned (people, robots, animated objects) and are "
            "not part of the world",
            path,
            usd.skipped_moving,
        )
    scale, up_axis = usd.meters_per_unit, usd.up_axis
    if config.scale is not None and config.scale != scale:
        _log.info(
            "%s: environment.mesh.scale %g replaces the stage's metersPerUnit %g",
            path,
            config.scale,
            scale,
        )
    if config.up_axis is not None and config.up_axis != up_axis:
        _log.info(
            "%s: environment.mesh.up_axis %s replaces the stage's upAxis %s",
            path,
            config.up_axis,
            up_axis.upper(),
        )
    parts = [
        MeshPart(
            p.name, p.material_name, p.vertices_xyz, p.faces, p.rgba, p.texcoords_uv,
            p.texture_rgb, p.semantic_class,
        )
        for p in usd.parts
    ]  # fmt: skip
    return (
        parts,
        scale if config.scale is None else config.scale,
        up_axis if config.up_axis is None else config.up_axis,
    )


def read_parts(path: Path) -> list[MeshPart]:
    """The parts of a mesh file with their names, colours, texture coordinates and images.

    Raises:
        ConfigError: the file or a texture it names cannot be read.
    """
    if path.suffix.lower() == ".obj":
        return _obj_parts(path)
    return _trimesh_parts(path)


def _obj_parts(path: Path) -> list[MeshPart]:
    import cv2

    from grade_sim.world.obj_file import read_obj

    images: dict[Path, NDArray[np.uint8]] = {}
    parts = []
    for part in read_obj(path):
        mat = part.material
        image = None
        if mat is not None and mat.texture_path is not None and part.texcoords_uv is not None:
            if mat.texture_path not in images:
                bgr = cv2.imread(str(mat.texture_path), cv2.IMREAD_COLOR)
                if bgr is None:
                    raise ConfigError(
                        f"environment.mesh.path: {str(path)!r}: texture "
                        f"{str(mat.texture_path)!r} of material {mat.name!r} cannot be read"
                    )
                images[mat.texture_path] = np.ascontiguousarray(bgr[:, :, ::-1])
            image = images[mat.texture_path]
        rgba = None
        if mat is not None:
            r, g, b = mat.diffuse_rgb
            rgba = (r, g, b, mat.opacity)
        parts.append(
            MeshPart(
                part.object_name,
                mat.name if mat is not None else "",
                part.vertices_xyz,
                part.faces,
                rgba,
                part.texcoords_uv if image is not None else None,
                image,
            )
        )
    return parts


def _trimesh_parts(path: Path) -> list[MeshPart]:
    import trimesh

    try:
        loaded = trimesh.load(str(path), force=None)
    except Exception as err:  # trimesh raises many types for broken files
        raise ConfigError(f"environment.mesh.path: cannot read {str(path)!r}: {err}") from err
    if not isinstance(loaded, trimesh.Scene):
        # A single mesh (STL, PLY): no part names.
        return [_trimesh_part("", loaded, {})] if isinstance(loaded, trimesh.Trimesh) else []
    images: dict[int, NDArray[np.uint8]] = {}
    parts = []
    # Scene graph nodes carry the names (glTF nodes); their transforms place the geometry.
    for node in loaded.graph.nodes_geometry:
        transform, geometry_name = loaded.graph[node]
        mesh = loaded.geometry[geometry_name]
        if not isinstance(mesh, trimesh.Trimesh):
            continue
        mesh = mesh.copy()
        mesh.apply_transform(transform)
        name = str(node) if node != geometry_name or not str(node).startswith("geometry") else ""
        parts.append(_trimesh_part(name, mesh, images))
    return parts


def _trimesh_part(name: str, mesh: Any, images: dict[int, NDArray[np.uint8]]) -> MeshPart:
    """A trimesh mesh as a part: PBR base colour (factor and texture) or vertex colours."""
    visual = getattr(mesh, "visual", None)
    material = getattr(visual, "material", None)
    material_name = str(getattr(material, "name", "") or "")
    rgba: tuple[float, float, float, float] | None = None
    uv: FloatArray | None = None
    image: NDArray[np.uint8] | None = None
    if material is not None:
        factor = getattr(material, "baseColorFactor", None)
        if factor is None:
            factor = getattr(material, "diffuse", None)
        if factor is not None:
            f = np.asarray(factor, dtype=np.float64).ravel()
            f = (
                f / 255.0
                if f.max() > 1.0 or np.issubdtype(np.asarray(factor).dtype, np.integer)
                else f
            )
            rgba = (float(f[0]), float(f[1]), float(f[2]), float(f[3]) if len(f) > 3 else 1.0)
        texture = getattr(material, "baseColorTexture", None)
        if texture is None:
            texture = getattr(material, "image", None)
        raw_uv = getattr(visual, "uv", None)
        if texture is not None and raw_uv is not None and len(raw_uv) == len(mesh.vertices):
            key = id(texture)
            if key not in images:
                images[key] = np.ascontiguousarray(np.asarray(texture.convert("RGB")), np.uint8)
            image = images[key]
            uv = np.asarray(raw_uv, dtype=np.float64).copy()
            uv[:, 1] = 1.0 - uv[:, 1]  # trimesh keeps OBJ's convention (v up)
    elif visual is not None and getattr(visual, "kind", None) == "vertex":
        main = np.asarray(visual.main_color, dtype=np.float64) / 255.0
        rgba = (float(main[0]), float(main[1]), float(main[2]), 1.0)
    return MeshPart(
        name,
        material_name,
        np.asarray(mesh.vertices, dtype=np.float64),
        np.asarray(mesh.faces, dtype=np.int32),
        rgba,
        uv,
        image,
    )


def _random_color(rng: np.random.Generator) -> tuple[float, float, float, float]:
    """A random neutral colour for a part whose file gives none."""
    c = rng.uniform(0.4, 0.8, 3)
    return (float(c[0]), float(c[1]), float(c[2]), 1.0)


def _is_flat(vertices: FloatArray) -> bool:
    """Coplanar vertices (a floor quad) have no volume and no convex hull."""
    centred = vertices - vertices.mean(axis=0)
    singular = np.linalg.svd(centred, compute_uv=False)
    return len(singular) < 3 or bool(singular[-1] <= FLAT_RATIO * max(float(singular[0]), 1e-12))


def _occupancy(meshes: list[StaticMesh], lo: np.ndarray, hi: np.ndarray) -> OccupancyGrid:
    res = GRID_RESOLUTION_M
    nx = max(1, math.ceil((hi[0] - lo[0]) / res))
    ny = max(1, math.ceil((hi[1] - lo[1]) / res))
    grid = OccupancyGrid((float(lo[0]), float(lo[1])), res, np.zeros((nx, ny), dtype=bool))
    floor = lo[2]
    band_lo, band_hi = floor + OBSTACLE_BAND_M[0], floor + OBSTACLE_BAND_M[1]
    for m in meshes:
        tri = m.vertices_xyz[m.faces]  # (f, 3, 3)
        tri = tri[(tri[:, :, 2].max(axis=1) > band_lo) & (tri[:, :, 2].min(axis=1) < band_hi)]
        # Barycentric samples at most half a cell apart, so a large triangle (a wall quad) marks
        # every cell it crosses instead of a sparse dotted line that people could walk through.
        edges = np.linalg.norm(tri - np.roll(tri, 1, axis=1), axis=2).max(axis=1)
        n_per_tri = np.ceil(edges / (0.5 * res)).astype(np.int64) + 1
        n_per_tri = np.maximum(n_per_tri, 2)
        for n in np.unique(n_per_tri):
            u, v = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n))
            keep = (u + v) <= 1 + 1e-12
            u, v = u[keep], v[keep]
            group = tri[n_per_tri == n]
            chunk = max(1, 2_000_000 // len(u))  # bound the memory of one batch of samples
            for start in range(0, len(group), chunk):
                t = group[start : start + chunk]
                pts = (
                    t[:, None, 0] * (1 - u - v)[None, :, None]
                    + t[:, None, 1] * u[None, :, None]
                    + t[:, None, 2] * v[None, :, None]
                ).reshape(-1, 3)
                band = (pts[:, 2] > band_lo) & (pts[:, 2] < band_hi)
                idx = grid.cell_of(pts[band, :2])
                idx = np.clip(idx, 0, [nx - 1, ny - 1])
                grid.blocked[idx[:, 0], idx[:, 1]] = True
    return grid
