"""Motion capture clips of the DeepMimic humanoid, and the gait cycles the motion library uses.

Core module (numpy/scipy only). The pybullet wheel ships DeepMimic's clips
(`pybullet_data/data/motions/humanoid3d_*.txt`); set-up copies them into motions_dir() (see
docs/people.md). A clip is JSON: {"Loop": ..., "Frames": [[duration, root xyz, root quat, chest
quat, neck quat, right hip quat, right knee angle, right ankle quat, right shoulder quat, right
elbow angle, left hip quat, ..., left elbow angle], ...]}, quaternions w first and relative to the
parent joint, knees and elbows one angle about the joint's z axis. Its axes are x forward, y up,
z right; its rest pose stands with the arms hanging, every joint frame world-aligned, which is
also this project's rest pose (skeleton.py), so a joint's local rotation carries over once the
axes are turned (x forward, y left, z up). Some quaternions are not of unit length: normalised.

`gait_cycle` turns a one-cycle locomotion clip (walk, run) into a table over the gait phase
(u = 0 at the left foot's touchdown): every joint's local rotation, the pelvis's bob, the stance
fraction and the swing foot's path (progress, lift and pitch), in units of the clip's leg length.
"""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.spatial.transform import Rotation

from grade_common.errors import GradeError
from grade_common.rotations import quats_to_matrices
from grade_common.types import FloatArray
from grade_people.skeleton import JOINT_INDEX, N_JOINTS, forward_kinematics

MOTIONS_DIR_ENV = "GRADE_MOTIONS_DIR"
# What set-up copies (scripts/setup_env.sh): the source package, its version, its files.
MOTIONS_PACKAGE = "pybullet==3.2.7"
WALK_CLIP = "humanoid3d_walk.txt"
RUN_CLIP = "humanoid3d_run.txt"
# Walks along a curve, turning about 0.8 rad/s (the clips have no turn on the spot).
TURN_LEFT_CLIP = "walker/turn_left1.txt"
TURN_RIGHT_CLIP = "walker/turn_right1.txt"

# The DeepMimic humanoid (pybullet_data/humanoid/humanoid.urdf at its 0.25 scale), in this
# project's axes: leg bones, hip width and the foot's sole corners in the ankle's frame.
DM_THIGH_M = 0.421546
DM_SHIN_M = 0.409870
DM_HIP_Y_M = 0.084887
DM_HEEL_M = (-0.0435, -0.05)  # (x, z) of the sole's back under the ankle
DM_TOE_M = (0.1335, -0.05)
DM_LEG_M = DM_THIGH_M + DM_SHIN_M
# (DeepMimic joint, its width in a frame, our joints driven by it, each joint's share).
_LAYOUT: tuple[tuple[str, int, tuple[str, ...]], ...] = (
    ("chest", 4, ("spine", "chest")),
    ("neck", 4, ("neck", "head")),
    ("right_hip", 4, ("hip_r",)),
    ("right_knee", 1, ("knee_r",)),
    ("right_ankle", 4, ("ankle_r",)),
    ("right_shoulder", 4, ("shoulder_r",)),
    ("right_elbow", 1, ("elbow_r",)),
    ("left_hip", 4, ("hip_l",)),
    ("left_knee", 1, ("knee_l",)),
    ("left_ankle", 4, ("ankle_l",)),
    ("left_shoulder", 4, ("shoulder_l",)),
    ("left_elbow", 1, ("elbow_l",)),
)
FRAME_WIDTH = 1 + 3 + 4 + sum(w for _, w, _ in _LAYOUT)
# Cycle means taken out of the tables, per joint and axis: the DeepMimic humanoid holds its arms
# out from its capsule torso (14 degrees walking, 43 running; ours hang 6 degrees out), and its
# pelvis's mean yaw is a few degrees off its travel.
_NEUTRAL_AXES = {"shoulder_l": "X", "shoulder_r": "X", "pelvis": "Z"}
# DeepMimic axes (x forward, y up, z right) -> ours (x forward, y left, z up).
_C = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, -1.0], [0.0, 1.0, 0.0]])


class MocapError(GradeError):
    """A motion capture clip that cannot be read or used."""


@dataclass(frozen=True)
class MocapClip:
    """A clip on this project's joints, in the DeepMimic humanoid's own size (metres)."""

    name: str
    frame_time_s: float
    root_position: FloatArray  # (F, 3) pelvis, our axes
    local_rot: FloatArray  # (F, J, 3, 3) local rotations of our joints

    @property
    def n_frames(self) -> int:
        return len(self.root_position)


