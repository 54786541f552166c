"""Pinhole intrinsics of the rendered cameras."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grade_sim.config.scenario import CameraConfig
from grade_sim.sensors.camera import intrinsics, vertical_fov_deg


@pytest.mark.parametrize(
    ("width", "height", "hfov"),
    [(640, 480, 88.95), (160, 120, 60.0), (1280, 720, 90.0), (100, 300, 30.0)],
)
def test_intrinsics_match_the_field_of_view(width: int, height: int, hfov: float) -> None:
    cfg = CameraConfig(width=width, height=height, hfov_deg=hfov)
    k = intrinsics(cfg)
    assert k[0, 0] == k[1, 1]
    assert (k[0, 2], k[1, 2]) == ((width - 1) / 2, (height - 1) / 2)
    np.testing.assert_array_equal(k[2], [0, 0, 1])
    assert k[0, 1] == k[1, 0] == 0
    # The image's outer pixel edges (at -0.5 and width - 0.5) are at +-hfov / 2.
    assert math.degrees(2 * math.atan((width / 2) / k[0, 0])) == pytest.approx(hfov)
    vfov = vertical_fov_deg(cfg)
    assert math.degrees(2 * math.atan((height / 2) / k[1, 1])) == pytest.approx(vfov)
    if width == height * 4 / 3:
        assert vfov < hfov
