"""Every stream of a scene, in the fixed order the orchestrator emits them at each step."""

from __future__ import annotations

from grade_sim.scene import RobotSetup, Scene
from grade_sim.sensors.messages import TopicSpec
from grade_sim.sensors.streams.base import SensorStream
from grade_sim.sensors.streams.camera import Camera, CameraStreams
from grade_sim.sensors.streams.lidar import LidarStream
from grade_sim.sensors.streams.robot import ImuStream, JointStatesStream, OdometryStream
from grade_sim.sensors.streams.world import ClockStream, StartMarkerStream, StaticTfStream, TfStream


class SensorStreams:
    """The streams of one scene; building them needs no engine, so observers can be made first.

    Per step: /clock, /tf_static (step 0), the start marker (start_step), /tf, then per robot
    its IMU, odometry, joint states, cameras (each: pose, images, camera_info, sample) and
    lidars.
    """

    def __init__(self, scene: Scene) -> None:
        scenario = scene.scenario
        rates = scenario.rates
        self.start_step = round(scenario.bootstrap_s * rates.physics_hz)
        clock = ClockStream(rates)
        tf_static = StaticTfStream(scene.robots)
        start = StartMarkerStream(self.start_step)
        tf = TfStream(scene.robots, rates)
        robots = [s for r in scene.robots for s in _robot_streams(r, scene)]
        self.streams: tuple[SensorStream, ...] = (clock, tf_static, start, tf, *robots)
        # Registration order differs from emission order for the world streams; bag connection
        # ids follow the registration order, so it is kept as it always was.
        self._registered: tuple[SensorStream, ...] = (clock, tf, tf_static, start, *robots)

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
    out.append(OdometryStream(cfg.name, rates.odom_hz, phys))
    out.append(JointStatesStream(cfg.name, setup.model.joint_names, rates.joint_states_hz, phys))
    out += [CameraStreams(Camera.of(cfg.name, cam), rates) for cam in cfg.cameras]
    out += [LidarStream(setup, lidar, scene) for lidar in cfg.lidars]
    return out