def motions_dir() -> Path:
    """Where set-up put the motion capture files: $GRADE_MOTIONS_DIR, else the environment's
    share/grade/motions."""
    env = os.environ.get(MOTIONS_DIR_ENV)
    return Path(env) if env else Path(sys.prefix) / "share" / "grade" / "motions"


def _quats(raw: FloatArray, where: str) -> FloatArray:
    """(F, 4) wxyz DeepMimic quaternions -> (F, 3, 3) rotations in our axes (normalised)."""
    norm = np.linalg.norm(raw, axis=1, keepdims=True)
    if np.any(norm < 1e-6):
        raise MocapError(f"{where}: a quaternion has length {float(norm.min()):.2g}; need > 0")
    q = raw / norm
    m = quats_to_matrices(q)
    out: FloatArray = _C @ m @ _C.T
    return out


def parse_deepmimic(text: str, name: str = "clip") -> MocapClip:
    """Read a DeepMimic humanoid clip.

    Raises:
        MocapError: not JSON, no frames, frames of the wrong width or bad frame times.
    """
    try:
        doc = json.loads(text)
        frames = np.asarray(doc["Frames"], dtype=np.float64)
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as err:
        raise MocapError(f"{name}: not a DeepMimic clip (JSON with 'Frames'): {err}") from err
    if frames.ndim != 2 or len(frames) < 2 or frames.shape[1] != FRAME_WIDTH:
        raise MocapError(
            f"{name}: frames of shape {frames.shape}; need 2 or more of {FRAME_WIDTH} values "
            "(the humanoid3d layout)"
        )
    dt = frames[:-1, 0]
    if np.any(dt <= 0) or np.ptp(dt) > 1e-6 * dt.max():
        raise MocapError(f"{name}: frame durations {dt.min()}..{dt.max()} s; need one value > 0")
    n = len(frames)
    local = np.broadcast_to(np.eye(3), (n, N_JOINTS, 3, 3)).copy()
    local[:, 0] = _quats(frames[:, 4:8], f"{name} root")
    col = 8
    for joint, width, ours in _LAYOUT:
        raw = frames[:, col : col + width]
        col += width
        if width == 1:  # one angle about DeepMimic's z = our -y
            rot = Rotation.from_rotvec(np.outer(-raw[:, 0], [0.0, 1.0, 0.0])).as_matrix()
        else:
            rot = _quats(raw, f"{name} {joint}")
        if len(ours) == 1:
            local[:, JOINT_INDEX[ours[0]]] = rot
        else:  # one DeepMimic joint spread evenly over a chain of ours (spine + chest)
            part = Rotation.from_rotvec(Rotation.from_matrix(rot).as_rotvec() / len(ours))
            for j in ours:
                local[:, JOINT_INDEX[j]] = part.as_matrix()
    root: FloatArray = frames[:, 1:4] @ _C.T
    return MocapClip(name, float(dt[0]), root, local)


def load_clip(file_name: str) -> MocapClip:
    """A clip of motions_dir() by file name.

    Raises:
        MocapError: the file is missing (names set-up as the fix) or unreadable.
    """
    path = motions_dir() / file_name
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise MocapError(
            f"motion capture file {path} cannot be read ({err.strerror}); run `make setup` "
            f"(it copies the clips of {MOTIONS_PACKAGE}) or set {MOTIONS_DIR_ENV}"
        ) from err
    return parse_deepmimic(text, file_name)


def _dm_offsets() -> FloatArray:
    """(J, 3) rest offsets of the DeepMimic legs on our joints (the upper body is not needed)."""
    off = np.zeros((N_JOINTS, 3))
    for side, sign in (("l", 1.0), ("r", -1.0)):
        off[JOINT_INDEX["hip_" + side]] = (0.0, sign * DM_HIP_Y_M, 0.0)
        off[JOINT_INDEX["knee_" + side]] = (0.0, 0.0, -DM_THIGH_M)
        off[JOINT_INDEX["ankle_" + side]] = (0.0, 0.0, -DM_SHIN_M)
        off[JOINT_INDEX["toe_" + side]] = (DM_TOE_M[0], 0.0, DM_TOE_M[1])
    return off


