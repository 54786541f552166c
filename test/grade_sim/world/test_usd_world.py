"""USD stages as mesh worlds: a small room built with usd-core (centimetres, Y up, a textured
floor, labelled and named parts, an animated prim) loads in metres and Z up, with its labels,
textures and depth."""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pytest

from depth_kit import world_depth
from grade_common.errors import ConfigError
from grade_sim.config.scenario import LightsConfig, MeshEnvironmentConfig
from grade_sim.world.meshes import load_mesh_world
from grade_sim.world.model import World
from grade_sim.world.usd_semantics import apply_semantics

pytest.importorskip("pxr")
from pxr import Gf, Sdf, Usd, UsdGeom, UsdShade, Vt

# The room in metres, Z up: a 4 x 3 m floor at z = 0, a 0.8 m cube "table" at (1, 1), a 0.5 m
# cube "chair" at (3, 2). The stage stores it in centimetres with Y up: (x, y, z) -> (x, z, -y).
FLOOR_RGB = (200, 40, 40)


def _cube(size: float, center: tuple[float, float, float]) -> tuple[np.ndarray, np.ndarray]:
    corners = np.array(
        [[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=np.float64
    )
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return corners * size / 2 + center, np.array(quads)


def _yup_cm(points_m: np.ndarray) -> np.ndarray:
    return np.column_stack([points_m[:, 0], points_m[:, 2], -points_m[:, 1]]) * 100.0


def _mesh(stage: Usd.Stage, path: str, points_m: np.ndarray, quads: np.ndarray) -> UsdGeom.Mesh:
    mesh = UsdGeom.Mesh.Define(stage, path)
    mesh.CreatePointsAttr(Vt.Vec3fArray.FromNumpy(_yup_cm(points_m).astype(np.float32)))
    mesh.CreateFaceVertexCountsAttr([len(q) for q in quads])
    mesh.CreateFaceVertexIndicesAttr([int(i) for q in quads for i in q])
    return mesh


def write_room(path: Path) -> Path:
    import cv2

    stage = Usd.Stage.CreateNew(str(path))
    UsdGeom.SetStageMetersPerUnit(stage, 0.01)
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.y)
    UsdGeom.Xform.Define(stage, "/Room")
    floor_pts = np.array([[0, 0, 0], [4, 0, 0], [4, 3, 0], [0, 3, 0]], dtype=np.float64)
    floor = _mesh(stage, "/Room/Ground", floor_pts, np.array([[0, 1, 2, 3]]))
    apply_semantics(floor.GetPrim(), "floor", 1)
    st = UsdGeom.PrimvarsAPI(floor).CreatePrimvar(
        "st", Sdf.ValueTypeNames.TexCoord2fArray, UsdGeom.Tokens.vertex
    )
    st.Set(Vt.Vec2fArray([(0, 0), (1, 0), (1, 1), (0, 1)]))
    image = np.zeros((8, 8, 3), np.uint8)
    image[:] = FLOOR_RGB
    cv2.imwrite(str(path.parent / "floor.png"), image[:, :, ::-1])
    mat = UsdShade.Material.Define(stage, "/Room/Looks/floor_mat")
    shader = UsdShade.Shader.Define(stage, "/Room/Looks/floor_mat/surface")
    shader.CreateIdAttr("UsdPreviewSurface")
    tex = UsdShade.Shader.Define(stage, "/Room/Looks/floor_mat/tex")
    tex.CreateIdAttr("UsdUVTexture")
    tex.CreateInput("file", Sdf.ValueTypeNames.Asset).Set("./floor.png")
    shader.CreateInput("diffuseColor", Sdf.ValueTypeNames.Color3f).ConnectToSource(
        tex.CreateOutput("rgb", Sdf.ValueTypeNames.Float3)
    )
    mat.CreateSurfaceOutput().ConnectToSource(shader.ConnectableAPI(), "surface")
    UsdShade.MaterialBindingAPI.Apply(floor.GetPrim()).Bind(mat)
    table = _mesh(stage, "/Room/Cube_003", *_cube(0.8, (1.0, 1.0, 0.4)))
    apply_semantics(table.GetPrim(), "table", 2)
    chair = _mesh(stage, "/Room/chair_01", *_cube(0.5, (3.0, 2.0, 0.25)))
    chair.CreateDisplayColorAttr([(0.1, 0.6, 0.2)])
    # A moving prim (a person walking, a door swinging) is not part of the world.
    mover = UsdGeom.Xform.Define(stage, "/Room/Mover")
    op = mover.AddTranslateOp()
    op.Set(Gf.Vec3d(0, 0, 0), 0.0)
    op.Set(Gf.Vec3d(100, 0, 0), 10.0)
    _mesh(stage, "/Room/Mover/box", *_cube(0.3, (2.0, 0.5, 0.15)))
    stage.GetRootLayer().Save()
    return path


def load(path: Path, **fields: object) -> World:
    config = MeshEnvironmentConfig(path=str(path), **fields)  # type: ignore[arg-type]
    return load_mesh_world(config, LightsConfig(count=1), np.random.default_rng(0))


def depth_down(world: World, xy: tuple[float, float], height_m: float = 2.0) -> float:
    """Depth at the image centre of a camera `height_m` above the floor looking straight down."""
    return float(world_depth(world, (xy[0], xy[1], 0.0), height_m)[4, 4])


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_room(tmp_path_factory.mktemp("usd_room") / "room.usda")


def test_stage_units_and_axes_apply(room: Path) -> None:
    world = load(room)
    np.testing.assert_allclose(world.bounds_min_xyz, (0.0, 0.0, 0.0), atol=1e-5)
    np.testing.assert_allclose(world.bounds_max_xyz, (4.0, 3.0, 0.8), atol=1e-5)


def test_labels_from_semantics_then_names_and_moving_prims_left_out(room: Path) -> None:
    world = load(room)
    labels = sorted(m.label for m in world.meshes)
    assert labels == ["chair", "floor", "table"]
    (chair,) = [m for m in world.meshes if m.label == "chair"]
    assert chair.material.rgba[:3] == pytest.approx((0.1, 0.6, 0.2))


def test_label_map_applies_to_semantic_classes(room: Path, tmp_path: Path) -> None:
    label_map = tmp_path / "labels.yaml"
    label_map.write_text('"table": furniture\n"chair*": seat\n')
    world = load(room, label_map=str(label_map))
    assert sorted(m.label for m in world.meshes) == ["floor", "furniture", "seat"]


def test_texture_and_coordinates_reach_the_world(room: Path) -> None:
    (floor,) = [m for m in load(room).meshes if m.label == "floor"]
    assert floor.texture_rgb is not None
    assert floor.texcoords_uv is not None
    assert tuple(floor.texture_rgb[0, 0]) == FLOOR_RGB
    assert len(floor.texcoords_uv) == len(floor.vertices_xyz)


def test_depth_sees_floor_and_furniture_at_their_heights(room: Path) -> None:
    world = load(room)
    assert depth_down(world, (2.5, 0.5)) == pytest.approx(2.0, abs=2e-3)  # floor
    assert depth_down(world, (1.0, 1.0)) == pytest.approx(1.2, abs=2e-3)  # table top, 0.8 m
    assert depth_down(world, (3.0, 2.0)) == pytest.approx(1.5, abs=2e-3)  # chair top, 0.5 m


def test_scenario_scale_and_up_axis_win_with_a_log_line(
    room: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="grade_sim.world.meshes"):
        world = load(room, scale=0.02, up_axis="y")
    np.testing.assert_allclose(world.bounds_max_xyz, (8.0, 6.0, 1.6), atol=1e-5)
    text = caplog.text
    assert "environment.mesh.scale 0.02 replaces the stage's metersPerUnit 0.01" in text
    assert "mesh prim(s) move or are skinned" in text


def test_a_stage_that_does_not_open_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.usda"
    bad.write_text("#usda 1.0\nthis is not usd\n")
    with pytest.raises(ConfigError, match=r"environment\.mesh\.path: cannot open USD stage"):
        load(bad)


def test_a_usdz_package_loads_with_its_texture_inside(room: Path, tmp_path: Path) -> None:
    from pxr import UsdUtils

    package = tmp_path / "room.usdz"
    assert UsdUtils.CreateNewUsdzPackage(str(room), str(package))
    world = load(package)
    assert sorted(m.label for m in world.meshes) == ["chair", "floor", "table"]
    (floor,) = [m for m in world.meshes if m.label == "floor"]
    assert floor.texture_rgb is not None
    assert tuple(floor.texture_rgb[0, 0]) == FLOOR_RGB
