"""BVH motion capture files: read, write, and retarget onto the person skeleton.

Core module (numpy/scipy only). BVH (Biovision Hierarchy) is the plain-text format most motion
capture libraries export (CMU, Mixamo, Bandai-Namco): a HIERARCHY of joints with OFFSETs and
rotation CHANNELS, then MOTION frames of channel values. Rotations apply in the order their
channels are listed (intrinsic), a child's position is parent position + parent rotation *
OFFSET. Files are Y-up with the character facing +Z (BvhAxes.Y_UP, the common convention) or
Z-up facing +X (BvhAxes.Z_UP).

Retargeting matches joints by name (JOINT_MAP, case-insensitive, a "prefix:" such as Mixamo's
"mixamorig:" ignored), and gives each skeleton joint the world rotation of its BVH joint, corrected
by the rotation that takes the skeleton's rest bone direction onto the BVH's (so a T-pose file
drives a skeleton whose rest pose has hanging arms). Joints without a match follow their parent.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from grade_common.errors import GradeError
from grade_common.rotations import rotation_between
from grade_common.types import FloatArray
from grade_people.skeleton import (
    JOINT_INDEX,
    JOINT_NAMES,
    N_JOINTS,
    PARENTS,
    BodyParams,
    forward_kinematics,
    rest_offsets,
)


class BvhError(GradeError):
    """A BVH file that cannot be read or retargeted."""


class BvhAxes(enum.Enum):
    Y_UP = "y_up"  # Y up, character faces +Z (CMU, Mixamo exports)
    Z_UP = "z_up"  # Z up, faces +X, left +Y (already this project's body frame)


# BVH names (lower case, after any "prefix:") -> skeleton joint.
JOINT_MAP = {
    "hips": "pelvis",
    "pelvis": "pelvis",
    "spine": "spine",
    "spine1": "chest",
    "chest": "chest",
    "spine2": "chest",
    "neck": "neck",
    "head": "head",
    "leftshoulder": "clavicle_l",
    "leftcollar": "clavicle_l",
    "leftarm": "shoulder_l",
    "leftuparm": "shoulder_l",
    "leftforearm": "elbow_l",
    "leftlowarm": "elbow_l",
    "lefthand": "wrist_l",
    "rightshoulder": "clavicle_r",
    "rightcollar": "clavicle_r",
    "rightarm": "shoulder_r",
    "rightuparm": "shoulder_r",
    "rightforearm": "elbow_r",
    "rightlowarm": "elbow_r",
    "righthand": "wrist_r",
    "leftupleg": "hip_l",
    "lefthip": "hip_l",
    "leftleg": "knee_l",
    "leftlowleg": "knee_l",
    "leftfoot": "ankle_l",
    "lefttoebase": "toe_l",
    "lefttoe": "toe_l",
    "rightupleg": "hip_r",
    "righthip": "hip_r",
    "rightleg": "knee_r",
    "rightlowleg": "knee_r",
    "rightfoot": "ankle_r",
    "righttoebase": "toe_r",
    "righttoe": "toe_r",
}
# The name write_bvh gives each skeleton joint (inverse of JOINT_MAP's first choices).
BVH_NAMES = {
    "pelvis": "Hips",
    "spine": "Spine",
    "chest": "Spine1",
    "neck": "Neck",
    "head": "Head",
    "clavicle_l": "LeftShoulder",
    "shoulder_l": "LeftArm",
    "elbow_l": "LeftForeArm",
    "wrist_l": "LeftHand",
    "clavicle_r": "RightShoulder",
    "shoulder_r": "RightArm",
    "elbow_r": "RightForeArm",
    "wrist_r": "RightHand",
    "hip_l": "LeftUpLeg",
    "knee_l": "LeftLeg",
    "ankle_l": "LeftFoot",
    "toe_l": "LeftToeBase",
    "hip_r": "RightUpLeg",
    "knee_r": "RightLeg",
    "ankle_r": "RightFoot",
    "toe_r": "RightToeBase",
}
# The child whose direction is each joint's bone (for the rest-pose correction).
_BONE_CHILD = {
    "pelvis": "spine",
    "spine": "chest",
    "chest": "neck",
    "neck": "head",
    "clavicle_l": "shoulder_l",
    "shoulder_l": "elbow_l",
    "elbow_l": "wrist_l",
    "clavicle_r": "shoulder_r",
    "shoulder_r": "elbow_r",
    "elbow_r": "wrist_r",
    "hip_l": "knee_l",
    "knee_l": "ankle_l",
    "ankle_l": "toe_l",
    "hip_r": "knee_r",
    "knee_r": "ankle_r",
    "ankle_r": "toe_r",
}
# BVH coordinates -> body frame (x forward, y left, z up).
_AXES = {
    BvhAxes.Y_UP: np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]),
    BvhAxes.Z_UP: np.eye(3),
}


@dataclass(frozen=True)
class BvhJoint:
    name: str
    parent: int  # -1 for the root
    offset: FloatArray  # (3,) in file units
    channels: tuple[str, ...]  # e.g. ("Xposition", ..., "Zrotation", "Xrotation", "Yrotation")


@dataclass(frozen=True)
class BvhMotion:
    joints: tuple[BvhJoint, ...]
    frame_time_s: float
    values: FloatArray  # (frames, total channels), in file order

    @property
    def n_frames(self) -> int:
        return len(self.values)


def parse_bvh(text: str) -> BvhMotion:
    """Parse a BVH document. Raises BvhError naming the line and what was expected."""
    tokens = text.split()
    pos = 0

    def take(what: str) -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise BvhError(f"BVH: the file ends where {what} was expected")
        pos += 1
        return tokens[pos - 1]

    def expect(word: str) -> None:
        got = take(repr(word))
        if got.upper() != word.upper():
            raise BvhError(f"BVH: expected {word!r}, got {got!r} (token {pos})")

    def number(what: str) -> float:
        raw = take(what)
        try:
            return float(raw)
        except ValueError:
            raise BvhError(f"BVH: {what} must be a number, got {raw!r}") from None

    joints: list[BvhJoint] = []
    expect("HIERARCHY")
    kind = take("ROOT")
    if kind.upper() != "ROOT":
        raise BvhError(f"BVH: expected 'ROOT', got {kind!r}")

    def joint(parent: int) -> None:
        name = take("a joint name")
        expect("{")
        expect("OFFSET")
        offset = np.array([number(f"{name} OFFSET") for _ in range(3)])
        expect("CHANNELS")
        n = int(number(f"{name} CHANNELS count"))
        channels = tuple(take(f"{name} channel") for _ in range(n))
        for c in channels:
            if c.lower() not in {f"{a}{k}" for a in "xyz" for k in ("position", "rotation")}:
                raise BvhError(f"BVH: joint {name!r} has an unknown channel {c!r}")
        joints.append(BvhJoint(name, parent, offset, channels))
        me = len(joints) - 1
        while True:
            word = take("JOINT, End Site or }")
            if word.upper() == "JOINT":
                joint(me)
            elif word.upper() == "END":
                expect("Site")
                expect("{")
                expect("OFFSET")
                for _ in range(3):
                    number("End Site OFFSET")
                expect("}")
            elif word == "}":
                return
            else:
                raise BvhError(f"BVH: expected JOINT, End Site or '}}' in {name!r}, got {word!r}")

    joint(-1)
    expect("MOTION")
    expect("Frames:")
    n_frames = int(number("Frames"))
    expect("Frame")
    expect("Time:")
    frame_time = number("Frame Time")
    if frame_time <= 0:
        raise BvhError(f"BVH: Frame Time must be > 0, got {frame_time}")
    n_ch = sum(len(j.channels) for j in joints)
    rest = tokens[pos:]
    if len(rest) != n_frames * n_ch:
        raise BvhError(
            f"BVH: {n_frames} frames of {n_ch} channels need {n_frames * n_ch} values, "
            f"the file has {len(rest)}"
        )
    try:
        values = np.array(rest, dtype=np.float64).reshape(n_frames, n_ch)
    except ValueError as err:
        raise BvhError(f"BVH: a frame value is not a number ({err})") from None
    return BvhMotion(tuple(joints), frame_time, values)


def bvh_forward_kinematics(motion: BvhMotion) -> tuple[FloatArray, FloatArray]:
    """World positions (F, B, 3) and rotations (F, B, 3, 3) of every BVH joint, file units/axes."""
    f, b = motion.n_frames, len(motion.joints)
    pos = np.zeros((f, b, 3))
    rot = np.zeros((f, b, 3, 3))
    col = 0
    for i, j in enumerate(motion.joints):
        local_pos = np.broadcast_to(j.offset, (f, 3)).copy()
        rot_axes = ""
        rot_cols = []
        for c in j.channels:
            axis, kind = c[0].lower(), c[1:].lower()
            if kind == "position":
                # The root's position channels add to its OFFSET; a joint's replace it.
                a = "xyz".index(axis)
                base = j.offset[a] if j.parent < 0 else 0.0
                local_pos[:, a] = motion.values[:, col] + base
            else:
                rot_axes += axis.upper()
                rot_cols.append(col)
            col += 1
        if rot_axes:
            local_rot = Rotation.from_euler(
                rot_axes, motion.values[:, rot_cols], degrees=True
            ).as_matrix()
        else:
            local_rot = np.broadcast_to(np.eye(3), (f, 3, 3))
        if j.parent < 0:
            pos[:, i] = local_pos
            rot[:, i] = local_rot
        else:
            p = j.parent
            pos[:, i] = pos[:, p] + np.einsum("fab,fb->fa", rot[:, p], local_pos)
            rot[:, i] = rot[:, p] @ local_rot
    return pos, rot


@dataclass(frozen=True)
class RetargetedMotion:
    """A BVH motion on the skeleton: FK inputs for every frame."""

    frame_time_s: float
    root_position: FloatArray  # (F, 3) pelvis, metres, body frame axes
    local_rot: FloatArray  # (F, J, 3, 3)
    mapped: dict[str, str]  # skeleton joint -> BVH joint driving it


def _normal_name(name: str) -> str:
    return name.rsplit(":", 1)[-1].lower().replace("_", "")


def _leg_ratio(source: dict[int, int], rest_pos: FloatArray, our_rest: FloatArray) -> float:
    """Our leg (pelvis over ankle) over the file's, both at rest; 1 without mapped ankles."""
    root = source[JOINT_INDEX["pelvis"]]
    feet = [source[JOINT_INDEX[a]] for a in ("ankle_l", "ankle_r") if JOINT_INDEX[a] in source]
    if not feet:
        return 1.0
    bvh_leg = rest_pos[root, 2] - min(rest_pos[i, 2] for i in feet)
    our_leg = our_rest[0, 2] - our_rest[JOINT_INDEX["ankle_l"], 2]
    return float(our_leg / bvh_leg) if bvh_leg > 1e-9 else 1.0


