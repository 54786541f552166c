"""map -> odom from the estimate: the TF chain map -> odom -> base -> optical gives it back."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from grade_slam.errors import SlamInputError
from grade_slam.rep105 import FrameChain, map_to_odom


def _pose(rotvec: tuple[float, float, float], xyz: tuple[float, float, float]) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = Rotation.from_rotvec(rotvec).as_matrix()
    m[:3, 3] = xyz
    return m


def test_map_to_odom_makes_the_tree_give_the_estimate() -> None:
    chain = FrameChain()
    chain.add("uav1/base_link", "uav1/camera_link", _pose((0, 0, 0), (0.2, 0, 0)))
    chain.add("uav1/camera_link", "uav1/camera_optical_frame", _pose((-1.2, 0, -1.2), (0, 0, 0)))
    base_optical = chain.transform("uav1/base_link", "uav1/camera_optical_frame")
    odom_base = _pose((0, 0, 0.7), (1.0, 2.0, 1.4))
    estimate = _pose((0.1, -0.2, 0.3), (0.5, -0.1, 2.0))
    m = map_to_odom(estimate, odom_base @ base_optical)
    np.testing.assert_allclose(m @ odom_base @ base_optical, estimate, atol=1e-12)
    with pytest.raises(SlamInputError, match="no transform chain from 'uav1/odom'"):
        chain.transform("uav1/odom", "uav1/camera_optical_frame")
