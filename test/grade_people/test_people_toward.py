"""people.toward_robots: walks that meet a robot beside its planned path, ahead of it, and go on
past it; refused where there is no plan; 0 leaves the crowd exactly as it was."""

from __future__ import annotations

import numpy as np
import pytest

from grade_common.errors import ConfigError
from grade_common.occupancy import OccupancyGrid
from grade_people.config import CrowdMode, PeopleConfig
from grade_people.crowd import MIN_GOAL_DISTANCE_M, Crowd, RobotSchedule
from grade_people.toward import PASS_M, SIDE_GAP_M, meet_robot
from grade_sim.config.scenario import LightsConfig, ProceduralConfig, scenario_from_mapping
from grade_sim.world.procedural import generate_rooms

DT_S = 0.05
ROBOT_MPS = 1.0
RADIUS_M = 0.25
KEEP_M = 0.5


def _straight_run(n_steps: int = 400) -> tuple[np.ndarray, np.ndarray]:
    """A robot driving along +x from the origin at ROBOT_MPS, facing +x: (n, 1, 2), (n, 1)."""
    x = np.arange(n_steps) * DT_S * ROBOT_MPS
    path = np.stack([x, np.zeros(n_steps)], axis=1)[:, None, :]
    return path, np.zeros((n_steps, 1))


def _walk(start_xy: tuple[float, float], seed: int = 0) -> list[np.ndarray] | None:
    grid = OccupancyGrid((-20.0, -20.0), 0.1, np.zeros((400, 400), dtype=bool))
    path, yaw = _straight_run()
    return meet_robot(
        np.array(start_xy),
        1.0,
        0,
        DT_S,
        path,
        yaw,
        np.array([RADIUS_M]),
        KEEP_M,
        MIN_GOAL_DISTANCE_M,
        grid,
        np.random.default_rng(seed),
    )


def test_a_walker_beside_the_path_crosses_it_to_meet_the_robot_and_goes_past() -> None:
    start = np.array([6.0, 2.0])  # left of the path, ahead of the robot
    points = _walk(tuple(start))
    assert points is not None
    meet, past = points
    # On the far side, off the path by the bodies plus the drawn gap.
    assert -(RADIUS_M + KEEP_M + SIDE_GAP_M[1]) <= meet[1] <= -(RADIUS_M + KEEP_M + SIDE_GAP_M[0])
    # Reached (walking straight at 1 m/s) by the time the robot is level with it.
    assert np.linalg.norm(meet - start) / 1.0 <= meet[0] / ROBOT_MPS + 1e-9
    # Then on, back along the robot's path.
    np.testing.assert_allclose(past, meet - [PASS_M, 0.0])


def test_a_walker_ahead_on_the_path_walks_toward_the_robot() -> None:
    start = np.array([9.0, 0.1])
    points = _walk(tuple(start))
    assert points is not None
    walk = points[0] - start
    assert walk[0] < -0.5 * np.linalg.norm(walk)  # facing the robot's camera, not its back


def test_a_walker_behind_the_robot_gets_no_walk() -> None:
    # As fast as the robot and behind it: it would have to chase it, back to the camera.
    assert _walk((-3.0, 0.0)) is None


def test_same_seed_same_walk_other_seed_other_gap() -> None:
    a, b = _walk((6.0, 2.0), seed=3), _walk((6.0, 2.0), seed=3)
    assert a is not None
    assert b is not None
    assert np.array(a).tobytes() == np.array(b).tobytes()
    c = _walk((6.0, 2.0), seed=4)
    assert c is not None
    assert np.array(c).tobytes() != np.array(a).tobytes()


@pytest.mark.parametrize(
    ("people", "robots", "message"),
    [
        ({"toward_robots": 1.5}, None, r"people\.toward_robots.*1\.5"),
        ({"toward_robots": 0.5, "mode": "reactive"}, None, r"people\.toward_robots: 0\.5 needs"),
        (
            {"toward_robots": 0.5},
            [{"name": "uav1", "motion": {"mode": "commands"}}],
            r"people\.toward_robots: 0\.5 needs a robot whose motion\.mode is path",
        ),
    ],
)
def test_bad_toward_robots_is_refused_naming_the_key(
    people: dict[str, object], robots: list[dict[str, object]] | None, message: str
) -> None:
    data: dict[str, object] = {"people": people}
    if robots is not None:
        data["robots"] = robots
    with pytest.raises(ConfigError, match=message):
        scenario_from_mapping(data)


def _crowd_positions(toward: float, plans: RobotSchedule | None, seed: int = 2) -> np.ndarray:
    world = generate_rooms(ProceduralConfig(), LightsConfig(), np.random.default_rng(3))
    config = PeopleConfig(count=3, toward_robots=toward, mode=CrowdMode.SCRIPTED)
    n_steps = 241
    crowd = Crowd(
        world.free_space,
        config,
        [1.75] * 3,
        n_steps,
        1 / 60,
        np.random.default_rng(seed),
        robot_plans=plans,
    )
    return np.stack([t.position_xy for t in crowd.run_to_end()])


def _plans(n_steps: int = 241) -> RobotSchedule:
    path, yaw = _straight_run(n_steps)
    pos = np.concatenate([path, np.full((n_steps, 1, 1), 1.4)], axis=2)
    return RobotSchedule(
        ("uav1",),
        pos,
        np.zeros((n_steps, 1, 2)),
        yaw,
        np.ones((n_steps, 1), dtype=bool),
        np.array([RADIUS_M]),
        np.array([[0.2, 0.2, 0.06]]),
    )


def test_zero_leaves_the_crowd_as_it_was_and_one_changes_it() -> None:
    plain = _crowd_positions(0.0, None)
    assert plain.tobytes() == _crowd_positions(0.0, _plans()).tobytes()
    toward = _crowd_positions(1.0, _plans())
    assert toward.tobytes() == _crowd_positions(1.0, _plans()).tobytes()
    assert toward.tobytes() != plain.tobytes()
