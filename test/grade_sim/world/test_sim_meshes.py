"""Mesh-file environments: obstacles marked in the free-space grid; textures, colours and class
labels kept, and a rendered textured floor shows its texture."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from grade_common.errors import ConfigError
from grade_sim.config.scenario import LightsConfig, MeshEnvironmentConfig, scenario_from_mapping
from grade_sim.scene import Scene
from grade_sim.world.labels import class_of
from grade_sim.world.meshes import load_mesh_world
from grade_sim.world.model import StaticMesh, World
from grade_sim.world.obj_file import read_obj
from grade_sim.world.sample_world import (
    FLOOR_HALF_XY,
    QUADRANT_RGB,
    floor_image,
    write_sample_world,
)

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


# -- textured worlds with labels (OBJ + MTL + PNG written by grade_sim.world.sample_world) --------


def sample(tmp_path: Path, **fields: object) -> World:
    return load(write_sample_world(tmp_path / "sample"), **fields)


def test_obj_parts_keep_names_classes_textures_and_colours(tmp_path: Path) -> None:
    world = sample(tmp_path)
    by_class: dict[str, list[StaticMesh]] = {}
    for mesh in world.meshes:
        by_class.setdefault(mesh.label, []).append(mesh)
    assert sorted(by_class) == ["chair", "crate", "floor", "table", "wall"]
    assert len(by_class["wall"]) == 4
    (floor,) = by_class["floor"]
    assert floor.texture_rgb is not None
    assert floor.texcoords_uv is not None
    np.testing.assert_array_equal(floor.texture_rgb, floor_image())
    assert not floor.collides  # a flat quad has no hull
    (table,) = by_class["table"]
    assert len(table.faces) == 5 * 12  # top and four legs, one object
    assert table.texture_rgb is None
    assert table.material.rgba == pytest.approx((0.55, 0.38, 0.22, 1.0))
    assert table.collides
    (crate,) = by_class["crate"]
    assert crate.texture_rgb is not None
    assert crate.texture_rgb.shape == (64, 64, 3)
    assert crate.texcoords_uv is not None
    assert len(crate.texcoords_uv) == len(crate.vertices_xyz)
    ids = [m.instance_id for m in world.meshes]
    assert ids == list(range(1, len(ids) + 1))


def test_label_map_overrides_names(tmp_path: Path) -> None:
    world = sample(tmp_path, label_map=str(tmp_path / "sample" / "labels.yaml"))
    labels = {m.name: m.label for m in world.meshes}
    assert labels["mesh_7_crate_02"] == "box"  # "crate*": box
    assert labels["mesh_1_wall_north"] == "wall"
    assert labels["mesh_5_table_01"] == "table"  # no pattern: the name's word


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("- a\n- b\n", r"must map glob patterns to class names"),
        ('"chair*": 3\n', r"entry 'chair\*': 3 is not allowed"),
        ("a: [\n", r"is not valid YAML"),
    ],
)
def test_bad_label_map_is_refused(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "labels.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match):
        sample(tmp_path, label_map=str(path))


def test_missing_texture_names_the_file(tmp_path: Path) -> None:
    obj = write_sample_world(tmp_path / "sample")
    (obj.parent / "crate.png").unlink()
    with pytest.raises(ConfigError, match=r"texture .*crate\.png' of material 'crate_wood'"):
        load(obj)


def test_obj_reader_fans_polygons_and_resolves_negative_indices(tmp_path: Path) -> None:
    path = tmp_path / "poly.obj"
    path.write_text(
        "g Lamp.001\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nf -5 -4 -3 -2\nf 1 2 5\n"
    )
    (part,) = read_obj(path)
    assert part.object_name == "Lamp.001"
    assert len(part.faces) == 3
    assert part.texcoords_uv is None
    assert class_of(part.object_name, "", None) == "lamp"
    assert class_of("geometry_0", "", None) == "environment"


def render_down(world: World, xy: tuple[float, float]) -> np.ndarray:
    """The colour seen straight down onto the floor at xy, 1.5 m above it (no robots' view)."""
    import mujoco

    from grade_sim.engine.mujoco.builder import build_model

    scenario = scenario_from_mapping(
        {
            "duration_s": 0.1,
            "environment": {"type": "mesh", "mesh": {"path": "unused.obj"}},
            "people": {"count": 0},
            "flying_objects": {"count": 0},
            "robots": [{"name": "uav1", "start_xyz": [0.0, 0.0, 5.0]}],
        }
    )
    scene = Scene(scenario=scenario, world=world, n_steps=1)
    model = build_model(scene).model
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    with mujoco.Renderer(model, 32, 32) as renderer:
        cam = mujoco.MjvCamera()
        cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        cam.lookat[:] = (xy[0], xy[1], 0.0)
        cam.distance, cam.azimuth, cam.elevation = 1.5, 90.0, -89.9
        renderer.update_scene(data, cam)
        image = renderer.render()
    return np.asarray(image[12:20, 12:20].reshape(-1, 3).mean(axis=0))


@pytest.mark.parametrize("quadrant", sorted(QUADRANT_RGB))
def test_rendered_floor_shows_its_texture_colour(tmp_path: Path, quadrant: tuple[int, int]) -> None:
    """Each quadrant of the floor renders in its texture colour (shading changes brightness,
    not hue), so texture coordinates, the image and its orientation all reach the renderer."""
    world = sample(tmp_path)
    # Far out in the quadrant, clear of the table, chair and crate.
    xy = (quadrant[0] * FLOOR_HALF_XY[0] * 0.8, quadrant[1] * FLOOR_HALF_XY[1] * 0.75)
    seen = render_down(world, xy)
    expected = np.array(QUADRANT_RGB[quadrant], dtype=np.float64)
    cosine = float(seen @ expected / (np.linalg.norm(seen) * np.linalg.norm(expected)))
    assert cosine > 0.97, (seen, expected)
    others = [np.array(c, float) for q, c in QUADRANT_RGB.items() if q != quadrant]
    for other in others:
        assert cosine > float(seen @ other / (np.linalg.norm(seen) * np.linalg.norm(other)))


def test_glb_keeps_texture_and_node_names(tmp_path: Path) -> None:
    """A textured GLB (written by trimesh) loads with its node name, image and UVs, and renders
    in the image's colour."""
    from PIL import Image

    floor = trimesh.Trimesh(
        vertices=[[-2, -2, 0], [2, -2, 0], [2, 2, 0], [-2, 2, 0]],
        faces=[[0, 1, 2], [0, 2, 3]],
        process=False,
    )
    image = Image.fromarray(floor_image())
    uv = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], dtype=np.float64)
    floor.visual = trimesh.visual.TextureVisuals(uv=uv, image=image)
    block = trimesh.creation.box(extents=(0.5, 0.5, 0.5))
    block.apply_translation((1.0, 1.0, 0.25))
    scene = trimesh.Scene()
    scene.add_geometry(floor, node_name="floor_tiles", geom_name="floor_geom")
    scene.add_geometry(block, node_name="Cabinet_3", geom_name="block_geom")
    path = tmp_path / "room.glb"
    scene.export(path)
    world = load(path)
    labels = sorted(m.label for m in world.meshes)
    assert labels == ["cabinet", "floor"]
    textured = next(m for m in world.meshes if m.label == "floor")
    assert textured.texture_rgb is not None
    seen = render_down(world, (-1.0, 1.0))  # the red quadrant
    assert seen[0] > 2 * max(seen[1], seen[2]), seen
