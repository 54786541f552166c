"""`grade_common.tum.depth_to_png_u16` compiled (numba, `nogil`): one pass, no temporaries.

The numpy formula makes five full-image temporaries (float64 copy, product, three masks) and
took about 1.5 ms a 640x480 frame on the step loop's thread (0.045 CPU s per simulated second
at 30 Hz); this loop takes about 0.15 ms. It computes the same thing: float64(d) * DEPTH_SCALE
rounded half to even, 0 where d <= 0, d > MAX_DEPTH_M (compared in the array's own dtype, as
numpy compares an array with a Python float) or d is not finite
(test/grade_sim/io/test_depth_png.py compares the two).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from grade_common.tum import DEPTH_SCALE, MAX_DEPTH_M


@numba.njit(nogil=True, cache=True)
def _depth_png(depth: Any, max_m: Any, scale: float, out: Any) -> None:  # pragma: no cover
    for i in range(depth.size):
        d = depth[i]
        if d <= 0 or d > max_m or not np.isfinite(d):
            out[i] = 0
        else:
            out[i] = np.uint16(np.rint(np.float64(d) * scale))


def depth_to_png_u16(depth_m: NDArray[Any]) -> NDArray[np.uint16]:
    """What grade_common.tum.depth_to_png_u16 returns, for float32 or float64 depth."""
    flat = np.ascontiguousarray(depth_m).reshape(-1)
    out = np.empty(flat.shape, dtype=np.uint16)
    _depth_png(flat, flat.dtype.type(MAX_DEPTH_M), DEPTH_SCALE, out)
    return out.reshape(depth_m.shape)


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernel for both depth dtypes now."""
    for dtype in (np.float32, np.float64):
        depth_to_png_u16(np.zeros(1, dtype))
