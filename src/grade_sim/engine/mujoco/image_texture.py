"""An RGB image as a MuJoCo texture: the one way the model builders hand images to MuJoCo."""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
from numpy.typing import NDArray

from grade_sim.errors import BackendError


def add_image_texture(
    spec: Any,
    name: str,
    image: NDArray[np.uint8],
    kind: Any = mujoco.mjtTexture.mjTEXTURE_2D,
) -> str:
    """Add the texture `name` holding `image` to the MjSpec `spec`; returns the name.

    Args:
        image: (H, W, 3) uint8 RGB, rows in MuJoCo's order (row 0 is v = 0); a cube or skybox
            texture stacks its six square faces, (6 W, W, 3).
        kind: the `mujoco.mjtTexture` type (2D, cube, skybox).

    Raises:
        BackendError: the image is not (H, W, 3) uint8.
    """
    if image.dtype != np.uint8 or image.ndim != 3 or image.shape[2] != 3:
        raise BackendError(
            f"texture {name}: expected an (H, W, 3) uint8 RGB image, got shape "
            f"{image.shape} of {image.dtype}"
        )
    tex = spec.add_texture(
        name=name, type=kind, width=int(image.shape[1]), height=int(image.shape[0]), nchannel=3
    )
    tex.data = np.ascontiguousarray(image).tobytes()
    return name
