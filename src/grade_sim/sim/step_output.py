"""Where the streams' products go: the observers, the run statistics and the stage timings."""

from __future__ import annotations

import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

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


# sim.pipeline: parallel keeps at most this many camera frames rendering (and lidar scans
# casting) ahead of the observers.
MAX_FRAMES_IN_FLIGHT = 4
WORKER_THREAD = "sim-worker"  # casts lidar scans when pipelined
T = TypeVar("T")


@dataclass
class _Pending:
    """A camera frame (or a lidar scan: not a frame) on its way back from another thread."""

    future: Future[Any]
    then: Callable[[Any], None]
    frame: bool = True


class StepOutput:
    """The StreamOutput of the simulator: counts messages and frames, times each stage.

    Stages of a step: rendering (the camera passes; pipelined: the time spent waiting for the
    render thread), publishing (the observers: ROS publishers, bag and ground-truth queues) and
    sensors (the rest: sampling the state, encoding messages).

    Pipelined (sim.pipeline: parallel), frames render on the engine's render thread; whatever
    comes after a frame that is not back yet (its own messages, later streams, later steps)
    waits in one queue and reaches the observers in exactly the sequential order. Once the stop
    event is set, the run ends with the step the observers last got (what waits is dropped),
    as the sequential loop ends with the step it was in; counts are of what was handed out.
    """

    def __init__(
        self,
        observers: Sequence[SimObserver],
        backend: EngineBackend,
        stats: RunStats,
        pipelined: bool = False,
        stop_event: threading.Event | None = None,
        max_frames_in_flight: int = MAX_FRAMES_IN_FLIGHT,
    ) -> None:
        self._observers = tuple(observers)
        self._backend = backend
        self._stats = stats
        self._pipelined = pipelined
        self._max_in_flight = max_frames_in_flight
        self._render_s = 0.0
        self._observers_s = 0.0
        # An observer that does not say what it takes (a test probe) takes everything.
        self._takes_all = any(not isinstance(o, DemandObserver) for o in self._observers)
        self._demands = tuple(o for o in self._observers if isinstance(o, DemandObserver))
        # Not yet handed to the observers, in order: calls, and frames still rendering.
        self._queue: deque[_Pending | tuple[Callable[..., None], tuple[Any, ...]]] = deque()
        self._in_flight = 0
        self._delivering = False  # a frame's `then` is running: what it puts out goes now
        self._stop = threading.Event() if stop_event is None else stop_event
        self._stopped = False
        self._stop_while_out = False  # the stop was set while handing out a queued step
        self._worker: ThreadPoolExecutor | None = None
        self.steps_out = 0  # steps whose on_step the observers got
        self.last_step_stamp_ns = 0

    def begin_step(self) -> None:
        self._render_s = 0.0
        self._observers_s = 0.0

    # -- in order, now or after the frames before it -------------------------------------------
    def _put(self, deliver: Callable[..., None], *args: Any) -> None:
        if self._stopped:
            return
        if self._queue and not self._delivering:
            self._queue.append((deliver, args))
        else:
            deliver(*args)

    def _deliver(self, max_in_flight: int) -> None:
        """Hand out the queue's head while it is ready, or while more than `max_in_flight`
        frames are rendering (waiting for them)."""
        while self._queue:
            head = self._queue[0]
            stop_before = self._stop.is_set()
            if isinstance(head, _Pending):
                if not head.future.done() and self._in_flight <= max_in_flight:
                    return
                self._queue.popleft()
                self._in_flight -= 1
                t0 = time.perf_counter()
                result = head.future.result()  # a render or cast error ends the run here
                if head.frame:  # else the wait is booked as sensors (a scan's own stage)
                    self._render_s += time.perf_counter() - t0
                self._delivering = True
                try:
                    head.then(result)
                finally:
                    self._delivering = False
            else:
                self._queue.popleft()
                deliver, args = head
                deliver(*args)
            if self._stop.is_set() and not stop_before:
                self._stop_while_out = True
            step_done = not isinstance(head, _Pending) and head[0] == self._step_to_observers
            if self._stop_while_out and step_done:
                # Stopped while the observers had this step (an observer or a signal set the
                # stop): the run ends with it, as the sequential loop ends with the step it is
                # in. Later steps (simulated ahead) are dropped, and so is anything still to
                # come; frames being rendered are thrown away. A stop set before (between
                # steps) drops nothing: the loop stopped there.
                self._queue.clear()
                self._in_flight = 0
                self._stopped = True

    def drain(self) -> None:
        """Wait for every frame asked for and hand everything out (end of run, lockstep)."""
        if not self._queue:
            return
        self.begin_step()
        try:
            self._deliver(-1)
        finally:
            timings = self._stats.stage_s
            timings["rendering"] += self._render_s
            timings["publishing"] += self._observers_s

    # -- StreamOutput ---------------------------------------------------------------------------
    def publish(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        self._put(self._message_to_observers, topic, stamp_ns, cdr)

    def _message_to_observers(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        stats = self._stats
        stats.message_counts[topic.name] += 1
        stats.first_stamp_ns.setdefault(topic.name, stamp_ns)
        stats.last_stamp_ns[topic.name] = stamp_ns
        self._to_observers("on_message", topic, stamp_ns, cdr)

    def _step_to_observers(self, step: int, stamp_ns: int, states: dict[str, RobotState]) -> None:
        self._to_observers("on_step", step, stamp_ns, states)
        self.steps_out = step + 1
        self.last_step_stamp_ns = stamp_ns

    def _to_observers(self, method: str, *args: Any) -> None:
        t0 = time.perf_counter()
        for obs in self._observers:
            getattr(obs, method)(*args)
        self._observers_s += time.perf_counter() - t0

    def wanted(
        self, topics: tuple[TopicSpec, ...], robot: str, sensor: str, step: int, stamp_ns: int
    ) -> tuple[TopicSpec, ...]:
        if self._takes_all or any(
            d.wants_sample(robot, sensor, step, stamp_ns) for d in self._demands
        ):
            return topics
        return tuple(t for t in topics if any(d.wants_messages((t,)) for d in self._demands))

    def render(
        self,
        robot: str,
        camera: str,
        streams: frozenset[Stream],
        flow_restart: bool,
        then: Callable[[CameraFrame], None],
    ) -> None:
        if self._stopped:
            return
        self._stats.camera_frames += 1
        if self._pipelined:
            future = self._backend.render_later(robot, camera, streams, flow_restart)
            self._queue.append(_Pending(future, then))
            self._in_flight += 1
            return
        t0 = time.perf_counter()
        frame = self._backend.render(robot, camera, streams, flow_restart)
        self._render_s += time.perf_counter() - t0
        self._put(then, frame)

    def later(self, work: Callable[[], T], then: Callable[[T], None]) -> None:
        if self._stopped:
            return
        if not self._pipelined:
            self._put(then, work())
            return
        if self._worker is None:
            self._worker = ThreadPoolExecutor(1, thread_name_prefix=WORKER_THREAD)
        self._queue.append(_Pending(self._worker.submit(work), then, frame=False))
        self._in_flight += 1

    def close(self) -> None:
        """End the worker thread (after its work); later() makes a new one if asked again."""
        if self._worker is not None:
            self._worker.shutdown(wait=True, cancel_futures=True)
            self._worker = None

    def camera_sample(self, sample: CameraSample) -> None:
        self._put(self._to_observers, "on_camera", sample)

    def lidar_sample(self, sample: LidarSample) -> None:
        self._put(self._to_lidar_observers, sample)

    def _to_lidar_observers(self, sample: LidarSample) -> None:
        t0 = time.perf_counter()
        for obs in self._observers:
            if isinstance(obs, LidarObserver):
                obs.on_lidar(sample)
        self._observers_s += time.perf_counter() - t0

    def end_step(
        self, step: int, stamp_ns: int, states: dict[str, RobotState], started: float
    ) -> None:
        """Call the observers' on_step and book the step's time; `started`: perf_counter()."""
        self._put(self._step_to_observers, step, stamp_ns, states)
        self._deliver(self._max_in_flight)
        timings = self._stats.stage_s
        timings["rendering"] += self._render_s
        timings["publishing"] += self._observers_s
        timings["sensors"] += time.perf_counter() - started - self._render_s - self._observers_s