def retarget(motion: BvhMotion, body: BodyParams, axes: BvhAxes = BvhAxes.Y_UP) -> RetargetedMotion:
    """Map `motion` onto the skeleton of `body` (see module docstring)."""
    by_name = {_normal_name(j.name): i for i, j in enumerate(motion.joints)}
    source: dict[int, int] = {}  # skeleton joint -> BVH joint
    for bvh_name, i in by_name.items():
        target = JOINT_MAP.get(bvh_name)
        if target is not None and JOINT_INDEX[target] not in source:
            source[JOINT_INDEX[target]] = i
    if JOINT_INDEX["pelvis"] not in source:
        raise BvhError(
            "BVH: no joint matches the pelvis (named Hips or Pelvis); "
            f"joints: {[j.name for j in motion.joints]}"
        )
    c = _AXES[axes]
    rest_motion = BvhMotion(
        motion.joints, motion.frame_time_s, np.zeros((1, motion.values.shape[1]))
    )
    rest_pos, _ = bvh_forward_kinematics(rest_motion)
    rest_pos = rest_pos[0] @ c.T
    pos, rot = bvh_forward_kinematics(motion)
    world_rot = c @ rot @ c.T  # (F, B, 3, 3) in body axes
    ours = rest_offsets(body)
    our_rest = forward_kinematics(ours, np.broadcast_to(np.eye(3), (N_JOINTS, 3, 3)), ours[0])[0]
    f = motion.n_frames
    global_rot = np.zeros((f, N_JOINTS, 3, 3))
    for j in range(N_JOINTS):
        name = JOINT_NAMES[j]
        if j not in source:
            global_rot[:, j] = global_rot[:, PARENTS[j]] if PARENTS[j] >= 0 else np.eye(3)
            continue
        align = np.eye(3)
        child = _BONE_CHILD.get(name)
        if child is not None and JOINT_INDEX[child] in source:
            d_ours = our_rest[JOINT_INDEX[child]] - our_rest[j]
            d_bvh = rest_pos[source[JOINT_INDEX[child]]] - rest_pos[source[j]]
            if np.linalg.norm(d_bvh) > 1e-9:
                align = rotation_between(d_ours, d_bvh)
        global_rot[:, j] = world_rot[:, source[j]] @ align
    local = np.empty_like(global_rot)
    local[:, 0] = global_rot[:, 0]
    for j in range(1, N_JOINTS):
        local[:, j] = np.swapaxes(global_rot[:, PARENTS[j]], -1, -2) @ global_rot[:, j]
    # Root translation scaled by leg length, so feet meet the floor on a different-sized body.
    # The file's floor is its z = 0 (as motion capture exports have it; see `grounded`).
    root = source[JOINT_INDEX["pelvis"]]
    root_pos = (pos[:, root] @ c.T) * _leg_ratio(source, rest_pos, our_rest)
    mapped = {JOINT_NAMES[j]: motion.joints[i].name for j, i in sorted(source.items())}
    return RetargetedMotion(motion.frame_time_s, root_pos, local, mapped)


