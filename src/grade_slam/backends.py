"""Registry of SLAM / odometry backends: third-party packages imported only when chosen.

Each entry builds a whole tracking pipeline (`interfaces.FrameTracker`) from the imported
package: a frame-to-frame odometry chained by `tracker.RgbdTracker` (Open3D), or a full SLAM
system that keeps its own map (ORB-SLAM3). A name that is not registered, or whose package is
missing, is a `SlamConfigError` naming the parameter, the allowed values and the install command.
Data a backend needs is made before it starts (`prepare`: ORB-SLAM3's vocabulary is built on
first use), and a backend with native threads runs in a child process (`isolated`,
`grade_slam.tracker_process`), so that a crash of its native code cannot end the caller.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType

from grade_common.types import FloatArray
from grade_slam.config import SlamConfig
from grade_slam.errors import SlamConfigError
from grade_slam.frames import RgbdFrame, mask_dynamic
from grade_slam.interfaces import FrameTracker, TrackingStats, Trajectory
from grade_slam.tracker import RgbdTracker


@dataclass(frozen=True)
class BackendSpec:
    """A registered backend: the module it needs, how to install it, how to build it."""

    module: str
    install: str
    build: Callable[[ModuleType, SlamConfig], FrameTracker]
    description: str
    needs_imu: bool = False  # every frame must carry its IMU samples (`RgbdFrame.imu`)
    # native code with threads of its own (ORB-SLAM3): built in a child process
    isolated: bool = False
    # makes what the backend needs before it starts, logging what it does (ORB-SLAM3's
    # vocabulary, built on first use); returns the config naming it
    prepare: Callable[[SlamConfig, Callable[[str], object]], SlamConfig] | None = None


def _build_open3d(module: ModuleType, config: SlamConfig) -> FrameTracker:
    from grade_slam.open3d_odometry import Open3dRgbdOdometry

    return RgbdTracker(Open3dRgbdOdometry(module, config), config)


def _prepare_orb_vocabulary(config: SlamConfig, log: Callable[[str], object]) -> SlamConfig:
    from grade_slam.vocabulary_set import resolve_vocabulary

    path = resolve_vocabulary(config.vocabulary, log=log)
    return dataclasses.replace(config, vocabulary=str(path))


def _build_orb_slam3(module: ModuleType, config: SlamConfig) -> FrameTracker:
    from grade_slam.orb_slam3 import OrbSlam3Tracker
    from grade_slam.vocabulary_set import resolve_vocabulary

    return OrbSlam3Tracker(module, config, resolve_vocabulary(config.vocabulary))


def _build_orb_slam3_inertial(module: ModuleType, config: SlamConfig) -> FrameTracker:
    from grade_slam.orb_slam3 import OrbSlam3Tracker
    from grade_slam.vocabulary_set import resolve_vocabulary

    return OrbSlam3Tracker(module, config, resolve_vocabulary(config.vocabulary), inertial=True)


OPEN3D_INSTALL = "pip install open3d-cpu==0.20.0 (Debian/Ubuntu also: apt-get install libusb-1.0-0)"
ORB_SLAM3_INSTALL = (
    "pip install pyorbslam3==0.1.1 (Debian/Ubuntu also: apt-get install libopengl0 libglx0 "
    "libegl1 libgl1 libsm6 libice6 libx11-6 libxext6)"
)

# What both ORB-SLAM3 modes share: the package, its own process, the vocabulary made beforehand.
_ORB_SLAM3 = BackendSpec(
    module="pyorbslam3",
    install=ORB_SLAM3_INSTALL,
    build=_build_orb_slam3,
    description="ORB-SLAM3 RGB-D: tracking, local mapping, loop closing (pyorbslam3)",
    isolated=True,
    prepare=_prepare_orb_vocabulary,
)

BACKENDS: dict[str, BackendSpec] = {
    "open3d_rgbd": BackendSpec(
        module="open3d",
        install=OPEN3D_INSTALL,
        build=_build_open3d,
        description="Open3D multi-scale RGB-D odometry, frame to frame (open3d / open3d-cpu)",
    ),
    "orb_slam3_rgbd": _ORB_SLAM3,
    "orb_slam3_rgbd_inertial": dataclasses.replace(
        _ORB_SLAM3,
        build=_build_orb_slam3_inertial,
        description="ORB-SLAM3 RGB-D-inertial: RGB-D plus the robot's IMU (pyorbslam3)",
        needs_imu=True,
    ),
}


class MaskedTracker:
    """Any tracker fed frames without their moving objects (`frames.mask_dynamic`)."""

    def __init__(self, inner: FrameTracker, dilate_px: int) -> None:
        self._inner = inner
        self._dilate_px = dilate_px

    @property
    def stats(self) -> TrackingStats:
        return self._inner.stats

    @property
    def trajectory(self) -> Trajectory:
        return self._inner.trajectory

    def process(self, frame: RgbdFrame) -> FloatArray | None:
        return self._inner.process(mask_dynamic(frame, self._dilate_px))

    def close(self) -> None:
        self._inner.close()


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _import_backend(
    config: SlamConfig, registry: Mapping[str, BackendSpec]
) -> tuple[BackendSpec, ModuleType]:
    spec = registry.get(config.backend)
    allowed = f"allowed values {sorted(registry)}"
    if spec is None:
        installs = "; ".join(f"{name}: {spec.install}" for name, spec in sorted(registry.items()))
        raise SlamConfigError(
            f"backend = {config.backend!r} is invalid: {allowed} (install: {installs})"
        )
    try:
        module = importlib.import_module(spec.module)
    except ImportError as err:  # also a missing shared library such as libusb-1.0
        raise SlamConfigError(
            f"backend = {config.backend!r} needs the Python package {spec.module!r}, which "
            f"cannot be imported ({err}); install it with: {spec.install} ({allowed})"
        ) from err
    return spec, module


def build_in_process(config: SlamConfig) -> FrameTracker:
    """The registered backend's tracker in this process, without masking (what
    `grade_slam.tracker_process` runs in the child)."""
    spec, module = _import_backend(config, BACKENDS)
    return spec.build(module, config)


def create_backend(
    config: SlamConfig,
    registry: Mapping[str, BackendSpec] = BACKENDS,
    *,
    log: Callable[[str], object] = _stderr,
) -> FrameTracker:
    """Import the backend's package, make its data (`prepare`, said through `log`) and build its
    tracker: in a child process if `isolated`, masked if `mask_dynamic`.

    Raises:
        SlamConfigError: unknown backend name (lists the allowed ones), its package is not
            installed or fails to load (names the package and the install command), or its
            data (ORB-SLAM3's vocabulary) is named but not usable.
    """
    spec, module = _import_backend(config, registry)
    if spec.prepare is not None:
        config = spec.prepare(config, log)
    if spec.isolated:
        from grade_slam.tracker_process import ChildProcessTracker

        tracker: FrameTracker = ChildProcessTracker(config, f"{__name__}:build_in_process")
    else:
        tracker = spec.build(module, config)
    return MaskedTracker(tracker, config.mask_dilate_px) if config.mask_dynamic else tracker
