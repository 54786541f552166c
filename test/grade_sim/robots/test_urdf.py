"""Robots from URDF: the reader (frames, shapes, meshes, mass, errors) and the MuJoCo body built
from it (rendered with the robot's instance id, collisions stop it, default robots unchanged)."""

from __future__ import annotations

import logging
import math
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import trimesh

from grade_common.errors import ConfigError
from grade_common.rotations import quat_from_rpy, quat_to_matrix
from grade_sim.config.scenario import Stream, load_scenario, scenario_from_mapping
from grade_sim.engine.mujoco.builder import build_model
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.robots.urdf import GeomShape, UrdfError, load_urdf
from grade_sim.scene import Scene, build_scene

DATA = Path(__file__).parent / "data"
REPO = Path(__file__).resolve().parents[3]
ROBOT_ID = 2
FIN_EXTENTS = (0.1, 0.02, 0.1)


def write_bot(folder: Path, text: str | None = None) -> Path:
    """The test URDF (or `text`) in `folder`, with the STL mesh it names written by trimesh."""
    (folder / "meshes").mkdir(parents=True, exist_ok=True)
    trimesh.creation.box(extents=FIN_EXTENTS).export(folder / "meshes" / "fin.stl")
    path = folder / "bot.urdf"
    if text is None:
        shutil.copy(DATA / "urdf_test_bot.urdf", path)
    else:
        path.write_text(text)
    return path


@pytest.fixture
def bot(tmp_path: Path) -> Path:
    return write_bot(tmp_path)


def edited(path: Path, old: str, new: str) -> str:
    text = path.read_text()
    assert old in text
    return text.replace(old, new, 1)