def write_bvh(
    body: BodyParams, local_rot: FloatArray, root_position: FloatArray, frame_time_s: float
) -> str:
    """A BVH document (Y-up, centimetres, ZXY channels) of skeleton poses.

    Args:
        local_rot: (F, J, 3, 3) and root_position: (F, 3) as forward_kinematics takes them.
    """
    c = _AXES[BvhAxes.Y_UP]
    offsets = rest_offsets(body) @ c  # body axes -> BVH axes: c.T @ v for each row
    children: dict[int, list[int]] = {j: [] for j in range(N_JOINTS)}
    for j in range(1, N_JOINTS):
        children[int(PARENTS[j])].append(j)
    lines = ["HIERARCHY"]

    def emit(j: int, depth: int) -> None:
        pad = "  " * depth
        head = "ROOT" if j == 0 else "JOINT"
        off = np.zeros(3) if j == 0 else offsets[j] * 100.0
        lines.append(f"{pad}{head} {BVH_NAMES[JOINT_NAMES[j]]}")
        lines.append(f"{pad}{{")
        lines.append(f"{pad}  OFFSET {off[0]:.6f} {off[1]:.6f} {off[2]:.6f}")
        if j == 0:
            lines.append(
                f"{pad}  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"
            )
        else:
            lines.append(f"{pad}  CHANNELS 3 Zrotation Xrotation Yrotation")
        for k in children[j]:
            emit(k, depth + 1)
        if not children[j]:
            lines.extend([f"{pad}  End Site", f"{pad}  {{", f"{pad}    OFFSET 0 0 0", f"{pad}  }}"])
        lines.append(f"{pad}}}")

    emit(0, 0)
    f = len(local_rot)
    rot_bvh = c.T @ local_rot @ c  # body axes -> BVH axes
    euler = Rotation.from_matrix(rot_bvh.reshape(-1, 3, 3)).as_euler("ZXY", degrees=True)
    euler = euler.reshape(f, N_JOINTS, 3)
    root = (root_position @ c) * 100.0
    lines.extend(["MOTION", f"Frames: {f}", f"Frame Time: {frame_time_s:.9f}"])
    for k in range(f):
        vals = [*root[k], *euler[k].ravel()]
        lines.append(" ".join(f"{v:.6f}" for v in vals))
    return "\n".join(lines) + "\n"


