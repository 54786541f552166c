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

import numpy as np
from numpy.typing import NDArray

from grade_common.types import FloatArray

# mjtGeom values (the core does not import MuJoCo)
PLANE, HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH = range(8)


def primitive_normals_local(
    points_local: FloatArray, geom_type: NDArray[np.int_], size: FloatArray
) -> FloatArray:
    """Outward normals (n, 3) of points (n, 3) on primitives, in each geom's frame.

    Rows of another type (mesh, height field) are NaN.
    """
    p = points_local
    out = np.full_like(p, np.nan)
    ez = np.zeros_like(p)
    ez[:, 2] = 1.0
    sel = geom_type == PLANE
    out[sel] = ez[sel]
    sel = geom_type == SPHERE
    out[sel] = p[sel]
    sel = geom_type == ELLIPSOID
    out[sel] = p[sel] / size[sel] ** 2
    sel = geom_type == BOX
    if np.any(sel):
        pb, half = p[sel], size[sel]
        face = np.argmax(np.abs(pb) - half, axis=1)
        n = np.zeros_like(pb)
        n[np.arange(len(pb)), face] = np.sign(pb[np.arange(len(pb)), face])
        out[sel] = n
    sel = geom_type == CAPSULE
    if np.any(sel):
        pc, half_len = p[sel], size[sel, 1]
        axis_point = np.zeros_like(pc)
        axis_point[:, 2] = np.clip(pc[:, 2], -half_len, half_len)
        out[sel] = pc - axis_point
    sel = geom_type == CYLINDER
    if np.any(sel):
        py, radius, half_len = p[sel], size[sel, 0], size[sel, 1]
        radial = np.hypot(py[:, 0], py[:, 1])
        on_cap = np.abs(py[:, 2]) - half_len > radial - radius
        n = py.copy()
        n[:, 2] = 0.0
        n[on_cap] = 0.0
        n[on_cap, 2] = np.sign(py[on_cap, 2])
        out[sel] = n
    norm = np.linalg.norm(out, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        unit: FloatArray = out / norm
    return unit


def depth_normals(points_cam: FloatArray, labels: NDArray[np.int_]) -> FloatArray:
    """Normals (h, w, 3) from back-projected points, differencing only within one label.

    Pixels whose label is negative, or with no neighbour of the same label along a direction,
    are NaN.
    """
    _h, _w, _ = points_cam.shape
    valid = labels >= 0

    def tangent(axis: int) -> FloatArray:
        n = points_cam.shape[axis]
        idx = np.arange(n)
        fwd = np.minimum(idx + 1, n - 1)
        back = np.maximum(idx - 1, 0)
        take = (lambda a, i: a[:, i]) if axis == 1 else (lambda a, i: a[i])
        same_f = valid & (take(labels, fwd) == labels) & (idx != n - 1).reshape(_shape(axis, n))
        same_b = valid & (take(labels, back) == labels) & (idx != 0).reshape(_shape(axis, n))
        p_f = np.where(same_f[..., None], take(points_cam, fwd), points_cam)
        p_b = np.where(same_b[..., None], take(points_cam, back), points_cam)
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
    geom_ids: NDArray[np.int_],
    r_world_optical: FloatArray,
    position_world_optical: FloatArray,
    geom_type: NDArray[np.int_],
    geom_size: FloatArray,
    geom_pos: FloatArray,
    geom_rot: FloatArray,
) -> NDArray[np.float32]:
    """Unit normals (h, w, 3) float32 in the optical frame, facing the camera; 0 where none.

    Args:
        points_cam: (h, w, 3) back-projected surface points (z = 0: no surface).
        geom_ids: (h, w) geom id of each pixel, -1 for none.
        geom_type, geom_size: (ngeom,), (ngeom, 3) mjtGeom types and sizes.
        geom_pos, geom_rot: (ngeom, 3), (ngeom, 3, 3) world poses of the geoms.
    """
    h, w, _ = points_cam.shape
    hit = (geom_ids >= 0) & (points_cam[..., 2] > 0)
    out = np.full((h, w, 3), np.nan)
    g = geom_ids[hit]
    world = points_cam[hit] @ r_world_optical.T + position_world_optical
    rot = geom_rot[g]
    local = np.einsum("nji,nj->ni", rot, world - geom_pos[g])
    n_local = primitive_normals_local(local, geom_type[g], geom_size[g])
    n_world = np.einsum("nij,nj->ni", rot, n_local)
    out[hit] = n_world @ r_world_optical
    from_depth = hit & np.isnan(out[..., 0])
    if np.any(from_depth):
        labels = np.where(hit, geom_ids, -1)
        out[from_depth] = depth_normals(points_cam, labels)[from_depth]
    # Face the camera: the normal points against the viewing ray (inside views of a sphere too).
    flip = np.einsum("hwc,hwc->hw", np.nan_to_num(out), points_cam) > 0
    out[flip] *= -1.0
    out[~hit] = 0.0
    result: NDArray[np.float32] = np.nan_to_num(out, nan=0.0).astype(np.float32)
    return result
