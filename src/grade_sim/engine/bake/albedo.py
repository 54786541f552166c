"""What a baked face shows: the material's albedo, sampled in metres, times its lightmap.

The raster renderer draws a baked box with a cube texture (each face of the box spans one face
image, `lightmap.FACES` gives the axes) and a fully emissive material, so the image is the final
colour and the live lights no longer add to it. Procedural textures are sampled spatially (one
tile every `texrepeat_m` metres along the face, as MuJoCo's texuniform maps them). The lightmap
is smooth, so a textured floor, ceiling or terrain image is made at the tile's own density
(`detail_px_per_m`, as dense as the unbaked tile draws it) within TERRAIN_MAX_PX, the lightmap
upsampled bilinearly; cube faces (walls, furniture) stay at the bake's `texture_px_per_m` for
memory. An image below the tile's density takes the tile reduced to it (area filter) so it does
not alias. MuJoCo
mipmaps 2D and cube textures alike (glGenerateMipmap in mjr_uploadTexture), so a denser image
costs memory and upload time, not per-fragment work.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from grade_common.textures import DEFAULT_SIZE_PX, TextureSpec, is_procedural, shared_cache
from grade_common.types import FloatArray
from grade_sim.engine.bake.faces import FACES
from grade_sim.world.model import Material, StaticBox

TERRAIN_MAX_PX = 2048  # the largest 2D texture side (terrain, floors, ceilings)
TOP_FACE, BOTTOM_FACE = 4, 5  # +z, -z in faces.FACES
SINGLE_FACE_LABELS = {"floor": TOP_FACE, "ground": TOP_FACE, "ceiling": BOTTOM_FACE}
Image = NDArray[np.float32]
# Per face: the box axes MuJoCo's 2D mapping uses for (u, v) (x, y on top and bottom; x, z on
# the faces along y; y, z on the faces along x).
_UV_AXES = {0: (1, 2), 1: (0, 2), 2: (0, 1)}


def _tile(material: Material, size_px: int = DEFAULT_SIZE_PX) -> NDArray[np.uint8] | None:
    if not is_procedural(material.texture):
        return None
    spec = TextureSpec(
        material.texture,
        (material.rgba[0], material.rgba[1], material.rgba[2]),
        material.rgb2,
        seed=material.seed,
        size_px=size_px,
    )
    return shared_cache().image(spec)


@functools.lru_cache(maxsize=256)
def material_mean_rgb(material: Material) -> FloatArray:
    """The mean reflected colour (0..1): the texture's mean, else the material colour."""
    tile = _tile(material)
    if tile is None:
        out: FloatArray = np.asarray(material.rgba[:3], dtype=np.float64)
        return out
    mean: FloatArray = tile.reshape(-1, 3).mean(axis=0) / 255.0
    return mean


def detail_px_per_m(material: Material, px_per_m: float, texture_size_px: int) -> float:
    """The density a baked face of `material` is made at before the size caps: the unbaked
    tile's own (`texture_size_px` per `texrepeat_m`) for a procedural texture, so the bake keeps
    its detail, else `px_per_m` (a plain colour times a smooth lightmap needs no more)."""
    if not is_procedural(material.texture):
        return px_per_m
    return max(px_per_m, texture_size_px / material.texrepeat_m)


def face_px(box: StaticBox, px_per_m: float, max_px: int) -> int:
    """Side of each (square) cube face image of a baked box."""
    longest = 2.0 * max(box.half_size_xyz)
    return int(np.clip(math.ceil(longest * px_per_m), 8, max_px))


def _tile_at_density(material: Material, px_per_m: float, texture_size_px: int) -> Image | None:
    """The material's tile reduced to about `px_per_m` (area filter: no aliasing), float RGB;
    at the tile's own density or above, the tile itself."""
    tile = _tile(material, texture_size_px)
    if tile is None:
        return None
    side = min(tile.shape[0], max(4, round(px_per_m * material.texrepeat_m)))
    if side == tile.shape[0]:
        return tile.astype(np.float32) / 255.0
    small = cv2.resize(tile, (side, side), interpolation=cv2.INTER_AREA)
    out: Image = small.astype(np.float32) / 255.0
    return out


def _face_image(
    box: StaticBox,
    face: tuple[int, int, int, int, int, int],
    irradiance: NDArray[np.floating[Any]],
    rows: int,
    cols: int,
    tile: Image | None,
) -> NDArray[np.uint8]:
    """One face's (rows, cols, 3) image: albedo (sampled in metres) x irradiance, laid out
    along `face`'s axes (`faces.FACES` convention)."""
    n_ax, _n_sign, c_ax, c_sign, r_ax, r_sign = face
    light = cv2.resize(
        np.asarray(irradiance, np.float32), (cols, rows), interpolation=cv2.INTER_LINEAR
    )
    if tile is None:
        albedo: Image = np.broadcast_to(
            np.asarray(box.material.rgba[:3], dtype=np.float32), (rows, cols, 3)
        )
    else:
        half = np.asarray(box.half_size_xyz, dtype=np.float64)
        coord = np.zeros((rows, cols, 3))
        s = (np.arange(cols) + 0.5) / cols
        t = (np.arange(rows) + 0.5) / rows
        coord[:, :, c_ax] = (c_sign * (2 * s - 1) * half[c_ax])[None, :]
        coord[:, :, r_ax] = (r_sign * (2 * t - 1) * half[r_ax])[:, None]
        a_u, a_v = _UV_AXES[n_ax]
        side = tile.shape[0]
        # Tile pixels: u along the first axis, v down the second (image rows go down).
        map_x = (coord[:, :, a_u] / box.material.texrepeat_m * side) % side
        map_y = (-coord[:, :, a_v] / box.material.texrepeat_m * side) % side
        albedo = np.asarray(
            cv2.remap(
                tile,
                map_x.astype(np.float32) - 0.5,
                map_y.astype(np.float32) - 0.5,
                interpolation=cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_WRAP,
            ),
            dtype=np.float32,
        )
    out: NDArray[np.uint8] = np.clip(albedo * light * 255.0 + 0.5, 0.0, 255.0).astype(np.uint8)
    return out


