"""A shaped MakeHuman mesh on grade's skeleton: joints from the mesh, merged skin weights, and
the re-pose from MakeHuman's A-pose to grade's rest pose.

Core module (numpy only). Joint positions are the centres of MakeHuman's joint cubes (the
`joint-*` vertex groups of base.obj) on the shaped mesh, the way MakeHuman places its rig, so
they follow every shape (the rig files' stored positions are those of one default body). The
`game_engine` rig's 53 bones are merged into grade's 21 (skeleton.JOINTS): its three spine
bones into spine and chest, each hand with its fingers into the wrist (fingers stay mesh).
MakeHuman's rest pose has the arms spread (about 40 degrees) and the legs a little apart;
grade's rest pose (arms hanging, legs straight under the hips, every joint frame world-aligned)
is reached by rotating the upper arms, forearms, thighs and shins about their joints with
linear blend skinning of the mesh by those weights.
"""

from __future__ import annotations

import numpy as np

from grade_common.rotations import rotation_between
from grade_common.types import FloatArray
from grade_people.skeleton import JOINT_INDEX, JOINT_NAMES, N_JOINTS, PARENTS

# grade joint -> MakeHuman joint cube at its position.
JOINT_CUBES = {
    "pelvis": "joint-pelvis",
    "spine": "joint-spine-4",
    "chest": "joint-spine-2",
    "neck": "joint-neck",
    "head": "joint-head",
    "clavicle_l": "joint-l-clavicle",
    "shoulder_l": "joint-l-shoulder",
    "elbow_l": "joint-l-elbow",
    "wrist_l": "joint-l-hand",
    "hip_l": "joint-l-upper-leg",
    "knee_l": "joint-l-knee",
    "ankle_l": "joint-l-ankle",
    "toe_l": "joint-l-foot-1",
}
_FINGERS = ("thumb", "index", "middle", "ring", "pinky")


def bone_map(bone_names: tuple[str, ...]) -> dict[str, str]:
    """game_engine bone -> the grade joint whose weights it joins."""
    out = {"Root": "pelvis", "pelvis": "pelvis", "spine_01": "spine", "spine_02": "spine"}
    out |= {"spine_03": "chest", "neck_01": "neck", "head": "head"}
    for s in ("l", "r"):
        out |= {
            f"clavicle_{s}": f"clavicle_{s}",
            f"upperarm_{s}": f"shoulder_{s}",
            f"lowerarm_{s}": f"elbow_{s}",
            f"hand_{s}": f"wrist_{s}",
            f"thigh_{s}": f"hip_{s}",
            f"calf_{s}": f"knee_{s}",
            f"foot_{s}": f"ankle_{s}",
            f"ball_{s}": f"toe_{s}",
        }
        for f in _FINGERS:
            for k in (1, 2, 3):
                out[f"{f}_0{k}_{s}"] = f"wrist_{s}"
    missing = sorted(set(bone_names) - set(out))
    if missing:
        raise ValueError(f"game_engine bones without a grade joint: {missing}")
    return out


def joint_cube(name: str) -> str:
    """The MakeHuman cube of a grade joint (right side mirrored from the left's name)."""
    if name.endswith("_r"):
        return JOINT_CUBES[name[:-2] + "_l"].replace("-l-", "-r-")
    return JOINT_CUBES[name]


def joint_positions(vertices: FloatArray, cubes: dict[str, np.ndarray]) -> FloatArray:
    """(J, 3) grade joint positions: centres of their joint cubes on `vertices`."""
    return np.stack([vertices[cubes[joint_cube(j)]].mean(axis=0) for j in JOINT_NAMES])


def merged_weights(
    n_vertices: int, weights: dict[str, FloatArray], bone_names: tuple[str, ...]
) -> FloatArray:
    """(N, J) skin weights on grade's joints; rows of weighted vertices sum to 1."""
    bmap = bone_map(bone_names)
    w = np.zeros((n_vertices, N_JOINTS))
    for bone in sorted(weights):
        pairs = weights[bone]
        if len(pairs):
            rows = pairs[:, 0].astype(np.int64)
            np.add.at(w[:, JOINT_INDEX[bmap[bone]]], rows, pairs[:, 1])
    total = w.sum(axis=1, keepdims=True)
    np.divide(w, total, out=w, where=total > 0)
    return w


# Bones straightened to hang along -z: (joint, child whose direction is aligned).
_STRAIGHTEN = tuple(
    (f"{a}_{s}", f"{b}_{s}")
    for s in ("l", "r")
    for a, b in (("shoulder", "elbow"), ("elbow", "wrist"), ("hip", "knee"), ("knee", "ankle"))
)


def repose_rotations(joints: FloatArray) -> FloatArray:
    """(J, 3, 3) world rotation of each joint taking the A-pose to grade's rest pose.

    Upper arms, forearms, thighs and shins are turned to point straight down; hands follow the
    forearms; feet and toes keep their orientation (flat on the floor); the rest is unchanged.
    """
    rot = np.tile(np.eye(3), (N_JOINTS, 1, 1))
    down = np.array([0.0, 0.0, -1.0])
    for joint, child in _STRAIGHTEN:
        j, c = JOINT_INDEX[joint], JOINT_INDEX[child]
        rot[j] = rotation_between(joints[c] - joints[j], down)
    for s in ("l", "r"):
        rot[JOINT_INDEX[f"wrist_{s}"]] = rot[JOINT_INDEX[f"elbow_{s}"]]
    return rot


def repose(
    vertices: FloatArray, weights: FloatArray, joints: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Vertices (N, 3) and joints (J, 3) moved from the A-pose to grade's rest pose.

    Joints follow forward kinematics with the rotations of `repose_rotations` (each joint's
    offset from its parent turned by the parent's rotation); vertices follow by linear blend
    skinning with `weights` (rows summing to 1).
    """
    rot = repose_rotations(joints)
    new = joints.copy()
    for j in range(N_JOINTS):
        p = PARENTS[j]
        if p >= 0:
            new[j] = new[p] + rot[p] @ (joints[j] - joints[p])
    shift = new - np.einsum("jab,jb->ja", rot, joints)
    blend = (weights @ rot.reshape(N_JOINTS, 9)).reshape(-1, 3, 3)
    out: FloatArray = weights @ shift + np.einsum("vab,vb->va", blend, vertices)
    return out, new
