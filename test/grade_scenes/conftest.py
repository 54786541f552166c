"""Shared fixtures of the scene tests."""

from __future__ import annotations

import numpy as np
import pytest

from grade_scenes.reach.reachability import ReachabilityMap
from grade_scenes.reach.robot import TCP_OFFSET_M, base_pose_world
from grade_scenes.table import TableConfig


@pytest.fixture(scope="session")
def panda_reach() -> ReachabilityMap:
    """The map `grade scenes reach` computes for the Panda: the 8 nearest rows of blocks, minus
    the two corners of row 7 (IK itself is tested in test_reachability; this keeps tests fast)."""
    reachable = np.zeros((16, 16), dtype=bool)
    reachable[:8] = True
    reachable[7, [0, 15]] = False
    table = TableConfig()
    return ReachabilityMap(
        table, 0.15, reachable, np.zeros((16, 16, 7)), 1, base_pose_world(table), TCP_OFFSET_M
    )
