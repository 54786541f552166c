"""sim.pipeline: parallel renders on a thread of its own and gives the sequential run's outputs
byte for byte (bag, ground truth, record); stops and failures end the render thread."""

from __future__ import annotations

import importlib.util
import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from grade_common.errors import ConfigError
from grade_sim.config.scenario import Pipeline, Scenario, scenario_from_mapping
from grade_sim.scene import build_scene
from grade_sim.sim.run import SimulatorSpec, run_scenario
from grade_sim.sim.step_output import WORKER_THREAD
from scripts_kit import load_script

RENDER_THREAD = "mujoco-render"


def _render_threads() -> list[threading.Thread]:
    """The render thread and the lidar's cast worker, of any simulator still running."""
    return [
        t
        for t in threading.enumerate()
        if t.name == RENDER_THREAD or t.name.startswith(WORKER_THREAD)
    ]


def busy_data(small_data: Callable[..., dict[str, Any]], pipeline: str) -> dict[str, Any]:
    """People, flying objects, two cameras (one with every ground-truth stream) and a lidar."""
    data = small_data(
        80,
        60,
        seed=3,
        duration_s=0.4,
        people={"count": 2},
        flying_objects={"count": 2},
        sim={"pipeline": pipeline},
    )
    robot = data["robots"][0]
    robot["cameras"][0]["streams"] = ["rgb", "depth", "instance", "semantic", "normals", "flow"]
    robot["cameras"].append(
        {"name": "side", "width": 64, "height": 48, "rate_hz": 20.0, "mount": {"rpy": [0, 0, 1.2]}}
    )
    if importlib.util.find_spec("embreex") is not None:
        robot["lidars"] = [{"name": "lidar", "preset": "vlp16", "rate_hz": 20.0}]
    return data


def test_parallel_and_sequential_runs_are_byte_identical(
    tmp_path: Path, small_data: Callable[..., dict[str, Any]]
) -> None:
    pytest.importorskip("embreex")
    paths = {}
    for mode in ("sequential", "parallel"):
        result = run_scenario(scenario_from_mapping(busy_data(small_data, mode)), tmp_path / mode)
        run_yaml = yaml.safe_load((result.path / "run.yaml").read_text())
        assert run_yaml["simulator"]["pipeline"] == mode
        assert run_yaml["simulator"]["gl_renderer"]  # e.g. llvmpipe, or a GPU through EGL
        assert result.summary["camera_frames_rendered"] > 20
        paths[mode] = result.path
    assert load_script("compare_runs").compare_runs(paths["sequential"], paths["parallel"]) == []
    assert _render_threads() == []


def test_pipeline_is_validated(small_data: Callable[..., dict[str, Any]]) -> None:
    assert scenario_from_mapping(small_data()).sim.pipeline is Pipeline.PARALLEL
    with pytest.raises(ConfigError, match=r"sim\.pipeline: 'fast'.*'sequential', 'parallel'"):
        scenario_from_mapping(small_data(sim={"pipeline": "fast"}))


class _StopAt:
    """Stops the run (as a Ctrl-C or SIGTERM does, through the stop event) at a step."""

    def __init__(self, stop: threading.Event, step: int) -> None:
        self.stop, self.step = stop, step
        self.steps: list[int] = []

    def on_message(self, topic: object, stamp_ns: int, cdr: bytes) -> None:
        return None

    def on_camera(self, sample: object) -> None:
        return None

    def on_step(self, step: int, stamp_ns: int, robot_states: object) -> None:
        self.steps.append(step)
        if step == self.step:
            self.stop.set()

    def close(self, status: str) -> None:
        return None


class _FailAt(_StopAt):
    def on_camera(self, sample: Any) -> None:
        if sample.step >= self.step:
            raise OSError("disk full (test)")


def _scenario(small_data: Callable[..., dict[str, Any]]) -> Scenario:
    return scenario_from_mapping(small_data(80, 60, duration_s=1.0, sim={"pipeline": "parallel"}))


def test_a_stop_ends_the_run_at_the_step_and_the_render_thread(
    tmp_path: Path, small_data: Callable[..., dict[str, Any]]
) -> None:
    stop = threading.Event()
    probe = _StopAt(stop, 40)
    scene = build_scene(_scenario(small_data))
    result = run_scenario(
        SimulatorSpec(scene, observers=(probe,), stop_event=stop), tmp_path / "run"
    )
    # As the sequential loop: the observers got steps 0..40, nothing simulated ahead.
    assert probe.steps == list(range(41))
    assert result.stats.steps == 41
    assert result.summary["status"] == "interrupted"
    assert result.summary["topics"]["/clock"]["count"] == 41
    assert _render_threads() == []


class _SignalAt(_StopAt):
    """Sends this process a real signal at a step (the run's own handler turns it into a stop)."""

    def __init__(self, sig: signal.Signals, step: int) -> None:
        super().__init__(threading.Event(), step)
        self.sig = sig

    def on_step(self, step: int, stamp_ns: int, robot_states: object) -> None:
        self.steps.append(step)
        if step == self.step:
            os.kill(os.getpid(), self.sig)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_signal_ends_the_run_and_every_worker_thread(
    tmp_path: Path, small_data: Callable[..., dict[str, Any]], sig: signal.Signals
) -> None:
    """Ctrl-C and SIGTERM mid-run, with frames and lidar scans in flight on the render and
    worker threads: the run ends at the step, and no thread of it is left behind."""
    data = busy_data(small_data, "parallel")
    data["duration_s"] = 1.0
    scene = build_scene(scenario_from_mapping(data))
    probe = _SignalAt(sig, 60)
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    result = run_scenario(SimulatorSpec(scene, observers=(probe,)), tmp_path / "run")
    assert probe.steps == list(range(61))
    assert result.summary["status"] == "interrupted"
    assert _render_threads() == []
    assert {s: signal.getsignal(s) for s in handlers} == handlers  # restored


def test_a_failing_observer_ends_the_render_thread(
    tmp_path: Path, small_data: Callable[..., dict[str, Any]]
) -> None:
    scene = build_scene(_scenario(small_data))
    probe = _FailAt(threading.Event(), 40)
    with pytest.raises(OSError, match="disk full"):
        run_scenario(SimulatorSpec(scene, observers=(probe,)), tmp_path / "run")
    assert _render_threads() == []


def test_a_stop_between_steps_keeps_every_step_simulated(
    tmp_path: Path, small_data: Callable[..., dict[str, Any]]
) -> None:
    stop = threading.Event()
    scene = build_scene(_scenario(small_data))

    def stop_at_50(step: int, total: int) -> None:
        if step == 50:
            stop.set()  # from the loop's thread, between steps (as grade replay's tests do)

    spec = SimulatorSpec(scene, stop_event=stop)
    result = run_scenario(spec, tmp_path / "run", progress=stop_at_50)
    assert result.stats.steps == 50
    assert result.summary["topics"]["/clock"]["count"] == 50
    assert _render_threads() == []
