"""Sensor streams: topics in registration order, due only on their schedule, no engine needed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from grade_sim.config.scenario import Stream
from grade_sim.scene import Scene
from grade_sim.sensors.messages import QosProfile, TopicSpec
from grade_sim.sensors.schedule import AtStep
from grade_sim.sensors.streams.base import MessageStream, StepState
from grade_sim.sensors.streams.suite import SensorStreams


class _Published:
    def __init__(self) -> None:
        self.messages: list[tuple[str, int, bytes]] = []

    def publish(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        self.messages.append((topic.name, stamp_ns, cdr))

    def render(self, robot: str, camera: str, streams: frozenset[Stream], *rest: Any) -> Any:
        raise AssertionError("a message stream never renders")

    def lidar_sample(self, sample: object) -> None:
        raise AssertionError("no lidar in these scenes")

    def camera_sample(self, sample: object) -> None:
        raise AssertionError("a message stream hands out no camera sample")


class _StepNumber(MessageStream):
    def encode(self, state: StepState) -> bytes:
        return bytes([state.step])


def _state(step: int, scene: Scene) -> StepState:
    return StepState(step, step * 10, None, {}, scene, None)  # type: ignore[arg-type]


def test_topics_keep_the_registration_order(box_scene: Callable[..., Scene]) -> None:
    camera = {"name": "front", "width": 160, "height": 120, "streams": ["depth", "rgb"]}
    streams = SensorStreams(box_scene(robot={"cameras": [camera]}))
    assert [t.name for t in streams.topics()] == [
        "/clock",
        "/tf",
        "/tf_static",
        "/starting_experiment",
        "/uav1/imu",
        "/uav1/odom",
        "/uav1/joint_states",
        "/uav1/front/depth/image_raw",
        "/uav1/front/rgb/image_raw",
        "/uav1/front/camera_info",
        "/uav1/front/pose",
        "/uav1/ground_truth/odom",
        "/uav1/ground_truth/pose",
    ]


def test_a_message_stream_publishes_only_when_due(box_scene: Callable[..., Scene]) -> None:
    scene = box_scene()
    topic = TopicSpec("/marker", "std_msgs/msg/String", QosProfile.LATCHED)
    out = _Published()
    for k in range(5):
        _StepNumber(topic, AtStep(3)).emit(_state(k, scene), out)
    assert out.messages == [("/marker", 30, bytes([3]))]


def test_only_camera_frames_need_the_actors_posed(box_scene: Callable[..., Scene]) -> None:
    rates = {"physics_hz": 100.0, "clock_hz": 100.0, "imu_hz": 100.0}
    rates |= {"tf_hz": 100.0, "joint_states_hz": 100.0}
    camera = {"name": "camera", "width": 160, "height": 120, "rate_hz": 25.0}
    streams = SensorStreams(box_scene(rates=rates, robot={"cameras": [camera]}))
    assert [k for k in range(10) if streams.needs_actors(k)] == [0, 4, 8]
    assert not SensorStreams(box_scene(robot={"cameras": []})).needs_actors(0)
