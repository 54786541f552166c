"""Mesh-file environments: loaded through trimesh, obstacles marked in the free-space grid."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from grade_common.errors import ConfigError
from grade_sim.config.scenario import LightsConfig, MeshEnvironmentConfig
from grade_sim.world.meshes import load_mesh_world
from grade_sim.world.model import World

# A 6 x 4 m floor slab (top at z = 0) and a 1 x 1 x 1.2 m block standing on it at (2, 1).
FLOOR_EXTENTS = (6.0, 4.0, 0.02)
BLOCK_CENTER_XY = (2.0, 1.0)


def room_mesh(up: str = "z") -> trimesh.Trimesh:
    floor = trimesh.creation.box(extents=FLOOR_EXTENTS)
    floor.apply_translation((3.0, 2.0, -0.01))
    block = trimesh.creation.box(extents=(1.0, 1.0, 1.2))
    block.apply_translation((*BLOCK_CENTER_XY, 0.6))
    mesh = trimesh.util.concatenate([floor, block])
    if up == "y":  # the same room in a y-up file: (x, y, z) -> (x, z, -y)
        mesh.apply_transform(
            np.array([[1, 0, 0, 0], [0, 0, 1, 0], [0, -1, 0, 0], [0, 0, 0, 1]], dtype=float)
        )
    return mesh


def load(path: Path, **fields: object) -> World:
    config = MeshEnvironmentConfig(path=str(path), **fields)  # type: ignore[arg-type]
    return load_mesh_world(config, LightsConfig(count=2), np.random.default_rng(0))


def check_room(world: World, scale: float = 1.0) -> None:
    grid = world.free_space
    lo, hi = np.array(world.bounds_min_xyz), np.array(world.bounds_max_xyz)
    np.testing.assert_allclose(lo, np.array([0.0, 0.0, -0.02]) * scale, atol=1e-6)
    np.testing.assert_allclose(hi, np.array([6.0, 4.0, 1.2]) * scale, atol=1e-6)
    bx, by = (np.array(BLOCK_CENTER_XY) * scale).tolist()
    half = 0.5 * scale
    # The block's four sides are blocked; open floor away from it is free.
    for dx, dy in ((-half, 0.0), (half, 0.0), (0.0, -half), (0.0, half)):
        assert not grid.is_free(np.array([bx + 0.98 * dx, by + 0.98 * dy]))
    for p in ((bx + 2.0 * scale, by), (bx, by + 2.0 * scale), (5.0 * scale, 3.0 * scale)):
        assert grid.is_free(np.array(p)), p
    # Blocked cells stay within one cell of the block's footprint (the floor is not an obstacle).
    cells = np.argwhere(grid.blocked)
    centres = grid.center_of(cells)
    margin = half + grid.resolution_m
    assert np.all(np.abs(centres[:, 0] - bx) <= margin)
    assert np.all(np.abs(centres[:, 1] - by) <= margin)
    assert len(world.lights) == 2
    assert all(light.position_xyz[2] > hi[2] for light in world.lights)


@pytest.mark.parametrize("suffix", [".obj", ".ply", ".stl", ".glb"])
def test_mesh_world_marks_the_obstacle(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"room{suffix}"
    room_mesh().export(path)
    world = load(path)
    check_room(world)
    assert world.boxes == ()
    assert world.tour_xy == ()
    assert len(world.meshes) >= 1
    assert all(m.label == "environment" for m in world.meshes)
    ids = [m.instance_id for m in world.meshes]
    assert ids == list(range(1, len(ids) + 1))
    n_faces = sum(len(m.faces) for m in world.meshes)
    assert n_faces == 24  # two boxes of 12 triangles


def test_scale_and_y_up(tmp_path: Path) -> None:
    path = tmp_path / "room_yup.obj"
    room_mesh(up="y").export(path)
    check_room(load(path, up_axis="y", scale=2.0), scale=2.0)


def test_same_seed_same_world(tmp_path: Path) -> None:
    path = tmp_path / "room.ply"
    room_mesh().export(path)
    a, b = load(path), load(path)
    assert a.lights == b.lights
    np.testing.assert_array_equal(a.free_space.blocked, b.free_space.blocked)
    for ma, mb in zip(a.meshes, b.meshes, strict=True):
        np.testing.assert_array_equal(ma.vertices_xyz, mb.vertices_xyz)
        assert ma.material == mb.material


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"environment\.mesh\.path: mesh file .*gone\.obj"):
        load(tmp_path / "gone.obj")


@pytest.mark.parametrize("suffix", [".xyz", ".fbx", ".txt"])
def test_unsupported_suffix_lists_supported_ones(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"room{suffix}"
    path.write_text("not a mesh")
    with pytest.raises(ConfigError, match=rf"'\{suffix}' is not supported; use one of \.obj, "):
        load(path)


def test_file_without_triangles(tmp_path: Path) -> None:
    path = tmp_path / "points.obj"
    path.write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\n")
    with pytest.raises(ConfigError, match=r"environment\.mesh\.path: .*points\.obj"):
        load(path)


def test_long_wall_of_two_triangles_per_side_is_closed(tmp_path: Path) -> None:
    """A 10 m wall made of a few large triangles blocks every cell along it (no gaps)."""
    floor = trimesh.creation.box(extents=(12.0, 4.0, 0.02))
    floor.apply_translation((6.0, 2.0, -0.01))
    wall = trimesh.creation.box(extents=(10.0, 0.1, 2.5))
    wall.apply_translation((6.0, 2.0, 1.25))
    path = tmp_path / "wall.obj"
    trimesh.util.concatenate([floor, wall]).export(path)
    grid = load(path).free_space
    for x in np.arange(1.05, 11.0, 0.05):
        assert not grid.is_free(np.array([x, 2.0])), x
    assert grid.is_free(np.array([6.0, 1.0]))
    assert grid.is_free(np.array([6.0, 3.0]))
    assert grid.is_free(np.array([0.5, 2.0]))
    assert grid.is_free(np.array([11.5, 2.0]))
