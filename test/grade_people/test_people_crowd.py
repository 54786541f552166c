"""The crowd: people keep apart from each other, walls, furniture and robots; same seed, same
bytes; gait phase follows the distance walked; goals set from outside are reached."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial import cKDTree

from grade_common.occupancy import OccupancyGrid
from grade_people.config import PeopleConfig, PersonMotion
from grade_people.crowd import Crowd, RobotObstacle
from grade_people.people import MOTION_CODES, PERSON_RADIUS_M, PersonTimeline, phase_step_rad
from grade_sim.config.scenario import LightsConfig, ProceduralConfig
from grade_sim.world.model import World
from grade_sim.world.procedural import generate_rooms

DT_S = 1 / 240


@pytest.fixture(scope="module")
def world() -> World:
    """The default rooms (2 x 2, furnished) of the default scenario."""
    return generate_rooms(ProceduralConfig(), LightsConfig(), np.random.default_rng(3))


def _positions(timelines: tuple[PersonTimeline, ...]) -> np.ndarray:
    return np.stack([t.position_xy for t in timelines], axis=1)  # (steps, people, 2)


def min_person_distance_m(timelines: tuple[PersonTimeline, ...]) -> float:
    p = _positions(timelines)
    d = np.linalg.norm(p[:, :, None] - p[:, None], axis=3)
    iu = np.triu_indices(p.shape[1], 1)
    return float(d[:, iu[0], iu[1]].min())


def min_obstacle_distance_m(grid: OccupancyGrid, timelines: tuple[PersonTimeline, ...]) -> float:
    """Lower bound of the distance from any person's centre to any blocked cell (a square)."""
    cells = grid.center_of(np.argwhere(grid.blocked))
    d, _ = cKDTree(cells).query(_positions(timelines).reshape(-1, 2))
    return float(d.min()) - grid.resolution_m / math.sqrt(2.0)


def _crowd(world: World, n: int, seconds: float, seed: int, **people: object) -> Crowd:
    config = PeopleConfig(count=n, **people)  # type: ignore[arg-type]
    n_steps = round(seconds / DT_S) + 1
    return Crowd(world.free_space, config, [1.75] * n, n_steps, DT_S, np.random.default_rng(seed))


@pytest.mark.slow
def test_sixty_seconds_of_twenty_people_never_interpenetrate(world: World) -> None:
    timelines = _crowd(world, 20, 60.0, 0).run_to_end()
    between = min_person_distance_m(timelines)
    to_obstacles = min_obstacle_distance_m(world.free_space, timelines)
    print(f"minimum person-person {between:.3f} m, person-obstacle {to_obstacles:.3f} m")
    assert between >= 2 * PERSON_RADIUS_M
    assert to_obstacles >= PERSON_RADIUS_M
    # They walk (not a frozen crowd that is trivially apart).
    walked = np.linalg.norm(np.diff(_positions(timelines), axis=0), axis=2).sum(axis=0)
    assert np.median(walked) > 8.0


def test_same_seed_same_bytes_other_seed_differs(world: World) -> None:
    a = _crowd(world, 6, 4.0, 5).run_to_end()
    b = _crowd(world, 6, 4.0, 5).run_to_end()
    c = _crowd(world, 6, 4.0, 6).run_to_end()
    for field in ("position_xy", "heading_rad", "phase_rad", "amplitude", "motion"):
        for ta, tb in zip(a, b, strict=True):
            assert getattr(ta, field).tobytes() == getattr(tb, field).tobytes()
    assert _positions(a).tobytes() != _positions(c).tobytes()


def test_phase_follows_distance_walked_and_amplitude_stays_in_range(world: World) -> None:
    crowd = _crowd(
        world, 4, 8.0, 2, motions=[PersonMotion.WALK, PersonMotion.STAND], walk_fraction=1.0
    )
    timelines = crowd.run_to_end()
    for i, tl in enumerate(timelines):
        step = np.linalg.norm(np.diff(tl.position_xy, axis=0), axis=1)
        walking = tl.motion[1:] == MOTION_CODES[PersonMotion.WALK]
        assert walking.any()
        dphase = np.diff(tl.phase_rad)[walking]
        turn = np.diff(tl.heading_rad)[walking]
        np.testing.assert_allclose(
            dphase, phase_step_rad(step[walking], DT_S, crowd.height_m[i], turn)
        )
        assert tl.amplitude.min() >= 0.0
        assert tl.amplitude.max() <= 1.0
        # Never faster than the person's own speed.
        assert step.max() / DT_S <= crowd.pref_speed[i] + 1e-9


def _crossing_run(world: World, with_robot: bool) -> tuple[float, float, np.ndarray]:
    """One person walks east along a room; a robot drives north across the person's path, timed
    to reach the crossing point when the person does."""
    crowd = _crowd(world, 1, 8.0, 1, motions=[PersonMotion.WALK, PersonMotion.STAND])
    free = crowd.planning
    # A straight free corridor: the row of the planning grid with the longest free run.
    runs = [(np.flatnonzero(~free.blocked[:, j]), j) for j in range(free.blocked.shape[1])]
    cols, row = max(runs, key=lambda r: len(r[0]))
    start = free.center_of(np.array([cols[0] + 1, row]))
    goal = free.center_of(np.array([cols[0] + 25, row]))
    crowd.position_xy[0] = start
    crowd.heading_rad[0] = 0.0
    crowd.set_goal(0, goal)
    cross_x = (start[0] + goal[0]) / 2
    robot_radius, robot_speed = 0.3, 0.8
    meet_s = (cross_x - start[0]) / crowd.pref_speed[0]
    closest = np.inf
    for k in range(crowd.n_steps):
        robot_xy = np.array([cross_x, start[1] + robot_speed * (k * DT_S - meet_s)])
        robots = [RobotObstacle(robot_xy, np.array([0.0, robot_speed]), robot_radius)]
        crowd.advance(k, robots if with_robot else [])
        closest = min(closest, float(np.linalg.norm(crowd.position_xy[0] - robot_xy)))
    xs = crowd.timelines[0].position_xy[:, 0] - cross_x
    return closest, robot_radius, xs


def test_reactive_person_yields_to_a_robot_crossing_its_path(world: World) -> None:
    closest, robot_radius, xs = _crossing_run(world, with_robot=True)
    ignored, _, xs_free = _crossing_run(world, with_robot=False)
    # Without avoidance the robot drives through the person; with it, bodies never overlap.
    assert ignored < 0.5 * (PERSON_RADIUS_M + robot_radius)
    assert closest >= PERSON_RADIUS_M + robot_radius
    # Yielding: the person reaches the crossing point later, and still reaches the goal.
    delay_s = (np.argmax(xs >= 0.0) - np.argmax(xs_free >= 0.0)) * DT_S
    assert delay_s > 0.3
    assert abs(xs[-1] - xs_free[-1]) < 0.2


def test_steered_goal_is_reached_and_held(world: World) -> None:
    crowd = _crowd(world, 3, 12.0, 4)
    for k in range(240):
        crowd.advance(k)
    goal = crowd.planning.center_of(np.argwhere(~crowd.planning.blocked)[0])
    crowd.set_goal(1, goal)
    crowd.run_to_end()
    end = crowd.timelines[1].position_xy[-1]
    assert np.linalg.norm(end - goal) < 0.3


def test_advance_refuses_skipped_steps(world: World) -> None:
    crowd = _crowd(world, 1, 1.0, 0)
    crowd.advance(0)
    with pytest.raises(ValueError, match="asked for step 5"):
        crowd.advance(5)
