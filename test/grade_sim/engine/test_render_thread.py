"""The render thread makes its GL context before the step loop, and a context it cannot make is
reported to whoever waits on it or asks it for a frame (no hang, no thread left behind)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import mujoco
import pytest

from grade_sim.config.scenario import Stream
from grade_sim.engine.mujoco.render_thread import RenderThread
from grade_sim.engine.registry import create_backend
from grade_sim.scene import Scene

RENDER_THREAD = "mujoco-render"


def _render_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == RENDER_THREAD]


def test_prepare_rendering_makes_the_context_on_the_render_thread_without_a_frame(
    box_scene: Callable[..., Scene],
) -> None:
    engine = create_backend(box_scene())
    try:
        assert engine.gl_renderer == ""  # nothing made yet
        engine.prepare_rendering(parallel=True)
        # The context exists (its GL_RENDERER was read on the render thread), no frame asked.
        assert engine.gl_renderer != ""
        assert len(_render_threads()) == 1
        frame = engine.render_later("uav1", "camera", frozenset({Stream.DEPTH})).result()
        assert frame.depth_m is not None
    finally:
        engine.close()
    assert _render_threads() == []


def test_sequential_prepare_makes_nothing(box_scene: Callable[..., Scene]) -> None:
    engine = create_backend(box_scene())
    try:
        engine.prepare_rendering(parallel=False)  # the caller's thread renders, when it does
        assert engine.gl_renderer == ""
        assert _render_threads() == []
    finally:
        engine.close()


def test_a_context_that_cannot_be_made_fails_the_wait_and_every_frame() -> None:
    model = mujoco.MjModel.from_xml_string("<mujoco><worldbody/></mujoco>")
    data = mujoco.MjData(model)
    freed: list[bool] = []

    def make_gl() -> None:
        raise RuntimeError("no EGL display (test)")

    def render(*_: object) -> None:
        raise AssertionError("a frame was rendered without a context")

    thread = RenderThread(mujoco, model, render, lambda: freed.append(True), make_gl)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="no EGL display"):
        thread.wait_ready()
    future = thread.submit(data, 1, "uav1", "front", frozenset({Stream.RGB}), False)
    with pytest.raises(RuntimeError, match="no EGL display"):
        future.result(timeout=30)
    thread.close()
    assert not thread.alive
    assert freed == [True]  # the (partly made) context is freed on its own thread
