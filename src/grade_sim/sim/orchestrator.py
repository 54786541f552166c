"""The simulator: owns the step loop and calls the engine, actors and sensors in a fixed order.

Per physics step k (stamp t_k = k / physics_rate):
  1. robot commands (path follower or the command source) from the state at k-1, then physics;
  2. actor poses for step k (before rendering; actors are kinematic and touch no physics);
  3. every stream due at k is sampled from the state at k, encoded once and handed to observers
     (bag, ROS publishers, ground truth, experiment record).

With `sim.pipeline: parallel` (the default) cameras render on the engine's render thread while
this loop goes on to the next steps; StepOutput hands everything to the observers in the
sequential order, so both pipelines give the same outputs, byte for byte (docs/simulator.md).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from grade_common.rotations import quat_to_matrix
from grade_common.types import FloatArray
from grade_people.crowd import RobotObstacle
from grade_sim.actors.robot_discs import below_heads, robot_radius_m
from grade_sim.config.scenario import MotionMode, Pipeline, RobotConfig
from grade_sim.engine.protocol import EngineBackend, RobotState
from grade_sim.engine.registry import create_backend
from grade_sim.errors import SceneReuseError, SimulationUnstableError
from grade_sim.scene import RobotSetup, Scene
from grade_sim.sensors.messages import TopicSpec
from grade_sim.sensors.observer import SimObserver
from grade_sim.sensors.schedule import stamp_ns_of
from grade_sim.sensors.streams.base import StepState
from grade_sim.sensors.streams.suite import SensorStreams
from grade_sim.sim.health import check_actor_positions, check_robot_states
from grade_sim.sim.step_output import RunStats, StepOutput


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


def live_robot_obstacles(
    configs: Sequence[RobotConfig], states: dict[str, RobotState]
) -> list[RobotObstacle]:
    """The robots as reactive people see them: discs at their current simulated poses."""
    out = []
    for rc in configs:
        st = states[rc.name]
        if not below_heads(rc, float(st.position_world_base[2])):
            continue
        velocity_world = quat_to_matrix(st.quat_world_base) @ st.linear_velocity_base
        out.append(
            RobotObstacle(
                np.array(st.position_world_base[:2], dtype=np.float64),
                np.array(velocity_world[:2], dtype=np.float64),
                robot_radius_m(rc),
            )
        )
    return out


def _uses_command_source(setup: RobotSetup) -> bool:
    mode = setup.model.config.motion.mode
    if mode is MotionMode.TELEPORT:
        return False
    return not (mode is MotionMode.PATH and setup.follower is not None)


class Simulator:
    """Runs one scene: `run()` steps it to the end (or until stopped) and feeds the observers.

    Everything it talks to is given here, once: observers, the command source, a replay driver,
    the engine factory and the stop event (set it, from any thread, to end the run cleanly).
    """

    def __init__(
        self,
        scene: Scene,
        *,
        streams: SensorStreams | None = None,
        observers: Sequence[SimObserver] = (),
        command_source: CommandSource | None = None,
        replay: ReplayDriver | None = None,
        backend_factory: Callable[[Scene], EngineBackend] = create_backend,
        stop_event: threading.Event | None = None,
    ) -> None:
        # The run's own scene: live actors (a reactive crowd) start afresh for this run, unless
        # the caller started them already (a SimulatorSpec, whose observers read the same).
        scene = scene.started()
        self.scene = scene
        self.scenario = scene.scenario
        self.backend = backend_factory(scene)
        # A run (SimulatorSpec) hands in the streams its recorders were made from.
        self.streams = SensorStreams(scene) if streams is None else streams
        self.start_step = self.streams.start_step
        self.stats = RunStats()
        self.stop_event = threading.Event() if stop_event is None else stop_event
        self._observers = tuple(observers)
        self._command_source = command_source
        self._replay = replay
        self.pipeline = scene.scenario.sim.pipeline
        self._output = StepOutput(
            self._observers,
            self.backend,
            self.stats,
            self.pipeline is Pipeline.PARALLEL,
            self.stop_event,
        )
        self._step = 0
        # Robots whose velocities come from the command source (not a path follower, not a
        # teleport): a lockstep controller answers the state it was sent.
        self._commanded = command_source is not None and any(
            _uses_command_source(r) for r in scene.robots
        )
        self._robot_index = {r.name: i for i, r in enumerate(self.scenario.robots)}
        # One label per actor body, in actor_body_poses order.
        self._actor_labels = [label for g in scene.groups for label in g.body_labels()]
        self.failure: SimulationUnstableError | None = None
        if any(g.already_run() for g in scene.groups):
            raise SceneReuseError(
                "this started scene's reactive crowd has already run; run the scene as built "
                "(build_scene's, not .started()) again: every run starts its own crowd"
            )

    # -- topology -------------------------------------------------------------------------------
    def topics(self) -> list[TopicSpec]:
        return self.streams.topics()

    @property
    def n_steps(self) -> int:
        return self.scene.n_steps

    # -- loop -----------------------------------------------------------------------------------
    def run(
        self, max_steps: int | None = None, progress: Callable[[int, int], None] | None = None
    ) -> RunStats:
        """Step to the end (or max_steps) and return statistics; Ctrl-C stops cleanly.

        Unstable physics ends the run with status `failed`; the error is kept in `.failure`
        (the caller reports it once the outputs are closed)."""
        stats = self.stats
        end = self.n_steps if max_steps is None else min(self.n_steps, self._step + max_steps)
        wall0 = time.perf_counter()
        status = "complete"
        try:
            # The render thread's GL context (meshes and textures uploaded) is made before the
            # loop, so the first frame is not seconds late (realtime) nor timed as the loop's.
            self.backend.prepare_rendering(self.pipeline is Pipeline.PARALLEL)
            wall0 = time.perf_counter()
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
        except SimulationUnstableError as err:
            status = "failed"
            self.failure = err
        except BaseException:
            status = "failed"
            raise
        finally:
            try:
                # Every step emitted so far reaches the observers, whatever ended the loop.
                self._output.drain()
            except KeyboardInterrupt:
                status = "interrupted"
                self._output.drain()
            except BaseException:
                status = "failed"  # a frame did not render: the error goes on up
                raise
            finally:
                self._output.close()
                stats.wall_time_s += time.perf_counter() - wall0
                # Pipelined, the loop may be ahead of what the observers got (a stop drops it).
                stats.steps = self._output.steps_out
                stats.sim_time_s = self._output.last_step_stamp_ns / 1e9
                if self._step < self.n_steps and status == "complete" and max_steps is None:
                    status = "interrupted"
                stats.status = status
        return stats

    def finish(self) -> None:
        """Close observers (bag, ground truth) and the engine; safe to call once after run()."""
        t0 = time.perf_counter()
        try:
            for obs in self._observers:
                obs.close(self.stats.status)
        finally:
            self.stats.stage_s["recording"] += time.perf_counter() - t0
            self.backend.close()

    def run_info(self) -> dict[str, str]:
        """How the run ran (run.yaml `simulator`): the pipeline and the GL renderer."""
        return {"pipeline": self.pipeline.value, "gl_renderer": self.backend.gl_renderer}

    def step_once(self) -> None:
        k = self._step
        sc = self.scenario
        stamp_ns = stamp_ns_of(k, sc.rates.physics_hz)
        timings = self.stats.stage_s
        t0 = time.perf_counter()
        for group in self.scene.groups:
            group.advance(k, lambda: self._obstacles(k))
        # Actors first: the engine derives their render poses in the same pass that updates the
        # robots, so every camera sees actors and robots at the same instant.
        actor_positions = None
        if self.streams.needs_actors(k) or k == 0:
            pos, quat = self.scene.actor_body_poses(k)
            self.backend.set_actor_poses(pos, quat)
            actor_positions = pos
        t1 = time.perf_counter()
        timings["actors"] += t1 - t0
        if self._replay is not None:
            self._replay_step(k)
        else:
            if k > 0:
                if self._commanded:
                    # A controller answers the state it was sent: everything up to the last
                    # step must be out (lockstep keeps its meaning when pipelined).
                    self._output.drain()
                for setup in self.scene.robots:
                    if setup.model.config.motion.mode is not MotionMode.TELEPORT:
                        self._apply_commands(setup, stamp_ns)
                self.backend.step()
            self._teleport(stamp_ns)
        timings["physics"] += time.perf_counter() - t1
        check_actor_positions(actor_positions, self._actor_labels, k, stamp_ns)
        self._emit_step(k, stamp_ns, actor_positions)
        self.stats.steps = k + 1
        self.stats.sim_time_s = stamp_ns / 1e9
        self._step += 1

    def _obstacles(self, k: int) -> list[RobotObstacle]:
        """What live actors step around at k: the robots as the last physics step left them,
        then every group's discs."""
        sc = self.scenario
        states = {r.name: self.backend.robot_state(r.name) for r in sc.robots}
        robots = live_robot_obstacles(sc.robots, states)
        return robots + [o for g in self.scene.groups for o in g.obstacles(k)]

    def _teleport(self, stamp_ns: int) -> None:
        moved = False
        for setup in self.scene.robots:
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
        assert self._replay is not None
        for setup in self.scene.robots:
            name = setup.model.name
            q, qd, qdd, cmd = self._replay.joint_state(name, k)
            if self._replay.teleport:
                self.backend.set_robot_kinematics(name, q, qd, qdd)
            self.backend.set_joint_velocity_commands(name, cmd)
        if self._replay.teleport:
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
            if self._command_source is not None:
                got = self._command_source.joint_velocities(name, model.joint_names, stamp_ns)
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
    def _emit_step(self, k: int, stamp_ns: int, actor_positions: FloatArray | None) -> None:
        """Every stream due at k, in the fixed stream order, then the observers' on_step."""
        out = self._output
        out.begin_step()
        t0 = time.perf_counter()
        states = {r.model.name: self.backend.robot_state(r.model.name) for r in self.scene.robots}
        # Before anything of this step is published or recorded: the outputs end on a valid state.
        check_robot_states(states, k, stamp_ns, self._robot_index)
        state = StepState(k, stamp_ns, self.backend, states, self.scene, actor_positions)
        for stream in self.streams.streams:
            stream.emit(state, out)
        out.end_step(k, stamp_ns, states, t0)
