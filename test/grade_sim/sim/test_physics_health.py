"""Physics health: NaN/Inf/huge states stop the run as `failed`, MuJoCo's log stays in the run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from grade_cli import main as cli
from grade_common.output_guard import OUTPUT_MARKER
from grade_sim.engine.mujoco.engine import LOG_FILE, MujocoEngine, log_into
from grade_sim.engine.protocol import RobotState
from grade_sim.errors import SimulationUnstableError
from grade_sim.scene import build_scene
from grade_sim.sim.health import MAX_POSITION_M, check_actor_positions, check_robot_states


def _state(**over: Any) -> RobotState:
    values: dict[str, Any] = {
        "joint_positions": np.zeros(6),
        "joint_velocities": np.zeros(6),
        "position_world_base": np.array([1.0, 2.0, 1.0]),
        "quat_world_base": np.array([1.0, 0.0, 0.0, 0.0]),
        "linear_velocity_base": np.zeros(3),
        "angular_velocity_base": np.zeros(3),
        "imu_angular_velocity": np.zeros(3),
        "imu_specific_force": np.array([0.0, 0.0, 9.81]),
        "joint_velocity_commands": np.zeros(6),
        "joint_accelerations": np.zeros(6),
    }
    values.update(over)
    return RobotState(**values)


def test_a_valid_state_passes() -> None:
    check_robot_states({"uav1": _state()}, 3, 12_500_000, {"uav1": 0})
    check_actor_positions(np.zeros((2, 3)), ["person a", "person b"], 3, 0)


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("position_world_base", np.array([np.nan, 0.0, 1.0]), "base position is not finite"),
        ("position_world_base", np.array([1e9, 0.0, 1.0]), "exceeds 100000 m"),
        ("linear_velocity_base", np.array([np.inf, 0.0, 0.0]), "linear velocity is not finite"),
        ("joint_velocities", np.full(6, 1e7), "joint velocities"),
    ],
)
def test_a_bad_state_names_robot_step_and_what_to_change(
    field: str, value: np.ndarray, words: str
) -> None:
    with pytest.raises(SimulationUnstableError) as err:
        check_robot_states({"uav2": _state(**{field: value})}, 7, 29_166_667, {"uav2": 1})
    text = str(err.value)
    assert "robot 'uav2' at physics step 7 (t = 0.029167 s)" in text
    assert words in text
    assert "robots[1]" in text
    assert "start_xyz" in text


def test_a_bad_actor_is_named() -> None:
    positions = np.array([[0.0, 0.0, 0.0], [np.nan, 0.0, 0.0]])
    with pytest.raises(SimulationUnstableError, match="actor 'flying object f0' at physics step 2"):
        check_actor_positions(positions, ["person p0", "flying object f0"], 2, 0)


def test_mujoco_divergence_raises_and_logs_into_the_given_folder(
    tmp_path: Path,
    small_scenario: Callable[..., Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    engine = MujocoEngine(build_scene(small_scenario(people={"count": 0})))
    try:
        engine.step()
        engine.data.qvel[:] = np.nan  # what an exploding integrator leaves behind
        log_dir = tmp_path / "run"
        log_dir.mkdir()
        with log_into(log_dir), pytest.raises(SimulationUnstableError, match="Nan, Inf or huge"):
            engine.step()
    finally:
        engine.close()
    assert "unstable" in (log_dir / LOG_FILE).read_text()
    assert not (tmp_path / LOG_FILE).exists()  # not in the current directory


def test_a_start_position_of_1e9_m_stops_the_run_as_failed(
    tmp_path: Path,
    small_data: Callable[..., dict[str, Any]],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    data = small_data(people={"count": 0}, flying_objects={"count": 0})
    data["robots"][0]["start_xyz"] = [1e9, 0.0, 1.0]
    scenario = tmp_path / "far.yaml"
    scenario.write_text(yaml.safe_dump(data))
    out = tmp_path / "run"
    assert cli.main(["run", str(scenario), "--out", str(out), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("grade run: error: robot 'uav1' at physics step 0")
    assert f"exceeds {MAX_POSITION_M:g} m" in err
    assert "start_xyz" in err
    run_yaml = yaml.safe_load((out / "run.yaml").read_text())
    assert run_yaml["status"] == "failed"
    assert "robot 'uav1'" in run_yaml["error"]
    assert (out / OUTPUT_MARKER).is_file()
    assert not (tmp_path / LOG_FILE).exists()
