"""The stream interface: what the orchestrator asks of every sensor stream at each step.

A stream owns its schedule, its topic(s) and its encoder, in the spirit of dm_control's
observables; the orchestrator only loops over streams in a fixed order. A new sensor is a new
stream class, not a new branch in the loop.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from grade_common.types import FloatArray
from grade_sim.actors.geometry import Box3D
from grade_sim.config.scenario import Stream
from grade_sim.engine.protocol import CameraFrame, EngineBackend, RobotState
from grade_sim.scene import Scene
from grade_sim.sensors.boxes import actor_boxes
from grade_sim.sensors.messages import TopicSpec
from grade_sim.sensors.observer import CameraSample, LidarSample
from grade_sim.sensors.schedule import Schedule

T = TypeVar("T")


@dataclass
class StepState:
    """The simulation at physics step `step`, as every stream due at that step samples it.

    `actor_positions` is the first output of Scene.actor_body_poses when the actors were posed
    in the engine at this step, else None (no stream needed them).
    """

    step: int
    stamp_ns: int
    backend: EngineBackend
    robot_states: Mapping[str, RobotState]
    scene: Scene
    actor_positions: FloatArray | None
    _boxes: list[Box3D] | None = field(default=None, init=False, repr=False)

    def actor_boxes(self) -> list[Box3D]:
        """The actors' 3D boxes, computed on first use and shared by every camera of the step."""
        if self._boxes is None:
            self._boxes = (
                actor_boxes(self.scene, self.step, self.actor_positions)
                if self.actor_positions is not None
                else []
            )
        return self._boxes


class StreamOutput(Protocol):
    """Where streams put what they produce (the orchestrator: observers, counts, stage timings)."""

    def publish(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        """Hand one encoded message to every observer."""

    def wanted(
        self, topics: tuple[TopicSpec, ...], robot: str, sensor: str, step: int, stamp_ns: int
    ) -> tuple[TopicSpec, ...]:
        """Which of a camera frame's or lidar scan's topics some observer takes now: all of
        them when one takes the sample itself; a stream renders or casts nothing for none."""
        ...

    def render(
        self,
        robot: str,
        camera: str,
        streams: frozenset[Stream],
        flow_restart: bool,
        then: Callable[[CameraFrame], None],
    ) -> None:
        """Render one camera at this step's state and hand the frame to `then`: at once, or
        (pipelined) later on this thread, with whatever `then` puts out kept in step order.

        `then` must not read the engine (it may have moved on): take poses before. With
        `flow_restart`, the frame's FLOW has no previous frame (NaN)."""

    def later(self, work: Callable[[], T], then: Callable[[T], None]) -> None:
        """Run `work` (reading nothing that changes: a lidar cast from copied poses) and hand
        its result to `then`: at once, or (pipelined) on a worker thread, `then` later on this
        thread with what it puts out kept in step order."""

    def camera_sample(self, sample: CameraSample) -> None:
        """Hand one rendered frame with its pose and boxes to every observer."""

    def lidar_sample(self, sample: LidarSample) -> None:
        """Hand one lidar scan to every observer that takes scans."""


class SensorStream(Protocol):
    """One stream (or a group sharing one sampling, such as a camera's topics)."""

    def topics(self) -> tuple[TopicSpec, ...]:
        """Its topics, in the order they are registered with the bag and the publishers."""
        ...

    def needs_actors(self, step: int) -> bool:
        """Whether sampling at `step` needs the actors posed in the engine (renderers do)."""
        ...

    def emit(self, state: StepState, out: StreamOutput) -> None:
        """Sample the state if due at state.step and put the encoded messages into `out`."""


class MessageStream(ABC):
    """A stream of one topic: due by its schedule, one message encoded from the step's state."""

    def __init__(self, topic: TopicSpec, schedule: Schedule) -> None:
        self.topic = topic
        self.schedule = schedule

    def topics(self) -> tuple[TopicSpec, ...]:
        return (self.topic,)

    def needs_actors(self, step: int) -> bool:
        return False

    def emit(self, state: StepState, out: StreamOutput) -> None:
        if self.schedule.due(state.step):
            out.publish(self.topic, state.stamp_ns, self.encode(state))

    @abstractmethod
    def encode(self, state: StepState) -> bytes:
        """The CDR bytes of this stream's message at state.step."""
