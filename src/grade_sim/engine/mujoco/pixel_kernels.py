"""The per-pixel work after a render pass, compiled (numba, `nogil`): one pass per image.

MuJoCo's buffers come bottom row first. Decoding the segmentation colours into geom ids,
mapping ids to instances and turning the depth buffer into metres took ~6 ms a 640x480 frame
in numpy (several full-image temporaries each), all of it holding the GIL against the step
loop on the other core (sim.pipeline: parallel). Each kernel here reads its buffer once, flips
it, and computes exactly what the numpy expressions it replaces did (the same float64 operations
in the same order, IEEE division: `error_model="numpy"`), so every output byte is unchanged
(test/grade_sim/engine/test_pixel_kernels.py compares them with the numpy formulas).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray


@numba.njit(nogil=True, cache=True)
def _geom_ids(seg: Any, lut: Any, out: Any) -> None:  # pragma: no cover - compiled
    h, w = out.shape
    top = lut.shape[0] - 1
    for y in range(h):
        row = h - 1 - y
        for x in range(w):
            segid = (
                np.int32(seg[row, x, 0])
                | (np.int32(seg[row, x, 1]) << 8)
                | (np.int32(seg[row, x, 2]) << 16)
            )
            out[y, x] = lut[min(max(segid, 0), top)]


def geom_ids(seg_bottom_up: NDArray[np.uint8], lut: NDArray[np.int32]) -> NDArray[np.int32]:
    """Rows top to bottom of `lut[clip(r | g << 8 | b << 16, 0, len(lut) - 1)]` of the
    segmentation pass's (h, w, 3) colours (bottom row first)."""
    h, w = seg_bottom_up.shape[:2]
    out = np.empty((h, w), dtype=np.int32)
    _geom_ids(seg_bottom_up, lut, out)
    return out


@numba.njit(nogil=True, cache=True)
def _instances(
    geoms: Any, geom_instance: Any, skin_instance: Any, out: Any
) -> None:  # pragma: no cover - compiled
    h, w = geoms.shape
    for y in range(h):
        for x in range(w):
            g = geoms[y, x]
            if g >= 0:
                out[y, x] = geom_instance[g]
            elif g == -1:
                out[y, x] = 0
            else:
                out[y, x] = skin_instance[-2 - g]


def instances(
    geoms: NDArray[np.int32], geom_instance: NDArray[np.uint16], skin_instance: NDArray[np.uint16]
) -> NDArray[np.uint16]:
    """The instance id of every pixel: a geom's (id >= 0), a skin's (id <= -2: skin -2 - id),
    0 on none (-1)."""
    out = np.empty(geoms.shape, dtype=np.uint16)
    # A model without skins still needs a typed array for numba.
    skins = skin_instance if len(skin_instance) else np.zeros(1, dtype=np.uint16)
    _instances(geoms, geom_instance, skins, out)
    return out


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _linear_depth(
    buf: Any,
    c_coef: float,
    d_coef: float,
    cut_far: float,
    far_m: float,
    near_m: float,
    flip: bool,
    out: Any,
) -> None:  # pragma: no cover - compiled
    h, w = out.shape
    for y in range(h):
        row = h - 1 - y if flip else y
        for x in range(w):
            z = d_coef / (np.float64(buf[row, x]) + c_coef)
            if z >= cut_far or z > far_m or z < near_m:
                out[y, x] = 0.0
            else:
                out[y, x] = np.float32(z)


def linear_depth(
    buf: NDArray[np.float32],
    *,
    near: float,
    far: float,
    near_m: float,
    far_m: float,
    flip: bool,
) -> NDArray[np.float32]:
    """Planar depth in metres from MuJoCo's [0, 1] depth buffer (rows flipped with `flip`):
    0 beyond the far plane and outside the camera's [near_m, far_m]."""
    c_coef = -(far + near) / (far - near)
    d_coef = -(2.0 * far * near) / (far - near)
    c_coef = -0.5 * c_coef - 0.5
    d_coef = -0.5 * d_coef
    out = np.empty(buf.shape, dtype=np.float32)
    _linear_depth(buf, c_coef, d_coef, far * 0.999, float(far_m), float(near_m), flip, out)
    return out


def warm_up() -> None:
    """Compile (or load from numba's cache) every kernel now, in the set-up, not at the first
    frame of the step loop (a first compile takes seconds)."""
    geom_ids(np.zeros((1, 1, 3), np.uint8), np.full(2, -1, np.int32))
    instances(np.zeros((1, 1), np.int32), np.zeros(1, np.uint16), np.zeros(1, np.uint16))
    linear_depth(np.zeros((1, 1), np.float32), near=0.1, far=1.0, near_m=0.1, far_m=1.0, flip=True)
