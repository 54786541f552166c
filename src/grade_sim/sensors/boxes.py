"""Ground-truth boxes of actors and static objects: 3D oriented boxes from the scene, 2D boxes
from masks."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from grade_common.rotations import quat_to_matrix
from grade_common.types import FloatArray
from grade_sim.actors.box_kernels import heading_bounds
from grade_sim.actors.geometry import Box3D, heading_rotation
from grade_sim.actors.group import body_slices
from grade_sim.scene import Scene
from grade_sim.world.model import FreeBody, World

__all__ = [
    "STRUCTURE_LABELS",
    "Box3D",
    "actor_boxes",
    "free_body_box",
    "loose_box_2d",
    "static_boxes",
    "tight_boxes_2d",
    "warm_up",
]

# Labels of the structure around the objects: no boxes for them (a room's wall is not an object).
STRUCTURE_LABELS = frozenset({"floor", "wall", "ceiling", "ground", "terrain", "environment"})


def actor_boxes(scene: Scene, step: int, part_positions: FloatArray) -> list[Box3D]:
    """3D boxes of every actor at a step, group by group (each group's `boxes`).
    `part_positions` is the first output of Scene.actor_body_poses for that step."""
    boxes: list[Box3D] = []
    for group, rows in zip(scene.groups, body_slices(scene.groups), strict=True):
        boxes += group.boxes(step, part_positions[rows])
    return boxes


def static_boxes(world: World) -> list[Box3D]:
    """3D boxes of the world's static objects (furniture, trees, rocks, mesh parts), one per
    instance: a box of several parts gets the box of all their corners, in the yaw of its first
    part; a mesh gets the world-axis-aligned box of its vertices."""
    corners: dict[int, list[FloatArray]] = {}
    yaw: dict[int, float] = {}
    for box in world.boxes:
        if box.label in STRUCTURE_LABELS:
            continue
        yaw.setdefault(box.instance_id, box.yaw_rad)
        part = Box3D(
            box.instance_id,
            np.asarray(box.center_xyz, dtype=np.float64),
            2 * np.asarray(box.half_size_xyz, dtype=np.float64),
            heading_rotation(box.yaw_rad),
        )
        corners.setdefault(box.instance_id, []).append(part.corners_world())
    for mesh in world.meshes:
        if mesh.label not in STRUCTURE_LABELS:
            yaw.setdefault(mesh.instance_id, 0.0)
            corners.setdefault(mesh.instance_id, []).append(np.asarray(mesh.vertices_xyz))
    out = []
    for iid, pts in corners.items():
        rot = heading_rotation(yaw[iid])
        local = np.concatenate(pts) @ rot
        lo, hi = local.min(axis=0), local.max(axis=0)
        out.append(Box3D(iid, rot @ ((lo + hi) / 2), hi - lo, rot))
    return out


def free_body_box(body: FreeBody, position: FloatArray, quat_wxyz: FloatArray) -> Box3D:
    """The 3D box of a loose object at a pose: its mesh's box in the body frame, posed."""
    v = np.asarray(body.vertices_xyz)
    lo, hi = v.min(axis=0), v.max(axis=0)
    rot = quat_to_matrix(np.asarray(quat_wxyz))
    return Box3D(body.instance_id, np.asarray(position) + rot @ ((lo + hi) / 2), hi - lo, rot)


def tight_boxes_2d(
    instance: NDArray[np.uint16], ids: set[int]
) -> dict[int, tuple[int, int, int, int]]:
    """Pixel bounds (x_min, y_min, x_max, y_max), inclusive, of each id present in the mask,
    by ascending id."""
    mask = np.asarray(instance)
    ids_max = np.iinfo(mask.dtype).max if mask.dtype.itemsize <= 2 else int(mask.max(initial=0))
    bounds = np.empty((int(ids_max) + 1, 4), dtype=np.int64)
    present = _pixel_bounds(mask, bounds)
    out: dict[int, tuple[int, int, int, int]] = {}
    for iid in np.flatnonzero(present).tolist():
        if iid in ids:
            x0, y0, x1, y1 = bounds[iid].tolist()
            out[iid] = (x0, y0, x1, y1)
    return out


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernels now, in the set-up."""
    tight_boxes_2d(np.zeros((1, 1), np.uint16), {0})
    heading_bounds(np.zeros((1, 3)), 1.0, 0.0)


@numba.njit(nogil=True, cache=True)
def _pixel_bounds(instance: Any, bounds: Any) -> Any:  # pragma: no cover - compiled
    """One pass over the mask: whether each id occurs, and its (x_min, y_min, x_max, y_max)
    in `bounds` (rows of absent ids are left as they were)."""
    present = np.zeros(bounds.shape[0], dtype=np.bool_)
    h, w = instance.shape
    for y in range(h):
        for x in range(w):
            i = instance[y, x]
            b = bounds[i]
            if not present[i]:
                present[i] = True
                b[0] = x
                b[1] = y
                b[2] = x
                b[3] = y
            else:
                if x < b[0]:
                    b[0] = x
                if x > b[2]:
                    b[2] = x
                b[3] = y
    return present


def loose_box_2d(
    box: Box3D,
    k: FloatArray,
    position_world_optical: FloatArray,
    r_world_optical: FloatArray,
    width: int,
    height: int,
    project: Callable[[FloatArray], FloatArray] | None = None,
) -> tuple[int, int, int, int] | None:
    """Image bounds of the projected 3D box (occluded parts included), clipped to the image.

    `project`: a distorted camera's projection (optics.lens.Lens.project, NaN where unseen);
    the box's edges are then sampled, since distortion bends them past their corners.
    """
    if project is not None:
        pts_cam = (_edge_points(box.corners_world()) - position_world_optical) @ r_world_optical
        uv = project(pts_cam)
        uv = uv[np.all(np.isfinite(uv), axis=1)]
        if len(uv) == 0:
            return None
    else:
        pts_cam = (box.corners_world() - position_world_optical) @ r_world_optical
        front = pts_cam[pts_cam[:, 2] > 1e-3]
        if len(front) == 0:
            return None
        uv = (front @ k.T)[:, :2] / front[:, 2:3]
    x0, y0 = np.floor(uv.min(axis=0))
    x1, y1 = np.ceil(uv.max(axis=0))
    if x1 < 0 or y1 < 0 or x0 > width - 1 or y0 > height - 1:
        return None
    return (int(max(x0, 0)), int(max(y0, 0)), int(min(x1, width - 1)), int(min(y1, height - 1)))


EDGE_SAMPLES = 16


def _edge_points(corners: FloatArray) -> FloatArray:
    """Points along the 12 edges of a box from its 8 corners (corners_world's order)."""
    t = np.linspace(0.0, 1.0, EDGE_SAMPLES)[:, None]
    pairs = [(a, a | bit) for a in range(8) for bit in (1, 2, 4) if not a & bit]
    points: FloatArray = np.concatenate(
        [corners[a] + t * (corners[b] - corners[a]) for a, b in pairs]
    )
    return points
