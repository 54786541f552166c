"""Camera models of the published images: pixel <-> ray for pinhole, plumb_bob and equidistant.

Core (numpy + OpenCV only). Pixel coordinates follow ROS and OpenCV: pixel (0, 0)'s centre is
at (0, 0); rays are in the optical frame (z forward, x right, y down). plumb_bob is OpenCV's
radial-tangential model (k1, k2, p1, p2, k3), equidistant OpenCV's fisheye model
(theta_d = theta (1 + k1 theta^2 + k2 theta^4 + k3 theta^6 + k4 theta^8), r = f theta_d), which
is what image_pipeline uses for CameraInfo's "plumb_bob" and "equidistant". Unlike
cv2.fisheye.projectPoints, `Lens.project` takes the off-axis angle from atan2, so rays more than
90 deg off-axis (a 180-200 deg fisheye) project too.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.config.camera_model import DISTORTION_COEFFICIENTS, CameraGeometry, CameraModel

# A ray whose reprojection misses its pixel by more than this is not the pixel's ray.
ROUNDTRIP_TOLERANCE_PX = 1e-3
NEWTON_ITERATIONS = 30


class DepthKind(enum.Enum):
    """What a depth pixel of the published image measures (0 = no return, both kinds)."""

    PLANAR = "planar"  # z in the optical frame: pinhole and plumb_bob
    RANGE = "range"  # distance along the pixel's ray: equidistant (z <= 0 beyond 90 deg)


@dataclass(frozen=True, eq=False)
class Lens:
    """One camera model: image size, K, distortion coefficients and the widest ray it sees."""

    model: CameraModel
    width: int
    height: int
    k: FloatArray  # 3x3
    d: FloatArray  # plumb_bob: 5, equidistant: 4, pinhole: 5 zeros (CameraInfo's convention)
    max_theta_rad: float  # rays further off-axis are outside the lens

    @property
    def distortion_model(self) -> str:
        """CameraInfo.distortion_model (sensor_msgs/distortion_models.hpp names)."""
        return "equidistant" if self.model is CameraModel.EQUIDISTANT else "plumb_bob"

    @property
    def depth_kind(self) -> DepthKind:
        """Fisheye depth is the range: planar z is meaningless (<= 0) beyond 90 deg."""
        return DepthKind.RANGE if self.model is CameraModel.EQUIDISTANT else DepthKind.PLANAR

    def project(self, points_cam: FloatArray) -> FloatArray:
        """Pixel coordinates (N, 2) of points (N, 3) in the optical frame; NaN where not seen."""
        p = np.asarray(points_cam, dtype=np.float64).reshape(-1, 3)
        out = np.full((len(p), 2), np.nan)
        rho = np.hypot(p[:, 0], p[:, 1])
        theta = np.arctan2(rho, p[:, 2])
        seen = ((rho > 0) | (p[:, 2] > 0)) & (theta <= self.max_theta_rad)
        if self.model is CameraModel.EQUIDISTANT:
            theta_d = self._theta_d(theta)
            with np.errstate(invalid="ignore", divide="ignore"):
                scale = np.where(rho > 0, theta_d / rho, 0.0)
            xy = p[:, :2] * scale[:, None]
            out[seen] = (xy[seen] * [self.k[0, 0], self.k[1, 1]]) + [self.k[0, 2], self.k[1, 2]]
            return out
        seen &= p[:, 2] > 0
        if np.any(seen):
            uv, _ = cv2.projectPoints(p[seen], np.zeros(3), np.zeros(3), self.k, self.d)
            out[seen] = uv.reshape(-1, 2)
        return out

    def _theta_d(self, theta: FloatArray) -> FloatArray:
        k1, k2, k3, k4 = self.d
        t2 = theta * theta
        result: FloatArray = theta * (1 + t2 * (k1 + t2 * (k2 + t2 * (k3 + t2 * k4))))
        return result

    def _theta_d_slope(self, theta: FloatArray) -> FloatArray:
        k1, k2, k3, k4 = self.d
        t2 = theta * theta
        result: FloatArray = 1 + t2 * (3 * k1 + t2 * (5 * k2 + t2 * (7 * k3 + t2 * 9 * k4)))
        return result

    def undistort_theta(self, theta_d: FloatArray) -> FloatArray:
        """Equidistant: the off-axis angle theta of a distorted radius theta_d (= r / f)."""
        # Newton from theta = theta_d; theta_d(theta) is monotonic (checked by the config).
        theta = np.array(theta_d, dtype=np.float64)
        for _ in range(NEWTON_ITERATIONS):
            step = (self._theta_d(theta) - theta_d) / self._theta_d_slope(theta)
            theta = np.clip(theta - step, 0.0, math.pi)
            if np.all(np.abs(step) < 1e-14):
                break
        return theta

    @cached_property
    def pixel_rays(self) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """Unit ray (h, w, 3) of every pixel centre, and whether the lens sees it (h, w)."""
        u, v = np.meshgrid(np.arange(self.width, dtype=np.float64), np.arange(self.height))
        rays, valid = self.rays(np.stack([u.ravel(), v.ravel()], axis=1))
        return rays.reshape(self.height, self.width, 3), valid.reshape(self.height, self.width)

    def rays(self, uv: FloatArray) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
        """Unit rays (N, 3) through image points (N, 2), and whether the lens sees each (N,)."""
        uv = np.asarray(uv, dtype=np.float64).reshape(-1, 2)
        if self.model is CameraModel.EQUIDISTANT:
            rays, valid = self._fisheye_rays(uv)
        else:
            rays, valid = self._plumb_bob_rays(uv)
        # Every ray must come back to its own point: this catches a model that cannot be
        # inverted there (strong plumb_bob distortion) and any mistake in the inversion.
        back = self.project(rays)
        valid &= np.all(np.abs(back - uv) < ROUNDTRIP_TOLERANCE_PX, axis=1)
        rays[~valid] = 0.0
        return rays, valid

    def _plumb_bob_rays(self, uv: FloatArray) -> tuple[FloatArray, NDArray[np.bool_]]:
        criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 50, 1e-12)
        xy = cv2.undistortPoints(uv.reshape(-1, 1, 2), self.k, self.d, criteria=criteria)
        rays = np.concatenate([xy.reshape(-1, 2), np.ones((len(uv), 1))], axis=1)
        rays /= np.linalg.norm(rays, axis=1, keepdims=True)
        return rays, np.all(np.isfinite(rays), axis=1)

    def _fisheye_rays(self, uv: FloatArray) -> tuple[FloatArray, NDArray[np.bool_]]:
        xd = (uv - [self.k[0, 2], self.k[1, 2]]) / [self.k[0, 0], self.k[1, 1]]
        theta_d = np.hypot(xd[:, 0], xd[:, 1])
        theta = self.undistort_theta(theta_d)
        valid = (np.abs(self._theta_d(theta) - theta_d) < 1e-9) & (theta <= self.max_theta_rad)
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.where(theta_d > 0, np.sin(theta) / theta_d, 1.0)
        rays = np.concatenate([xd * scale[:, None], np.cos(theta)[:, None]], axis=1)
        return rays, valid


def lens_of(config: CameraGeometry) -> Lens:
    """The lens of a configured camera: focal length from hfov_deg, principal point centred."""
    coeffs = DISTORTION_COEFFICIENTS[config.model]
    d = np.array(config.distortion, dtype=np.float64) if config.distortion else np.zeros(coeffs)
    half = math.radians(config.hfov_deg) / 2
    if config.model is CameraModel.EQUIDISTANT:
        k1, k2, k3, k4 = d
        theta_d = half * (1 + k1 * half**2 + k2 * half**4 + k3 * half**6 + k4 * half**8)
        f = 0.5 * config.width / theta_d
        limit = math.pi if config.fov_deg is None else math.radians(config.fov_deg) / 2
    else:
        # The image's outer pixel edges at +-hfov / 2 (before distortion, for plumb_bob).
        f = 0.5 * config.width / math.tan(half)
        limit = math.pi / 2
        if len(d) == 0:
            d = np.zeros(5)
    k = np.array(
        [[f, 0.0, (config.width - 1) / 2], [0.0, f, (config.height - 1) / 2], [0.0, 0.0, 1.0]]
    )
    return Lens(config.model, config.width, config.height, k, d, limit)
