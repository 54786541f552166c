"""Stable resting poses of an object on a plane, with the probability of landing in each.

trimesh's `compute_stable_poses` gives one pose per convex-hull face that the object can rest
on, with its quasi-static probability (the solid angle of the face seen from the centre of mass,
plus what topples into it). A cylinder's hull has one side face per polygon section, so its
single physical "lying on the side" pose would come out as 48 poses of 1.7 % each, all below
SceneReplica's 0.02 threshold. Poses that put the same shape on the table, up to a rotation
about the vertical, are therefore merged first (probabilities added), then the threshold is
applied. Two poses are the same when their rest height and the height profile and horizontal
spread of their hull vertices agree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import trimesh

from grade_common.types import FloatArray


@dataclass(frozen=True)
class StablePose:
    """One way an object rests on the table.

    `transform_table_object` puts the object frame (origin at the centre of mass) above the
    table plane z = 0, touching it, with zero yaw; `probability` is the chance of landing in it.
    """

    transform_table_object: FloatArray  # (4, 4)
    probability: float
    merged: int  # how many hull-face poses it stands for

    @property
    def rest_height_m(self) -> float:
        return float(self.transform_table_object[2, 3])


def _signature(hull_vertices: FloatArray, transform: FloatArray) -> FloatArray:
    """Yaw-invariant description of a resting pose (see the module doc)."""
    points = hull_vertices @ transform[:3, :3].T + transform[:3, 3]
    xy = points[:, :2] - points[:, :2].mean(axis=0)
    spread = np.sort(np.linalg.eigvalsh(xy.T @ xy / len(xy)))
    z = points[:, 2]
    return np.array([transform[2, 3], z.mean(), z.std(), np.sqrt(spread[0]), np.sqrt(spread[1])])


def stable_poses(
    mesh: trimesh.Trimesh, threshold: float = 0.02, tolerance_m: float = 5e-4
) -> list[StablePose]:
    """The stable poses of `mesh` (object frame = centre of mass), most probable first.

    Args:
        threshold: poses (after merging) less probable than this are dropped (SceneReplica: 0.02).
        tolerance_m: how far two poses' signatures may differ and still be one pose.
    """
    transforms, probs = trimesh.poses.compute_stable_poses(
        mesh, center_mass=np.zeros(3), threshold=0.0
    )
    hull = np.asarray(mesh.convex_hull.vertices, dtype=np.float64)
    groups: list[tuple[FloatArray, FloatArray, float, int]] = []  # signature, tf, prob, count
    for tf, prob in zip(transforms, probs, strict=True):
        sig = _signature(hull, tf)
        for i, (other, rep, total, count) in enumerate(groups):
            if np.max(np.abs(sig - other)) <= tolerance_m:
                groups[i] = (other, rep, total + float(prob), count + 1)
                break
        else:
            groups.append((sig, np.asarray(tf, dtype=np.float64), float(prob), 1))
    poses = [StablePose(rep, total, count) for _, rep, total, count in groups if total >= threshold]
    return sorted(poses, key=lambda p: -p.probability)
