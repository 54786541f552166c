"""Surface normals per pixel, in the camera's optical frame.

Analytic where the surface is a primitive: each pixel's surface point (back-projected from the
planar depth) is taken into the frame of the geom it belongs to (from the segmentation pass) and
the primitive's own normal is evaluated there (plane: +z; box: the face whose slab the point is
nearest to leaving; sphere, ellipsoid, capsule, cylinder: the gradient of the implicit surface).
Meshes and height fields have no cheap analytic normal here: their normal comes from the depth
image, by the cross product of the point differences to the neighbours on the same geom (central
where both neighbours are on it, one-sided otherwise), so normals never mix two surfaces across
an edge. Every normal is unit length and faces the camera; pixels without a surface are (0, 0, 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray
from grade_sim.engine.geom_frames import apply_per_geom

# mjtGeom values (the core does not import MuJoCo)
PLANE, HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH = range(8)


def primitive_normals_local(
    points_local: FloatArray, geom_type: NDArray[np.integer[Any]], size: FloatArray
) -> FloatArray:
    """Outward unit normals (n, 3) of points (n, 3) on primitives, in each geom's frame.

    Rows of another type (mesh, height field) are NaN.
    """
    p = points_local
    out = np.full_like(p, np.nan)
    present = set(np.unique(geom_type).tolist())
    if PLANE in present:
        out[geom_type == PLANE] = (0.0, 0.0, 1.0)
    if SPHERE in present:
        out = np.where((geom_type == SPHERE)[:, None], p, out)
    if ELLIPSOID in present:
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where((geom_type == ELLIPSOID)[:, None], p / size**2, out)
    if BOX in present:
        face = np.argmax(np.abs(p) - size, axis=1)
        n = np.zeros_like(p)
        rows = np.arange(len(p))
        n[rows, face] = np.sign(p[rows, face])
        out = np.where((geom_type == BOX)[:, None], n, out)
    if CAPSULE in present:
        n = p.copy()
        n[:, 2] -= np.clip(p[:, 2], -size[:, 1], size[:, 1])  # minus the nearest axis point
        out = np.where((geom_type == CAPSULE)[:, None], n, out)
    if CYLINDER in present:
        radial = np.hypot(p[:, 0], p[:, 1])
        on_cap = np.abs(p[:, 2]) - size[:, 1] > radial - size[:, 0]
        n = p.copy()
        n[:, 2] = 0.0
        n[on_cap] = 0.0
        n[on_cap, 2] = np.sign(p[on_cap, 2])
        out = np.where((geom_type == CYLINDER)[:, None], n, out)
    norm = np.sqrt(np.einsum("ij,ij->i", out, out))[:, None]
    with np.errstate(invalid="ignore", divide="ignore"):
        unit: FloatArray = out / norm
    return unit


def depth_normals(points_cam: FloatArray, labels: NDArray[np.integer[Any]]) -> FloatArray:
    """Normals (h, w, 3) from back-projected points, differencing only within one label.

    Pixels whose label is negative, or with no neighbour of the same label along a direction,
    are NaN.
    """
    valid = labels >= 0

    def tangent(axis: int) -> FloatArray:
        n = points_cam.shape[axis]
        idx = np.arange(n)
        fwd = np.minimum(idx + 1, n - 1)
        back = np.maximum(idx - 1, 0)
        same_f = valid & (np.take(labels, fwd, axis=axis) == labels)
        same_f &= (idx != n - 1).reshape(_shape(axis, n))
        same_b = valid & (np.take(labels, back, axis=axis) == labels)
        same_b &= (idx != 0).reshape(_shape(axis, n))
        p_f = np.where(same_f[..., None], np.take(points_cam, fwd, axis=axis), points_cam)
        p_b = np.where(same_b[..., None], np.take(points_cam, back, axis=axis), points_cam)
        t: FloatArray = p_f - p_b
        t[~(same_f | same_b)] = np.nan
        return t

    n = np.cross(tangent(1), tangent(0))
    norm = np.linalg.norm(n, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit: FloatArray = n / norm
    unit[~valid | (norm[..., 0] == 0)] = np.nan
    return unit


def _shape(axis: int, n: int) -> tuple[int, int]:
    return (1, n) if axis == 1 else (n, 1)


def normals_camera(
    points_cam: FloatArray,
    geom_ids: NDArray[np.integer[Any]],
    r_world_optical: FloatArray,
    position_world_optical: FloatArray,
    geom_type: NDArray[np.integer[Any]],
    geom_size: FloatArray,
    geom_pos: FloatArray,
    geom_rot: FloatArray,
) -> NDArray[np.float32]:
    """Unit normals (h, w, 3) float32 in the optical frame, facing the camera; 0 where none.

    Args:
        points_cam: (h, w, 3) back-projected surface points (z = 0: no surface).
        geom_ids: (h, w) geom id of each pixel, -1 for none, -2 - s on skin s (skins deform:
            their normals come from the depth, like meshes').
        geom_type, geom_size: (ngeom,), (ngeom, 3) mjtGeom types and sizes.
        geom_pos, geom_rot: (ngeom, 3), (ngeom, 3, 3) world poses of the geoms.
    """
    h, w, _ = points_cam.shape
    hit = (geom_ids != -1) & (points_cam[..., 2] > 0)
    # Per geom, camera frame -> geom frame: local = R_g^T (Rc p + c - x_g).
    to_geom = np.swapaxes(geom_rot, 1, 2) @ r_world_optical
    shift = np.einsum("gji,gj->gi", geom_rot, position_world_optical - geom_pos)
    local = apply_per_geom(to_geom, shift, geom_ids, points_cam).reshape(-1, 3)
    g = np.maximum(geom_ids, 0).reshape(-1)
    types = np.where(geom_ids.reshape(-1) >= 0, geom_type[g], -1)  # skins: no analytic normal
    axes_cam = np.swapaxes(to_geom, 1, 2)  # [:, :, j]: the geom's axis j in the camera frame
    # Planes and boxes (walls, floors, furniture: most pixels) take one of seven normals of
    # their geom: -x, +x, -y, +y, -z, +z (box faces) or +z (plane), gathered in one `take`.
    faces = np.empty((len(to_geom), 7, 3))
    faces[:, 0:6:2] = -to_geom  # rows of to_geom: the geom's axes in the camera frame
    faces[:, 1:6:2] = to_geom
    faces[:, 6] = to_geom[:, 2]
    code = np.full(h * w, 6, dtype=np.int64)
    sel = np.flatnonzero(types == BOX)
    if len(sel):
        pb = local[sel]
        face = np.argmax(np.abs(pb) - geom_size[g[sel]], axis=1)
        code[sel] = 2 * face + (pb[np.arange(len(sel)), face] > 0)
    flat = np.take(faces.reshape(-1, 3), g * 7 + code, axis=0)
    flat[(types != PLANE) & (types != BOX)] = np.nan
    # Curved primitives: the normal in the geom's frame, turned into the camera frame.
    sel = np.flatnonzero(np.isin(types, (SPHERE, CAPSULE, ELLIPSOID, CYLINDER)))
    if len(sel):
        n_local = primitive_normals_local(local[sel], types[sel], geom_size[g[sel]])
        flat[sel] = np.einsum("nij,nj->ni", axes_cam[g[sel]], n_local)
    out = flat.reshape(h, w, 3)
    from_depth = hit & np.isnan(out[..., 0])
    if np.any(from_depth):
        # Neighbours count only on the same surface: a geom, or a skin (labelled after them).
        labels = np.where(hit, np.where(geom_ids >= 0, geom_ids, len(geom_type) - 2 - geom_ids), -1)
        out[from_depth] = depth_normals(points_cam, labels)[from_depth]
    # Face the camera: the normal points against the viewing ray (inside views of a sphere too).
    facing = np.sign(np.einsum("hwc,hwc->hw", out, points_cam))
    out *= np.where(facing > 0, -1.0, 1.0)[..., None]
    out[~hit] = 0.0
    result: NDArray[np.float32] = np.nan_to_num(out, nan=0.0).astype(np.float32)
    return result