# -- the reader --------------------------------------------------------------------------------
def test_geometry_is_flattened_into_the_base_link_frame(
    bot: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        robot = load_urdf(bot)
    assert robot.name == "test_bot"
    assert robot.base_link == "base_link"
    visuals = {g.name: g for g in robot.visuals}
    assert sorted(visuals) == ["base_link/visual0", "fin/visual0", "mast/visual0"]
    box = visuals["base_link/visual0"]
    assert box.shape is GeomShape.BOX
    assert box.size == pytest.approx((0.15, 0.1, 0.05))
    assert box.rgba == pytest.approx((0.9, 0.1, 0.1, 1.0))  # named material of <robot>
    mast = visuals["mast/visual0"]
    assert mast.shape is GeomShape.CYLINDER
    assert mast.size == pytest.approx((0.03, 0.1))  # radius, half length
    # joint origin (0, 0, 0.05) + visual origin (0, 0, 0.1), turned 90 deg about z
    np.testing.assert_allclose(mast.pos_base_xyz, [0.0, 0.0, 0.15], atol=1e-12)
    np.testing.assert_allclose(mast.quat_base_wxyz, quat_from_rpy(0, 0, math.pi / 2), atol=1e-12)
    assert mast.rgba == pytest.approx((0.5, 0.5, 0.5, 1.0))  # inline material
    np.testing.assert_allclose(box.pos_base_xyz, 0.0, atol=1e-12)
    fin = visuals["fin/visual0"]
    assert fin.shape is GeomShape.MESH
    assert fin.vertices_xyz is not None
    assert fin.faces is not None
    np.testing.assert_allclose(np.ptp(fin.vertices_xyz, axis=0), FIN_EXTENTS, atol=1e-6)
    assert fin.faces.shape == (12, 3)
    np.testing.assert_allclose(fin.pos_base_xyz, [0.0, 0.2, 0.0], atol=1e-12)
    assert fin.rgba == pytest.approx((0.5, 0.5, 0.5, 1.0))
    collisions = {g.name: g for g in robot.collisions}
    assert sorted(collisions) == ["base_link/collision0", "fin/collision0", "fin/collision1"]
    assert collisions["base_link/collision0"].size == pytest.approx((0.25, 0.3, 0.05))
    sphere = collisions["fin/collision1"]
    assert sphere.shape is GeomShape.SPHERE
    assert sphere.size == pytest.approx((0.02,))
    np.testing.assert_allclose(sphere.pos_base_xyz, [0.0, 0.2, 0.08], atol=1e-12)
    # The revolute fin joint is held at zero, and said so.
    assert robot.frozen_joints == ("fin_joint",)
    assert "fin_joint" in caplog.text
    assert "held at zero" in caplog.text


def test_mass_centre_and_inertia_combine_every_inertial(bot: Path) -> None:
    robot = load_urdf(bot)
    assert robot.mass_kg == pytest.approx(1.2)
    com = np.array([0.0, 0.2 * 0.2 / 1.2, 0.0])
    np.testing.assert_allclose(robot.com_base_xyz, com, atol=1e-12)
    expected = np.diag([0.004, 0.008, 0.01]) + np.diag([0.0002, 0.0003, 0.0002])
    for mass, at in ((1.0, np.zeros(3)), (0.2, np.array([0.0, 0.2, 0.0]))):
        d = at - com
        expected += mass * (float(d @ d) * np.eye(3) - np.outer(d, d))
    np.testing.assert_allclose(robot.inertia_com_base, expected, atol=1e-12)


def test_another_base_link_re_expresses_every_shape(bot: Path) -> None:
    robot = load_urdf(bot, base_link="mast")
    box = next(g for g in robot.visuals if g.name == "base_link/visual0")
    # base_link seen from mast: 0.05 below, turned -90 deg about z
    np.testing.assert_allclose(box.pos_base_xyz, [0.0, 0.0, -0.05], atol=1e-12)
    r = quat_to_matrix(box.quat_base_wxyz)
    np.testing.assert_allclose(r, quat_to_matrix(quat_from_rpy(0, 0, -math.pi / 2)), atol=1e-12)
    fin = next(g for g in robot.visuals if g.name == "fin/visual0")
    np.testing.assert_allclose(fin.pos_base_xyz, [0.2, 0.0, -0.05], atol=1e-12)


def test_mesh_scale_and_package_urls(tmp_path: Path) -> None:
    pkg = tmp_path / "my_robot_pkg"
    text = edited(
        DATA / "urdf_test_bot.urdf",
        '<visual>\n      <geometry><mesh filename="meshes/fin.stl"/>',
        '<visual>\n      <geometry><mesh filename="package://my_robot_pkg/meshes/fin.stl" '
        'scale="2 1 -1"/>',
    )
    (pkg / "urdf").mkdir(parents=True)
    write_bot(pkg)  # meshes/ at the package root
    urdf = pkg / "urdf" / "bot.urdf"
    urdf.write_text(text.replace('filename="meshes/', 'filename="../meshes/'))
    fin = next(g for g in load_urdf(urdf).visuals if g.name == "fin/visual0")
    assert fin.vertices_xyz is not None
    assert fin.faces is not None
    np.testing.assert_allclose(np.ptp(fin.vertices_xyz, axis=0), [0.2, 0.02, 0.1], atol=1e-6)
    # The mirror (negative scale) keeps the faces pointing outwards.
    mesh = trimesh.Trimesh(fin.vertices_xyz, fin.faces, process=False)
    assert mesh.volume == pytest.approx(0.2 * 0.02 * 0.1, rel=1e-6)


BOX = '<geometry><box size="0.3 0.2 0.1"/></geometry>'


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [
        ("<robot name", '<robot name="x" <bad', r"bot\.urdf: not valid XML"),
        (
            BOX,
            '<geometry><capsule radius="0.1" length="0.2"/></geometry>',
            r"bot\.urdf: <link name='base_link'> <visual> #0 <geometry> <capsule>: "
            r"unknown geometry "
            r"'capsule'; allowed box, cylinder, sphere, mesh",
        ),
        (BOX, "<geometry/>", r"<link name='base_link'> <visual> #0: needs a <geometry>"),
        (
            '<mesh filename="meshes/fin.stl"/>',
            '<mesh filename="meshes/nope.stl"/>',
            r"bot\.urdf: <link name='fin'> <visual> #0 <geometry> <mesh>: mesh file "
            r"'meshes/nope.stl' not found",
        ),
        (
            '<mesh filename="meshes/fin.stl"/>',
            '<mesh filename="package://other/fin.stl"/>',
            r"<link name='fin'> <visual> #0 <geometry> <mesh>: mesh file 'package://other/fin.stl'",
        ),
        (
            '<mesh filename="meshes/fin.stl"/>',
            '<mesh filename="bot.urdf"/>',
            r"<mesh>: mesh .*bot\.urdf'?: '\.urdf' is not one of",
        ),
        (
            'size="0.3 0.2 0.1"',
            'size="0.3 -0.2 0.1"',
            r"<link name='base_link'> <visual> #0 <geometry> <box>: "
            r"size='0.3 -0.2 0.1' must be > 0",
        ),
        ('size="0.3 0.2 0.1"', 'size="0.3 0.2"', r"<box>: size='0.3 0.2' is not 3 finite number"),
        (
            '<cylinder radius="0.03" length="0.2"/>',
            '<cylinder radius="0.03"/>',
            r"<link name='mast'> <visual> #0 <geometry> <cylinder>: attribute 'length' is missing",
        ),
        (
            '<child link="fin"/>',
            '<child link="wing"/>',
            r"<joint name='fin_joint'>: <child link='wing'> names no <link>",
        ),
        ('type="revolute"', 'type="hinge"', r"<joint name='fin_joint'>: type 'hinge' is not"),
        (
            '<child link="mast"/>',
            '<child link="fin"/>',
            r"<joint name='.*'>: link 'fin' already has parent joint",
        ),
        (
            '<material name="red"/>\n    </visual>\n    <!--',
            '<material name="blue"/>\n    </visual>\n    <!--',
            r"<link name='base_link'> <visual> #0 <material name='blue'>: has no <color>",
        ),
        ('rgba="0.5 0.5 0.5 1"', 'rgba="0.5 0.5 2 1"', r"<material name='grey'>: rgba="),
        (
            '<mass value="1.0"/>',
            '<mass value="-1.0"/>',
            r"<link name='base_link'> <inertial>: mass -1.0 must be >= 0",
        ),
        ('ixx="0.004"', 'ixx="-0.004"', r"<inertial>: the inertia matrix is not positive"),
        (
            '<robot name="test_bot">',
            '<robot name="test_bot" xmlns:xacro="http://www.ros.org/wiki/xacro">'
            '<xacro:property name="w" value="1"/>',
            r"bot\.urdf: contains xacro macros; expand it",
        ),
        ('<robot name="test_bot">', '<model name="test_bot">', r"bot\.urdf: the top element is"),
    ],
)
def test_bad_urdf_names_the_file_and_element(
    tmp_path: Path, old: str, new: str, match: str
) -> None:
    text = edited(DATA / "urdf_test_bot.urdf", old, new)
    if new.startswith("<model"):
        text = text.replace("</robot>", "</model>")
    path = write_bot(tmp_path, text)
    with pytest.raises(UrdfError, match=match):
        load_urdf(path)


