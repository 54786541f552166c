"""Frontier explorer on exact depth images of a closed box room (walls at |x|, |y| = 3 m)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from grade_control.errors import ControlConfigError
from grade_control.exploration import ExplorationMission, MissionSettings, Phase
from grade_control.explorer import FREE, OCCUPIED, UNKNOWN, ExplorerConfig, FrontierExplorer

K = np.array([[160.0, 0.0, 160.0], [0.0, 160.0, 120.0], [0.0, 0.0, 1.0]])
WIDTH, HEIGHT = 320, 240
# optical frame (z forward, x right, y down) -> body (x forward, y left, z up)
BODY_OPTICAL = np.array([[0.0, 0.0, 1.0], [-1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])


def camera_pose(x: float, y: float, z: float, yaw: float) -> np.ndarray:
    c, s = math.cos(yaw), math.sin(yaw)
    pose = np.eye(4)
    pose[:3, :3] = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]) @ BODY_OPTICAL
    pose[:3, 3] = (x, y, z)
    return pose


def render_box_depth(pose: np.ndarray, half_m: float = 3.0, ceiling_m: float = 2.5) -> np.ndarray:
    """Exact planar depth of the inside of a box room (floor z=0)."""
    v, u = np.mgrid[0:HEIGHT, 0:WIDTH]
    rays_optical = np.stack(
        [(u - K[0, 2]) / K[0, 0], (v - K[1, 2]) / K[1, 1], np.ones_like(u, dtype=float)], axis=-1
    )
    rays = rays_optical @ pose[:3, :3].T
    origin = pose[:3, 3]
    t_best = np.full(u.shape, np.inf)
    for axis, bounds in ((0, (-half_m, half_m)), (1, (-half_m, half_m)), (2, (0.0, ceiling_m))):
        for plane in bounds:
            with np.errstate(divide="ignore", invalid="ignore"):
                t = (plane - origin[axis]) / rays[..., axis]
            t = np.where(t > 1e-9, t, np.inf)
            t_best = np.minimum(t_best, t)
    return t_best  # rays_optical z = 1: t is the planar depth


CONFIG = ExplorerConfig(
    origin_xy_m=(-5.0, -5.0),
    size_xy_m=(10.0, 10.0),
    resolution_m=0.1,
    max_range_m=5.0,
    pixel_stride=4,
)


def test_full_turn_maps_the_room_and_leaves_no_frontier() -> None:
    explorer = FrontierExplorer(CONFIG)
    for k in range(8):
        pose = camera_pose(0.0, 0.0, 1.2, k * math.pi / 4)
        assert explorer.integrate_depth(render_box_depth(pose), K, pose) > 0
    grid = explorer.grid()
    cell = explorer.cell_of
    assert grid[tuple(cell(np.array([0.0, 0.0])))] == FREE
    assert grid[tuple(cell(np.array([2.0, -1.5])))] == FREE
    for wall in ([3.02, 0.0], [-2.98, 1.0], [0.5, 3.02], [1.0, -2.98]):
        assert grid[tuple(cell(np.array(wall)))] == OCCUPIED, wall
    assert grid[tuple(cell(np.array([4.0, 0.0])))] == UNKNOWN  # behind the wall
    assert explorer.next_goal(np.array([0.0, 0.0])) is None  # closed room: nothing to explore


def test_one_view_gives_a_reachable_frontier_and_a_collision_free_path() -> None:
    explorer = FrontierExplorer(CONFIG)
    pose = camera_pose(0.0, 0.0, 1.2, 0.0)
    explorer.integrate_depth(render_box_depth(pose), K, pose)
    goal = explorer.next_goal(np.array([0.0, 0.0]))
    assert goal is not None
    assert goal.frontier_cells >= CONFIG.min_frontier_cells
    passable = explorer.traversable()
    cells = explorer.cell_of(goal.path_xy_m)
    assert all(passable[r, c] for r, c in cells)
    assert np.all(np.abs(goal.path_xy_m) < 3.0 - CONFIG.robot_radius_m + 0.1)
    steps = np.linalg.norm(np.diff(np.vstack([[0.0, 0.0], goal.path_xy_m]), axis=0), axis=1)
    assert np.all(steps <= CONFIG.path_step_m * 1.5 + CONFIG.resolution_m)
    assert goal.path_xy_m[-1] == pytest.approx(goal.goal_xy_m)


def test_explore_loop_terminates_with_the_room_mapped() -> None:
    # look around at each goal, go there, repeat: the room ends fully explored
    # a 2 m range sees only part of the 6 m room from the centre: it has to move
    explorer = FrontierExplorer(replace(CONFIG, max_range_m=2.0))
    position = np.array([0.0, 0.0])
    goals = 0
    for _ in range(30):
        for k in range(4):
            pose = camera_pose(position[0], position[1], 1.2, k * math.pi / 2)
            explorer.integrate_depth(render_box_depth(pose), K, pose)
        goal = explorer.next_goal(position)
        if goal is None:
            break
        goals += 1
        position = goal.goal_xy_m
    else:
        pytest.fail("exploration did not finish in 30 goals")
    assert goals >= 2
    inside = explorer.grid()[21:79, 21:79]
    assert np.count_nonzero(inside == FREE) / inside.size > 0.95


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("resolution_m", 0.0, r"resolution_m = 0\.0 is invalid"),
        ("pixel_stride", 0, r"pixel_stride = 0"),
        ("min_obstacle_height_m", 3.0, r"min_obstacle_height_m = 3\.0 must be <"),
        ("size_xy_m", (0.0, 1.0), r"size_xy_m"),
    ],
)
def test_bad_explorer_config(field: str, value: object, match: str) -> None:
    with pytest.raises(ControlConfigError, match=match):
        ExplorerConfig(**{field: value})  # type: ignore[arg-type]


def _camera_ahead(position: np.ndarray, yaw: float, ahead_m: float = 0.2) -> np.ndarray:
    """The UAV's camera: `ahead_m` in front of the body, at 1.2 m."""
    x = position[0] + ahead_m * math.cos(yaw)
    y = position[1] + ahead_m * math.sin(yaw)
    return camera_pose(x, y, 1.2, yaw)


