"""Registry of SLAM / odometry backends: third-party packages imported only when chosen.

A backend estimates the motion between two RGB-D frames; `grade_slam.tracker` chains the
motions into a trajectory. A name that is not registered, or whose package is missing, is a
`SlamConfigError` naming the parameter, the allowed values and the install command.
KISS-ICP (LiDAR odometry) is not registered: it needs LiDAR scans, which the simulator does not
publish yet.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Protocol

from grade_common.types import FloatArray
from grade_slam.config import SlamConfig
from grade_slam.errors import SlamConfigError
from grade_slam.frames import RgbdFrame


@dataclass(frozen=True)
class MotionEstimate:
    """The pose of the current camera in the reference camera's frame (4x4) and how much of the
    current frame found a correspondence (0..1)."""

    transform_reference_current: FloatArray
    fitness: float


class OdometryBackend(Protocol):
    """Frame-to-frame RGB-D motion estimation."""

    def estimate(
        self, reference: RgbdFrame, current: RgbdFrame, initial: FloatArray
    ) -> MotionEstimate | None:
        """The motion from `reference` to `current` starting at `initial`; None if it failed."""
        ...


@dataclass(frozen=True)
class BackendSpec:
    """A registered backend: the module it needs, how to install it, how to build it."""

    module: str
    install: str
    build: Callable[[ModuleType, SlamConfig], OdometryBackend]
    description: str


def _build_open3d(module: ModuleType, config: SlamConfig) -> OdometryBackend:
    from grade_slam.open3d_odometry import Open3dRgbdOdometry

    return Open3dRgbdOdometry(module, config)


OPEN3D_INSTALL = "pip install open3d-cpu==0.20.0 (Debian/Ubuntu also: apt-get install libusb-1.0-0)"

BACKENDS: dict[str, BackendSpec] = {
    "open3d_rgbd": BackendSpec(
        module="open3d",
        install=OPEN3D_INSTALL,
        build=_build_open3d,
        description="Open3D multi-scale RGB-D odometry, frame to frame (open3d / open3d-cpu)",
    ),
}


def create_backend(
    config: SlamConfig, registry: Mapping[str, BackendSpec] = BACKENDS
) -> OdometryBackend:
    """Import the backend's package and build it.

    Raises:
        SlamConfigError: unknown backend name (lists the allowed ones), or its package is not
            installed or fails to load (names the package and the install command).
    """
    spec = registry.get(config.backend)
    allowed = f"allowed values {sorted(registry)}"
    if spec is None:
        installs = "; ".join(f"{name}: {spec.install}" for name, spec in sorted(registry.items()))
        raise SlamConfigError(
            f"backend = {config.backend!r} is invalid: {allowed} (install: {installs}); "
            "KISS-ICP needs LiDAR scans and is not available yet"
        )
    try:
        module = importlib.import_module(spec.module)
    except ImportError as err:  # also a missing shared library such as libusb-1.0
        raise SlamConfigError(
            f"backend = {config.backend!r} needs the Python package {spec.module!r}, which "
            f"cannot be imported ({err}); install it with: {spec.install} ({allowed})"
        ) from err
    return spec.build(module, config)
