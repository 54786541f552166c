"""Where the streams' products go: the observers, the run statistics and the stage timings."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from grade_sim.config.scenario import Stream
from grade_sim.engine.protocol import CameraFrame, EngineBackend, RobotState
from grade_sim.sensors.messages import TopicSpec
from grade_sim.sensors.observer import (
    CameraSample,
    DemandObserver,
    LidarObserver,
    LidarSample,
    SimObserver,
)


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


class StepOutput:
    """The StreamOutput of the simulator: counts messages and frames, times each stage.

    Stages of a step: rendering (the camera passes), publishing (the observers: ROS publishers,
    bag and ground-truth queues) and sensors (the rest: sampling the state, encoding messages).
    """

    def __init__(
        self, observers: Sequence[SimObserver], backend: EngineBackend, stats: RunStats
    ) -> None:
        self._observers = tuple(observers)
        self._backend = backend
        self._stats = stats
        self._render_s = 0.0
        self._observers_s = 0.0
        # An observer that does not say what it takes (a test probe) takes everything.
        self._takes_all = any(not isinstance(o, DemandObserver) for o in self._observers)
        self._demands = tuple(o for o in self._observers if isinstance(o, DemandObserver))

    def begin_step(self) -> None:
        self._render_s = 0.0
        self._observers_s = 0.0

    def publish(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        stats = self._stats
        stats.message_counts[topic.name] += 1
        stats.first_stamp_ns.setdefault(topic.name, stamp_ns)
        stats.last_stamp_ns[topic.name] = stamp_ns
        t0 = time.perf_counter()
        for obs in self._observers:
            obs.on_message(topic, stamp_ns, cdr)
        self._observers_s += time.perf_counter() - t0

    def wants(
        self, topics: tuple[TopicSpec, ...], robot: str, sensor: str, step: int, stamp_ns: int
    ) -> bool:
        return self._takes_all or any(
            d.wants_messages(topics) or d.wants_sample(robot, sensor, step, stamp_ns)
            for d in self._demands
        )

    def render(
        self,
        robot: str,
        camera: str,
        streams: frozenset[Stream],
        flow_restart: bool,
        then: Callable[[CameraFrame], None],
    ) -> None:
        t0 = time.perf_counter()
        frame = self._backend.render(robot, camera, streams, flow_restart)
        self._render_s += time.perf_counter() - t0
        self._stats.camera_frames += 1
        then(frame)

    def camera_sample(self, sample: CameraSample) -> None:
        t0 = time.perf_counter()
        for obs in self._observers:
            obs.on_camera(sample)
        self._observers_s += time.perf_counter() - t0

    def lidar_sample(self, sample: LidarSample) -> None:
        t0 = time.perf_counter()
        for obs in self._observers:
            if isinstance(obs, LidarObserver):
                obs.on_lidar(sample)
        self._observers_s += time.perf_counter() - t0

    def end_step(
        self, step: int, stamp_ns: int, states: dict[str, RobotState], started: float
    ) -> None:
        """Call the observers' on_step and book the step's time; `started`: perf_counter()."""
        t0 = time.perf_counter()
        for obs in self._observers:
            obs.on_step(step, stamp_ns, states)
        self._observers_s += time.perf_counter() - t0
        timings = self._stats.stage_s
        timings["rendering"] += self._render_s
        timings["publishing"] += self._observers_s
        timings["sensors"] += time.perf_counter() - started - self._render_s - self._observers_s
