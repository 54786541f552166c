"""6-DOF grasps: an object wider than the gripper from above is held from the side; OMPL's
RRT-Connect finds a collision-free path where straight lines fail, the same for the same seed."""

from __future__ import annotations

import itertools
from pathlib import Path

import mujoco
import numpy as np
import pytest

from grade_scenes.pick.grasp import (
    GraspConfig,
    collision_free,
    gripper_shapes,
    obstacle_manager,
    sample_grasps,
)
from grade_scenes.pick.motion import first_collision, interpolate, rrt_connect
from grade_scenes.pick.protocol import Failure, PickConfig, run_scene
from grade_scenes.pick.world import BinSpec, build_pick_world
from grade_scenes.reach.ik import home_contacts, solve_top_down
from grade_scenes.reach.robot import HOME_Q


def _free_grasps(scene: Path, config: GraspConfig) -> list:  # type: ignore[type-arg]
    world = build_pick_world(scene, 0.002, BinSpec())
    mujoco.mj_forward(world.model, world.data)
    hull, pose = world.object_hull(0), world.object_pose(0)
    grasps = sample_grasps(
        hull, pose, world.table.top_height_m, config, np.random.default_rng(0), np.zeros(2)
    )
    obstacles = obstacle_manager(world, [(hull, pose)])
    return collision_free(grasps, gripper_shapes(world), obstacles, 1000)


def test_from_above_nothing_fits_from_the_side_it_does(cone_scene: Path) -> None:
    assert _free_grasps(cone_scene, GraspConfig(approach_tilts_deg=(0.0,))) == []
    side = _free_grasps(cone_scene, GraspConfig())
    assert side
    for grasp in side:
        assert grasp.tilt_deg == 90.0
        assert abs(grasp.approach[2]) < 1e-9  # horizontal approach
        assert abs(float(grasp.approach @ grasp.closing)) < 1e-9
        assert grasp.width_m <= 0.075


@pytest.mark.slow
def test_the_cone_is_picked_from_the_side_and_placed(cone_scene: Path) -> None:
    top_down = run_scene(cone_scene, PickConfig(hold_s=0.5), GraspConfig(approach_tilts_deg=(0.0,)))
    assert top_down.objects[0].failure is Failure.NO_GRASP
    (result,) = run_scene(cone_scene, PickConfig(hold_s=0.5)).objects
    assert result.failure is Failure.NONE, result
    assert result.placed
    assert result.grasp_tilt_deg == 90.0


def test_rrt_connect_goes_around_what_the_straight_line_hits(box_scene: Path) -> None:
    world = build_pick_world(box_scene, 0.002, BinSpec())
    arm = world.planning_arm()
    arm.data.qpos[:] = world.data.qpos
    mujoco.mj_forward(arm.model, arm.data)
    allowed = home_contacts(arm)
    top = world.table.top_height_m
    # both sides of the standing box (0.62, 0.05, 12 cm tall), the hand low beside it
    q_a = solve_top_down(arm, np.array([0.62, 0.2, top + 0.1]), HOME_Q)
    q_b = solve_top_down(arm, np.array([0.62, -0.1, top + 0.1]), HOME_Q)
    assert q_a is not None
    assert q_b is not None
    assert first_collision(arm, interpolate(q_a, q_b), allowed) is not None
    paths = [rrt_connect(arm, q_a, q_b, allowed, None, seed) for seed in (7, 7, 8)]
    assert paths[0] is not None
    assert paths[2] is not None
    assert np.allclose(paths[0][0], q_a)
    assert np.allclose(paths[0][-1], q_b)
    assert first_collision(arm, paths[0], allowed) is None
    for a, b in itertools.pairwise(paths[0]):
        assert float(np.max(np.abs(b - a))) <= 0.02 + 1e-9
    assert paths[1] is not None
    assert paths[0].tobytes() == paths[1].tobytes()  # same seed, same path
