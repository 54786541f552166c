"""Chains a backend's frame-to-frame motions into camera poses, with tracking loss.

The first frame defines the estimate's origin (identity); evaluation aligns the estimate to the
ground truth (`grade eval traj`, SE(3) by default). A pair whose motion is larger than
`max_step_m` or whose fitness is below `min_fitness` is a failure: that frame gets no pose and
the next frame is matched against the same reference. After `max_lost_frames` failures in a
row the tracker restarts from the current frame at the last pose.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation

from grade_common.types import FloatArray
from grade_slam.config import SlamConfig
from grade_slam.frames import RgbdFrame
from grade_slam.interfaces import OdometryBackend, TrackingStats, Trajectory


class RgbdTracker:
    """Frame-to-frame tracking over one stream of RGB-D frames (stamps must increase)."""

    def __init__(self, backend: OdometryBackend, config: SlamConfig) -> None:
        self._backend = backend
        self._config = config
        self._reference: RgbdFrame | None = None
        self._reference_pose = np.eye(4)
        self._velocity = np.eye(4)  # last frame-to-frame motion ...
        self._velocity_dt_ns = 0  # ... and the time it took: the next guess is scaled by the gap
        self._lost_in_row = 0
        self.stats = TrackingStats()
        self.trajectory = Trajectory()

    def process(self, frame: RgbdFrame) -> FloatArray | None:
        """Track one frame; its pose (4x4), or None when tracking failed for it."""
        self.stats.frames += 1
        if self._reference is not None and frame.stamp_ns <= self._reference.stamp_ns:
            return None  # a repeated or late frame: nothing new to track
        if self._reference is None:
            return self._accept(frame, np.eye(4), np.eye(4))
        guess = self._guess(frame.stamp_ns - self._reference.stamp_ns)
        estimate = self._backend.estimate(self._reference, frame, guess)
        ok = (
            estimate is not None
            and float(np.linalg.norm(estimate.transform_reference_current[:3, 3]))
            <= self._config.max_step_m
            and estimate.fitness >= self._config.min_fitness
        )
        if estimate is not None and ok:
            motion = estimate.transform_reference_current
            self._velocity_dt_ns = frame.stamp_ns - self._reference.stamp_ns
            return self._accept(frame, self._reference_pose @ motion, motion)
        self.stats.failures += 1
        self._lost_in_row += 1
        if self._lost_in_row >= self._config.max_lost_frames:
            self.stats.restarts += 1
            self._reference = frame  # start over here, at the last known pose, without a pose
            self._velocity, self._velocity_dt_ns = np.eye(4), 0
            self._lost_in_row = 0
        return None

    def _guess(self, gap_ns: int) -> FloatArray:
        """The last motion at constant velocity over `gap_ns` (frames the live transport dropped
        make gaps of several frame periods; the unscaled motion would start far too short)."""
        if self._velocity_dt_ns <= 0:
            return np.eye(4)
        ratio = gap_ns / self._velocity_dt_ns
        guess = np.eye(4)
        rotvec = Rotation.from_matrix(self._velocity[:3, :3]).as_rotvec()
        guess[:3, :3] = Rotation.from_rotvec(ratio * rotvec).as_matrix()
        guess[:3, 3] = ratio * self._velocity[:3, 3]
        return guess

    def _accept(self, frame: RgbdFrame, pose: FloatArray, motion: FloatArray) -> FloatArray:
        self._reference, self._reference_pose, self._velocity = frame, pose, motion
        self._lost_in_row = 0
        self.stats.tracked += 1
        self.trajectory.stamps_ns.append(frame.stamp_ns)
        self.trajectory.poses.append(pose)
        return pose

    def close(self) -> None:
        """Nothing to release: the backend runs in the caller's thread."""
