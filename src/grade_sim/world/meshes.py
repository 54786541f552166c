"""Static environments from mesh files (OBJ, STL, GLB/GLTF, PLY) through trimesh."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from grade_common.errors import ConfigError
from grade_sim.config.scenario import LightsConfig, MeshEnvironmentConfig
from grade_sim.world.model import Light, Material, OccupancyGrid, StaticMesh, World

SUPPORTED_SUFFIXES = (".obj", ".stl", ".glb", ".gltf", ".ply")
GRID_RESOLUTION_M = 0.1
# Surfaces between these heights above the floor block walking and low flight.
OBSTACLE_BAND_M = (0.15, 1.9)


def load_mesh_world(
    config: MeshEnvironmentConfig,
    lights: LightsConfig,
    rng: np.random.Generator,
    first_instance_id: int = 1,
) -> World:
    """Load a mesh file as the static environment; each sub-mesh of a scene becomes one instance.

    Raises:
        ConfigError: the file is missing, of an unsupported type, or holds no triangles.
    """
    import trimesh

    path = Path(config.path or "")
    if not path.is_file():
        raise ConfigError(f"environment.mesh.path: mesh file {str(path)!r} does not exist")
    if path.suffix.lower() not in SUPPORTED_SUFFIXES:
        raise ConfigError(
            f"environment.mesh.path: {path.suffix!r} is not supported; "
            f"use one of {', '.join(SUPPORTED_SUFFIXES)}"
        )
    try:
        loaded = trimesh.load(str(path), force=None)
    except Exception as err:  # trimesh raises many types for broken files
        raise ConfigError(f"environment.mesh.path: cannot read {str(path)!r}: {err}") from err
    if isinstance(loaded, trimesh.Scene):
        # dump() applies the scene graph transforms; one instance per node.
        dumped = loaded.dump(concatenate=False)
        parts = [(str(g.metadata.get("name", f"part{k}")), g) for k, g in enumerate(dumped)]
    else:
        parts = [(path.stem, loaded)]
    meshes: list[StaticMesh] = []
    up_to_z = (
        np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]], dtype=np.float64)
        if config.up_axis == "y"
        else np.eye(3)
    )
    for k, (name, mesh) in enumerate(parts):
        if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
            continue
        vertices = (np.asarray(mesh.vertices, dtype=np.float64) * config.scale) @ up_to_z.T
        color = _mesh_color(mesh, rng)
        meshes.append(
            StaticMesh(
                f"mesh_{k}_{name}",
                "environment",
                first_instance_id + len(meshes),
                vertices,
                np.asarray(mesh.faces, dtype=np.int32),
                Material(rgba=color),
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


def _mesh_color(mesh: object, rng: np.random.Generator) -> tuple[float, float, float, float]:
    visual = getattr(mesh, "visual", None)
    try:
        main = np.asarray(visual.main_color, dtype=np.float64) / 255.0  # type: ignore[union-attr]
        return (float(main[0]), float(main[1]), float(main[2]), 1.0)
    except Exception:  # no colour in the file: a random neutral one
        c = rng.uniform(0.4, 0.8, 3)
        return (float(c[0]), float(c[1]), float(c[2]), 1.0)


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
