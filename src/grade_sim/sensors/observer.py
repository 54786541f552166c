"""What the simulator hands out: the observer protocol and the per-frame camera sample.

Observers (bag, ROS publishers, ground truth, experiment record) live above this layer and
depend on it; the simulator calls them from its thread, in step order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from grade_common.types import FloatArray
from grade_sim.actors.geometry import Box3D
from grade_sim.engine.protocol import CameraFrame, RobotState
from grade_sim.sensors.lidar.cloud import LidarScan
from grade_sim.sensors.messages import TopicSpec


@dataclass(frozen=True)
class CameraSample:
    """One rendered frame of one camera with its pose, intrinsics and the actors' 3D boxes."""

    robot: str
    camera: str
    step: int
    stamp_ns: int
    frame: CameraFrame
    position_world_optical: FloatArray
    quat_world_optical: FloatArray
    k: FloatArray
    boxes: list[Box3D]
    # Loose objects (tabletop): name, position and wxyz quaternion in the world frame.
    object_poses: tuple[tuple[str, FloatArray, FloatArray], ...] = ()


class SimObserver(Protocol):
    """Receives what the simulator produces; called from the simulation thread, in step order."""

    def on_message(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None: ...

    def on_camera(self, sample: CameraSample) -> None: ...

    def on_step(self, step: int, stamp_ns: int, robot_states: dict[str, RobotState]) -> None: ...

    def close(self, status: str) -> None: ...


@dataclass(frozen=True)
class LidarSample:
    """One scan of one lidar (published at `step`; the scan's own stamp is scan.stamp_ns)."""

    robot: str
    lidar: str
    step: int
    scan: LidarScan


@runtime_checkable
class DemandObserver(Protocol):
    """An observer that says which sensor samples it takes, so that nobody's frames are not
    rendered and nobody's scans not cast. Observers without these methods take everything.

    A sample (one camera frame or lidar scan) is made when any observer wants its messages or
    the sample itself; then every observer gets all of it, as always.
    """

    def wants_messages(self, topics: tuple[TopicSpec, ...]) -> bool:
        """Whether it takes messages on any of these topics now (a bag: always; a ROS
        publisher: while something subscribes)."""
        ...

    def wants_sample(self, robot: str, sensor: str, step: int, stamp_ns: int) -> bool:
        """Whether it takes the sample (CameraSample, LidarSample) of this camera or lidar made
        at `step`; `stamp_ns` is the sample's own stamp (a scan's first ray)."""
        ...


class Discard:
    """An observer that takes every message and sample and keeps none: a benchmark's run does
    all the work of a recorded one (frames nobody takes are otherwise not rendered)."""

    def on_message(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        return None

    def on_camera(self, sample: CameraSample) -> None:
        return None

    def on_step(self, step: int, stamp_ns: int, robot_states: dict[str, RobotState]) -> None:
        return None

    def close(self, status: str) -> None:
        return None


@runtime_checkable
class LidarObserver(Protocol):
    """An observer that also takes lidar scans (the lidar ground-truth writer); observers
    without `on_lidar` simply do not get them."""

    def on_lidar(self, sample: LidarSample) -> None: ...
