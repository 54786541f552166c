"""One RGB-D frame as every backend receives it (arrays, not messages)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_slam.errors import SlamInputError


@dataclass(frozen=True)
class RgbdFrame:
    """A registered colour + depth pair: same size, same optical frame, same stamp.

    rgb: (H, W, 3) uint8; depth_m: (H, W) float32 metres to the image plane, 0 = no return;
    camera_matrix: 3x3 intrinsics K.
    """

    stamp_ns: int
    rgb: NDArray[np.uint8]
    depth_m: NDArray[np.float32]
    camera_matrix: FloatArray

    def __post_init__(self) -> None:
        if self.rgb.ndim != 3 or self.rgb.shape[2] != 3 or self.rgb.dtype != np.uint8:
            raise SlamInputError(
                f"frame {self.stamp_ns}: rgb must be (H, W, 3) uint8, got "
                f"{self.rgb.shape} {self.rgb.dtype}"
            )
        if self.depth_m.shape != self.rgb.shape[:2]:
            raise SlamInputError(
                f"frame {self.stamp_ns}: depth {self.depth_m.shape} and rgb "
                f"{self.rgb.shape[:2]} differ in size; the backend needs registered images"
            )
        k = np.asarray(self.camera_matrix)
        if k.shape != (3, 3) or not np.all(np.isfinite(k)) or k[0, 0] <= 0 or k[1, 1] <= 0:
            raise SlamInputError(
                f"frame {self.stamp_ns}: camera matrix must be 3x3 with positive focal lengths, "
                f"got {k.tolist()}"
            )
