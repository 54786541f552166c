"""The simulator: owns the step loop and calls the engine, actors and sensors in a fixed order.

Per physics step k (stamp t_k = k / physics_rate):
  1. robot commands (path follower or the command source) from the state at k-1, then physics;
  2. actor poses for step k (before rendering; actors are kinematic and touch no physics);
  3. every stream due at k is sampled from the state at k, encoded once and handed to observers
     (bag, ROS publishers, ground truth, experiment record).
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from grade_common.rotations import R_LINK_OPTICAL, matrix_to_quat, quat_from_rpy, quat_to_matrix
from grade_common.types import FloatArray
from grade_sim.config.scenario import MotionMode, Scenario, Stream
from grade_sim.engine.protocol import CameraFrame, EngineBackend, RobotState
from grade_sim.engine.registry import create_backend
from grade_sim.io import messages as msgs
from grade_sim.io.messages import QosProfile, TopicSpec, Transform
from grade_sim.scene import RobotSetup, Scene, build_scene
from grade_sim.sensors.camera import intrinsics
from grade_sim.sensors.schedule import RateSchedule
from grade_sim.sim.boxes import Box3D, actor_boxes

START_TOPIC = "/starting_experiment"
IDENTITY_QUAT = np.array([1.0, 0.0, 0.0, 0.0])


@dataclass(frozen=True)
class CameraSample:
    robot: str
    camera: str
    step: int
    stamp_ns: int
    frame: CameraFrame
    position_world_optical: FloatArray
    quat_world_optical: FloatArray
    k: FloatArray
    boxes: list[Box3D]


class SimObserver(Protocol):
    """Receives what the simulator produces; called from the simulation thread, in step order."""

    def on_message(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None: ...

    def on_camera(self, sample: CameraSample) -> None: ...

    def on_step(self, step: int, stamp_ns: int, robot_states: dict[str, RobotState]) -> None: ...

    def close(self, status: str) -> None: ...


class CommandSource(Protocol):
    """Joint velocity commands for robots in `commands` mode (ROS or in-process controller)."""

    def joint_velocities(
        self, robot: str, joint_names: tuple[str, ...], stamp_ns: int
    ) -> FloatArray | None:
        """Velocities in joint_names order for the step at stamp_ns, or None to hold still."""


class ReplayDriver(Protocol):
    """Drives every robot from a recorded run instead of commands (grade_replay).

    teleport: the joints are set to the recorded state at each step (exact by construction);
    otherwise the recorded velocity commands go through the physics (velocity mode).
    """

    teleport: bool

    def joint_state(
        self, robot: str, step: int
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
        """Recorded (positions, velocities, accelerations, velocity commands) at a step."""
        ...


@dataclass
class RunStats:
    status: str = "running"
    steps: int = 0
    sim_time_s: float = 0.0
    wall_time_s: float = 0.0
    message_counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    first_stamp_ns: dict[str, int] = field(default_factory=dict)
    last_stamp_ns: dict[str, int] = field(default_factory=dict)
    stage_s: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    camera_frames: int = 0

    @property
    def real_time_factor(self) -> float:
        return self.sim_time_s / self.wall_time_s if self.wall_time_s > 0 else 0.0


def stamp_ns_of(step: int, physics_hz: float) -> int:
    """Exact integer stamp of a physics step (no accumulated rounding)."""
    return round(step * 1e9 / physics_hz)


class _RobotStreams:
    """Topic specs and schedules of one robot."""

    def __init__(self, setup: RobotSetup, scenario: Scenario) -> None:
        cfg = setup.model.config
        ns = f"/{cfg.name}"
        rates = scenario.rates
        phys = rates.physics_hz
        self.setup = setup
        self.imu = (
            TopicSpec(f"{ns}/imu", "sensor_msgs/msg/Imu", QosProfile.SENSOR)
            if cfg.imu.enabled
            else None
        )
        self.odom = TopicSpec(f"{ns}/odom", "nav_msgs/msg/Odometry", QosProfile.SENSOR)
        self.joint_states = TopicSpec(
            f"{ns}/joint_states", "sensor_msgs/msg/JointState", QosProfile.SENSOR
        )
        self.imu_sched = RateSchedule(rates.imu_hz, phys)
        self.odom_sched = RateSchedule(rates.odom_hz, phys)
        self.js_sched = RateSchedule(rates.joint_states_hz, phys)
        self.pose_sched = RateSchedule(rates.camera_pose_hz, phys)
        self.cameras = []
        for cam in cfg.cameras:
            base = f"{ns}/{cam.name}"
            self.cameras.append(
                (
                    cam,
                    RateSchedule(cam.rate_hz, phys),
                    {
                        s: TopicSpec(
                            f"{base}/{s.value}/image_raw",
                            "sensor_msgs/msg/Image",
                            QosProfile.SENSOR,
                        )
                        for s in cam.streams
                    },
                    TopicSpec(
                        f"{base}/camera_info", "sensor_msgs/msg/CameraInfo", QosProfile.SENSOR
                    ),
                    TopicSpec(f"{base}/pose", "geometry_msgs/msg/PoseStamped", QosProfile.SENSOR),
                    intrinsics(cam),
                )
            )

    def topics(self) -> list[TopicSpec]:
        out = [t for t in (self.imu, self.odom, self.joint_states) if t is not None]
        for _, _, streams, info, pose, _ in self.cameras:
            out += [*list(streams.values()), info, pose]
        return out


class Simulator:
    """Runs one scenario: `run()` steps it to the end (or until stopped) and feeds observers."""

    def __init__(
        self,
        scenario: Scenario,
        observers: Sequence[SimObserver] = (),
        command_source: CommandSource | None = None,
        scene: Scene | None = None,
        backend_factory: Callable[[Scene], EngineBackend] = create_backend,
        replay: ReplayDriver | None = None,
    ) -> None:
        self.scenario = scenario
        self.scene = scene if scene is not None else build_scene(scenario)
        self.backend = backend_factory(self.scene)
        self.observers = list(observers)
        self.command_source = command_source
        self.replay = replay
        rates = scenario.rates
        self.clock_topic = TopicSpec("/clock", "rosgraph_msgs/msg/Clock", QosProfile.RELIABLE)
        self.tf_topic = TopicSpec("/tf", "tf2_msgs/msg/TFMessage", QosProfile.RELIABLE)
        self.tf_static_topic = TopicSpec("/tf_static", "tf2_msgs/msg/TFMessage", QosProfile.LATCHED)
        self.start_topic = TopicSpec(START_TOPIC, "std_msgs/msg/String", QosProfile.LATCHED)
        self._clock_sched = RateSchedule(rates.clock_hz, rates.physics_hz)
        self._tf_sched = RateSchedule(rates.tf_hz, rates.physics_hz)
        self._robots = [_RobotStreams(r, scenario) for r in self.scene.robots]
        self.start_step = round(scenario.bootstrap_s * rates.physics_hz)
        self.stats = RunStats()
        self.stop_event = threading.Event()
        self._step = 0
        self._t_observers = 0.0

    # -- topology -------------------------------------------------------------------------------
    def topics(self) -> list[TopicSpec]:
        out = [self.clock_topic, self.tf_topic, self.tf_static_topic, self.start_topic]
        for r in self._robots:
            out += r.topics()
        return out

    @property
    def n_steps(self) -> int:
        return self.scene.n_steps

    # -- loop -----------------------------------------------------------------------------------
    def run(
        self, max_steps: int | None = None, progress: Callable[[int, int], None] | None = None
    ) -> RunStats:
        """Step to the end (or max_steps) and return statistics; Ctrl-C stops cleanly."""
        stats = self.stats
        end = self.n_steps if max_steps is None else min(self.n_steps, self._step + max_steps)
        wall0 = time.perf_counter()
        status = "complete"
        try:
            while self._step < end:
                if self.stop_event.is_set():
                    status = "interrupted"
                    break
                self.step_once()
                if self.scenario.realtime:
                    ahead = self.stats.sim_time_s - (time.perf_counter() - wall0)
                    if ahead > 0:
                        time.sleep(ahead)
                if progress is not None:
                    progress(self._step, self.n_steps)
        except KeyboardInterrupt:
            status = "interrupted"
        finally:
            stats.wall_time_s += time.perf_counter() - wall0
            if self._step < self.n_steps and status == "complete" and max_steps is None:
                status = "interrupted"
            stats.status = status
        return stats

    def finish(self) -> None:
        """Close observers (bag, ground truth) and the engine; safe to call once after run()."""
        t0 = time.perf_counter()
        try:
            for obs in self.observers:
                obs.close(self.stats.status)
        finally:
            self.stats.stage_s["recording"] += time.perf_counter() - t0
            self.backend.close()

    def step_once(self) -> None:
        k = self._step
        sc = self.scenario
        stamp_ns = stamp_ns_of(k, sc.rates.physics_hz)
        timings = self.stats.stage_s
        t0 = time.perf_counter()
        # Actors first: the engine derives their render poses in the same pass that updates the
        # robots, so every camera sees actors and robots at the same instant.
        camera_due = any(sched.due(k) for r in self._robots for _, sched, *_ in r.cameras)
        part_positions = None
        if camera_due or k == 0:
            pos, quat = self.scene.actor_body_poses(k)
            self.backend.set_actor_poses(pos, quat)
            part_positions = pos
        t1 = time.perf_counter()
        timings["actors"] += t1 - t0
        if self.replay is not None:
            self._replay_step(k)
        else:
            if k > 0:
                for r in self._robots:
                    if r.setup.model.config.motion.mode is not MotionMode.TELEPORT:
                        self._apply_commands(r.setup, stamp_ns)
                self.backend.step()
            self._teleport(stamp_ns)
        timings["physics"] += time.perf_counter() - t1
        self._emit_step(k, stamp_ns, part_positions)
        self.stats.steps = k + 1
        self.stats.sim_time_s = stamp_ns / 1e9
        self._step += 1

    def _teleport(self, stamp_ns: int) -> None:
        moved = False
        for r in self._robots:
            setup = r.setup
            if setup.model.config.motion.mode is not MotionMode.TELEPORT or setup.follower is None:
                continue
            t_path = max(0.0, stamp_ns / 1e9 - self.scenario.bootstrap_s)
            q, qd, qdd = setup.follower.joint_trajectory(
                t_path, setup.model.joint_names, self.scenario.physics_dt_s
            )
            if stamp_ns / 1e9 < self.scenario.bootstrap_s:
                qd, qdd = np.zeros_like(qd), np.zeros_like(qdd)
            self.backend.set_robot_kinematics(setup.model.name, q, qd, qdd)
            moved = True
        if moved:
            self.backend.update_kinematic_sensors()

    def _replay_step(self, k: int) -> None:
        assert self.replay is not None
        for r in self._robots:
            name = r.setup.model.name
            q, qd, qdd, cmd = self.replay.joint_state(name, k)
            if self.replay.teleport:
                self.backend.set_robot_kinematics(name, q, qd, qdd)
            self.backend.set_joint_velocity_commands(name, cmd)
        if self.replay.teleport:
            # The recorded accelerations (from physics or a kinematic path) give the IMU exactly.
            self.backend.update_kinematic_sensors()
        elif k > 0:
            self.backend.step()

    def _apply_commands(self, setup: RobotSetup, stamp_ns: int) -> None:
        model = setup.model
        name = model.name
        if model.config.motion.mode is MotionMode.PATH and setup.follower is not None:
            t_path = max(0.0, stamp_ns / 1e9 - self.scenario.bootstrap_s)
            state = self.backend.robot_state(name)
            positions = dict(zip(model.joint_names, state.joint_positions, strict=True))
            cmd = setup.follower.command(t_path, positions)
            vel = np.array([cmd.get(j, 0.0) for j in model.joint_names])
        else:
            got = None
            if self.command_source is not None:
                got = self.command_source.joint_velocities(name, model.joint_names, stamp_ns)
            vel = (
                np.zeros(len(model.joint_names))
                if got is None
                else np.asarray(got, dtype=np.float64)
            )
        limits = np.array(
            [
                model.config.max_velocity_mps
                if j.kind.value == "slide"
                else model.config.max_angular_velocity_rps
                for j in model.joints
            ]
        )
        self.backend.set_joint_velocity_commands(name, np.clip(vel, -limits, limits))

    # -- sensors --------------------------------------------------------------------------------
    def _publish(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        self.stats.message_counts[topic.name] += 1
        self.stats.first_stamp_ns.setdefault(topic.name, stamp_ns)
        self.stats.last_stamp_ns[topic.name] = stamp_ns
        t0 = time.perf_counter()
        for obs in self.observers:
            obs.on_message(topic, stamp_ns, cdr)
        self._t_observers += time.perf_counter() - t0

    def _emit_step(self, k: int, stamp_ns: int, part_positions: FloatArray | None) -> None:
        timings = self.stats.stage_s
        t_render = 0.0
        self._t_observers = 0.0
        t0 = time.perf_counter()
        states = {
            r.setup.model.name: self.backend.robot_state(r.setup.model.name) for r in self._robots
        }
        if self._clock_sched.due(k):
            self._publish(self.clock_topic, stamp_ns, msgs.clock(stamp_ns))
        if k == 0:
            self._publish(
                self.tf_static_topic, stamp_ns, msgs.tf_message(stamp_ns, self._static_transforms())
            )
        if k == self.start_step:
            self._publish(self.start_topic, stamp_ns, msgs.string("starting"))
        if self._tf_sched.due(k):
            self._publish(
                self.tf_topic, stamp_ns, msgs.tf_message(stamp_ns, self._dynamic_transforms(states))
            )
        boxes: list[Box3D] | None = None
        for r in self._robots:
            name = r.setup.model.name
            st = states[name]
            if r.imu is not None and r.imu_sched.due(k):
                self._publish(
                    r.imu,
                    stamp_ns,
                    msgs.imu(
                        stamp_ns, f"{name}/imu_link", st.imu_angular_velocity, st.imu_specific_force
                    ),
                )
            if r.odom_sched.due(k):
                self._publish(
                    r.odom,
                    stamp_ns,
                    msgs.odometry(
                        stamp_ns,
                        f"{name}/odom",
                        f"{name}/base_link",
                        st.position_world_base,
                        st.quat_world_base,
                        st.linear_velocity_base,
                        st.angular_velocity_base,
                    ),
                )
            if r.js_sched.due(k):
                self._publish(
                    r.joint_states,
                    stamp_ns,
                    msgs.joint_state(
                        stamp_ns,
                        list(r.setup.model.joint_names),
                        st.joint_positions,
                        st.joint_velocities,
                    ),
                )
            for cam, sched, streams, info_topic, pose_topic, kmat in r.cameras:
                optical = f"{name}/{cam.name}_optical_frame"
                pose_due = r.pose_sched.due(k)
                if not (pose_due or sched.due(k)):
                    continue
                pos, quat = self.backend.camera_pose(name, cam.name)
                if pose_due:
                    self._publish(
                        pose_topic, stamp_ns, msgs.pose_stamped(stamp_ns, "world", pos, quat)
                    )
                if not sched.due(k):
                    continue
                tr = time.perf_counter()
                frame = self.backend.render(
                    name,
                    cam.name,
                    Stream.RGB in streams,
                    Stream.DEPTH in streams,
                    Stream.INSTANCE in streams,
                )
                t_render += time.perf_counter() - tr
                self.stats.camera_frames += 1
                if frame.rgb is not None:
                    self._publish(
                        streams[Stream.RGB],
                        stamp_ns,
                        msgs.image(stamp_ns, optical, frame.rgb, "rgb8"),
                    )
                if frame.depth_m is not None:
                    self._publish(
                        streams[Stream.DEPTH],
                        stamp_ns,
                        msgs.image(stamp_ns, optical, frame.depth_m, "32FC1"),
                    )
                if frame.instance is not None:
                    self._publish(
                        streams[Stream.INSTANCE],
                        stamp_ns,
                        msgs.image(stamp_ns, optical, frame.instance, "mono16"),
                    )
                self._publish(
                    info_topic,
                    stamp_ns,
                    msgs.camera_info(stamp_ns, optical, cam.width, cam.height, kmat),
                )
                if boxes is None:
                    boxes = (
                        actor_boxes(self.scene, k, part_positions)
                        if part_positions is not None
                        else []
                    )
                sample = CameraSample(name, cam.name, k, stamp_ns, frame, pos, quat, kmat, boxes)
                t_obs = time.perf_counter()
                for obs in self.observers:
                    obs.on_camera(sample)
                self._t_observers += time.perf_counter() - t_obs
        t_obs = time.perf_counter()
        for obs in self.observers:
            obs.on_step(k, stamp_ns, states)
        self._t_observers += time.perf_counter() - t_obs
        # sensors: sampling the state and encoding messages; publishing: handing them to the
        # observers (ROS publishers, bag and ground-truth queues); rendering: the camera passes.
        timings["rendering"] += t_render
        timings["publishing"] += self._t_observers
        timings["sensors"] += time.perf_counter() - t0 - t_render - self._t_observers

    def _static_transforms(self) -> list[Transform]:
        out = []
        for r in self._robots:
            cfg = r.setup.model.config
            name = cfg.name
            out.append(Transform("world", f"{name}/odom", np.zeros(3), IDENTITY_QUAT))
            out.append(
                Transform(
                    f"{name}/base_link",
                    f"{name}/imu_link",
                    np.asarray(cfg.imu.mount.xyz),
                    quat_from_rpy(*cfg.imu.mount.rpy),
                )
            )
            cam_parent = (
                f"{name}/camera_mount" if r.setup.model.camera_joint else f"{name}/base_link"
            )
            for cam, *_ in r.cameras:
                link = f"{name}/{cam.name}_link"
                out.append(
                    Transform(
                        cam_parent, link, np.asarray(cam.mount.xyz), quat_from_rpy(*cam.mount.rpy)
                    )
                )
                out.append(
                    Transform(
                        link,
                        f"{name}/{cam.name}_optical_frame",
                        np.zeros(3),
                        matrix_to_quat(R_LINK_OPTICAL),
                    )
                )
        return out

    def _dynamic_transforms(self, states: dict[str, RobotState]) -> list[Transform]:
        out = []
        for r in self._robots:
            name = r.setup.model.name
            st = states[name]
            out.append(
                Transform(
                    f"{name}/odom", f"{name}/base_link", st.position_world_base, st.quat_world_base
                )
            )
            if r.setup.model.camera_joint:
                pos_b, q_b = self.backend.link_pose(name, "base_link")
                pos_m, q_m = self.backend.link_pose(name, "camera_mount")
                r_b = quat_to_matrix(q_b)
                out.append(
                    Transform(
                        f"{name}/base_link",
                        f"{name}/camera_mount",
                        r_b.T @ (pos_m - pos_b),
                        matrix_to_quat(r_b.T @ quat_to_matrix(q_m)),
                    )
                )
        return out
