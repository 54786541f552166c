"""The camera models (lenses) and the camera geometry the optics read.

Below both the scenario (config.scenario's CameraConfig validates its lens by building the rig)
and the optics (optics.lens and optics.rig compute from a camera's geometry), so that neither
has to import the other's module to name these types.
"""

from __future__ import annotations

import enum
from typing import Any, ClassVar, Protocol


class CameraModel(enum.Enum):
    """The lens: how the published image maps rays to pixels (docs/cameras.md)."""

    PINHOLE = "pinhole"  # ideal perspective, rendered directly
    PLUMB_BOB = "plumb_bob"  # OpenCV radial-tangential: k1, k2, p1, p2, k3
    EQUIDISTANT = "equidistant"  # OpenCV fisheye: theta_d = theta (1 + k1 theta^2 + ... k4 theta^8)


DISTORTION_COEFFICIENTS = {
    CameraModel.PINHOLE: 0,
    CameraModel.PLUMB_BOB: 5,
    CameraModel.EQUIDISTANT: 4,
}


class CameraGeometry(Protocol):
    """What the optics read of a camera: a frozen dataclass (config.scenario.CameraConfig).

    A dataclass because a rig's source view is the camera's config with its geometry replaced
    (`dataclasses.replace`); frozen (read-only members) and hashable because rigs are cached.
    """

    __dataclass_fields__: ClassVar[dict[str, Any]]

    def __hash__(self) -> int: ...

    @property
    def name(self) -> str: ...
    @property
    def width(self) -> int: ...
    @property
    def height(self) -> int: ...
    @property
    def hfov_deg(self) -> float: ...
    @property
    def model(self) -> CameraModel: ...
    @property
    def distortion(self) -> tuple[float, ...]: ...
    @property
    def fov_deg(self) -> float | None: ...
    @property
    def supersample(self) -> float: ...
