"""Texture coordinates of baked boxes: each face of a cube-textured box samples its own image
of the stack, along the axes faces.FACES names; a floor's 2D image spans its top face."""

from __future__ import annotations

import numpy as np

from grade_render.tessellate import box
from grade_sim.engine.bake.faces import FACES
from grade_usd.baked import baked_box_st

HALF = np.array([1.0, 2.0, 3.0])


def test_every_cube_face_samples_its_own_image_along_its_axes() -> None:
    vertices, faces = box(HALF)
    st = baked_box_st(vertices, faces, HALF, cube=True).reshape(-1, 3, 2)
    seen = set()
    for tri, corners in zip(faces, st, strict=True):
        centre = vertices[tri].mean(axis=0) / HALF
        axis = int(np.argmax(np.abs(centre)))
        face = 2 * axis + (0 if centre[axis] > 0 else 1)
        seen.add(face)
        # The face's block of rows: t in [1 - (f + 1) / 6, 1 - f / 6].
        assert np.all(corners[:, 1] >= 1 - (face + 1) / 6 - 1e-12)
        assert np.all(corners[:, 1] <= 1 - face / 6 + 1e-12)
        _, _, c_ax, c_sign, r_ax, r_sign = FACES[face]
        p = vertices[tri]
        np.testing.assert_allclose(corners[:, 0], (c_sign * p[:, c_ax] / HALF[c_ax] + 1) / 2)
        rows_down = (r_sign * p[:, r_ax] / HALF[r_ax] + 1) / 2
        np.testing.assert_allclose(corners[:, 1], 1 - (face + rows_down) / 6)
    assert seen == set(range(6))


def test_a_floor_image_spans_its_top_face_columns_along_x_rows_along_minus_y() -> None:
    vertices, faces = box(HALF)
    st = baked_box_st(vertices, faces, HALF, cube=False).reshape(-1, 3, 2)
    corners = vertices[faces]
    np.testing.assert_allclose(st[..., 0], (corners[..., 0] / HALF[0] + 1) / 2)
    # The image's first row (t = 1 in USD) is at +y.
    np.testing.assert_allclose(st[..., 1], (corners[..., 1] / HALF[1] + 1) / 2)
