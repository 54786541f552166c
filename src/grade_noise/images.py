"""The image encodings the noise models accept and depth <-> metres in those encodings
(buffer <-> array conversion: grade_common.images)."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

RGB_ENCODINGS = ("rgb8", "bgr8")
DEPTH_ENCODINGS = ("32FC1", "16UC1")


def depth_to_metres(
    array: NDArray[np.generic], encoding: str, uint16_scale_m: float
) -> NDArray[np.float32]:
    """Float metres with NaN for "no return" (0 in either encoding, NaN/inf in 32FC1)."""
    z = array.astype(np.float32) * np.float32(uint16_scale_m if encoding == "16UC1" else 1.0)
    return np.where(np.isfinite(z) & (z > 0.0), z, np.float32(np.nan)).astype(np.float32)


def metres_to_depth(
    depth_m: NDArray[np.float32], encoding: str, uint16_scale_m: float
) -> NDArray[np.generic]:
    """Back to the message encoding: invalid -> NaN in 32FC1, 0 in 16UC1 (clipped to 65535)."""
    if encoding == "32FC1":
        return depth_m.astype(np.float32)
    units = np.where(np.isfinite(depth_m), np.rint(depth_m / uint16_scale_m), 0.0)
    return np.clip(units, 0, 65535).astype(np.uint16)
