"""Ground-truth boxes of actors: 3D oriented boxes from the scene, 2D boxes from masks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from grade_common.rotations import quat_to_matrix
from grade_common.types import FloatArray
from grade_sim.actors.animals import PART_NAMES as ANIMAL_PART_NAMES
from grade_sim.actors.flying import ObjectShape
from grade_sim.scene import Scene


@dataclass(frozen=True)
class Box3D:
    instance_id: int
    center_xyz: FloatArray  # world frame
    size_xyz: FloatArray  # full extents along the box axes
    rotation_world_box: FloatArray  # 3x3

    def transform_world_box(self) -> FloatArray:
        t = np.eye(4)
        t[:3, :3] = self.rotation_world_box
        t[:3, 3] = self.center_xyz
        return t

    def corners_world(self) -> FloatArray:
        signs = np.array(
            [[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=np.float64
        )
        return self.center_xyz + (signs * self.size_xyz / 2) @ self.rotation_world_box.T


def actor_boxes(scene: Scene, step: int, part_positions: FloatArray) -> list[Box3D]:
    """3D boxes of every person, animal and flying object at a step.

    People: the tight box of all their parts (inflated by part radius) in their heading frame;
    animals: the same about the barrel, padded by its half width, down to the ground.
    `part_positions` is the first output of Scene.actor_body_poses for that step.
    """
    boxes: list[Box3D] = []
    n_parts = 12
    k = min(step, scene.n_steps - 1)
    for i, (person, tl) in enumerate(zip(scene.people, scene.person_timelines, strict=True)):
        pts = part_positions[i * n_parts : (i + 1) * n_parts]
        c, s = np.cos(tl.heading_rad[k]), np.sin(tl.heading_rad[k])
        rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        local = (pts - pts.mean(axis=0)) @ rot
        pad = 0.15 * person.scale
        lo = local.min(axis=0) - pad
        hi = local.max(axis=0) + pad
        lo[2] = -pts.mean(axis=0)[2]  # feet on the ground
        hi[2] = max(hi[2], person.height_m - pts.mean(axis=0)[2])
        center = pts.mean(axis=0) + rot @ ((lo + hi) / 2)
        boxes.append(Box3D(person.instance_id, center, hi - lo, rot))
    animals_at = len(scene.people) * n_parts + len(scene.objects)
    for i, (animal, atl) in enumerate(zip(scene.animals, scene.animal_timelines, strict=True)):
        first = animals_at + i * len(ANIMAL_PART_NAMES)
        pts = part_positions[first : first + len(ANIMAL_PART_NAMES)]
        c, s = np.cos(atl.heading_rad[k]), np.sin(atl.heading_rad[k])
        rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        local = (pts - pts[0]) @ rot  # about the barrel's centre, in the heading frame
        pad = animal.anatomy.body_half[1] * animal.scale  # the barrel's half width
        lo = local.min(axis=0) - pad
        hi = local.max(axis=0) + pad
        lo[2] = -pts[0, 2]  # hooves on the ground
        boxes.append(Box3D(animal.instance_id, pts[0] + rot @ ((lo + hi) / 2), hi - lo, rot))
    for obj, otl in zip(scene.objects, scene.object_timelines, strict=True):
        h = np.asarray(obj.half_size)
        half = {
            ObjectShape.BOX: h,
            ObjectShape.ELLIPSOID: h,
            ObjectShape.SPHERE: np.full(3, h[0]),
            ObjectShape.CAPSULE: np.array([h[0], h[0], h[2] + h[0]]),
            ObjectShape.CYLINDER: np.array([h[0], h[0], h[2]]),
        }[obj.shape]
        boxes.append(
            Box3D(
                obj.instance_id,
                otl.position_xyz[k].copy(),
                2 * half,
                quat_to_matrix(otl.quat_wxyz[k]),
            )
        )
    return boxes


def tight_boxes_2d(
    instance: NDArray[np.uint16], ids: set[int]
) -> dict[int, tuple[int, int, int, int]]:
    """Pixel bounds (x_min, y_min, x_max, y_max), inclusive, of each id present in the mask."""
    out: dict[int, tuple[int, int, int, int]] = {}
    present = np.unique(instance)
    for i in present:
        iid = int(i)
        if iid not in ids:
            continue
        ys, xs = np.nonzero(instance == i)
        out[iid] = (int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max()))
    return out


def loose_box_2d(
    box: Box3D,
    k: FloatArray,
    position_world_optical: FloatArray,
    r_world_optical: FloatArray,
    width: int,
    height: int,
) -> tuple[int, int, int, int] | None:
    """Image bounds of the projected 3D box (occluded parts included), clipped to the image."""
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