def test_first_image_from_a_camera_ahead_of_the_body_gives_a_goal() -> None:
    # The cause of "no reachable frontier left" after the first frame: the camera sits ahead of
    # the body, so the body's own cell was never seen and the wavefront could not leave it.
    explorer = FrontierExplorer(replace(CONFIG, max_range_m=2.0))
    position = np.array([0.0, 0.0])
    pose = _camera_ahead(position, 0.0)
    explorer.integrate_depth(render_box_depth(pose), K, pose)
    assert explorer.grid()[tuple(explorer.cell_of(position))] == UNKNOWN
    goal = explorer.next_goal(position, min_distance_m=1.0)
    assert goal is not None
    assert np.linalg.norm(goal.goal_xy_m - position) >= 1.0


def test_given_up_goals_are_skipped() -> None:
    explorer = FrontierExplorer(replace(CONFIG, max_range_m=2.0))
    pose = camera_pose(0.0, 0.0, 1.2, 0.0)
    explorer.integrate_depth(render_box_depth(pose), K, pose)
    first = explorer.next_goal(np.array([0.0, 0.0]))
    assert first is not None
    second = explorer.next_goal(np.array([0.0, 0.0]), excluded_xy_m=first.goal_xy_m[None, :])
    assert second is not None
    assert np.linalg.norm(second.goal_xy_m - first.goal_xy_m) >= 0.5


def _fly(plan_poses: np.ndarray) -> list[tuple[np.ndarray, float]]:
    """Where an ideal controller passes: every pose of the plan in turn."""
    return [(np.array(p[:2]), float(p[2])) for p in plan_poses]


def _explore(mission: ExplorationMission, position: np.ndarray, yaw: float) -> list[str]:
    """Run the mission with an ideal controller (one plan pose per update); the plan reasons."""
    explorer, now, reasons = mission.explorer, 0.0, []
    poses: list[tuple[np.ndarray, float]] = []
    for _ in range(400):
        if poses:
            position, yaw = poses.pop(0)
        pose = _camera_ahead(position, yaw)
        explorer.integrate_depth(render_box_depth(pose), K, pose, stamp_s=now)
        plan = mission.update(now, position, yaw)
        now += 1.0
        if mission.phase is Phase.FINISHED:
            return reasons
        if plan is not None:
            reasons.append(plan.reason)
            poses = _fly(plan.poses_xy_yaw)
    pytest.fail(f"exploration did not finish; plans: {reasons}")


def test_mission_looks_around_explores_and_finishes_with_the_room_mapped() -> None:
    explorer = FrontierExplorer(replace(CONFIG, max_range_m=2.0))
    mission = ExplorationMission(explorer)
    reasons = _explore(mission, np.array([-1.5, -1.0]), 0.0)
    assert reasons[0] == "look around"
    assert mission.goals_reached >= 2
    assert reasons[-1] == "look around"  # it finishes only after a last full turn
    inside = explorer.grid()[22:78, 22:78]
    assert np.count_nonzero(inside != UNKNOWN) / inside.size > 0.95


def test_mission_gives_up_a_goal_it_makes_no_progress_towards() -> None:
    explorer = FrontierExplorer(replace(CONFIG, max_range_m=2.0))
    mission = ExplorationMission(explorer, MissionSettings(stuck_timeout_s=5.0))
    position = np.array([0.0, 0.0])
    for k in range(4):  # the look-around, done
        pose = _camera_ahead(position, k * math.pi / 2)
        explorer.integrate_depth(render_box_depth(pose), K, pose)
    mission.update(0.0, position, 0.0)
    plans = [
        mission.update(1.0 + k, position, yaw)
        for k, yaw in enumerate((math.pi / 2, math.pi, -math.pi / 2, 0.0))
    ]
    assert mission.phase is Phase.GOING
    assert plans[-1] is not None
    assert "frontier at" in plans[-1].reason
    goal = mission.goal
    assert goal is not None
    # the robot does not move (blocked by something the map does not show)
    stuck = [mission.update(t, position, 0.0) for t in np.arange(5.0, 12.0, 1.0)]
    replans = [p for p in stuck if p is not None]
    assert replans
    assert replans[0].reason.startswith("no progress")
    assert any(np.allclose(g, goal.goal_xy_m) for g in mission.given_up)
