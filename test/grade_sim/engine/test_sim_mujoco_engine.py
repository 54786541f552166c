"""The MuJoCo backend: IMU physics, velocity-driven joints, camera geometry and masks."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from grade_common.rotations import R_LINK_OPTICAL, quat_from_rpy, quat_to_matrix
from grade_sim.actors.flying import FlyingObjects
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import IMAGE_STREAMS, Stream, scenario_from_mapping
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.scene import Scene, build_scene
from grade_sim.sensors.camera import intrinsics

TARGET_ID, ROBOT_ID = 1, 2
G = 9.81


def steps(engine: MujocoEngine, n: int) -> None:
    for _ in range(n):
        engine.step()


def test_hovering_uav_imu_reads_gravity_and_stays_put(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    engine = engine_of(box_scene())
    steps(engine, 240)
    st = engine.robot_state("uav1")
    np.testing.assert_allclose(st.imu_specific_force, [0.0, 0.0, G], atol=1e-6)
    np.testing.assert_allclose(st.imu_angular_velocity, 0.0, atol=1e-9)
    np.testing.assert_allclose(st.position_world_base, [0.0, 0.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(st.quat_world_base, [1.0, 0.0, 0.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(st.joint_velocities, 0.0, atol=1e-9)


def test_tilted_imu_mount_sees_gravity_in_its_own_frame(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    rpy = (0.3, -0.2, 1.0)
    engine = engine_of(box_scene(robot={"imu": {"mount": {"xyz": [0, 0, 0], "rpy": list(rpy)}}}))
    steps(engine, 10)
    r_base_imu = quat_to_matrix(quat_from_rpy(*rpy))
    np.testing.assert_allclose(
        engine.robot_state("uav1").imu_specific_force, r_base_imu.T @ [0, 0, G], atol=1e-6
    )


def test_constant_velocity_command_moves_the_robot_at_that_velocity(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    engine = engine_of(box_scene())
    v = np.array([0.5, -0.3, 0.2])
    yaw_rate = 0.4
    engine.set_joint_velocity_commands("uav1", np.array([*v, yaw_rate, 0.0, 0.0]))
    steps(engine, 48)  # settle (actuator time constant ~4 ms)
    before = engine.robot_state("uav1")
    steps(engine, 240)
    after = engine.robot_state("uav1")
    np.testing.assert_allclose(after.position_world_base - before.position_world_base, v, atol=1e-4)
    np.testing.assert_allclose(after.joint_velocities, [*v, yaw_rate, 0, 0], atol=1e-6)
    yaw = after.joint_positions[3]
    assert yaw - before.joint_positions[3] == pytest.approx(yaw_rate, abs=1e-4)
    # Body-frame twist and IMU: rotating about z through the IMU, no linear acceleration.
    c, s = math.cos(yaw), math.sin(yaw)
    v_base = np.array([c * v[0] + s * v[1], -s * v[0] + c * v[1], v[2]])
    np.testing.assert_allclose(after.linear_velocity_base, v_base, atol=1e-6)
    np.testing.assert_allclose(after.angular_velocity_base, [0, 0, yaw_rate], atol=1e-6)
    np.testing.assert_allclose(after.imu_angular_velocity, [0, 0, yaw_rate], atol=1e-6)
    np.testing.assert_allclose(after.imu_specific_force, [0, 0, G], atol=1e-3)


def test_acceleration_shows_in_the_imu(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    engine = engine_of(box_scene())
    dt = 1 / 240
    accel = 1.5
    vx = 0.0
    readings = []
    for _ in range(120):
        vx += accel * dt
        engine.set_joint_velocity_commands("uav1", np.array([vx, 0, 0, 0, 0, 0]))
        engine.step()
        readings.append(engine.robot_state("uav1").imu_specific_force.copy())
    np.testing.assert_allclose(np.mean(readings[60:], axis=0), [accel, 0, G], atol=0.02)


def test_omni_robot_camera_yaw_turns_the_camera(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    scene = box_scene(robot={"type": "omni"}, start_xyz=(0.0, 0.0, 0.06))
    engine = engine_of(scene)
    engine.set_joint_velocity_commands("uav1", np.array([0.0, 0.0, 0.0, 0.5]))
    steps(engine, 48)
    _, q0 = engine.camera_pose("uav1", "camera")
    steps(engine, 240)
    st = engine.robot_state("uav1")
    _, q1 = engine.camera_pose("uav1", "camera")
    # The camera turned by the camera_yaw joint while the base did not.
    np.testing.assert_allclose(st.quat_world_base, [1, 0, 0, 0], atol=1e-4)
    z0, z1 = quat_to_matrix(q0)[:, 2], quat_to_matrix(q1)[:, 2]  # optical axes
    turned = math.atan2(z1[1], z1[0]) - math.atan2(z0[1], z0[0])
    assert turned == pytest.approx(0.5, abs=1e-3)
    assert st.joint_positions[2] == pytest.approx(0.0, abs=1e-4)


def test_camera_pose_is_the_optical_frame(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    robot = {
        "cameras": [
            {
                "name": "camera",
                "width": 160,
                "height": 120,
                "mount": {"xyz": [0.2, 0.05, -0.03], "rpy": [0.0, 0.3, 0.0]},
            }
        ]
    }
    engine = engine_of(box_scene(robot=robot, start_xyz=(1.0, 2.0, 1.5), start_yaw=0.7))
    pos, quat = engine.camera_pose("uav1", "camera")
    r_world_base = quat_to_matrix(quat_from_rpy(0, 0, 0.7))
    r_base_link = quat_to_matrix(quat_from_rpy(0.0, 0.3, 0.0))
    np.testing.assert_allclose(pos, [1, 2, 1.5] + r_world_base @ [0.2, 0.05, -0.03], atol=1e-9)
    np.testing.assert_allclose(
        quat_to_matrix(quat), r_world_base @ r_base_link @ R_LINK_OPTICAL, atol=1e-9
    )
    link_pos, link_quat = engine.link_pose("uav1", "camera_link")
    np.testing.assert_allclose(link_pos, pos, atol=1e-12)
    np.testing.assert_allclose(quat_to_matrix(link_quat), r_world_base @ r_base_link, atol=1e-9)
    base_pos, _ = engine.link_pose("uav1", "base_link")
    np.testing.assert_allclose(base_pos, [1.0, 2.0, 1.5], atol=1e-12)


def project(k: np.ndarray, p_opt: np.ndarray) -> np.ndarray:
    uvw = k @ p_opt
    return uvw[:2] / uvw[2]


def test_box_appears_where_the_intrinsics_put_it(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    """A box face in front of the camera: pixels, depth and mask follow K and the optical frame."""
    scene = box_scene(box_center_xyz=(3.0, 0.5, 1.2), box_half_xyz=(0.2, 0.3, 0.25))
    engine = engine_of(scene)
    cam_cfg = scene.robots[0].model.config.cameras[0]
    k = intrinsics(cam_cfg)
    frame = engine.render("uav1", "camera", IMAGE_STREAMS)
    assert frame.rgb is not None
    assert frame.depth_m is not None
    assert frame.instance is not None
    assert frame.rgb.shape == (120, 160, 3)
    assert frame.rgb.dtype == np.uint8
    assert frame.depth_m.shape == (120, 160)
    assert frame.depth_m.dtype == np.float32
    assert frame.instance.shape == (120, 160)
    assert frame.instance.dtype == np.uint16
    cam_pos, cam_quat = engine.camera_pose("uav1", "camera")
    r_wo = quat_to_matrix(cam_quat)
    # Front face at x = 2.8 spans y in [0.2, 0.8] and z in [0.95, 1.45].
    corners = [np.array([2.8, y, z]) for y in (0.2, 0.8) for z in (0.95, 1.45)]
    uv = np.array([project(k, r_wo.T @ (c - cam_pos)) for c in corners])
    (u0, v0), (u1, v1) = uv.min(axis=0), uv.max(axis=0)
    planar = 2.8 - cam_pos[0]
    uu, vv = np.meshgrid(np.arange(160), np.arange(120))
    inside = (uu > u0 + 0.5) & (uu < u1 - 0.5) & (vv > v0 + 0.5) & (vv < v1 - 0.5)
    assert inside.sum() > 50
    assert np.all(frame.instance[inside] == TARGET_ID)
    np.testing.assert_allclose(frame.depth_m[inside], planar, atol=2e-3)
    # The whole box (side faces included) projects inside the hull of its 8 corners.
    all_corners = [
        np.array([x, y, z]) for x in (2.8, 3.2) for y in (0.2, 0.8) for z in (0.95, 1.45)
    ]
    uv8 = np.array([project(k, r_wo.T @ (c - cam_pos)) for c in all_corners])
    lo8, hi8 = uv8.min(axis=0), uv8.max(axis=0)
    ys, xs = np.nonzero(frame.instance == TARGET_ID)
    assert xs.min() >= lo8[0] - 0.5
    assert xs.max() <= hi8[0] + 0.5
    assert ys.min() >= lo8[1] - 0.5
    assert ys.max() <= hi8[1] + 0.5
    # The box is left of and above the optical axis: u below cx, v below cy.
    assert xs.mean() < k[0, 2]
    assert ys.mean() < k[1, 2]
    # Red box: red dominates its pixels.
    rgb = frame.rgb[frame.instance == TARGET_ID].astype(float).mean(axis=0)
    assert rgb[0] > 2 * rgb[1]
    assert rgb[0] > 2 * rgb[2]


def test_depth_and_instance_agree_pixel_for_pixel(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    """Nothing but the box is in view: depth > 0 exactly where the mask says box."""
    engine = engine_of(box_scene(box_center_xyz=(2.5, -0.3, 0.9), box_half_xyz=(0.3, 0.4, 0.3)))
    frame = engine.render("uav1", "camera", IMAGE_STREAMS)
    assert frame.instance is not None
    assert frame.depth_m is not None
    box = frame.instance == TARGET_ID
    assert set(np.unique(frame.instance).tolist()) == {0, TARGET_ID}
    np.testing.assert_array_equal(frame.depth_m > 0, box)
    assert np.all(frame.depth_m[box] > 2.0)
    assert np.all(frame.depth_m[box] < 3.0)


def test_hidden_instances_disappear(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    engine = engine_of(box_scene())
    shown = engine.render("uav1", "camera", IMAGE_STREAMS)
    assert shown.instance is not None
    assert (shown.instance == TARGET_ID).sum() > 50
    engine.set_hidden_instances(frozenset({TARGET_ID}))
    hidden = engine.render("uav1", "camera", IMAGE_STREAMS)
    assert hidden.instance is not None
    assert hidden.depth_m is not None
    assert hidden.rgb is not None
    assert not np.any(hidden.instance == TARGET_ID)
    assert not np.any(hidden.depth_m > 0)
    assert not np.array_equal(hidden.rgb, shown.rgb)
    engine.set_hidden_instances(frozenset())
    again = engine.render("uav1", "camera", IMAGE_STREAMS)
    assert again.instance is not None
    assert again.rgb is not None
    assert shown.rgb is not None
    np.testing.assert_array_equal(again.instance, shown.instance)
    np.testing.assert_array_equal(again.rgb, shown.rgb)


def test_only_requested_streams_are_rendered(
    box_scene: Callable[..., Scene], engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    engine = engine_of(box_scene())
    full = engine.render("uav1", "camera", IMAGE_STREAMS)
    depth_only = engine.render("uav1", "camera", frozenset({Stream.DEPTH}))
    assert depth_only.rgb is None
    assert depth_only.instance is None
    assert depth_only.depth_m is not None
    assert full.depth_m is not None
    np.testing.assert_array_equal(depth_only.depth_m, full.depth_m)
    inst_only = engine.render("uav1", "camera", frozenset({Stream.INSTANCE}))
    assert inst_only.rgb is None
    assert inst_only.depth_m is None
    assert inst_only.instance is not None
    assert full.instance is not None
    np.testing.assert_array_equal(inst_only.instance, full.instance)


def small_world_scene(**people: Any) -> Scene:
    return build_scene(
        scenario_from_mapping(
            {
                "seed": 4,
                "duration_s": 1.0,
                "environment": {"procedural": {"rooms_x": 2, "rooms_y": 1}},
                "people": {"count": 3, **people},
                "flying_objects": {"count": 2},
                "robots": [
                    {"name": "uav1", "cameras": [{"name": "camera", "width": 160, "height": 120}]}
                ],
            }
        )
    )


def test_instance_ids_map_to_scene_instances(engine_of: Callable[[Scene], MujocoEngine]) -> None:
    scene = small_world_scene()
    engine = engine_of(scene)
    seen: set[int] = set()
    for step in range(0, scene.n_steps, 40):
        pos, quat = scene.actor_body_poses(step)
        engine.set_actor_poses(pos, quat)
        for _ in range(40):
            engine.step()
        frame = engine.render("uav1", "camera", frozenset({Stream.DEPTH, Stream.INSTANCE}))
        assert frame.instance is not None
        assert frame.depth_m is not None
        ids = set(np.unique(frame.instance).tolist())
        assert ids - {0} <= set(scene.instances)
        # Inside a closed room every pixel sees something.
        assert 0 not in ids
        assert np.all(frame.depth_m > 0)
        seen |= ids
    labels = {scene.instances[i].label for i in seen}
    assert {"wall", "floor"} <= labels
    robot_id = scene.robots[0].instance_id
    assert robot_id not in seen  # a robot's camera does not see its own body


def test_actor_poses_move_the_mocap_bodies(engine_of: Callable[[Scene], MujocoEngine]) -> None:
    scene = small_world_scene()
    engine = engine_of(scene)
    pos, quat = scene.actor_body_poses(100)
    engine.set_actor_poses(pos, quat)
    engine.step()
    names = [f"{p.name}/head" for p in scene.group(People).specs] + [
        o.name for o in scene.group(FlyingObjects).specs
    ]
    n_bodies = [len(p.body_names()) for p in scene.group(People).specs]
    heads = [p.body_names().index("head") for p in scene.group(People).specs]
    expected = [pos[sum(n_bodies[:i]) + heads[i]] for i in range(len(scene.group(People).specs))]
    expected += list(pos[sum(n_bodies) :])
    import mujoco

    for name, p in zip(names, expected, strict=True):
        bid = mujoco.mj_name2id(engine.model, mujoco.mjtObj.mjOBJ_BODY, name)
        np.testing.assert_allclose(engine.data.xpos[bid], p, atol=1e-12)


def test_mesh_environment_renders_with_depth(
    tmp_path: Any, engine_of: Callable[[Scene], MujocoEngine]
) -> None:
    import trimesh

    wall = trimesh.creation.box(extents=(0.2, 12.0, 8.0))
    wall.apply_translation((4.0, 0.0, 1.5))
    path = tmp_path / "wall.obj"
    wall.export(path)
    scenario = scenario_from_mapping(
        {
            "environment": {"type": "mesh", "mesh": {"path": str(path)}},
            "people": {"count": 0},
            "flying_objects": {"count": 0},
            "robots": [
                {
                    "name": "uav1",
                    "start_xyz": [0.0, 0.0, 1.5],
                    "motion": {"mode": "commands"},
                    "cameras": [
                        {
                            "name": "camera",
                            "width": 160,
                            "height": 120,
                            "mount": {"xyz": [0.3, 0, 0]},
                        }
                    ],
                }
            ],
        }
    )
    scene = build_scene(scenario)
    frame = engine_of(scene).render("uav1", "camera", IMAGE_STREAMS)
    assert frame.depth_m is not None
    assert frame.instance is not None
    (mesh,) = scene.world.meshes
    assert np.all(frame.instance == mesh.instance_id)  # the wall fills the view
    # Planar depth is the same across a wall facing the camera.
    np.testing.assert_allclose(frame.depth_m, 3.6, atol=2e-3)
