"""The MuJoCo engine's ground-truth passes: semantic ids, normals and optical flow of real renders
checked against the scene's class table and analytic geometry (a plane, a translating and a
rotating camera, a moving body)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from grade_common.rotations import quat_to_matrix
from grade_sim.actors.flying import FlyingObjects
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import Stream, scenario_from_mapping
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.engine.semantic import ClassTable
from grade_sim.optics.lens import lens_of
from grade_sim.scene import Scene, build_scene
from grade_sim.sensors.camera import intrinsics

ALL = frozenset(Stream)
FLOW = frozenset({Stream.FLOW, Stream.DEPTH})
WALL_X = 2.9  # the front face of the wall box below
# The camera at the base's origin: yawing the robot then turns the camera without moving it.
CENTRED_CAMERA = {"cameras": [{"name": "camera", "width": 160, "height": 120, "mount": {}}]}


def wall_scene(box_scene: Callable[..., Scene], **kw: Any) -> Scene:
    """A wide wall box whose front face (x = 2.9) fills the camera's view."""
    return box_scene(box_center_xyz=(3.0, 0.0, 1.0), box_half_xyz=(0.1, 8.0, 8.0), **kw)


def move_robot(engine: MujocoEngine, dxyz: tuple[float, float, float], dyaw: float) -> None:
    q = engine.robot_state("uav1").joint_positions.copy()
    q[:3] += dxyz
    q[3] += dyaw
    zero = np.zeros_like(q)
    engine.set_robot_kinematics("uav1", q, zero, zero)
    engine.update_kinematic_sensors()


