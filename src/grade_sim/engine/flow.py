"""Optical flow ground truth from the known motion of every pixel's surface point.

Convention (causal, backward): the flow of frame t at pixel p is p minus where the same surface
point was seen in the camera's previous frame t-1:

    flow_px[v, u] = (u, v) - project_{t-1}(point)

so `frame_{t-1}` sampled at `(u, v) - flow_px[v, u]` gives `frame_t` (backward warping), and the
flow is known at t without looking into the future. Each pixel's point is back-projected with
the planar depth, taken into the frame of the geom it belongs to at t (every geom moves rigidly
with its body), put back with that geom's pose at t-1 and projected with the camera pose at t-1.
Occlusion is not checked: a point hidden at t-1 still has its flow. NaN where there is no
surface, no previous frame, or the point was behind the previous camera.

Skins (skinned people) deform, so no rigid frame carries their points: a skin pixel's point
moves with the skin's nearest vertices (inverse-distance weights over SKIN_NEIGHBOURS of them),
whose positions at t and t-1 are the ones MuJoCo drew.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.spatial import cKDTree

from grade_common.types import FloatArray
from grade_sim.engine.geom_frames import apply_per_geom
from grade_sim.engine.pixels import pixel_grid, project

SKIN_NEIGHBOURS = 4


@dataclass(frozen=True)
class PoseSnapshot:
    """The camera pose and every geom's world pose at one rendered frame."""

    position_world_optical: FloatArray  # (3,)
    r_world_optical: FloatArray  # (3, 3)
    geom_pos: FloatArray  # (ngeom, 3)
    geom_rot: FloatArray  # (ngeom, 3, 3)
    # World vertices (V_s, 3) of every skin (by skin id) as drawn in this frame.
    skin_vertices: tuple[FloatArray, ...] = ()


def backward_flow(
    points_cam: FloatArray,
    geom_ids: NDArray[np.integer[Any]],
    k: FloatArray,
    now: PoseSnapshot,
    previous: PoseSnapshot | None,
) -> NDArray[np.float32]:
    """(h, w, 2) float32 flow (dx, dy) in pixels of a pinhole camera (intrinsics k), see the
    module docstring.

    Args:
        points_cam: (h, w, 3) back-projected points in the optical frame at t (z = 0: none).
        geom_ids: (h, w) geom id of each pixel, -1 for none.
    """
    before = points_before(points_cam, geom_ids, now, previous)
    return flow_from_points_before(before, pinhole_projection(k))


def pinhole_projection(k: FloatArray) -> Callable[[FloatArray], FloatArray]:
    """(N, 3) optical-frame points -> (N, 2) pixels of a pinhole camera; NaN behind it."""

    def project_points(points: FloatArray) -> FloatArray:
        with np.errstate(invalid="ignore", divide="ignore"):
            uv = project(points, k)
        uv[~(np.nan_to_num(points[..., 2], nan=-1.0) > 1e-9)] = np.nan
        return uv

    return project_points


def points_before(
    points_cam: FloatArray,
    geom_ids: NDArray[np.integer[Any]],
    now: PoseSnapshot,
    previous: PoseSnapshot | None,
) -> FloatArray:
    """(h, w, 3): where each pixel's surface point was at t-1, in the camera's optical frame at
    t-1; NaN where unknown (no surface, not a geom, or no previous frame)."""
    out = np.full(points_cam.shape, np.nan)
    if previous is None:
        return out
    # Per geom, the map from the camera frame at t to the camera frame at t-1:
    # world X = Rc p + c; carried X' = D (X - x_g) + x_g' with D = R_g' R_g^T; p' = Rc'^T (X' - c').
    d = previous.geom_rot @ np.swapaxes(now.geom_rot, 1, 2)
    rot = previous.r_world_optical.T @ d @ now.r_world_optical
    carried = np.einsum("gij,gj->gi", d, now.position_world_optical - now.geom_pos)
    shift = (carried + previous.geom_pos - previous.position_world_optical) @ (
        previous.r_world_optical
    )
    seen_before = apply_per_geom(rot, shift, geom_ids, points_cam)
    hit = (geom_ids >= 0) & (points_cam[..., 2] > 0)
    out[hit] = seen_before[hit]
    return out


def skin_points_before(
    points_cam: FloatArray,
    skin_ids: NDArray[np.integer[Any]],
    now: PoseSnapshot,
    previous: PoseSnapshot | None,
    out: FloatArray,
) -> None:
    """Write where skin pixels' points were at t-1 (optical frame at t-1) into `out` (h, w, 3).

    Args:
        skin_ids: (h, w) skin id of each pixel, -1 where it shows no skin.
    """
    if previous is None:
        return
    for s in np.unique(skin_ids[skin_ids >= 0]):
        sel = (skin_ids == s) & (points_cam[..., 2] > 0)
        verts_now, verts_prev = now.skin_vertices[s], previous.skin_vertices[s]
        world = points_cam[sel] @ now.r_world_optical.T + now.position_world_optical
        dist, idx = cKDTree(verts_now).query(world, k=SKIN_NEIGHBOURS)
        weights = 1.0 / np.maximum(dist, 1e-9)
        weights /= weights.sum(axis=1, keepdims=True)
        moved = np.einsum("nk,nkc->nc", weights, verts_prev[idx] - verts_now[idx])
        out[sel] = (world + moved - previous.position_world_optical) @ previous.r_world_optical


def flow_from_points_before(
    before: FloatArray, project_previous: Callable[[FloatArray], FloatArray]
) -> NDArray[np.float32]:
    """(h, w, 2) float32 backward flow from `points_before`'s output, with the camera's own
    projection (pinhole or a lens: (N, 3) optical-frame points -> (N, 2) pixels, NaN where not
    seen). NaN where the point is unknown or the previous camera did not see it."""
    h, w, _ = before.shape
    with np.errstate(invalid="ignore", divide="ignore"):
        uv_prev = np.asarray(project_previous(before.reshape(-1, 3))).reshape(h, w, 2)
    ok = np.isfinite(before).all(axis=-1) & np.isfinite(uv_prev).all(axis=-1)
    u, v = pixel_grid(h, w)
    out = np.full((h, w, 2), np.nan, dtype=np.float32)
    out[..., 0] = np.where(ok, u - uv_prev[..., 0], np.nan)
    out[..., 1] = np.where(ok, v - uv_prev[..., 1], np.nan)
    return out
