"""Cameras rendered on a thread of their own (`sim.pipeline: parallel`, docs/simulator.md).

An EGL context is current on one thread only, so the thread owns the engine's GL context and
renders every camera, in the order asked. Each job renders from a copy of the engine's MjData
taken when it was asked (`mj_copyData`: the whole state, so the frame is the one the
sequential loop would render), while the simulation thread goes on stepping the original.
MuJoCo's `mjv_updateScene`, `mjr_render` and `mjr_readPixels` release the GIL, so rendering
runs on the second core beside physics. Cameras asked at the same state share one copy.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from grade_sim.config.scenario import Stream
from grade_sim.engine.protocol import CameraFrame

# render(data, robot, camera, streams, flow_restart): one frame from the state in `data`.
RenderFn = Callable[[Any, str, str, frozenset[Stream], bool], CameraFrame]


@dataclass
class _Snapshot:
    data: Any  # mujoco.MjData
    version: int
    users: int = 0


@dataclass
class _Job:
    snapshot: _Snapshot
    robot: str
    camera: str
    streams: frozenset[Stream]
    flow_restart: bool
    future: Future[CameraFrame] = field(default_factory=Future)


class RenderThread:
    """The render thread of one engine; `close()` ends it (and frees GL on it) after the jobs
    already asked for."""

    def __init__(
        self,
        mujoco: Any,
        model: Any,
        render: RenderFn,
        free_gl: Callable[[], None],
        make_gl: Callable[[], None],
    ):
        self._mj = mujoco
        self._model = model
        self._render = render
        self._free_gl = free_gl
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._lock = threading.Lock()
        self._free: list[_Snapshot] = []
        self._latest: _Snapshot | None = None
        self._closed = False
        # The context (with the model's meshes and textures uploaded) is made first thing on
        # the thread, so the first frame costs what every other frame does.
        self._make_gl = make_gl
        self._ready: Future[None] = Future()
        self._thread = threading.Thread(target=self._loop, name="mujoco-render", daemon=True)
        self._thread.start()

    def submit(
        self,
        data: Any,
        version: int,
        robot: str,
        camera: str,
        streams: frozenset[Stream],
        flow_restart: bool,
    ) -> Future[CameraFrame]:
        """Render a camera at the state `data` holds now (`version` changes with the state)."""
        if self._closed:
            raise RuntimeError("the render thread is closed")
        with self._lock:
            snap = self._latest
            if snap is None or snap.version != version:
                if snap is not None and snap.users == 0:
                    self._free.append(snap)
                if self._free:
                    snap = self._free.pop()
                else:
                    snap = _Snapshot(self._mj.MjData(self._model), 0)
                self._mj.mj_copyData(snap.data, self._model, data)
                snap.version = version
                self._latest = snap
            snap.users += 1
        job = _Job(snap, robot, camera, streams, flow_restart)
        self._jobs.put(job)
        return job.future

    def wait_ready(self) -> None:
        """Wait until the thread has made its GL context; re-raises the error if it could not."""
        self._ready.result()

    def _loop(self) -> None:
        try:
            try:
                self._make_gl()
            except BaseException as err:  # handed to whoever waits on it or asks for a frame
                self._ready.set_exception(err)
                self._fail_jobs(err)
                return
            self._ready.set_result(None)
            while True:
                job = self._jobs.get()
                if job is None:
                    return
                if job.future.set_running_or_notify_cancel():
                    try:
                        frame = self._render(
                            job.snapshot.data, job.robot, job.camera, job.streams, job.flow_restart
                        )
                    except BaseException as err:  # handed to the simulation thread
                        job.future.set_exception(err)
                    else:
                        job.future.set_result(frame)
                with self._lock:
                    snap = job.snapshot
                    snap.users -= 1
                    if snap.users == 0 and snap is not self._latest:
                        self._free.append(snap)
        finally:
            # The context is current here: it is freed where it was made.
            self._free_gl()

    def _fail_jobs(self, err: BaseException) -> None:
        """Without a context no job can run: each one asked for (now or later) gets the error."""
        while True:
            job = self._jobs.get()
            if job is None:
                return
            if job.future.set_running_or_notify_cancel():
                job.future.set_exception(err)

    def close(self) -> None:
        """Finish the jobs asked for, free the GL context and end the thread."""
        if self._closed:
            return
        self._closed = True
        self._jobs.put(None)
        self._thread.join()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()
