"""What a baked face shows (grade_sim.engine.bake.albedo): the albedo's own detail kept."""

from __future__ import annotations

import cv2
import numpy as np

from grade_common.textures import DEFAULT_SIZE_PX, TextureKind
from grade_sim.engine.bake import albedo
from grade_sim.world.model import Material, StaticBox

CONCRETE = Material((0.6, 0.6, 0.58, 1.0), TextureKind.CONCRETE, (0.3, 0.3, 0.3), 1.0, seed=3)


def _fine_detail(image: np.ndarray, px_per_m: float) -> float:
    """Std of the high-pass (what a 2 px Gaussian removes) at `px_per_m`, grey levels."""
    grey = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY).astype(np.float32)
    return float(np.std(grey - cv2.GaussianBlur(grey, (0, 0), 2.0 * px_per_m / 512.0)))


def test_a_baked_floor_keeps_the_fine_detail_of_its_texture_tile() -> None:
    # The lightmap is smooth, so a baked floor under even light must look like the unbaked
    # tile: same speckle. Made at the bake's lightmap density (48 px/m) it lost most of it.
    floor = StaticBox("floor", "floor", 1, (0.0, 0.0, -0.05), (1.0, 1.0, 0.05), 0.0, CONCRETE)
    light = [np.ones((8, 8, 3), np.float32) for _ in range(6)]
    image = albedo.baked_plane(floor, light, 48.0, DEFAULT_SIZE_PX)
    tile_px_per_m = DEFAULT_SIZE_PX / CONCRETE.texrepeat_m
    assert image.shape == (2 * DEFAULT_SIZE_PX, 2 * DEFAULT_SIZE_PX, 3)  # the tile's density
    tile = albedo._tile(CONCRETE)
    assert tile is not None
    at_tile = cv2.resize(image, (2 * DEFAULT_SIZE_PX,) * 2, interpolation=cv2.INTER_LINEAR)
    assert _fine_detail(at_tile, tile_px_per_m) >= 0.9 * _fine_detail(tile, tile_px_per_m)


def test_a_plain_colour_is_baked_at_the_lightmap_density() -> None:
    # No texture: albedo x a smooth lightmap needs no more pixels than the bake's density.
    plain = Material((0.5, 0.5, 0.5, 1.0))
    assert albedo.detail_px_per_m(plain, 48.0, DEFAULT_SIZE_PX) == 48.0
    assert albedo.detail_px_per_m(CONCRETE, 48.0, DEFAULT_SIZE_PX) == DEFAULT_SIZE_PX