def test_missing_urdf_file_and_unknown_base_link(bot: Path) -> None:
    with pytest.raises(UrdfError, match=r"URDF file '.*nothing\.urdf' does not exist"):
        load_urdf(bot.parent / "nothing.urdf")
    with pytest.raises(UrdfError, match=r"urdf_base_link 'wing' is not a link .*'base_link'"):
        load_urdf(bot, base_link="wing")


def test_inertia_no_rigid_body_has_is_refused(tmp_path: Path) -> None:
    text = (DATA / "urdf_test_bot.urdf").read_text()
    text = re.sub(r'i(xx|yy|zz)="[0-9.]+"', 'i\\1="0"', text)  # point masses on a line (y)
    with pytest.raises(UrdfError, match=r"bot\.urdf: <inertial>: the links' inertias add up"):
        load_urdf(write_bot(tmp_path, text))


def test_mesh_that_is_not_a_mesh_is_refused(tmp_path: Path) -> None:
    path = write_bot(tmp_path)
    (tmp_path / "meshes" / "fin.stl").write_text("solid nothing\nendsolid nothing\n")
    with pytest.raises(UrdfError, match=r"<link name='fin'> <visual> #0 <geometry> <mesh>: "):
        load_urdf(path)


# -- the scenario ------------------------------------------------------------------------------
def test_scenario_resolves_the_urdf_next_to_the_scenario_file(tmp_path: Path) -> None:
    write_bot(tmp_path / "robots")
    scenario_file = tmp_path / "s.yaml"
    scenario_file.write_text("robots:\n  - name: uav1\n    urdf: robots/bot.urdf\n")
    scenario = load_scenario(scenario_file)
    assert scenario.robots[0].urdf == str((tmp_path / "robots" / "bot.urdf").resolve())
    scenario_file.write_text("robots:\n  - name: uav1\n  - name: uav2\n    urdf: robots/no.urdf\n")
    with pytest.raises(ConfigError, match=r"s\.yaml: robots\[1\]\.urdf: URDF file '.*no\.urdf'"):
        load_scenario(scenario_file)
    scenario_file.write_text("robots:\n  - name: uav1\n    urdf_base_link: base_link\n")
    with pytest.raises(ConfigError, match=r"robots\[0\]\.urdf_base_link: set only together"):
        load_scenario(scenario_file)


