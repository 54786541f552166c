"""Reachability of the table grid by the Panda: real IK solutions, seeded, saved and reloaded."""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from grade_scenes.reach.ik import home_contacts, in_collision, solve_top_down
from grade_scenes.reach.plot import plot_reachability
from grade_scenes.reach.reachability import (
    ReachabilityMap,
    compute_reachability,
    load_reachability,
    save_reachability,
)
from grade_scenes.reach.robot import HOME_Q, build_arm
from grade_scenes.table import TableConfig

# A coarse grid over the same 0.48 m square keeps the test fast (16 IK problems, not 256).
COARSE = TableConfig(grid_cells=4, cell_size_m=0.12)


@pytest.fixture(scope="module")
def coarse_map() -> ReachabilityMap:
    return compute_reachability(COARSE, np.random.default_rng(3), restarts=2)


def test_near_blocks_are_reachable_and_far_ones_are_not(coarse_map: ReachabilityMap) -> None:
    # Row 0 is 0.62 m ahead: well inside the Panda's reach (0.855 m) with the hand pointing down.
    assert coarse_map.reachable[0].all()
    # Row 3 is 0.98 m ahead: beyond the arm's length, no IK solution can exist.
    assert not coarse_map.reachable[3].any()


def test_solutions_put_the_tool_above_the_block_pointing_down(coarse_map: ReachabilityMap) -> None:
    arm = build_arm(COARSE)
    allowed = home_contacts(arm)
    centers = COARSE.cell_centers_xy()
    for i, j in zip(*np.nonzero(coarse_map.reachable), strict=True):
        q = coarse_map.joints_rad[i, j]
        assert np.all(q >= arm.lower - 1e-9)
        assert np.all(q <= arm.upper + 1e-9)
        assert not in_collision(arm, q, allowed)
        arm.data.qpos[arm.qpos_ids] = q
        mujoco.mj_forward(arm.model, arm.data)
        tcp = arm.data.site_xpos[arm.tcp_site]
        target = [*centers[i, j], COARSE.top_height_m + coarse_map.standoff_m]
        np.testing.assert_allclose(tcp, target, atol=2.5e-3)
        assert arm.data.site_xmat[arm.tcp_site].reshape(3, 3)[2, 2] < -0.999


def test_a_pose_inside_the_table_is_refused() -> None:
    arm = build_arm(COARSE)
    target = np.array([0.6, 0.0, COARSE.top_height_m - 0.05])  # 5 cm below the table top
    q = solve_top_down(arm, target, HOME_Q)
    assert q is None or in_collision(arm, q, home_contacts(arm))


def test_same_seed_same_map_and_file_roundtrip(coarse_map: ReachabilityMap, tmp_path: Path) -> None:
    again = compute_reachability(COARSE, np.random.default_rng(3), restarts=2)
    np.testing.assert_array_equal(again.joints_rad, coarse_map.joints_rad)
    save_reachability(coarse_map, tmp_path / "reach.npz")
    loaded = load_reachability(tmp_path / "reach.npz")
    np.testing.assert_array_equal(loaded.reachable, coarse_map.reachable)
    assert loaded.table == COARSE
    assert loaded.is_reachable_xy(np.array([0.62, 0.0]))
    assert not loaded.is_reachable_xy(np.array([2.0, 0.0]))
    # The base pose and TCP offset travel with the joint solutions: forward kinematics of a
    # stored solution from them lands on the block's stand-off point.
    assert loaded.tcp_offset_m == pytest.approx(0.1034)
    np.testing.assert_allclose(loaded.base_pose_world[:3, 3], [0.0, 0.0, COARSE.top_height_m])
    arm = build_arm(COARSE)
    arm.data.qpos[arm.qpos_ids] = loaded.joints_rad[0, 0]
    mujoco.mj_forward(arm.model, arm.data)
    np.testing.assert_allclose(
        arm.data.xpos[arm.model.body("base").id], loaded.base_pose_world[:3, 3], atol=1e-12
    )
    png = plot_reachability(coarse_map, tmp_path / "reach.png")
    assert png.stat().st_size > 5000
