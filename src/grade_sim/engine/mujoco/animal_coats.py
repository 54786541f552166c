"""Materials of the animals' parts: plain coat and points colours, zebra stripes as textures.

Stripes are cube textures (MuJoCo looks a cube texture up by the direction from the geom's
centre): faces striped by columns give the barrel (x forward) upright bands on its flanks;
faces striped by rows ring the neck, head and legs (capsules along their local z), as a zebra's
are.
Stripe widths are drawn from the generator of the animal's stripe pattern, so every zebra
differs and the same seed gives the same coat.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np
from numpy.typing import NDArray

from grade_sim.actors.animals import PART_NAMES, AnimalSpec
from grade_sim.engine.mujoco.image_texture import add_image_texture

TEXTURE_PX = 128
BARREL_STRIPES = 7  # dark bands across a cube face
LIMB_STRIPES = 4  # dark rings across a cube face


def _stripe_rows(n_px: int, n_stripes: int, seed: int) -> NDArray[np.bool_]:
    """(n_px,) booleans: True on the dark stripes, widths varying a little band to band."""
    rng = np.random.default_rng(seed)
    edges = np.cumsum(rng.uniform(0.7, 1.3, 2 * n_stripes))
    edges = edges / edges[-1] * n_px
    band = np.searchsorted(edges, np.arange(n_px) + 0.5)
    dark: NDArray[np.bool_] = (band % 2) == 1
    return dark


def _texture(
    spec: Any, name: str, kind: Any, dark: np.ndarray, coat: np.ndarray, points: np.ndarray
) -> str:
    rgb = np.where(dark[..., None], points, coat)
    return add_image_texture(spec, name, np.round(rgb * 255).astype(np.uint8), kind)


def animal_materials(spec: Any, animal: AnimalSpec) -> tuple[str, ...]:
    """Add the materials of `animal` to `spec`; returns one material name per part
    (PART_NAMES order)."""
    base = f"animal_{animal.instance_id}"
    coat = np.asarray(animal.coat_rgb)
    points = np.asarray(animal.points_rgb)
    plain = f"{base}_coat"
    spec.add_material(name=plain, rgba=[*animal.coat_rgb, 1.0], specular=0.05)
    dark = f"{base}_points"
    spec.add_material(name=dark, rgba=[*animal.points_rgb, 1.0], specular=0.05)
    if not animal.anatomy.striped:
        return tuple(
            dark if use_points else plain for use_points in animal.part_uses_points_color()
        )
    # A cube texture is six square faces stacked vertically: the barrel's faces are striped
    # by columns (upright bands on the flanks), the limbs' by rows (rings).
    stripes = {}
    for part_kind, count, by_rows in (
        ("barrel", BARREL_STRIPES, False),
        ("limb", LIMB_STRIPES, True),
    ):
        rows = _stripe_rows(TEXTURE_PX, count, animal.instance_id * 2 + int(by_rows))
        face = np.broadcast_to(
            rows[:, None] if by_rows else rows[None, :], (TEXTURE_PX, TEXTURE_PX)
        )
        tex = _texture(
            spec,
            f"{base}_{part_kind}_tex",
            mujoco.mjtTexture.mjTEXTURE_CUBE,
            np.concatenate([face] * 6, axis=0),
            coat,
            points,
        )
        material = spec.add_material(name=f"{base}_{part_kind}", specular=0.05)
        material.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = tex
        stripes[part_kind] = f"{base}_{part_kind}"
    names = []
    for part, use_points in zip(PART_NAMES, animal.part_uses_points_color(), strict=True):
        if part == "body":
            names.append(stripes["barrel"])
        elif use_points:
            names.append(dark)
        else:
            names.append(stripes["limb"])
    return tuple(names)
