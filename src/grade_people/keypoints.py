"""COCO-17 body keypoints of the walking people, in world coordinates.

The people of `grade_people.people` are rigid parts posed by `part_poses`; their joints
(shoulder, elbow, wrist, hip, knee, ankle) are the ends of the limb capsules, so they are read
back from the part poses: a capsule's long axis is its local z, pointing from its lower joint
to its upper one. The face points (nose, eyes, ears) sit on a fixed frame on the head sphere,
slightly inside its surface so they always project into the head's silhouette.

A skinned body (issue 14, part 1) provides the same function over its skeleton; callers use
`rigid_coco17_world` only, so the source can be switched without touching them.
"""

from __future__ import annotations

import numpy as np

from grade_common.keypoints import COCO17_NAMES
from grade_common.rotations import quat_to_matrix
from grade_common.types import FloatArray
from grade_people.people import (
    LOWER_ARM,
    LOWER_LEG,
    PART_NAMES,
    UPPER_ARM,
    UPPER_LEG,
    part_poses,
)

# Face points in the head frame (x forward, y left, z up) for a 1.75 m person, head radius
# 0.11 m: at 0.8-0.9 of the radius, inside the sphere, so they never fall off its silhouette.
_FACE_HEAD_M = np.array(
    [
        [0.095, 0.0, -0.01],  # nose
        [0.08, 0.035, 0.025],  # left eye
        [0.08, -0.035, 0.025],  # right eye
        [0.0, 0.09, 0.0],  # left ear
        [0.0, -0.09, 0.0],  # right ear
    ]
)
_PART = {name: k for k, name in enumerate(PART_NAMES)}
N_KEYPOINTS = len(COCO17_NAMES)
# How deep under the visible surface each keypoint lies at most (grade_sim.sensors.keypoints2d):
# the face points 1-2 cm inside the head (so 5 cm), the joints inside the torso or a limb
# (0.15 m torso radius for a 1.75 m person, plus margin for taller people).
FACE_DEPTH_M = 0.05
JOINT_DEPTH_M = 0.2
SELF_DEPTH_M = np.array([FACE_DEPTH_M] * 5 + [JOINT_DEPTH_M] * 12)


def _axis_z(quat_wxyz: FloatArray) -> FloatArray:
    """Local z axis in the world of (..., 4) quaternions -> (..., 3)."""
    w, x, y, z = np.moveaxis(quat_wxyz, -1, 0)
    return np.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], axis=-1)


def coco17_from_parts(
    scale: FloatArray, positions: FloatArray, quats_wxyz: FloatArray
) -> FloatArray:
    """COCO-17 keypoints (P, 17, 3) from part poses (P, 12, 3), (P, 12, 4) of `part_poses`."""
    s = scale[:, None]
    axis = _axis_z(quats_wxyz)
    out = np.empty((len(scale), N_KEYPOINTS, 3))

    def upper(part: str, length: float) -> FloatArray:
        k = _PART[part]
        return positions[:, k] + axis[:, k] * (length * s / 2)

    def lower(part: str, length: float) -> FloatArray:
        k = _PART[part]
        return positions[:, k] - axis[:, k] * (length * s / 2)

    for side, tag in ((0, "l"), (1, "r")):
        out[:, 5 + side] = upper(f"upper_arm_{tag}", UPPER_ARM)
        out[:, 7 + side] = lower(f"upper_arm_{tag}", UPPER_ARM)
        out[:, 9 + side] = lower(f"lower_arm_{tag}", LOWER_ARM)
        out[:, 11 + side] = upper(f"upper_leg_{tag}", UPPER_LEG)
        out[:, 13 + side] = lower(f"upper_leg_{tag}", UPPER_LEG)
        out[:, 15 + side] = lower(f"lower_leg_{tag}", LOWER_LEG)
    head = _PART["head"]
    for p in range(len(scale)):
        r_head = quat_to_matrix(quats_wxyz[p, head])
        out[p, :5] = positions[p, head] + (_FACE_HEAD_M * scale[p]) @ r_head.T
    return out


def rigid_coco17_world(
    scale: FloatArray,
    position_xy: FloatArray,
    heading_rad: FloatArray,
    phase_rad: FloatArray,
    amplitude: FloatArray,
) -> FloatArray:
    """World positions (P, 17, 3) of the COCO-17 keypoints of P people in the given states.

    Args are those of `people.part_poses`: arrays of shape (P,), position_xy (P, 2).
    """
    positions, quats = part_poses(scale, position_xy, heading_rad, phase_rad, amplitude)
    return coco17_from_parts(scale, positions, quats)
