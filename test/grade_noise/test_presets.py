"""The shared range check of the noise models' parameter dataclasses: one wording for all."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from grade_noise.depth import DepthNoiseParams
from grade_noise.errors import NoiseConfigError
from grade_noise.imu import AxisNoiseParams
from grade_noise.odometry import OdometryNoiseParams
from grade_noise.rgb import RgbNoiseParams

_AXIS = {"noise_density": 1.0, "random_walk": 1.0, "correlation_time_s": 1.0}


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda: DepthNoiseParams(baseline_m=0.0),
            "depth noise field 'baseline_m' = 0.0: must be > 0",
        ),
        (
            lambda: DepthNoiseParams(edge_jump_m=-1.0),
            "depth noise field 'edge_jump_m' = -1.0: must be >= 0",
        ),
        # The positive fields are checked before the non-negative ones.
        (
            lambda: DepthNoiseParams(axial_a_m=-1.0, max_range_m=math.inf),
            "depth noise field 'max_range_m' = inf: must be > 0",
        ),
        (
            lambda: RgbNoiseParams(shot_gain=math.nan),
            "RGB noise field 'shot_gain' = nan: must be >= 0",
        ),
        (
            lambda: RgbNoiseParams(max_step_px=0.0),
            "RGB noise field 'max_step_px' = 0.0: must be > 0",
        ),
        (
            lambda: AxisNoiseParams(**_AXIS, turn_on_bias_sigma=-0.5),
            "IMU noise field 'turn_on_bias_sigma' = -0.5: must be finite and >= 0",
        ),
        (
            lambda: AxisNoiseParams(**{**_AXIS, "correlation_time_s": 0.0}, turn_on_bias_sigma=0.0),
            "IMU noise field 'correlation_time_s' = 0.0: must be > 0 s",
        ),
        (
            lambda: OdometryNoiseParams(yaw_per_rad=-0.1),
            "odometry noise field 'yaw_per_rad' = -0.1: must be >= 0",
        ),
    ],
)
def test_out_of_range_field_is_named_with_its_rule(make: Any, message: str) -> None:
    with pytest.raises(NoiseConfigError, match=f"^{re.escape(message)}$"):
        make()


def test_zero_is_allowed_where_the_field_may_be_zero() -> None:
    DepthNoiseParams(axial_a_m=0.0, edge_jump_m=0.0, quantisation_m=0.0)
    RgbNoiseParams(exposure_s=0.0, shot_gain=0.0, read_noise_dn=0.0)
    AxisNoiseParams(**_AXIS, turn_on_bias_sigma=0.0)
    OdometryNoiseParams(translation_per_m=0.0, yaw_per_rad=0.0, yaw_per_sqrt_s=0.0)
