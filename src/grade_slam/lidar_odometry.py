"""LiDAR odometry backends: KISS-ICP and GenZ-ICP on our scans, deskewed with per-point times.

Both packages share KISS-ICP's Python API (a config from `<pkg>.config.load_config`, a pipeline
class with `register_frame(points, timestamps)` and `last_pose`), so one adapter serves both.
With `deskew` the per-point firing times (the PointCloud2 `t` field, ns after the scan stamp)
are passed as the timestamps the packages' motion compensation uses (they normalise them over
the scan themselves). The pose is the sensor (`<robot>/<lidar>_link`) in the first scan's sensor
frame, stamped with the scan stamp (the first ray), the time our ground truth gives the sensor
pose at (gt/<robot>/<lidar>/groundtruth.txt).
"""

from __future__ import annotations

import enum
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np
from numpy.typing import NDArray

from grade_common.schema import Checked, Wording, bounds
from grade_common.types import FloatArray
from grade_slam.config import PARAMETER_WORDING
from grade_slam.errors import SlamConfigError, SlamInputError
from grade_slam.interfaces import TrackingStats, Trajectory


class LidarBackend(enum.StrEnum):
    """The LiDAR odometry packages (module names in LIDAR_BACKENDS)."""

    KISS_ICP = "kiss_icp"
    GENZ_ICP = "genz_icp"


@dataclass(frozen=True)
class LidarBackendSpec:
    """Where a package's config loader and pipeline class are, and how to install it."""

    config_module: str
    pipeline: str  # "module:Class"
    install: str
    description: str


LIDAR_BACKENDS: dict[LidarBackend, LidarBackendSpec] = {
    LidarBackend.KISS_ICP: LidarBackendSpec(
        "kiss_icp.config",
        "kiss_icp.kiss_icp:KissICP",
        "pip install kiss-icp==1.3.0",
        "KISS-ICP: point-to-point ICP against a voxel map, adaptive threshold",
    ),
    LidarBackend.GENZ_ICP: LidarBackendSpec(
        "genz_icp.config",
        "genz_icp.genz_icp:GenZICP",
        "pip install genz-icp==0.3.2",
        "GenZ-ICP: point-to-plane and point-to-point ICP weighted by planarity",
    ),
}


@dataclass(frozen=True)
class LidarOdometryConfig(Checked):
    """One LiDAR odometry run (field names = the node's ROS 2 parameters)."""

    WORDING: ClassVar[Wording] = PARAMETER_WORDING

    backend: LidarBackend = LidarBackend.KISS_ICP
    deskew: bool = True
    min_range_m: float = field(default=0.3, metadata=bounds(0.0))
    max_range_m: float = field(default=100.0, metadata=bounds(0.0, exclusive_min=True))
    # Indoors the packages' outdoor default (KISS-ICP: max_range / 100 = 1 m) is too coarse:
    # measured on a 12 s flight through the benchmark rooms (vlp16), 1 m gave 0.64 m ATE, 0.3 m
    # 0.07 m.
    voxel_size_m: float = field(default=0.3, metadata=bounds(0.0, exclusive_min=True))

    def validate(self, path: str) -> None:
        if self.max_range_m <= self.min_range_m:
            raise SlamConfigError(
                f"max_range_m = {self.max_range_m} is invalid: must exceed min_range_m "
                f"({self.min_range_m})"
            )


@dataclass(frozen=True)
class LidarScan:
    """One sweep: points in the sensor frame and each point's firing time after the stamp."""

    stamp_ns: int
    points_xyz: NDArray[np.float64]
    point_times_ns: NDArray[np.uint32]

    def __post_init__(self) -> None:
        if self.points_xyz.ndim != 2 or self.points_xyz.shape[1] != 3:
            raise SlamInputError(
                f"scan {self.stamp_ns}: points must be (N, 3), got {self.points_xyz.shape}"
            )
        if self.point_times_ns.shape != (len(self.points_xyz),):
            raise SlamInputError(
                f"scan {self.stamp_ns}: {len(self.point_times_ns)} point times for "
                f"{len(self.points_xyz)} points"
            )


class LidarTracker(Protocol):
    """Scans in (increasing stamps), sensor poses out."""

    @property
    def stats(self) -> TrackingStats: ...

    @property
    def trajectory(self) -> Trajectory: ...

    def process(self, scan: LidarScan) -> FloatArray | None: ...


class IcpOdometry:
    """A KISS-ICP-style pipeline over one stream of scans."""

    def __init__(self, pipeline: Any, config: LidarOdometryConfig) -> None:
        self._pipeline = pipeline
        self._config = config
        self._last_stamp_ns = -1
        self.stats = TrackingStats()
        self.trajectory = Trajectory()

    def process(self, scan: LidarScan) -> FloatArray | None:
        """Register one scan; the sensor pose (4x4), or None for an empty or late scan."""
        self.stats.frames += 1
        if scan.stamp_ns <= self._last_stamp_ns or len(scan.points_xyz) == 0:
            self.stats.failures += 1
            return None
        self._last_stamp_ns = scan.stamp_ns
        times = (
            scan.point_times_ns.astype(np.float64) * 1e-9
            if self._config.deskew
            else np.zeros(0, dtype=np.float64)
        )
        self._pipeline.register_frame(np.ascontiguousarray(scan.points_xyz, np.float64), times)
        pose = np.array(self._pipeline.last_pose, dtype=np.float64)
        if not np.all(np.isfinite(pose)):
            self.stats.failures += 1
            return None
        self.stats.tracked += 1
        self.trajectory.stamps_ns.append(scan.stamp_ns)
        self.trajectory.poses.append(pose)
        return pose


def create_lidar_backend(
    config: LidarOdometryConfig,
    registry: Mapping[LidarBackend, LidarBackendSpec] = LIDAR_BACKENDS,
) -> IcpOdometry:
    """Import the package and build its pipeline with our settings.

    Raises:
        SlamConfigError: the package cannot be imported (names the install command).
    """
    spec = registry[config.backend]
    module_name, class_name = spec.pipeline.split(":")
    try:
        loader = importlib.import_module(spec.config_module)
        pipeline_cls = getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as err:
        raise SlamConfigError(
            f"backend = {config.backend.value!r} needs the Python package "
            f"{module_name.split('.')[0]!r}, which cannot be imported ({err}); install it with: "
            f"{spec.install}"
        ) from err
    settings = loader.load_config(None)
    settings.data.deskew = config.deskew
    settings.data.min_range = config.min_range_m
    settings.data.max_range = config.max_range_m
    settings.mapping.voxel_size = config.voxel_size_m
    return IcpOdometry(pipeline_cls(settings), config)
