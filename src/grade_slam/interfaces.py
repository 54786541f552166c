"""What backends and trackers exchange: one module both sides import, so the registry
(`grade_slam.backends`) and the implementations it builds (`open3d_odometry`, `orb_slam3`) never
import each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from grade_common.types import FloatArray
from grade_slam.frames import RgbdFrame


@dataclass(frozen=True)
class MotionEstimate:
    """The pose of the current camera in the reference camera's frame (4x4) and how much of the
    current frame found a correspondence (0..1)."""

    transform_reference_current: FloatArray
    fitness: float


class OdometryBackend(Protocol):
    """Frame-to-frame RGB-D motion estimation (chained into poses by `tracker.RgbdTracker`)."""

    def estimate(
        self, reference: RgbdFrame, current: RgbdFrame, initial: FloatArray
    ) -> MotionEstimate | None:
        """The motion from `reference` to `current` starting at `initial`; None if it failed."""
        ...


@dataclass
class TrackingStats:
    """Counts over a run: frames seen, poses given, failures and restarts."""

    frames: int = 0
    tracked: int = 0
    failures: int = 0
    restarts: int = 0
    # inertial backends: the first frame by which the IMU state (gravity, biases) had been
    # initialised; None: never (or not an inertial backend)
    inertial_since_ns: int | None = None
    # a backend in a child process (`tracker_process`): the CPU time that process (all of its
    # threads) spent after the backend had started; the caller's own is not in it
    child_cpu_s: float = 0.0


@dataclass
class Trajectory:
    """Poses of the optical frame in the estimate's origin frame, one per tracked frame."""

    stamps_ns: list[int] = field(default_factory=list)
    poses: list[FloatArray] = field(default_factory=list)
    # what the poses are when not simply the ones given live (ORB-SLAM3's final trajectory, or
    # why it is missing); the TUM file's header carries it
    note: str = ""


class FrameTracker(Protocol):
    """A whole RGB-D tracking pipeline: frames in (increasing stamps), poses out."""

    @property
    def stats(self) -> TrackingStats:
        """The counts so far."""
        ...

    @property
    def trajectory(self) -> Trajectory:
        """The poses given so far."""
        ...

    def process(self, frame: RgbdFrame) -> FloatArray | None:
        """Track one frame; its pose (4x4, optical frame in the estimate's origin), or None."""
        ...

    def close(self) -> None:
        """Stop the backend's threads and release it (idempotent)."""
        ...
