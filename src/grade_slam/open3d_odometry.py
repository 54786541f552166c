"""Open3D's multi-scale RGB-D odometry (`open3d.t.pipelines.odometry`) as a backend.

Built only by `grade_slam.backends` once the `open3d` module has loaded; the module
object is passed in, so nothing here imports open3d at import time.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np

from grade_common.types import FloatArray
from grade_slam.config import OdometryMethod, SlamConfig
from grade_slam.frames import RgbdFrame
from grade_slam.interfaces import MotionEstimate

_METHOD_NAMES = {
    OdometryMethod.HYBRID: "Hybrid",
    OdometryMethod.POINT_TO_PLANE: "PointToPlane",
    OdometryMethod.INTENSITY: "Intensity",
}


class Open3dRgbdOdometry:
    """Frame-to-frame RGB-D odometry; the last frame's tensors are kept for the next pair."""

    def __init__(self, o3d: ModuleType, config: SlamConfig) -> None:
        self._o3d = o3d
        self._config = config
        odometry = o3d.t.pipelines.odometry
        self._method = getattr(odometry.Method, _METHOD_NAMES[config.method])
        self._criteria = [odometry.OdometryConvergenceCriteria(n) for n in config.iterations]
        # The reference of one pair is usually the current frame of the previous one.
        self._last: tuple[RgbdFrame, Any] | None = None

    def _tensor_image(self, frame: RgbdFrame) -> Any:
        if self._last is not None and self._last[0] is frame:
            return self._last[1]
        geometry = self._o3d.t.geometry
        # Float intensities in [0, 1]: the range of Open3D's default photometric Huber delta (0.1).
        color = np.ascontiguousarray(frame.rgb, dtype=np.float32) / np.float32(255.0)
        return geometry.RGBDImage(
            geometry.Image(color),
            geometry.Image(np.ascontiguousarray(frame.depth_m, dtype=np.float32)),
        )

    def estimate(
        self, reference: RgbdFrame, current: RgbdFrame, initial: FloatArray
    ) -> MotionEstimate | None:
        core = self._o3d.core
        target = self._tensor_image(reference)
        source = self._tensor_image(current)
        self._last = (current, source)
        try:
            result = self._o3d.t.pipelines.odometry.rgbd_odometry_multi_scale(
                source,
                target,
                core.Tensor(np.asarray(current.camera_matrix, dtype=np.float64)),
                core.Tensor(np.asarray(initial, dtype=np.float64)),
                1.0,  # depth is already in metres
                float(self._config.depth_max_m),
                self._criteria,
                self._method,
            )
        except RuntimeError:  # Open3D raises when too few correspondences remain
            return None
        transform = np.asarray(result.transformation.numpy(), dtype=np.float64)
        if not np.all(np.isfinite(transform)):
            return None
        return MotionEstimate(transform, float(result.fitness))
