"""add_image_texture: the compiled model holds the image's bytes at its size; bad images fail."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from grade_sim.engine.mujoco.image_texture import add_image_texture
from grade_sim.errors import BackendError


def _compiled(image: np.ndarray, kind: mujoco.mjtTexture) -> mujoco.MjModel:
    spec = mujoco.MjSpec()
    assert add_image_texture(spec, "tex_probe", image, kind) == "tex_probe"
    return spec.compile()


def test_2d_texture_holds_the_image_rows_in_order() -> None:
    rng = np.random.default_rng(3)
    image = rng.integers(0, 256, (4, 6, 3), dtype=np.uint8)
    model = _compiled(image[::-1], mujoco.mjtTexture.mjTEXTURE_2D)  # a view, not contiguous
    t = model.texture("tex_probe").id
    assert (int(model.tex_width[t]), int(model.tex_height[t])) == (6, 4)
    assert int(model.tex_nchannel[t]) == 3
    adr = int(model.tex_adr[t])
    np.testing.assert_array_equal(
        model.tex_data[adr : adr + image.size].reshape(image.shape), image[::-1]
    )


def test_cube_texture_takes_six_stacked_faces() -> None:
    faces = np.repeat(np.arange(6, dtype=np.uint8) * 40, 2 * 2 * 3).reshape(12, 2, 3)
    model = _compiled(faces, mujoco.mjtTexture.mjTEXTURE_CUBE)
    t = model.texture("tex_probe").id
    assert (int(model.tex_width[t]), int(model.tex_height[t])) == (2, 12)
    adr = int(model.tex_adr[t])
    np.testing.assert_array_equal(model.tex_data[adr : adr + faces.size], faces.ravel())


@pytest.mark.parametrize(
    ("image", "what"),
    [
        (np.zeros((4, 4, 3), dtype=np.float32), "float32"),
        (np.zeros((4, 4, 4), dtype=np.uint8), r"\(4, 4, 4\)"),
        (np.zeros((4, 4), dtype=np.uint8), r"\(4, 4\)"),
    ],
)
def test_image_that_is_not_rgb_uint8_is_refused(image: np.ndarray, what: str) -> None:
    with pytest.raises(BackendError, match=f"texture tex_bad: expected .*{what}"):
        add_image_texture(mujoco.MjSpec(), "tex_bad", image)