def baked_cube(
    box: StaticBox,
    irradiance: Sequence[NDArray[np.floating[Any]]],
    px_per_m: float,
    max_px: int,
    texture_size_px: int,
) -> NDArray[np.uint8]:
    """The (6 n, n, 3) cube texture of a baked box: albedo x irradiance per face, MuJoCo order."""
    # At the bake's density, not the tile's: at the tile's, the default world's hundred-odd
    # boxes took about 480 MB more memory and 3 s more set-up (256 px faces, six per box).
    n = face_px(box, px_per_m, max_px)
    tile = _tile_at_density(box.material, n / (2.0 * max(box.half_size_xyz)), texture_size_px)
    return np.concatenate(
        [_face_image(box, face, irradiance[f], n, n, tile) for f, face in enumerate(FACES)]
    )


def one_face(box: StaticBox) -> int | None:
    """The one face that is ever seen of a floor (its top) or a ceiling (its bottom), else None.

    Such a box is drawn with a 2D texture of that face alone (up to TERRAIN_MAX_PX a side), not
    a cube texture whose six faces, five of them unseen, share `max_face_px`. MuJoCo mipmaps
    both kinds (mjr_uploadTexture: GL_LINEAR_MIPMAP_LINEAR and glGenerateMipmap for 2D and cube
    textures), so the size costs memory and upload time, not per-fragment work.
    """
    return SINGLE_FACE_LABELS.get(box.label)


def baked_plane(
    box: StaticBox,
    irradiance: Sequence[NDArray[np.floating[Any]]],
    px_per_m: float,
    texture_size_px: int,
) -> NDArray[np.uint8]:
    """The 2D texture of a floor or ceiling: its seen face's albedo x irradiance, columns along
    the box's +x and rows along its -y (MuJoCo's 2D mapping of a box's top and bottom faces,
    texuniform off, texrepeat 1)."""
    face = one_face(box)
    if face is None:
        raise ValueError(f"box {box.name!r} ({box.label}) has no single seen face")
    light = np.asarray(irradiance[face])
    if face == BOTTOM_FACE:
        light = light[:, ::-1]  # the bottom face's cube layout runs along -x
    hx, hy = box.half_size_xyz[0], box.half_size_xyz[1]
    density = detail_px_per_m(box.material, px_per_m, texture_size_px)
    cols = int(np.clip(math.ceil(2 * hx * density), 8, TERRAIN_MAX_PX))
    rows = int(np.clip(math.ceil(2 * hy * density), 8, TERRAIN_MAX_PX))
    tile = _tile_at_density(box.material, min(cols / (2 * hx), rows / (2 * hy)), texture_size_px)
    return _face_image(box, FACES[TOP_FACE], light, rows, cols, tile)


def baked_terrain(
    material: Material,
    extent_xy: tuple[float, float, float, float],
    irradiance: NDArray[np.float32],
    px_per_m: float,
    texture_size_px: int,
) -> NDArray[np.uint8]:
    """The terrain's own 2D texture over its grid (x0, y0, x1, y1): albedo x irradiance, rows
    along y from y0, columns along x from x0 (texcoords (x - x0) / w, (y - y0) / h address it)."""
    x0, y0, x1, y1 = extent_xy
    density = detail_px_per_m(material, px_per_m, texture_size_px)
    w = int(np.clip(math.ceil((x1 - x0) * density), 8, TERRAIN_MAX_PX))
    h = int(np.clip(math.ceil((y1 - y0) * density), 8, TERRAIN_MAX_PX))
    light = cv2.resize(irradiance, (w, h), interpolation=cv2.INTER_LINEAR)
    tile_f = _tile_at_density(material, min(w / (x1 - x0), h / (y1 - y0)), texture_size_px)
    if tile_f is None:
        albedo: NDArray[np.float32] = np.broadcast_to(
            np.asarray(material.rgba[:3], dtype=np.float32), (h, w, 3)
        )
    else:
        side = tile_f.shape[0]
        xs = x0 + (np.arange(w) + 0.5) / w * (x1 - x0)
        ys = y0 + (np.arange(h) + 0.5) / h * (y1 - y0)
        # The mesh's own texcoords are x, y in metres, one tile per texrepeat_m.
        map_x = np.broadcast_to((xs / material.texrepeat_m * side) % side, (h, w))
        map_y = np.broadcast_to(((ys / material.texrepeat_m * side) % side)[:, None], (h, w))
        albedo = np.asarray(
            cv2.remap(
                tile_f,
                np.ascontiguousarray(map_x, dtype=np.float32) - 0.5,
                np.ascontiguousarray(map_y, dtype=np.float32) - 0.5,
                interpolation=cv2.INTER_LINEAR,
                borderMode=cv2.BORDER_WRAP,
            ),
            dtype=np.float32,
        )
    rgb = np.clip(albedo * light * 255.0 + 0.5, 0.0, 255.0)
    out: NDArray[np.uint8] = rgb.astype(np.uint8)
    return out