@dataclass(frozen=True)
class GaitCycle:
    """One gait cycle of a clip over M phase bins (u = bin / M, 0 = left touchdown)."""

    quat_wxyz: FloatArray  # (M, J, 4) local rotations; the pelvis's without the travel heading
    pelvis_bob: FloatArray  # (M,) pelvis height minus its cycle mean, per clip leg length
    duty: float  # stance fraction of a foot's cycle
    # The swing (left foot) over S bins from lift-off to touchdown: horizontal progress 0..1,
    # ankle lift above the straight line between its ends (per leg length), and the ankle's
    # flexion (rad, toes down positive) minus the line between its ends.
    swing_progress: FloatArray
    swing_lift: FloatArray
    swing_pitch: FloatArray
    speed_per_leg: float  # the clip's speed, leg lengths per second
    cadence_hz: float  # steps per second

    @property
    def bins(self) -> int:
        return len(self.pelvis_bob)


def _resample(values: FloatArray, t: FloatArray, frame_time_s: float) -> FloatArray:
    """Linear interpolation of per-frame `values` (F, ...) at times t (clamped to the clip)."""
    x = np.clip(t / frame_time_s, 0.0, len(values) - 1.0)
    i = np.minimum(np.floor(x).astype(np.int64), len(values) - 2)
    f = (x - i).reshape(-1, *([1] * (values.ndim - 1)))
    out: FloatArray = values[i] * (1 - f) + values[i + 1] * f
    return out


def _wxyz(rot: FloatArray) -> FloatArray:
    xyzw = Rotation.from_matrix(rot.reshape(-1, 3, 3)).as_quat()
    q = np.concatenate([xyzw[:, 3:], xyzw[:, :3]], axis=1).reshape(*rot.shape[:-2], 4)
    # One hemisphere along the clip, so that neighbouring frames interpolate the short way.
    for k in range(1, len(q)):
        flip = np.einsum("...i,...i->...", q[k], q[k - 1]) < 0
        q[k][flip] *= -1
    out: FloatArray = q
    return out