# The feet joints whose height above the floor `grounded` matches to the skeleton's rest pose.
_FOOT_JOINTS = ("ankle_l", "ankle_r", "toe_l", "toe_r")
GROUND_PERCENTILE = 1.0  # of the frames' lowest foot: the clip's floor
CONTACT_M = 0.04  # a frame whose lowest foot is this near its floor is a ground contact


def grounded(motion: BvhMotion, body: BodyParams, axes: BvhAxes = BvhAxes.Y_UP) -> BvhMotion:
    """`motion` with its root raised or lowered, frame by frame, so that its ground contacts are
    on our floor.

    Motion capture files rarely put the floor at exactly their zero (the CMU conversions stand
    their toe joints 3-6 cm up), and a retargeted crouch on other proportions lifts or sinks the
    feet. Retargeted onto `body`, each frame's lowest foot is the least of its ankles' and toes'
    heights over where they are when `body` stands at rest; the GROUND_PERCENTILE of those over
    the clip is the file's floor. Every frame whose lowest foot is within CONTACT_M of that
    floor (a ground contact) moves onto ours, and the frames between contacts (a jump, a climb)
    move by the shift interpolated linearly between the contacts around them, so they keep
    their height over the ground. The shifts are in file units (through `body`'s leg
    ratio), so other bodies get them scaled by their own leg length.

    Raises:
        BvhError: the root has no up position channel, or no joint matches the pelvis.
    """
    up = "y" if axes is BvhAxes.Y_UP else "z"
    root = motion.joints[0]
    col = next((k for k, ch in enumerate(root.channels) if ch.lower() == up + "position"), None)
    if col is None:
        raise BvhError(f"BVH: the root {root.name!r} has no {up.upper()}position channel to ground")
    moved = retarget(motion, body, axes)
    ours = rest_offsets(body)
    rest = np.broadcast_to(np.eye(3), (N_JOINTS, 3, 3))
    rest_z = forward_kinematics(ours, rest, ours[0])[0][:, 2]
    pos, _ = forward_kinematics(ours, moved.local_rot, moved.root_position)
    feet = [JOINT_INDEX[j] for j in _FOOT_JOINTS]
    height = (pos[:, feet, 2] - rest_z[feet]).min(axis=1)  # each frame's lowest foot
    floor_m = float(np.percentile(height, GROUND_PERCENTILE))
    contact = np.flatnonzero(height < floor_m + CONTACT_M)  # never empty
    shift_m = -np.interp(np.arange(len(height)), contact, height[contact])
    raw_z = motion.values[:, col] + root.offset["xyz".index(up)]
    scaled = moved.root_position[:, 2]
    big = np.abs(raw_z) > 1e-9
    if not big.any():
        raise BvhError("BVH: the root never leaves height 0; cannot scale its grounding")
    ratio = float(np.median(scaled[big] / raw_z[big]))
    values = motion.values.copy()
    values[:, col] += shift_m / ratio
    return BvhMotion(motion.joints, motion.frame_time_s, values)
