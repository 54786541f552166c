"""Geoms and skins wholly outside a camera's view are not drawn (the same pixels, less work).

`mjv_updateScene` puts every visible geom and skin of the model into the scene, and llvmpipe
transforms and lights every vertex of each before it clips: the eight MakeHuman skins of the
default scenario (19 158 vertices each) cost that on every pass even when the camera sees one
person. A triangle outside the view frustum gives no fragment, so leaving out an object whose
bounding sphere lies wholly outside it changes no pixel of colour, depth or segmentation.
The scene's own entries stay where they are (their segmentation ids do not move): a culled
entry's type becomes `mjGEOM_NONE`, which `mjr_render` does not draw.

Only where nothing outside the view can show in it: shadow maps and reflections draw what the
camera does not see, so with either on the colour pass keeps everything (the caller decides).
The test is conservative: the frustum is widened by `MARGIN` and the spheres enlarged by it.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.engine.mujoco.scene_geoms import SceneGeoms

MARGIN = 0.1  # relative widening of the frustum and of every bounding sphere
MARGIN_M = 0.01  # and an absolute one of each sphere


def outside_view(
    centers_world: FloatArray, radii_m: FloatArray, glcam: Any, aspect: float
) -> NDArray[np.bool_]:
    """Which spheres lie wholly outside the view frustum of `glcam` (an mjvGLCamera: pos,
    forward, up and the frustum at its near plane) for a viewport of width/height `aspect`."""
    n = len(radii_m)
    if n == 0 or glcam.orthographic:
        return np.zeros(n, dtype=bool)
    forward = np.asarray(glcam.forward, dtype=np.float64)
    up = np.asarray(glcam.up, dtype=np.float64)
    right = np.cross(forward, up)
    rel = np.asarray(centers_world, dtype=np.float64) - np.asarray(glcam.pos, dtype=np.float64)
    x, y, z = rel @ right, rel @ up, rel @ forward
    r = np.asarray(radii_m, dtype=np.float64) * (1.0 + MARGIN) + MARGIN_M
    near, far = float(glcam.frustum_near), float(glcam.frustum_far)
    half_w = max(
        0.5 * float(glcam.frustum_width), 0.5 * aspect * (glcam.frustum_top - glcam.frustum_bottom)
    )
    grow = 1.0 + MARGIN
    center = float(glcam.frustum_center)
    # Each side plane through the eye, as the slope of its edge at the near plane.
    slopes = (
        (x, (center + half_w * grow) / near),  # right: outside where x > slope * z
        (-x, -(center - half_w * grow) / near),  # left
        (y, float(glcam.frustum_top) * grow / near),  # top
        (-y, -float(glcam.frustum_bottom) * grow / near),  # bottom
    )
    out = (z + r < near) | (z - r > far)
    for coord, slope in slopes:
        out |= (coord - slope * z) / np.sqrt(1.0 + slope * slope) > r
    return out


def cull_scene(mj: Any, model: Any, data: Any, geoms: SceneGeoms, aspect: float) -> int:
    """Sets every geom and skin of the scene (`geoms`) that lies wholly outside the view of its
    camera (`camera[0]`) to mjGEOM_NONE; returns how many. Geoms of the model (their bounding
    sphere: `geom_rbound` about `geom_xpos`) and skins (the sphere about the box of their
    vertices as `mjv_updateScene` placed them) are tested; anything else is kept."""
    vscene = geoms.scene
    entries = geoms.records
    objtype = entries["objtype"]
    objid = entries["objid"].astype(np.int64)
    geom_entries = np.flatnonzero(objtype == int(mj.mjtObj.mjOBJ_GEOM))
    skin_entries = np.flatnonzero(objtype == int(mj.mjtObj.mjOBJ_SKIN))
    centers, radii = skin_spheres(vscene, objid[skin_entries])
    kept_skins = radii >= 0
    ids = objid[geom_entries]
    rbound = np.asarray(model.geom_rbound)[ids]
    bounded = rbound > 0  # planes (rbound 0) are everywhere
    all_entries = np.concatenate([geom_entries[bounded], skin_entries[kept_skins]])
    all_centers = np.concatenate([np.asarray(data.geom_xpos)[ids[bounded]], centers[kept_skins]])
    all_radii = np.concatenate([rbound[bounded], radii[kept_skins]])
    culled = all_entries[outside_view(all_centers, all_radii, vscene.camera[0], aspect)]
    entries["type"][culled] = int(mj.mjtGeom.mjGEOM_NONE)
    return len(culled)


def skin_spheres(vscene: Any, skin_ids: NDArray[np.int64]) -> tuple[FloatArray, FloatArray]:
    """Centre (S, 3) and radius (S,) of the sphere about the box of each skin's vertices as
    `mjv_updateScene` placed them (radius -1 for a skin without vertices)."""
    centers = np.zeros((len(skin_ids), 3))
    radii = np.full(len(skin_ids), -1.0)
    if len(skin_ids):
        verts = np.asarray(vscene.skinvert).reshape(-1, 3)
        first = np.asarray(vscene.skinvertadr, dtype=np.int64)[skin_ids]
        count = np.asarray(vscene.skinvertnum, dtype=np.int64)[skin_ids]
        _skin_spheres(verts, first, count, centers, radii)
    return centers, radii


@numba.njit(nogil=True, cache=True)
def _skin_spheres(
    verts: Any, first: Any, count: Any, centers: Any, radii: Any
) -> None:  # pragma: no cover - compiled
    for s in range(len(first)):
        if count[s] == 0:
            continue
        lo = np.full(3, np.inf)
        hi = np.full(3, -np.inf)
        for v in range(first[s], first[s] + count[s]):
            for a in range(3):
                x = np.float64(verts[v, a])
                lo[a] = min(lo[a], x)
                hi[a] = max(hi[a], x)
        half = 0.0
        for a in range(3):
            centers[s, a] = 0.5 * (lo[a] + hi[a])
            half += (hi[a] - lo[a]) ** 2
        radii[s] = 0.5 * np.sqrt(half)


def warm_up() -> None:
    """Compile (or load from numba's cache) the skin-sphere kernel now (set-up, not a frame)."""
    _skin_spheres(
        np.zeros((1, 3), np.float32),
        np.zeros(1, np.int64),
        np.ones(1, np.int64),
        np.zeros((1, 3)),
        np.zeros(1),
    )
