"""Backend registry: the scenario's `backend:` picks the engine; unusable ones fail clearly."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from grade_common.errors import GradeError
from grade_sim.engine.mujoco.engine import MujocoEngine
from grade_sim.engine.registry import BACKENDS, available_backends, create_backend
from grade_sim.errors import BackendError
from grade_sim.scene import Scene
from grade_sim.sim.orchestrator import Simulator
from grade_sim.sim.run import run_scenario


def with_backend(scene: Scene, name: str) -> Scene:
    return replace(scene, scenario=replace(scene.scenario, backend=name))


def test_available_backends() -> None:
    assert set(BACKENDS) == {"mujoco"}
    assert available_backends() == ["mujoco"]


def test_mujoco_is_created(box_scene: Callable[..., Scene]) -> None:
    engine = create_backend(box_scene())
    try:
        assert isinstance(engine, MujocoEngine)
        assert engine.name == "mujoco"
    finally:
        engine.close()


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("bullet", r"backend: unknown engine 'bullet'; available: mujoco$"),
        ("MuJoCo", r"backend: unknown engine 'MuJoCo'; available: mujoco$"),
        ("isaac", r"backend: unknown engine 'isaac'; available: mujoco$"),
    ],
)
def test_unusable_backend_fails_listing_available(
    box_scene: Callable[..., Scene], name: str, message: str
) -> None:
    scene = with_backend(box_scene(), name)
    with pytest.raises(BackendError, match=message):
        create_backend(scene)
    with pytest.raises(BackendError, match=message):
        Simulator(scene)


def test_unknown_backend_fails_before_any_output(
    tmp_path: Path, small_scenario: Callable[..., object]
) -> None:
    scenario = small_scenario(backend="nope")
    out = tmp_path / "run"
    with pytest.raises(GradeError, match=r"unknown engine 'nope'; available: mujoco"):
        run_scenario(scenario, out)  # type: ignore[arg-type]
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no partial run directory left behind
