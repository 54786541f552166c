"""The step loop: stream schedules, observer order, command inputs, the path follower."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from grade_common.rotations import quat_to_matrix
from grade_sim.config.scenario import Scenario, scenario_from_mapping
from grade_sim.engine.protocol import RobotState
from grade_sim.scene import Scene, build_scene
from grade_sim.sensors.messages import TopicSpec
from grade_sim.sensors.observer import CameraSample
from grade_sim.sim.orchestrator import Simulator, stamp_ns_of


class Recorder:
    """Observer keeping the call sequence and the robot states."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int, str]] = []
        self.states: list[RobotState] = []
        self.samples: list[CameraSample] = []
        self.closed: str | None = None

    def on_message(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        assert isinstance(cdr, bytes)
        assert cdr
        self.calls.append(("message", stamp_ns, topic.name))

    def on_camera(self, sample: CameraSample) -> None:
        self.samples.append(sample)
        self.calls.append(("camera", sample.stamp_ns, sample.camera))

    def on_step(self, step: int, stamp_ns: int, robot_states: dict[str, RobotState]) -> None:
        self.states.append(robot_states["uav1"])
        self.calls.append(("step", stamp_ns, str(step)))

    def close(self, status: str) -> None:
        self.closed = status


class ConstantCommands:
    def __init__(self, velocities: list[float] | None) -> None:
        self.velocities = velocities
        self.asked: list[tuple[str, tuple[str, ...], int]] = []

    def joint_velocities(
        self, robot: str, joint_names: tuple[str, ...], stamp_ns: int
    ) -> np.ndarray | None:
        self.asked.append((robot, joint_names, stamp_ns))
        return None if self.velocities is None else np.array(self.velocities)


def test_stamps_are_exact_integers() -> None:
    assert stamp_ns_of(0, 240.0) == 0
    assert stamp_ns_of(240, 240.0) == 1_000_000_000
    assert stamp_ns_of(1, 240.0) == 4_166_667
    assert stamp_ns_of(240 * 3600 * 10, 240.0) == 36_000 * 10**9  # no drift after 10 hours


def test_message_counts_follow_the_configured_rates(box_scene: Callable[..., Scene]) -> None:
    rates = {
        "physics_hz": 200.0,
        "clock_hz": 100.0,
        "imu_hz": 200.0,
        "tf_hz": 50.0,
        "joint_states_hz": 40.0,
        "odom_hz": 20.0,
        "camera_pose_hz": 25.0,
    }
    camera = {"name": "camera", "width": 160, "height": 120, "rate_hz": 10.0}
    scene = box_scene(duration_s=1.0, rates=rates, robot={"cameras": [camera]})
    assert scene.n_steps == 201
    rec = Recorder()
    sim = Simulator(scene, observers=[rec])
    stats = sim.run()
    sim.finish()
    assert stats.status == "complete"
    assert stats.steps == 201
    assert rec.closed == "complete"
    counts: dict[str, int] = {}
    for kind, _, name in rec.calls:
        if kind == "message":
            counts[name] = counts.get(name, 0) + 1
    assert counts == dict(stats.message_counts)
    expected = {
        "/clock": 101,
        "/uav1/imu": 201,
        "/tf": 51,
        "/uav1/joint_states": 41,
        "/uav1/odom": 21,
        "/uav1/ground_truth/odom": 21,
        "/uav1/ground_truth/pose": 21,
        "/uav1/camera/pose": 26,
        "/uav1/camera/rgb/image_raw": 11,
        "/uav1/camera/depth/image_raw": 11,
        "/uav1/camera/instance/image_raw": 11,
        "/uav1/camera/camera_info": 11,
        "/tf_static": 1,
        "/starting_experiment": 1,
    }
    assert counts == expected
    assert {t.name for t in sim.topics()} == set(expected)
    assert stats.camera_frames == 11
    assert len(rec.samples) == 11
    assert stats.sim_time_s == pytest.approx(1.0)
    assert set(stats.stage_s) >= {"physics", "actors", "rendering", "publishing", "recording"}


def test_observers_see_each_step_in_order(box_scene: Callable[..., Scene]) -> None:
    scene = box_scene(duration_s=0.1)
    rec = Recorder()
    sim = Simulator(scene, observers=[rec])
    sim.run()
    sim.finish()
    steps = [int(name) for kind, _, name in rec.calls if kind == "step"]
    assert steps == list(range(scene.n_steps))
    stamps = [stamp for _, stamp, _ in rec.calls]
    assert stamps == sorted(stamps)  # everything of step k before anything of step k + 1
    # Within a step: messages, then the camera sample, then on_step.
    first = [kind for kind, stamp, _ in rec.calls if stamp == 0]
    assert first[-1] == "step"
    assert first[-2] == "camera"
    assert set(first[:-2]) == {"message"}
    sample = rec.samples[0]
    assert sample.frame.rgb is not None
    assert sample.frame.rgb.shape == (120, 160, 3)
    np.testing.assert_allclose(sample.k[0, 2], 79.5)


def test_command_source_drives_the_robot_within_limits(box_scene: Callable[..., Scene]) -> None:
    scene = box_scene(duration_s=1.0)
    commands = ConstantCommands([5.0, -0.5, 0.0, 0.2, 0.0, 0.0])  # x beyond max_velocity 2 m/s
    rec = Recorder()
    sim = Simulator(scene, observers=[rec], command_source=commands)
    sim.run()
    sim.finish()
    assert commands.asked[0][:2] == ("uav1", ("x", "y", "z", "yaw", "pitch", "roll"))
    assert [a[2] for a in commands.asked] == [stamp_ns_of(k, 240.0) for k in range(1, 241)]
    last = rec.states[-1]
    np.testing.assert_allclose(last.joint_velocity_commands, [2.0, -0.5, 0.0, 0.2, 0, 0])
    np.testing.assert_allclose(last.joint_velocities, [2.0, -0.5, 0.0, 0.2, 0, 0], atol=1e-6)
    first, final = rec.states[0].position_world_base, last.position_world_base
    np.testing.assert_allclose(final - first, [2.0, -0.5, 0.0], atol=0.03)


def test_no_commands_hold_the_robot_still(box_scene: Callable[..., Scene]) -> None:
    scene = box_scene(duration_s=0.5)
    rec = Recorder()
    sim = Simulator(scene, observers=[rec], command_source=ConstantCommands(None))
    sim.run()
    sim.finish()
    np.testing.assert_allclose(rec.states[-1].position_world_base, [0.0, 0.0, 1.0], atol=1e-9)


def test_run_in_parts_and_stop_event(box_scene: Callable[..., Scene]) -> None:
    scene = box_scene(duration_s=0.5)
    sim = Simulator(scene)
    assert sim.run(max_steps=30).status == "complete"
    assert sim.stats.steps == 30
    sim.stop_event.set()
    assert sim.run().status == "interrupted"
    assert sim.stats.steps == 30
    sim.stop_event.clear()
    assert sim.run().status == "complete"
    assert sim.stats.steps == scene.n_steps
    sim.finish()


def path_scenario(small_data: Callable[..., dict[str, Any]]) -> Scenario:
    data = small_data(duration_s=4.0, people={"count": 0}, flying_objects={"count": 0})
    data["robots"][0]["cameras"][0]["rate_hz"] = 1.0
    data["robots"][0]["start_yaw"] = 1.0  # turns towards the next room first
    return scenario_from_mapping(data)


def test_path_mode_follows_the_tour_through_the_physics(
    small_data: Callable[..., dict[str, Any]],
) -> None:
    scenario = path_scenario(small_data)
    rec = Recorder()
    sim = Simulator(build_scene(scenario), observers=[rec])
    sim.run()
    sim.finish()
    follower = sim.scene.robots[0].follower
    assert follower is not None
    errors = []
    for k, st in enumerate(rec.states):
        t_path = max(0.0, k / 240.0 - scenario.bootstrap_s)
        desired, _ = follower.desired(t_path)
        errors.append(np.linalg.norm(st.position_world_base - desired[:3]))
    assert max(errors) < 0.03
    start, end = rec.states[0].position_world_base, rec.states[-1].position_world_base
    assert np.linalg.norm(end - start) > 0.5  # it flew towards the next room
    assert start[2] == pytest.approx(scenario.robots[0].motion.altitude_m)
    assert tuple(start[:2]) == pytest.approx(sim.scene.world.tour_xy[0])
    # The IMU is the physics: specific force = the velocity change over the last step + gravity
    # (world frame, rotated into the IMU), and the gyro is the yaw joint's rate.
    dt = 1 / 240
    v = np.array([st.joint_velocities[:3] for st in rec.states])
    accel = np.diff(v, axis=0) / dt
    assert np.abs(accel).max() > 0.5  # it did accelerate
    f_world = np.array(
        [quat_to_matrix(st.quat_world_base) @ st.imu_specific_force for st in rec.states]
    )
    gravity = np.array([0.0, 0.0, 9.81])
    np.testing.assert_allclose(f_world[1:], accel + gravity, atol=1e-9)
    gyro = np.array([st.imu_angular_velocity for st in rec.states])
    yaw_rate = np.array([st.joint_velocities[3] for st in rec.states])
    assert np.abs(yaw_rate).max() > 0.1
    np.testing.assert_allclose(gyro[:, 2], yaw_rate, atol=1e-9)


def test_two_robots_omni_and_uav_publish_under_their_namespaces(
    small_data: Callable[..., dict[str, Any]],
) -> None:
    data = small_data(duration_s=0.3, people={"count": 1}, flying_objects={"count": 0})
    camera = {"name": "front", "width": 160, "height": 120, "rate_hz": 10.0}
    data["robots"] = [
        {"name": "uav1", "cameras": [camera]},
        {"name": "rover", "type": "omni", "cameras": [camera]},
    ]
    scenario = scenario_from_mapping(data)
    rec = Recorder()
    sim = Simulator(build_scene(scenario), observers=[rec])
    sim.run()
    sim.finish()
    names = {t.name for t in sim.topics()}
    for robot in ("uav1", "rover"):
        assert {f"/{robot}/imu", f"/{robot}/odom", f"/{robot}/front/rgb/image_raw"} <= names
    assert {s.robot for s in rec.samples} == {"uav1", "rover"}
    rover = next(r for r in sim.scene.robots if r.model.name == "rover")
    assert rover.start_xyz[2] == pytest.approx(scenario.robots[1].body_size_m[2] / 2)
    assert np.linalg.norm(rover.start_xyz[:2] - sim.scene.robots[0].start_xyz[:2]) > 1.0
    assert len({r.instance_id for r in sim.scene.robots}) == 2


class MessageLog(Recorder):
    def __init__(self) -> None:
        super().__init__()
        self.raw: dict[str, list[tuple[int, bytes]]] = {}

    def on_message(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        self.raw.setdefault(topic.name, []).append((stamp_ns, cdr))


def transform_of(tr: Any) -> np.ndarray:
    t = np.eye(4)
    r = tr.transform.rotation
    t[:3, :3] = quat_to_matrix(np.array([r.w, r.x, r.y, r.z]))
    p = tr.transform.translation
    t[:3, 3] = [p.x, p.y, p.z]
    return t


@pytest.mark.parametrize(
    ("robot", "commands"),
    [
        ({"type": "uav"}, [0.3, 0.1, 0.2, 0.5, 0.0, 0.0]),
        ({"type": "omni"}, [0.3, 0.1, 0.5, -0.8]),
    ],
)
def test_tf_tree_composes_to_the_camera_pose(
    box_scene: Callable[..., Scene], robot: dict[str, Any], commands: list[float]
) -> None:
    """world -> odom -> base_link (-> camera_mount) -> camera_link -> optical frame, from the
    published /tf and /tf_static, equals the published camera pose (REP 103/105 frames)."""
    from grade_sim.sensors.messages import typestore

    camera = {
        "name": "camera",
        "width": 160,
        "height": 120,
        "mount": {"xyz": [0.1, 0.05, 0.02], "rpy": [0.0, 0.2, -0.1]},
    }
    start = (0.0, 0.0, 1.0) if robot["type"] == "uav" else (0.0, 0.0, 0.06)
    scene = box_scene(duration_s=0.5, robot={**robot, "cameras": [camera]}, start_xyz=start)
    log = MessageLog()
    sim = Simulator(scene, observers=[log], command_source=ConstantCommands(commands))
    sim.run()
    sim.finish()
    store = typestore()
    (static_raw,) = log.raw["/tf_static"]
    static = {
        tr.child_frame_id: (tr.header.frame_id, transform_of(tr))
        for tr in store.deserialize_cdr(static_raw[1], "tf2_msgs/msg/TFMessage").transforms
    }
    dynamic_by_stamp = {
        stamp: {
            tr.child_frame_id: (tr.header.frame_id, transform_of(tr))
            for tr in store.deserialize_cdr(raw, "tf2_msgs/msg/TFMessage").transforms
        }
        for stamp, raw in log.raw["/tf"]
    }
    checked = 0
    for stamp, raw in log.raw["/uav1/camera/pose"]:
        pose = store.deserialize_cdr(raw, "geometry_msgs/msg/PoseStamped")
        assert pose.header.frame_id == "world"
        edges = {**static, **dynamic_by_stamp[stamp]}
        frame, t_world = "uav1/camera_optical_frame", np.eye(4)
        chain = []
        while frame != "world":
            parent, t = edges[frame]
            t_world = t @ t_world
            chain.append(frame)
            frame = parent
        expected_chain = ["uav1/camera_optical_frame", "uav1/camera_link"]
        if robot["type"] == "omni":
            expected_chain.append("uav1/camera_mount")
        expected_chain += ["uav1/base_link", "uav1/odom"]
        assert chain == expected_chain
        p, q = pose.pose.position, pose.pose.orientation
        np.testing.assert_allclose(t_world[:3, 3], [p.x, p.y, p.z], atol=1e-8)
        np.testing.assert_allclose(
            t_world[:3, :3], quat_to_matrix(np.array([q.w, q.x, q.y, q.z])), atol=1e-7
        )
        checked += 1
    assert checked == 31
