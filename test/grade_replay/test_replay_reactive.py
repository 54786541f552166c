"""A reactive crowd inside the run: people keep clear of a low-flying robot driven by commands
(a path no plan knew), and the replay of that run reproduces it exactly from the record."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from grade_people.people import PERSON_RADIUS_M
from grade_sim.actors.people_group import People
from grade_sim.actors.robot_discs import robot_radius_m
from grade_sim.config.scenario import Scenario, scenario_from_mapping
from grade_sim.errors import SceneReuseError
from grade_sim.io.record import load_record
from grade_sim.scene import build_scene
from grade_sim.sim.orchestrator import Simulator
from grade_sim.sim.run import SimulatorSpec, run_scenario
from replay_kit import replay_exactly

SPEED_MPS = 0.8
pytestmark = pytest.mark.slow  # a 4 s rendered run and its replay


def _scenario() -> Scenario:
    return scenario_from_mapping(
        {
            "seed": 3,
            "duration_s": 4.0,
            "bootstrap_s": 0.1,
            "environment": {
                "procedural": {"rooms_x": 2, "rooms_y": 1, "furniture_per_room": [0, 0]}
            },
            "people": {"count": 3, "mode": "reactive", "motions": ["walk"]},
            "flying_objects": {"count": 0},
            "lights": {"count": 1},
            "robots": [
                {
                    "name": "rover",
                    "motion": {"mode": "commands"},
                    "cameras": [{"name": "camera", "width": 96, "height": 72, "rate_hz": 10.0}],
                }
            ],
        }
    )


class DriveAt:
    """Commands the robot straight at a point (where a person starts) at constant speed."""

    def __init__(self, start_xy: np.ndarray, target_xy: np.ndarray) -> None:
        d = target_xy - start_xy
        self.velocity_xy = d / np.linalg.norm(d) * SPEED_MPS

    def joint_velocities(
        self, robot: str, joint_names: tuple[str, ...], stamp_ns: int
    ) -> np.ndarray:
        v = {"x": self.velocity_xy[0], "y": self.velocity_xy[1]}
        return np.array([v.get(j, 0.0) for j in joint_names])


@pytest.fixture(scope="module")
def reactive_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scene = build_scene(_scenario())
    robot = scene.robots[0]
    target = scene.group(People).timelines[0].position_xy[0]
    spec = SimulatorSpec(scene, command_source=DriveAt(robot.start_xyz[:2], target))
    result = run_scenario(spec, tmp_path_factory.mktemp("reactive") / "run")
    assert result.stats.status == "complete"
    return result.path


def test_people_keep_clear_of_a_commanded_robot(reactive_run: Path) -> None:
    record = load_record(reactive_run / "record.npz")
    base_xy = record.joint_positions["rover"][:, :2]
    clear = PERSON_RADIUS_M + robot_radius_m(record.scenario.robots[0])
    for name, tl in record.people.items():
        gap = np.linalg.norm(tl.position_xy - base_xy, axis=1).min()
        assert gap >= clear - 0.05, f"{name} came {gap:.3f} m from the robot"
    # The robot did drive through where person_0 started: avoiding it took moving away.
    start = record.people["person_0"].position_xy[0]
    assert np.linalg.norm(base_xy - start, axis=1).min() < clear
    # The trace as it happened, checked with FCL after the run: no contact.
    placement = yaml.safe_load((reactive_run / "placement.yaml").read_text())
    assert placement["checked"] is True
    assert placement["steps_checked"] == record.n_steps
    assert placement["collisions_seen"] == []


def test_replay_of_a_reactive_run_is_exact(reactive_run: Path, tmp_path: Path) -> None:
    replay_exactly(reactive_run, tmp_path / "replay", ("person/",))


def test_a_reactive_scene_runs_again_from_its_start() -> None:
    """Every run of a scene as built starts its own crowd, so runs repeat exactly; a started
    scene (one run's) runs once."""
    scene = build_scene(_scenario())
    walked = []
    for _ in range(2):
        sim = Simulator(scene)
        sim.run(max_steps=40)
        sim.finish()
        walked.append(np.stack([t.position_xy[:40] for t in sim.scene.group(People).timelines]))
    np.testing.assert_array_equal(walked[0], walked[1])
    assert not np.array_equal(walked[0][:, 0], walked[0][:, 39])  # they did walk
    assert scene.group(People).crowd is None  # the scene as built holds no live crowd
    with pytest.raises(SceneReuseError, match="every run starts its own crowd"):
        Simulator(sim.scene)  # the last run's started scene, already run