def test_semantic_ids_match_the_class_table(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    scene = box_scene()
    frame = engine_of(scene).render("uav1", "camera", frozenset({Stream.SEMANTIC}))
    assert frame.semantic is not None
    assert frame.instance is None
    assert frame.rgb is None
    both = engine_of(scene).render("uav1", "camera", frozenset({Stream.SEMANTIC, Stream.INSTANCE}))
    assert both.instance is not None
    assert both.semantic is not None
    table = ClassTable.of_labels(i.label for i in scene.instances.values())
    expected = np.zeros_like(both.instance)
    for iid, info in scene.instances.items():
        expected[both.instance == iid] = table.class_id(info.label)
    np.testing.assert_array_equal(frame.semantic, expected)
    assert (frame.semantic == table.class_id("furniture")).sum() > 50  # the red box
    assert set(np.unique(frame.semantic).tolist()) == {0, table.class_id("furniture")}


def test_normals_of_a_known_plane(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    yaw = 0.4  # the wall's face (world normal -x) is seen obliquely
    engine = engine_of(wall_scene(box_scene, start_yaw=yaw))
    frame = engine.render("uav1", "camera", frozenset({Stream.NORMALS}))
    assert frame.normals_cam is not None
    assert frame.depth_m is None
    assert frame.normals_cam.dtype == np.float32
    assert frame.normals_cam.shape == (120, 160, 3)
    _, quat = engine.camera_pose("uav1", "camera")
    expected = quat_to_matrix(quat).T @ np.array([-1.0, 0.0, 0.0])
    err = np.linalg.norm(frame.normals_cam - expected, axis=-1)
    assert err.max() < 1e-5


def test_flow_of_a_camera_translating_past_a_plane(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    scene = wall_scene(box_scene)
    engine = engine_of(scene)
    first = engine.render("uav1", "camera", FLOW)
    assert first.flow_px is not None
    assert np.isnan(first.flow_px).all()
    step_m = 0.1
    move_robot(engine, (0.0, step_m, 0.0), 0.0)  # sideways: world +y is the optical -x
    frame = engine.render("uav1", "camera", FLOW)
    assert frame.flow_px is not None
    pos, _ = engine.camera_pose("uav1", "camera")
    f = intrinsics(scene.robots[0].model.config.cameras[0])[0, 0]
    # A static point moves against the camera: dx = +f t / Z with Z the plane's distance.
    expected_dx = f * step_m / (WALL_X - pos[0])
    err = np.hypot(frame.flow_px[..., 0] - expected_dx, frame.flow_px[..., 1])
    assert expected_dx > 2.0
    assert np.median(err) < 0.1
    assert np.percentile(err, 99) < 0.1


def test_flow_of_a_rotating_camera(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    scene = wall_scene(box_scene, robot=CENTRED_CAMERA)
    engine = engine_of(scene)
    wanted = FLOW | {Stream.INSTANCE}
    engine.render("uav1", "camera", wanted)
    pos0, _ = engine.camera_pose("uav1", "camera")
    angle = np.radians(3.0)
    move_robot(engine, (0.0, 0.0, 0.0), angle)  # a left turn: the optical frame pans about -y
    frame = engine.render("uav1", "camera", wanted)
    assert frame.flow_px is not None
    assert frame.instance is not None
    pos1, _ = engine.camera_pose("uav1", "camera")
    np.testing.assert_allclose(pos1, pos0, atol=1e-12)  # a pure rotation
    k = intrinsics(scene.robots[0].model.config.cameras[0])
    v, u = np.mgrid[0:120, 0:160].astype(np.float64)
    x, y = (u - k[0, 2]) / k[0, 0], (v - k[1, 2]) / k[1, 1]
    # Turning left by `angle` subtracts it from every ray's azimuth in the previous camera.
    x0 = np.tan(np.arctan(x) - angle)
    y0 = y / (np.cos(angle) + x * np.sin(angle))  # and scales y by the ray's new depth
    dx, dy = k[0, 0] * (x - x0), k[1, 1] * (y - y0)
    err = np.hypot(frame.flow_px[..., 0] - dx, frame.flow_px[..., 1] - dy)
    # The camera sits inside the robot: its own parts turn with it (flow 0), only the wall is
    # static.
    wall = frame.instance == 1
    assert wall.mean() > 0.5
    own = frame.instance == 2
    assert own.any()
    assert np.abs(frame.flow_px[own]).max() < 0.05
    err = err[wall]
    assert np.median(np.abs(dx)) > 4.0
    assert np.median(err) < 0.1
    assert np.percentile(err, 99) < 0.1


def test_flow_follows_a_moving_body(engine_of: Callable[[Scene], MujocoEngine]) -> None:
    """Pixels of the flying objects at t, moved back by their flow, land on them at t-1."""
    scene = build_scene(
        scenario_from_mapping(
            {
                "seed": 5,  # the camera sees all four objects (seed 4 now faces a furnished corner)
                "duration_s": 2.0,
                "environment": {"procedural": {"rooms_x": 1, "rooms_y": 1}},
                "people": {"count": 0},
                "flying_objects": {"count": 4},
                "robots": [{"name": "uav1", "cameras": [{"width": 160, "height": 120}]}],
            }
        )
    )
    engine = engine_of(scene)
    objects = {o.instance_id for o in scene.group(FlyingObjects).specs}
    wanted = frozenset({Stream.FLOW, Stream.INSTANCE})
    hits = checked = 0
    previous = None
    for step in range(0, scene.n_steps, 8):
        pos, quat = scene.actor_body_poses(step)
        engine.set_actor_poses(pos, quat)
        engine.update_kinematic_sensors()
        frame = engine.render("uav1", "camera", wanted)
        assert frame.flow_px is not None
        assert frame.instance is not None
        if previous is not None:
            on_obj = np.isin(frame.instance, list(objects))
            vs, us = np.nonzero(on_obj)
            flow = frame.flow_px[vs, us]
            moved = np.linalg.norm(flow, axis=1) > 0.5
            u0 = np.rint(us - flow[:, 0]).astype(int)
            v0 = np.rint(vs - flow[:, 1]).astype(int)
            inside = moved & (u0 >= 0) & (u0 < 160) & (v0 >= 0) & (v0 < 120)
            same = previous[v0[inside], u0[inside]] == frame.instance[vs[inside], us[inside]]
            hits += int(same.sum())
            checked += int(inside.sum())
        previous = frame.instance
    assert checked > 100, "the flying objects must be seen moving"
    assert hits / checked > 0.9


def test_flow_of_skinned_people_follows_their_skin(
    engine_of: Callable[[Scene], MujocoEngine], small_scenario: Callable[..., Any]
) -> None:
    """Skins deform: the flow of a person's pixel is that of the skin around its point. At the
    pixels where visible skin vertices project, it matches the vertices' own motion."""
    scene = build_scene(small_scenario(seed=5))
    engine = engine_of(scene)
    k = intrinsics(scene.robots[0].model.config.cameras[0])
    wanted = frozenset({Stream.FLOW, Stream.DEPTH, Stream.INSTANCE})
    errors: list[float] = []
    for first in (40, 80):
        poses = []
        for step in (first, first + 8):
            engine.set_actor_poses(*scene.actor_body_poses(step))
            engine.update_kinematic_sensors()
            frame = engine.render("uav1", "camera", wanted)
            pos, quat = engine.camera_pose("uav1", "camera")
            poses.append((pos, quat_to_matrix(quat)))
        assert frame.flow_px is not None
        assert frame.depth_m is not None
        assert frame.instance is not None
        before, now = (
            scene.group(People).skins_world(first),
            scene.group(People).skins_world(first + 8),
        )
        for person, v0, v1 in zip(scene.group(People).specs, before, now, strict=True):
            cam1 = (v1 - poses[1][0]) @ poses[1][1]
            cam0 = (v0 - poses[0][0]) @ poses[0][1]
            uv1 = cam1[:, :2] / cam1[:, 2:] * k[[0, 1], [0, 1]] + k[:2, 2]
            uv0 = cam0[:, :2] / cam0[:, 2:] * k[[0, 1], [0, 1]] + k[:2, 2]
            px = np.rint(uv1).astype(int)
            inside = (cam1[:, 2] > 0.1) & (px[:, 0] >= 0) & (px[:, 0] < 160)
            inside &= (px[:, 1] >= 0) & (px[:, 1] < 120)
            px, uv0, uv1, z = px[inside], uv0[inside], uv1[inside], cam1[inside, 2]
            on_person = frame.instance[px[:, 1], px[:, 0]] == person.instance_id
            visible = on_person & (np.abs(frame.depth_m[px[:, 1], px[:, 0]] - z) < 0.01)
            got = frame.flow_px[px[visible, 1], px[visible, 0]]
            want = uv1[visible] - uv0[visible]
            errors += np.linalg.norm(got - want, axis=1).tolist()
    print(f"{len(errors)} visible skin vertices, median flow error {np.median(errors):.3f} px")
    assert len(errors) > 50
    assert not np.isnan(errors).any()
    assert np.median(errors) < 0.3


@pytest.mark.parametrize(
    ("model", "hfov_deg", "distortion"),
    [("equidistant", 180.0, [0.0, 0.0, 0.0, 0.0]), ("plumb_bob", 90.0, [-0.2, 0.04, 0, 0, 0])],
)
@pytest.mark.parametrize(
    ("dxyz", "dyaw_deg"), [((0.0, 0.0, 0.0), 3.0), ((0.15, 0.25, 0.05), 0.0)], ids=["turn", "move"]
)
def test_flow_of_a_moving_distorted_camera(
    box_scene: Callable[..., Scene],
    engine_of: Callable[[Scene], MujocoEngine],
    model: str,
    hfov_deg: float,
    distortion: list[float],
    dxyz: tuple[float, float, float],
    dyaw_deg: float,
) -> None:
    """Through a lens, each pixel's wall point (its ray met with the wall's plane) must move to
    where the lens projects it from the previous camera pose, within 0.1 px (median)."""
    camera = {**CENTRED_CAMERA["cameras"][0], "model": model, "hfov_deg": hfov_deg}
    camera["distortion"] = distortion
    scene = wall_scene(box_scene, robot={"cameras": [camera]})
    engine = engine_of(scene)
    wanted = frozenset({Stream.FLOW, Stream.INSTANCE})
    engine.render("uav1", "camera", wanted)
    c0, q0 = engine.camera_pose("uav1", "camera")
    move_robot(engine, dxyz, np.radians(dyaw_deg))
    frame = engine.render("uav1", "camera", wanted)
    assert frame.flow_px is not None
    assert frame.instance is not None
    c1, q1 = engine.camera_pose("uav1", "camera")
    lens = lens_of(scene.robots[0].model.config.cameras[0])
    rays, seen = lens.pixel_rays
    d_world = rays @ quat_to_matrix(q1).T
    with np.errstate(divide="ignore", invalid="ignore"):
        t = (WALL_X - c1[0]) / d_world[..., 0]
    points = c1 + t[..., None] * d_world
    uv_prev = lens.project(((points - c0) @ quat_to_matrix(q0)).reshape(-1, 3)).reshape(120, 160, 2)
    v, u = np.mgrid[0:120, 0:160].astype(np.float64)
    expected = np.stack([u - uv_prev[..., 0], v - uv_prev[..., 1]], axis=-1)
    wall = (frame.instance == 1) & seen & (t > 0) & np.isfinite(expected).all(axis=-1)
    assert wall.mean() > 0.3
    err = np.linalg.norm(frame.flow_px[wall] - expected[wall], axis=-1)
    print(f"{model}: {wall.sum()} wall pixels, median {np.median(err):.4f} px")
    assert np.median(np.linalg.norm(expected[wall], axis=-1)) > 1.0
    assert np.median(err) < 0.1
    assert np.percentile(err, 95) < 0.3