def gait_cycle(clip: MocapClip, bins: int = 64, swing_bins: int = 32) -> GaitCycle:
    """The gait table of a clip holding one whole cycle whose last frame repeats the first.

    Raises:
        MocapError: the clip does not travel, or a foot never leaves or touches the floor.
    """
    travel = clip.root_position[-1, :2] - clip.root_position[0, :2]
    period = (clip.n_frames - 1) * clip.frame_time_s
    if np.linalg.norm(travel) < 0.1:
        raise MocapError(f"{clip.name}: travels {np.linalg.norm(travel):.2f} m; need a gait")
    heading = math.atan2(travel[1], travel[0])
    unturn = Rotation.from_euler("z", -heading).as_matrix()
    local = clip.local_rot.copy()
    local[:, 0] = unturn @ local[:, 0]
    root = (clip.root_position - clip.root_position[0]) @ unturn.T
    pos, rot = forward_kinematics(_dm_offsets(), local, root)
    # The table's pelvis carries no net turn over the cycle (a turning clip's, and the walk's
    # 0.1 rad of drift): it is taken out linearly, so that the cycle wraps without a jump.
    yaw = Rotation.from_matrix(clip.local_rot[:, 0]).as_euler("ZYX")[:, 0]
    drift = math.remainder(float(yaw[-1] - yaw[0]), 2 * math.pi)
    pelvis = clip.local_rot[:, 0].copy()
    frac = np.arange(clip.n_frames) / (clip.n_frames - 1)
    pelvis = Rotation.from_euler("z", -(yaw[0] + drift * frac)[:, None]).as_matrix() @ pelvis
    table_rot = local.copy()
    table_rot[:, 0] = pelvis
    feet = {}
    for side in ("l", "r"):
        ankle = pos[:, JOINT_INDEX["ankle_" + side]]
        frame = rot[:, JOINT_INDEX["ankle_" + side]]
        low = np.minimum(
            (ankle + frame @ np.array([DM_HEEL_M[0], 0.0, DM_HEEL_M[1]]))[:, 2],
            (ankle + frame @ np.array([DM_TOE_M[0], 0.0, DM_TOE_M[1]]))[:, 2],
        )
        # On the floor: low, and the ball of the foot (where a rolling foot pivots) nearly still.
        ball = pos[:, JOINT_INDEX["toe_" + side], :2]
        moving = np.linalg.norm(np.diff(ball, axis=0, append=ball[1:2] + travel), axis=1)
        slow = moving / clip.frame_time_s < 0.3 * float(np.linalg.norm(travel)) / period
        feet[side] = (ankle, frame, slow & (low <= np.percentile(low, 10) + 0.05))
    ankle, frame, contact = feet["l"]
    on = contact[:-1]
    n = len(on)
    # The swing is the longest cyclic run off the floor (short gaps in a stance are noise).
    best, start = 0, -1
    for k in range(n):
        if not on[k] and on[k - 1]:
            length = next((m for m in range(1, n + 1) if on[(k + m) % n]), n)
            if length > best:
                best, start = length, k
    if start < 0 or best >= n:
        raise MocapError(f"{clip.name}: the left foot never touches down and lifts off")
    off_frame, td = start, (start + best) % n
    on = np.ones(n, dtype=bool)
    on[(start + np.arange(best)) % n] = False
    duty = float(on.mean())
    t_td = td * clip.frame_time_s
    u = np.arange(bins) / bins
    t = np.mod(t_td + u * period, period)
    q = _wxyz(table_rot)
    quat = _resample(q, t, clip.frame_time_s)
    quat /= np.linalg.norm(quat, axis=-1, keepdims=True)
    for joint, axis in _NEUTRAL_AXES.items():
        j = JOINT_INDEX[joint]
        r = Rotation.from_quat(np.concatenate([quat[:, j, 1:], quat[:, j, :1]], axis=1))
        mean = float(np.mean(r.as_euler("XYZ")[:, "XYZ".index(axis)]))
        xyzw = (Rotation.from_euler(axis.lower(), -mean) * r).as_quat()
        quat[:, j] = np.concatenate([xyzw[:, 3:], xyzw[:, :3]], axis=1)
    bob = _resample(root[:, 2], t, clip.frame_time_s)
    # Swing: lift-off .. next touchdown, unwrapped over the cycle (world x keeps growing).
    t0 = off_frame * clip.frame_time_s
    t1 = t_td + (period if t_td <= t0 else 0.0)
    ts = t0 + (t1 - t0) * np.linspace(0.0, 1.0, swing_bins)
    wrap = ts >= period
    x = _resample(ankle[:, 0], np.mod(ts, period), clip.frame_time_s) + np.where(
        wrap, travel @ np.array([math.cos(heading), math.sin(heading)]), 0.0
    )
    z = _resample(ankle[:, 2], np.mod(ts, period), clip.frame_time_s)
    # The ankle's own flexion (foot against shin, toes down positive), as a Ry angle.
    ankle_local = local[:, JOINT_INDEX["ankle_l"]]
    flex = np.arctan2(ankle_local[:, 0, 2], ankle_local[:, 0, 0])
    pitch = _resample(flex, np.mod(ts, period), clip.frame_time_s)
    line = np.linspace(0.0, 1.0, swing_bins)
    progress = (x - x[0]) / max(x[-1] - x[0], 1e-9)
    lift = np.maximum(z - (z[0] + (z[-1] - z[0]) * line), 0.0) / DM_LEG_M
    pitch_rel = pitch - (pitch[0] + (pitch[-1] - pitch[0]) * line)
    dist = float(np.linalg.norm(travel))
    return GaitCycle(
        quat_wxyz=quat,
        pelvis_bob=(bob - bob.mean()) / DM_LEG_M,
        duty=duty,
        swing_progress=np.clip(progress, 0.0, 1.0),
        swing_lift=lift,
        swing_pitch=pitch_rel,
        speed_per_leg=dist / period / DM_LEG_M,
        cadence_hz=2.0 / period,
    )


def sample_table(table: FloatArray, u: FloatArray) -> FloatArray:
    """Rows of a cyclic table (M, ...) at phases u in [0, 1) (linear between bins)."""
    m = len(table)
    x = np.mod(np.asarray(u, dtype=np.float64), 1.0) * m
    i = np.floor(x).astype(np.int64) % m
    f = (x - np.floor(x)).reshape(-1, *([1] * (table.ndim - 1)))
    out: FloatArray = table[i] * (1 - f) + table[(i + 1) % m] * f
    return out


def sample_curve(curve: FloatArray, s: FloatArray) -> FloatArray:
    """A curve over [0, 1] (S samples, ends included) at s (clamped), linear."""
    x = np.clip(np.asarray(s, dtype=np.float64), 0.0, 1.0) * (len(curve) - 1)
    i = np.minimum(x.astype(np.int64), len(curve) - 2)
    f = x - i
    out: FloatArray = curve[i] * (1 - f) + curve[i + 1] * f
    return out
