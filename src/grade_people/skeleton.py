"""A person's articulated skeleton: joint hierarchy, seeded proportions, forward kinematics.

Core module (numpy/scipy only). Every joint frame is world-aligned in the rest pose (standing,
arms hanging, facing +x, left = +y, z up), so a local rotation of identity everywhere is the rest
pose and a joint's offset is simply the vector from its parent's joint in that pose. The skinned
mesh (body_mesh) and the motion library (motion) are both expressed against these frames.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from grade_common.types import FloatArray
from grade_people.makehuman.shape import MakeHumanShape

# (name, parent); parents come before children, so one pass in this order is forward kinematics.
JOINTS: tuple[tuple[str, str | None], ...] = (
    ("pelvis", None),
    ("spine", "pelvis"),
    ("chest", "spine"),
    ("neck", "chest"),
    ("head", "neck"),
    ("clavicle_l", "chest"),
    ("shoulder_l", "clavicle_l"),
    ("elbow_l", "shoulder_l"),
    ("wrist_l", "elbow_l"),
    ("clavicle_r", "chest"),
    ("shoulder_r", "clavicle_r"),
    ("elbow_r", "shoulder_r"),
    ("wrist_r", "elbow_r"),
    ("hip_l", "pelvis"),
    ("knee_l", "hip_l"),
    ("ankle_l", "knee_l"),
    ("toe_l", "ankle_l"),
    ("hip_r", "pelvis"),
    ("knee_r", "hip_r"),
    ("ankle_r", "knee_r"),
    ("toe_r", "ankle_r"),
)
JOINT_NAMES = tuple(name for name, _ in JOINTS)
JOINT_INDEX = {name: i for i, name in enumerate(JOINT_NAMES)}
PARENTS = np.array([-1 if p is None else JOINT_INDEX[p] for _, p in JOINTS], dtype=np.int64)
N_JOINTS = len(JOINTS)

REFERENCE_HEIGHT_M = 1.75
BUILD_RANGE = (0.0, 1.0)  # 0 slim .. 1 broad


@dataclass(frozen=True)
class BodyParams:
    """Seeded shape of one person: stature, girth and sex-neutral proportion variations."""

    height_m: float
    build: float  # 0 slim .. 1 broad: scales girths and shoulder/hip width
    leg_ratio: float  # ~1: leg length relative to the reference proportions
    shoulder_ratio: float  # ~1: shoulder width relative to the reference
    hip_ratio: float  # ~1: hip width relative to the reference
    # A MakeHuman body (people.body: makehuman, grade_people.makehuman.dress.makehuman_params): its
    # skin comes from the shaped MakeHuman mesh, and so do its rest offsets ((J, 3) flattened)
    # and COCO face points ((5, 3) flattened, in the head joint's frame), which replace the
    # proportions above.
    shape: MakeHumanShape | None = None
    rest_offsets_m: tuple[float, ...] | None = None
    face_m: tuple[float, ...] | None = None

    @property
    def scale(self) -> float:
        return self.height_m / REFERENCE_HEIGHT_M

    @property
    def girth(self) -> float:
        """Factor on every limb and torso radius."""
        return 0.88 + 0.3 * self.build


def random_body(height_m: float, rng: np.random.Generator) -> BodyParams:
    """Body proportions around the reference, drawn from `rng` (height given by the caller)."""
    return BodyParams(
        height_m=float(height_m),
        build=float(rng.uniform(*BUILD_RANGE)),
        leg_ratio=float(rng.uniform(0.96, 1.04)),
        shoulder_ratio=float(rng.uniform(0.88, 1.1)),
        hip_ratio=float(rng.uniform(0.9, 1.12)),
    )


def rest_offsets(body: BodyParams) -> FloatArray:
    """(J, 3) offset of each joint from its parent in the rest pose (pelvis: from the floor).

    Cached per body (poses need it every step); the array is read-only.
    """
    return _rest_offsets(body)


@functools.lru_cache(maxsize=256)
def _rest_offsets(body: BodyParams) -> FloatArray:
    if body.rest_offsets_m is not None:
        mh = np.array(body.rest_offsets_m, dtype=np.float64).reshape(N_JOINTS, 3)
        mh.flags.writeable = False
        return mh
    s = body.scale
    leg = body.leg_ratio
    thigh, shin = 0.435 * leg, 0.42 * leg
    ankle_z = 0.085
    hip_drop = 0.035
    pelvis_z = ankle_z + shin + thigh + hip_drop
    # The upper body fills the rest of the stature, so leg_ratio trades legs for torso.
    torso = 1.75 - 0.16 - pelvis_z  # pelvis -> head joint; 0.16 head joint -> crown
    hip_y = 0.088 * body.hip_ratio * (0.95 + 0.1 * body.build)
    shoulder_y = 0.165 * body.shoulder_ratio * (0.95 + 0.1 * body.build)
    off = {
        "pelvis": (0.0, 0.0, pelvis_z),
        "spine": (0.0, 0.0, 0.18 * torso),
        "chest": (0.0, 0.0, 0.3 * torso),
        "neck": (0.0, 0.0, 0.37 * torso),
        "head": (0.005, 0.0, 0.15 * torso),
        "clavicle_l": (-0.01, 0.03, 0.25 * torso),
        "shoulder_l": (0.0, shoulder_y, 0.0),
        "elbow_l": (0.0, 0.0, -0.29),
        "wrist_l": (0.0, 0.0, -0.255),
        "hip_l": (0.0, hip_y, -hip_drop),
        "knee_l": (0.0, 0.0, -thigh),
        "ankle_l": (0.0, 0.0, -shin),
        "toe_l": (0.14, 0.0, -0.055),
    }
    out = np.zeros((N_JOINTS, 3))
    for name, i in JOINT_INDEX.items():
        base = name[:-2] + "_l" if name.endswith("_r") else name
        v = np.array(off[base], dtype=np.float64)
        if name.endswith("_r"):
            v[1] = -v[1]
        out[i] = v * s
    out.flags.writeable = False
    return out


def face_points(body: BodyParams) -> FloatArray:
    """(5, 3) COCO nose, eyes and ears in the head joint's frame for `body`."""
    if body.face_m is not None:
        return np.array(body.face_m, dtype=np.float64).reshape(5, 3)
    out: FloatArray = np.array([o for _, o in _COCO17[:5]]) * body.scale
    return out


