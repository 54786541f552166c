"""Where a person can sit (the world's chairs, `World.seats`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from grade_common.types import FloatArray


@dataclass(frozen=True)
class Seat:
    """Where a person can sit: a chair's seat, the way a sitter faces and its height.

    A sitter's legs reach over the seat's front edge, towards `facing_rad`; the backrest is
    on the other side. Only the pieces of furniture named here may be touched by their sitter.
    """

    name: str  # the chair's instance name; its boxes are `<name>/<part>`
    instance_id: int
    centre_xy: tuple[float, float]  # centre of the seat's top
    facing_rad: float  # world yaw a seated person faces (away from the backrest)
    height_m: float  # top of the seat above the floor
    depth_m: float  # along facing_rad
    width_m: float

    def along(self, distance_m: float) -> FloatArray:
        """The floor point `distance_m` from the seat centre towards the front (negative: back)."""
        out: FloatArray = np.asarray(self.centre_xy) + distance_m * np.array(
            [math.cos(self.facing_rad), math.sin(self.facing_rad)]
        )
        return out
