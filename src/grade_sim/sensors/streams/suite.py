"""Every stream of a scene, in the fixed order the orchestrator emits them at each step."""

from __future__ import annotations

from grade_people import skin_kernel
from grade_sim.actors.people_group import People
from grade_sim.scene import RobotSetup, Scene
from grade_sim.sensors import boxes
from grade_sim.sensors.messages import TopicSpec
from grade_sim.sensors.streams.base import SensorStream
from grade_sim.sensors.streams.camera import Camera, CameraStreams
from grade_sim.sensors.streams.lidar import LidarStream
from grade_sim.sensors.streams.robot import (
    GroundTruthOdometryStream,
    GroundTruthPoseStream,
    ImuStream,
    JointStatesStream,
    OdometryStream,
)
from grade_sim.sensors.streams.world import ClockStream, StartMarkerStream, StaticTfStream, TfStream


class SensorStreams:
    """The streams of one scene; building them needs no engine, so observers can be made first.

    Per step: /clock, /tf_static (step 0), the start marker (start_step), /tf, then per robot
    its IMU, odometry, joint states, ground-truth odometry and pose, cameras (each: pose,
    images, camera_info, sample) and lidars.
    """

    def __init__(self, scene: Scene) -> None:
        scenario = scene.scenario
        rates = scenario.rates
        self.start_step = round(scenario.bootstrap_s * rates.physics_hz)
        clock = ClockStream(rates)
        tf_static = StaticTfStream(scene.robots, scenario.frames)
        start = StartMarkerStream(self.start_step)
        tf = TfStream(scene.robots, rates, scenario.frames)
        body = {r.model.name: _robot_streams(r, scene) for r in scene.robots}
        truth = {r.model.name: _ground_truth_streams(r, scene) for r in scene.robots}
        cameras = {r.model.name: _camera_streams(r, scene, self.start_step) for r in scene.robots}
        if any(r.model.config.cameras for r in scene.robots):
            boxes.warm_up()  # the ground truth's 2D boxes: compiled now, not at a frame
            if scene.group(People).skinned:
                skin_kernel.warm_up()  # people's boxes skin them every frame
        lidars = {r.model.name: _lidar_streams(r, scene) for r in scene.robots}
        # Emitted per robot: body, ground truth, cameras, lidars.
        emitted = [
            s
            for r in scene.robots
            for part in (body, truth, cameras, lidars)
            for s in part[r.model.name]
        ]
        self.streams: tuple[SensorStream, ...] = (clock, tf_static, start, tf, *emitted)
        # Registration order differs from emission order; bag connection ids follow the
        # registration order, so it is kept as it always was, ground truth (added later) last.
        registered = [
            s for r in scene.robots for part in (body, cameras, lidars) for s in part[r.model.name]
        ]
        registered += [s for r in scene.robots for s in truth[r.model.name]]
        self._registered: tuple[SensorStream, ...] = (clock, tf, tf_static, start, *registered)

    def topics(self) -> list[TopicSpec]:
        """Every topic, in registration order (bag connections, publishers)."""
        return [t for s in self._registered for t in s.topics()]

    def needs_actors(self, step: int) -> bool:
        """Whether any stream due at `step` needs the actors posed in the engine."""
        return any(s.needs_actors(step) for s in self.streams)


def _robot_streams(setup: RobotSetup, scene: Scene) -> list[SensorStream]:
    cfg = setup.model.config
    rates = scene.scenario.rates
    out: list[SensorStream] = []
    phys = rates.physics_hz
    if cfg.imu.enabled:
        out.append(ImuStream(cfg.name, rates.imu_hz, phys))
    frames = scene.scenario.frames
    out.append(OdometryStream(cfg.name, rates.odom_hz, phys, frames))
    out.append(JointStatesStream(cfg.name, setup.model.joint_names, rates.joint_states_hz, phys))
    return out


def _camera_streams(setup: RobotSetup, scene: Scene, start_step: int) -> list[SensorStream]:
    cfg = setup.model.config
    rates, world = scene.scenario.rates, scene.scenario.frames.world
    return [
        CameraStreams(Camera.of(cfg.name, cam), rates, world, start_step) for cam in cfg.cameras
    ]


def _lidar_streams(setup: RobotSetup, scene: Scene) -> list[SensorStream]:
    return [LidarStream(setup, lidar, scene) for lidar in setup.model.config.lidars]


def _ground_truth_streams(setup: RobotSetup, scene: Scene) -> list[SensorStream]:
    """/<robot>/ground_truth/{odom,pose} in the world frame, at the odometry rate."""
    name = setup.model.config.name
    rates = scene.scenario.rates
    frames = scene.scenario.frames
    return [
        GroundTruthOdometryStream(name, rates.odom_hz, rates.physics_hz, frames),
        GroundTruthPoseStream(name, rates.odom_hz, rates.physics_hz, frames),
    ]