def rest_positions(body: BodyParams) -> FloatArray:
    """(J, 3) joint positions of the rest pose, standing at the origin facing +x."""
    off = rest_offsets(body)
    pos = np.zeros_like(off)
    for j in range(N_JOINTS):
        p = PARENTS[j]
        pos[j] = off[j] if p < 0 else pos[p] + off[j]
    return pos


def forward_kinematics(
    offsets: FloatArray, local_rot: FloatArray, root_pos: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """World joint positions (..., J, 3) and rotations (..., J, 3, 3).

    Args:
        offsets: (..., J, 3) rest offsets (rest_offsets; broadcast over leading axes).
        local_rot: (..., J, 3, 3) rotation of each joint relative to its parent (root: world).
        root_pos: (..., 3) world position of the root joint (pelvis).
    """
    shape = local_rot.shape[:-3]
    offsets = np.broadcast_to(offsets, (*shape, N_JOINTS, 3))
    pos = np.empty((*shape, N_JOINTS, 3))
    rot = np.empty((*shape, N_JOINTS, 3, 3))
    for j in range(N_JOINTS):
        p = PARENTS[j]
        if p < 0:
            pos[..., j, :] = root_pos
            rot[..., j, :, :] = local_rot[..., j, :, :]
            continue
        pos[..., j, :] = pos[..., p, :] + np.einsum(
            "...ab,...b->...a", rot[..., p, :, :], offsets[..., j, :]
        )
        rot[..., j, :, :] = rot[..., p, :, :] @ local_rot[..., j, :, :]
    return pos, rot


def euler_to_matrix(angles_xyz: FloatArray) -> FloatArray:
    """(..., 3) roll, pitch, yaw -> (..., 3, 3) Rz(yaw) Ry(pitch) Rx(roll)."""
    a = np.asarray(angles_xyz, dtype=np.float64)
    r, p, y = a[..., 0], a[..., 1], a[..., 2]
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    # Written into one array (not nested np.stack): the pose of every person calls this about ten
    # times a frame on the step thread, where the stacks' overhead was most of its cost.
    out = np.empty((*a.shape[:-1], 3, 3))
    out[..., 0, 0] = cy * cp
    out[..., 0, 1] = cy * sp * sr - sy * cr
    out[..., 0, 2] = cy * sp * cr + sy * sr
    out[..., 1, 0] = sy * cp
    out[..., 1, 1] = sy * sp * sr + cy * cr
    out[..., 1, 2] = sy * sp * cr - cy * sr
    out[..., 2, 0] = -sp
    out[..., 2, 1] = cp * sr
    out[..., 2, 2] = cp * cr
    return out


# COCO-17 keypoints (grade_common.keypoints.COCO17_NAMES order): (joint, offset in that joint's
# frame at the reference height): the five face points on the head, then the twelve body points
# at their joints, left before right.
_COCO17 = (
    ("head", (0.115, 0.0, 0.035)),
    ("head", (0.095, 0.033, 0.07)),
    ("head", (0.095, -0.033, 0.07)),
    ("head", (0.01, 0.083, 0.055)),
    ("head", (0.01, -0.083, 0.055)),
    *(
        (f"{joint}_{side}", (0.0, 0.0, 0.0))
        for joint in ("shoulder", "elbow", "wrist", "hip", "knee", "ankle")
        for side in "lr"
    ),
)


def coco17_world(
    joint_pos: FloatArray,
    joint_rot: FloatArray,
    scale: FloatArray,
    face_m: FloatArray | None = None,
) -> FloatArray:
    """COCO-17 keypoints (..., 17, 3) in world coordinates, in COCO17_NAMES order.

    Args:
        joint_pos: (..., J, 3) and joint_rot: (..., J, 3, 3) from forward_kinematics (or the
            mocap poses of Scene.actor_body_poses reshaped per person);
        scale: (...,) each person's BodyParams.scale (face points sit on the head's surface).
        face_m: (..., 5, 3) nose, eyes and ears in the head joint's frame, where a body has its
            own (face_points); default: the reference face scaled by `scale`.
    """
    idx = np.array([JOINT_INDEX[j] for j, _ in _COCO17])
    off = np.array([o for _, o in _COCO17]) * np.asarray(scale, dtype=np.float64)[..., None, None]
    if face_m is not None:
        off = off.copy()
        off[..., :5, :] = face_m
    out: FloatArray = joint_pos[..., idx, :] + np.einsum(
        "...kab,...kb->...ka", joint_rot[..., idx, :, :], off
    )
    return out
