"""The compiled heading-frame bounds of a skin's points equal numpy's formula for them."""

from __future__ import annotations

import numpy as np
import pytest

from grade_sim.actors.box_kernels import heading_bounds


@pytest.mark.parametrize("yaw", [0.0, 0.7, -2.9, np.pi / 2])
def testheading_bounds_equal_the_numpy_formula(yaw: float) -> None:
    rng = np.random.default_rng(7)
    pts = rng.normal([3.0, -1.0, 0.9], [0.3, 0.2, 0.5], size=(5000, 3))
    c, s = np.cos(yaw), np.sin(yaw)
    rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    mean, lo, hi = heading_bounds(pts, c, s)
    local = (pts - pts.mean(axis=0)) @ rot
    np.testing.assert_allclose(mean, pts.mean(axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(lo, local.min(axis=0), rtol=0, atol=1e-12)
    np.testing.assert_allclose(hi, local.max(axis=0), rtol=0, atol=1e-12)


def testheading_bounds_of_a_known_box() -> None:
    # The corners of a 2 x 1 x 3 box centred at (1, 2, 1.5), seen from a heading of 90 degrees:
    # the box's x extent becomes the local y extent.
    corners = np.array(
        [[x, y, z] for x in (0.0, 2.0) for y in (1.5, 2.5) for z in (0.0, 3.0)], dtype=np.float64
    )
    mean, lo, hi = heading_bounds(corners, 0.0, 1.0)
    assert mean.tolist() == [1.0, 2.0, 1.5]
    assert (hi - lo).tolist() == [1.0, 2.0, 3.0]
