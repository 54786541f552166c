"""Validated, frozen settings of a SLAM run (node parameters and CLI options share them).

Every field name equals its ROS 2 parameter name, so an error names the parameter to fix.
Which backends exist, and whether their packages are installed, is `grade_slam.backends`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import ClassVar

from grade_common.schema import PARAMETER, Checked, Wording, bounds, text
from grade_slam.errors import SlamConfigError

PARAMETER_WORDING = replace(PARAMETER, error=SlamConfigError)


class OdometryMethod(enum.StrEnum):
    """The residual Open3D's RGB-D odometry minimises (its `t.pipelines.odometry.Method`)."""

    HYBRID = "hybrid"  # photometric + geometric (Open3D's default for RGB-D)
    POINT_TO_PLANE = "point_to_plane"  # geometric only (depth)
    INTENSITY = "intensity"  # photometric only


@dataclass(frozen=True)
class SlamConfig(Checked):
    """One SLAM run: the backend, its odometry settings and when tracking counts as lost."""

    WORDING: ClassVar[Wording] = PARAMETER_WORDING

    backend: str = field(default="open3d_rgbd", metadata=text(r"[a-z0-9_]+"))
    # Geometric by default: simulated depth is exact, and on our low-texture, lit-and-shadowed
    # rooms the photometric term made the estimate worse (measured: 0.32 m against 0.012 m ATE
    # over the same 4 s at 160 x 120).
    method: OdometryMethod = OdometryMethod.POINT_TO_PLANE
    depth_max_m: float = field(default=6.0, metadata=bounds(0.0, exclusive_min=True))
    # Open3D's criteria per pyramid level, coarse to fine: iterations at each level.
    iterations: tuple[int, ...] = field(default=(6, 4, 2), metadata=bounds(1, 100))
    # A frame pair whose estimate moves further than this, or whose inlier fraction is below
    # min_fitness, is a tracking failure: no pose for that frame, the reference frame is kept.
    max_step_m: float = field(default=0.3, metadata=bounds(0.0, exclusive_min=True))
    min_fitness: float = field(default=0.2, metadata=bounds(0.0, 1.0))
    # After this many failures in a row, restart from the current frame at the last pose
    # (the estimate then has a gap and whatever drift the restart adds).
    max_lost_frames: int = field(default=15, metadata=bounds(1))
    # ORB-SLAM3 (orb_slam3_rgbd): the ORB vocabulary file; empty: $PYORBSLAM3_VOCAB, else the
    # one `grade slam vocab` built (grade_slam.vocabulary_set).
    vocabulary: str = field(default="", metadata=text(allow_empty=True))
    # ORB-SLAM3's extractor: features per frame, and the FAST thresholds (first try per cell, the
    # fallback where it finds nothing). ORB-SLAM3's TUM defaults (1000, 20, 7) find ~140
    # features in our plain rendered rooms, even at 640 x 480, and RGB-D initialisation needs
    # more than 500: 2000 / 7 / 3 find 500-950 at 640 x 480 (still too few at 320 x 240).
    orb_features: int = field(default=2000, metadata=bounds(100, 20000))
    orb_fast_threshold: int = field(default=7, metadata=bounds(1, 100))
    orb_min_fast_threshold: int = field(default=3, metadata=bounds(1, 100))
    # Points nearer than this are "close" (ORB-SLAM3's ThDepth, here in metres, not baselines).
    close_depth_m: float = field(default=3.2, metadata=bounds(0.0, exclusive_min=True))
    # The camera's frame rate: ORB-SLAM3 spaces its keyframes by it (Camera.fps).
    camera_rate_hz: float = field(default=30.0, metadata=bounds(0.0, exclusive_min=True))
    # ORB-SLAM3 RGB-D-inertial (orb_slam3_rgbd_inertial): the IMU noise its preintegration
    # weights residuals with, a grade_noise IMU preset (`drone`, `consumer`; `none` has zero
    # noise, which ORB-SLAM3 cannot weight), and the IMU's sample rate (IMU.Frequency).
    imu_noise_preset: str = field(default="drone", metadata=text(r"[a-z0-9_]+"))
    imu_rate_hz: float = field(default=240.0, metadata=bounds(1.0, 10000.0))
    # ORB-SLAM3 starts an inertial map only after the mean acceleration changed by 0.5 m/s^2
    # between two frames, which a smooth flight may never do; fast init skips that wait
    # (IMU.fastInit).
    imu_fast_init: bool = True
    # Oracle dynamic masking (any backend): pixels of people and flying objects, from the
    # simulator's semantic class image, lose their depth and their texture before tracking.
    mask_dynamic: bool = False
    mask_dilate_px: int = field(default=3, metadata=bounds(0, 50))

    def validate(self, path: str) -> None:
        if not self.iterations:
            raise SlamConfigError("iterations = [] is invalid: at least one pyramid level")
        if self.orb_min_fast_threshold > self.orb_fast_threshold:
            raise SlamConfigError(
                f"orb_min_fast_threshold = {self.orb_min_fast_threshold} is invalid: at most "
                f"orb_fast_threshold ({self.orb_fast_threshold})"
            )
