"""Texture coordinates of the simulator's baked boxes (lights.bake on), for UsdPreviewSurface.

The raster renderer shows a baked box with a cube texture, its six face images stacked in
MuJoCo's order (+x, -x, +y, -y, +z, -z; `grade_sim.engine.bake.faces.FACES` says along which box
axes each image's columns and rows run), or, for a floor or ceiling, with one 2D image whose
columns run along the box's +x and rows along its -y. USD has no cube-mapped surfaces, so the
stacked image becomes one texture and every triangle corner gets its (s, t) in it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.engine.bake.faces import FACES


def baked_box_st(
    vertices_xyz: FloatArray, faces: NDArray[np.int32], half_xyz: FloatArray, cube: bool
) -> FloatArray:
    """(F * 3, 2) face-varying st of a box's triangles (in its own frame) into its baked image:
    the (6 n, n) stack of a cube texture (`cube`), else a floor's or ceiling's 2D image."""
    half = np.asarray(half_xyz, dtype=np.float64)
    corners = vertices_xyz[faces]  # (F, 3, 3)
    if not cube:
        s = (corners[..., 0] / half[0] + 1) / 2
        t = (-corners[..., 1] / half[1] + 1) / 2
        out: FloatArray = np.stack([s, 1 - t], axis=-1).reshape(-1, 2)
        return out
    centre = corners.mean(axis=1) / half
    axis = np.argmax(np.abs(centre), axis=1)
    positive = centre[np.arange(len(centre)), axis] > 0
    face = 2 * axis + np.where(positive, 0, 1)
    table = np.asarray(FACES, dtype=np.int64)[face]  # (F, 6)
    c_ax, c_sign, r_ax, r_sign = table[:, 2], table[:, 3], table[:, 4], table[:, 5]

    def along(ax: NDArray[np.int64]) -> FloatArray:
        """(F, 3) corner coordinates along each triangle's own axis, in half sizes."""
        picked = np.take_along_axis(corners, np.broadcast_to(ax[:, None, None], (len(ax), 3, 1)), 2)
        out: FloatArray = picked[..., 0] / half[ax][:, None]
        return out

    s = (c_sign[:, None] * along(c_ax) + 1) / 2
    t = (r_sign[:, None] * along(r_ax) + 1) / 2
    # Image rows go down and face f fills rows f n .. (f + 1) n; USD's t goes up.
    v = 1 - (face[:, None] + t) / len(FACES)
    out = np.stack([s, v], axis=-1).reshape(-1, 2)
    return out
