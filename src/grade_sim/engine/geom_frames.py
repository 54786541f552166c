"""Per-pixel rigid transforms chosen by each pixel's geom, without per-pixel matrix products.

Both the normals and the flow apply one affine map per geom (a few hundred) to every pixel of
that geom (hundreds of thousands). Gathering each pixel's 3x4 map in one `take` and applying it
component by component is an order of magnitude faster than per-pixel einsum or matmul.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray


def apply_per_geom(
    rot: FloatArray, shift: FloatArray, geom_ids: NDArray[np.integer[Any]], points: FloatArray
) -> FloatArray:
    """rot[g] @ p + shift[g] for every pixel, g = its geom id (negative ids use geom 0).

    Args:
        rot: (ngeom, 3, 3); shift: (ngeom, 3); geom_ids: (...); points: (..., 3).
    """
    maps = np.concatenate([rot, shift[:, :, None]], axis=2).reshape(len(rot), 12).T.copy()
    # (12, ...): each map entry of every pixel as one contiguous array.
    m = np.take(maps, np.maximum(geom_ids, 0), axis=1)
    x = np.ascontiguousarray(points[..., 0])
    y = np.ascontiguousarray(points[..., 1])
    z = np.ascontiguousarray(points[..., 2])
    out = np.empty(points.shape, dtype=np.float64)
    for i in range(3):
        row = m[4 * i] * x
        row += m[4 * i + 1] * y
        row += m[4 * i + 2] * z
        row += m[4 * i + 3]
        out[..., i] = row
    return out