# -- the MuJoCo body ---------------------------------------------------------------------------


FX_160 = 80.0 / math.tan(math.radians(30.0))  # focal length of a 160 px wide, 60 deg camera


def test_urdf_body_is_rendered_with_the_robot_instance_id(
    bot: Path, box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    # A camera 1 m behind the body looks forward at it; the red target box is far off to the side.
    camera = {
        "name": "camera",
        "width": 160,
        "height": 120,
        "hfov_deg": 60.0,
        "mount": {"xyz": [-1.0, 0.0, 0.0]},
    }
    scene = box_scene(
        box_center_xyz=(3.0, 3.0, 2.5),
        robot={"urdf": str(bot), "cameras": [camera]},
    )
    frame = engine_of(scene).render(
        "uav1", "camera", frozenset({Stream.RGB, Stream.DEPTH, Stream.INSTANCE})
    )
    assert frame.instance is not None
    assert frame.depth_m is not None
    assert frame.rgb is not None
    # Centre: the back of the visual box (0.85 m away), not of the larger collision box (0.75 m).
    assert frame.instance[60, 80] == ROBOT_ID
    assert frame.depth_m[60, 80] == pytest.approx(0.85, abs=0.005)
    assert frame.rgb[60, 80, 0] > 2 * frame.rgb[60, 80, 1]  # red material
    # The STL fin at y = 0.2 (0.95 m away) is drawn left of the box.
    u_fin = round(80 - FX_160 * 0.2 / 0.95)
    assert frame.instance[60, u_fin] == ROBOT_ID
    assert frame.depth_m[60, u_fin] == pytest.approx(0.95, abs=0.005)
    # The cylinder mast above the box.
    v_mast = round(60 - FX_160 * 0.2 / 0.97)
    assert frame.instance[v_mast, 80] == ROBOT_ID
    assert frame.depth_m[v_mast, 80] == pytest.approx(0.97, abs=0.01)
    # Where only the collision box (0.3 m to the side) would be, nothing is seen.
    u_collision = round(80 - FX_160 * 0.28 / 0.75)
    assert frame.instance[60, u_collision] == 0
    assert frame.depth_m[60, u_collision] == 0.0
    # The visual box's width in the centre row is 0.2 m at 0.85 m, the fin aside.
    row = frame.instance[60] == ROBOT_ID
    box_cols = np.flatnonzero(row[u_fin + 5 :]) + u_fin + 5
    assert box_cols.size == pytest.approx(2 * FX_160 * 0.1 / 0.85, abs=2)


def wall_scene(box_scene: Callable[..., Scene], urdf: Path) -> Scene:
    # A wall whose face is at x = 1.4; the robot starts at x = 0.
    return box_scene(
        box_center_xyz=(1.5, 0.0, 1.0), box_half_xyz=(0.1, 2.0, 1.0), robot={"urdf": str(urdf)}
    )


def drive_into_wall(engine: MujocoEngine) -> tuple[float, float]:
    engine.set_joint_velocity_commands("uav1", np.array([0.5, 0.0, 0.0, 0.0, 0.0, 0.0]))
    for _ in range(960):  # 4 s: 2 m without the wall
        engine.step()
    state = engine.robot_state("uav1")
    return float(state.position_world_base[0]), float(state.joint_velocities[0])


def test_collision_geometry_stops_the_robot_at_a_wall(
    bot: Path, box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    x, vx = drive_into_wall(engine_of(wall_scene(box_scene, bot)))
    # The collision box reaches 0.25 m forward (the visual box only 0.15 m).
    assert x == pytest.approx(1.4 - 0.25, abs=0.02)
    assert abs(vx) < 0.02


def test_a_urdf_without_collision_geometry_flies_through_the_wall(
    tmp_path: Path, box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    text = re.sub(
        r"<collision>.*?</collision>", "", (DATA / "urdf_test_bot.urdf").read_text(), flags=re.S
    )
    x, vx = drive_into_wall(engine_of(wall_scene(box_scene, write_bot(tmp_path, text))))
    assert x == pytest.approx(2.0, abs=0.02)
    assert vx == pytest.approx(0.5, abs=1e-3)


def test_urdf_mass_and_inertia_reach_the_model(
    bot: Path, box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    import mujoco

    engine = engine_of(box_scene(robot={"urdf": str(bot)}))
    model = engine.model
    body = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "uav1/base_link")
    assert model.body_mass[body] == pytest.approx(1.2)
    robot = load_urdf(bot)
    np.testing.assert_allclose(model.body_ipos[body], robot.com_base_xyz, atol=1e-9)
    np.testing.assert_allclose(
        np.sort(model.body_inertia[body]), np.linalg.eigvalsh(robot.inertia_com_base), rtol=1e-6
    )
    groups = {
        mujoco.mj_id2name(model, mujoco.mjtObj.mjOBJ_GEOM, g): int(model.geom_group[g])
        for g in range(model.ngeom)
        if model.geom_bodyid[g] == body
    }
    assert groups == {
        "i2:uav1/base_link/visual0": 1,
        "i2:uav1/mast/visual0": 1,
        "i2:uav1/fin/visual0": 1,
        "i2:uav1/base_link/collision0": 3,
        "i2:uav1/fin/collision0": 3,
        "i2:uav1/fin/collision1": 3,
    }
    # The hovering body stays put with the heavier URDF mass and its offset centre of mass.
    for _ in range(240):
        engine.step()
    state = engine.robot_state("uav1")
    np.testing.assert_allclose(state.position_world_base, [0.0, 0.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(state.quat_world_base, [1.0, 0.0, 0.0, 0.0], atol=1e-6)


def test_default_robots_keep_their_box_body(bot: Path) -> None:
    scenario = scenario_from_mapping(
        {
            "seed": 7,
            "duration_s": 0.5,
            "people": {"count": 0},
            "flying_objects": {"count": 0},
            "environment": {"procedural": {"rooms_x": 2, "rooms_y": 1}},
            "robots": [
                {"name": "uav1", "body_size_m": [0.4, 0.3, 0.1]},
                {"name": "omni1", "type": "omni"},
                {"name": "quad", "urdf": str(bot)},
            ],
        }
    )
    scene = build_scene(scenario)
    ids = {r.model.name: r.instance_id for r in scene.robots}
    import mujoco

    spec = build_model(scene).spec
    names = {e.name for e in (*spec.geoms, *spec.meshes, *spec.bodies)}
    uav, omni, quad = ids["uav1"], ids["omni1"], ids["quad"]
    body = spec.geom(f"i{uav}:uav1/body")
    assert body.type == mujoco.mjtGeom.mjGEOM_BOX
    np.testing.assert_array_equal(body.size, [0.2, 0.15, 0.05])
    np.testing.assert_array_equal(body.rgba, np.array([0.2, 0.2, 0.25, 1], dtype=np.float32))
    assert (body.contype, body.conaffinity, body.mass) == (2, 0, 0.0)
    for signs in ("11", "1-1", "-11", "-1-1"):
        assert spec.geom(f"i{uav}:uav1/rotor_{signs}").type == mujoco.mjtGeom.mjGEOM_CYLINDER
    base = spec.body("uav1/base_link")
    assert base.explicitinertial
    np.testing.assert_array_equal(base.ipos, [0.0, 0.0, 0.0])
    assert base.mass == 1.5
    assert spec.geom(f"i{omni}:omni1/body").type == mujoco.mjtGeom.mjGEOM_BOX
    assert f"i{omni}:omni1/mast" in names
    assert not any("uav1/visual" in n for n in names)
    assert not any("omni1/visual" in n for n in names)
    # The URDF robot has its own geometry instead of the box and rotors.
    assert f"i{quad}:quad/body" not in names
    assert not any(n.startswith(f"i{quad}:quad/rotor") for n in names)
    assert spec.geom(f"i{quad}:quad/base_link/visual0").type == mujoco.mjtGeom.mjGEOM_BOX
    assert "quad/visual_mesh_2" in {m.name for m in spec.meshes}


def test_shipped_urdf_example_builds_and_flies(
    engine_of: Callable[[Scene], MujocoEngine],
) -> None:
    scenario = load_scenario(REPO / "config" / "urdf_robot_example.yaml")
    quad = scenario.robots[0]
    assert quad.urdf == str(REPO / "config" / "robots" / "quadrotor.urdf")
    robot = load_urdf(quad.urdf, quad.urdf_base_link)
    assert robot.frozen_joints == ()
    assert len(robot.visuals) == 13
    engine = engine_of(build_scene(scenario))
    for _ in range(24):
        engine.step()
    assert np.all(np.isfinite(engine.robot_state("quad1").position_world_base))
