"""Intrinsics of the published cameras (pinhole, plumb_bob, equidistant: grade_sim.optics.lens)."""

from __future__ import annotations

import math

import numpy as np

from grade_common.types import FloatArray
from grade_sim.config.scenario import CameraConfig, CameraModel
from grade_sim.optics.lens import lens_of


def intrinsics(config: CameraConfig) -> FloatArray:
    """K (3x3) of a rendered camera.

    Square pixels, focal length from the horizontal field of view, principal point at the image
    centre in the ROS convention where pixel (0, 0)'s centre is at coordinate (0, 0).
    Distorted models: optics.lens.lens_of(config).k.
    """
    if config.model is not CameraModel.PINHOLE:
        return lens_of(config).k
    f = 0.5 * config.width / math.tan(math.radians(config.hfov_deg) / 2)
    return np.array(
        [[f, 0.0, (config.width - 1) / 2], [0.0, f, (config.height - 1) / 2], [0.0, 0.0, 1.0]]
    )


def vertical_fov_deg(config: CameraConfig) -> float:
    """The true vertical field of view (GRADE stored the aperture here by mistake)."""
    if config.model is CameraModel.EQUIDISTANT:
        # The rays through the top and bottom pixel edges on the centre column.
        lens = lens_of(config)
        theta = lens.undistort_theta(np.array([0.5 * config.height / lens.k[1, 1]]))
        return math.degrees(2 * float(theta[0]))
    return math.degrees(
        2 * math.atan(math.tan(math.radians(config.hfov_deg) / 2) * config.height / config.width)
    )
