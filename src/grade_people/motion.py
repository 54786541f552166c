"""The motion library: skeleton poses of a person from their planned timeline.

Core module (numpy/scipy only). The planner (people.plan_timeline) decides where a person is,
which way they face, the gait phase, the gait amplitude and the motion code at every physics step.
This module turns that into joint rotations of the skeleton:

- locomotion (walk at any speed, run above 2 m/s, turn = stepping on the spot, stand): the
  upper body, pelvis bob and swing foot path come from motion capture gait cycles (mocap.py,
  DeepMimic's walk and run, blended by speed); stance feet are planted in the world where the
  hip will be PLANT_AT_STANCE into the stance and two-bone leg IK (with heel/toe roll) reaches
  them, so they neither slide nor float; the cadence follows the speed (people.cadence_hz);
- upper-body and whole-body clips (sit, wave, look around, phone in hand) layered on top;
- transitions: every clip's weight is the one-hot motion code passed through a first-order filter
  (time constant BLEND_TAU_S) over the timeline, and joint angles blend linearly by weight.

Everything is a pure function of the timeline, so a replay that restores the timeline restores
the poses bit for bit.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray
from scipy.signal import lfilter

from grade_common.rotations import matrices_to_quats, quat_to_matrix, quats_to_matrices
from grade_common.types import FloatArray
from grade_people.body_mesh import body_mesh, random_clothing, skin_vertices
from grade_people.bvh import RetargetedMotion
from grade_people.config import MAX_CLIPS, PersonMotion
from grade_people.mocap import (
    RUN_CLIP,
    TURN_LEFT_CLIP,
    TURN_RIGHT_CLIP,
    WALK_CLIP,
    GaitCycle,
    gait_cycle,
    load_clip,
    sample_curve,
    sample_table,
)
from grade_people.people import (
    BLEND_TAU_S,
    CLIP_CODE,
    MOTION_CODES,
    N_MOTION_CODES,
    PersonTimeline,
    cadence_hz,
    leg_ik,
    run_weight,
)
from grade_people.skeleton import (
    JOINT_INDEX,
    N_JOINTS,
    BodyParams,
    euler_to_matrix,
    forward_kinematics,
    rest_offsets,
    rest_positions,
)

ROLL_PER_M = 1.6  # heel-rise (rad) per metre the flat ankle would be behind PIVOT
N_CODES = N_MOTION_CODES
CLIP_MIN_WEIGHT = 1e-6  # a BVH clip fading out below this weight no longer plays
FOOT_PHASE_OFFSETS = (0.0, 0.5)  # left, right: fraction of a gait cycle
# A stance foot is put down where the hip will be this far (fraction) into its stance, so it is
# ahead of the body at touchdown and behind it at lift-off by however far the body then moves.
PLANT_AT_STANCE = 0.42
PLANT_MAX_S = 1.0  # ... or this long after touchdown, whichever comes first (stopping)
# Turning faster than this (+ the blend) below this speed plays a turning clip's upper body
# (the TURN motion, stepping on the spot, always does).
TURN_CLIP_FROM_RPS = 0.6
TURN_CLIP_BLEND_RPS = 0.6
TURN_CLIP_BELOW_MPS = 0.8
HEEL_PER_TOE = 0.3  # the heel is this far behind the ankle, per toe offset ahead
# Joints whose rotations come from the motion capture gait cycles (the legs come from IK).
_GAIT_NAMES: tuple[str, ...] = ("pelvis", "spine", "chest", "neck", "head")
_GAIT_NAMES += ("shoulder_l", "elbow_l", "shoulder_r", "elbow_r")
GAIT_JOINTS = tuple(JOINT_INDEX[j] for j in _GAIT_NAMES)
J = JOINT_INDEX


@dataclass(frozen=True)
class GaitLibrary:
    walk: GaitCycle
    run: GaitCycle
    turn_left: GaitCycle
    turn_right: GaitCycle


@functools.lru_cache(maxsize=1)
def gait_cycles() -> GaitLibrary:
    """The gait cycles of the motion capture clips (mocap.motions_dir)."""
    return GaitLibrary(
        *(gait_cycle(load_clip(c)) for c in (WALK_CLIP, RUN_CLIP, TURN_LEFT_CLIP, TURN_RIGHT_CLIP))
    )


def turn_clip_weight(turn_rate_rps: FloatArray, speed_mps: FloatArray) -> FloatArray:
    """0 .. 1: how much a turning clip drives the upper body: turning fast at low speed."""
    fast = np.clip((np.abs(turn_rate_rps) - TURN_CLIP_FROM_RPS) / TURN_CLIP_BLEND_RPS, 0.0, 1.0)
    out: FloatArray = fast * np.clip(1.0 - np.asarray(speed_mps) / TURN_CLIP_BELOW_MPS, 0.0, 1.0)
    return out


def stance_duty(run: FloatArray) -> FloatArray:
    """Stance fraction of a foot's cycle, walk to run (0 .. 1 run weight)."""
    lib = gait_cycles()
    out: FloatArray = (1 - run) * lib.walk.duty + run * lib.run.duty
    return out


@dataclass(frozen=True)
class AnimationTrack:
    """What the motion library derives once from a timeline: clip weights and ground speed."""

    weights: FloatArray  # (n, N_CODES) blended clip weights, rows sum to 1
    speed_mps: FloatArray  # (n,) smoothed ground speed
    touchdown: NDArray[np.int64]  # (n, 2) step of each foot's (left, right) last touchdown
    next_touchdown: NDArray[np.int64]  # (n, 2) step of its next touchdown (itself if none)
    # (n, 2) step at which the body is where each foot's last / next stance plants the foot
    # (PLANT_AT_STANCE into that stance).
    plant: NDArray[np.int64]
    next_plant: NDArray[np.int64]
    clip_start: NDArray[np.int64]  # (n, MAX_CLIPS) step each BVH clip last started; -1: not yet


@dataclass(frozen=True)
class PoseInputs:
    """Everything pose() needs of N people (or one person at N steps), leading axis N."""

    position_xy: FloatArray  # (N, 2)
    heading_rad: FloatArray  # (N,)
    phase_rad: FloatArray  # (N,)
    amplitude: FloatArray  # (N,)
    weights: FloatArray  # (N, N_CODES)
    speed_mps: FloatArray  # (N,)
    time_s: FloatArray  # (N,)
    # Body state at each foot's last and next plant step (AnimationTrack.plant): where the foot
    # is planted / will land.
    plant_xy: FloatArray  # (N, 2 feet, 2)
    plant_heading: FloatArray  # (N, 2)
    plant_amplitude: FloatArray  # (N, 2)
    next_xy: FloatArray  # (N, 2, 2)
    next_heading: FloatArray  # (N, 2)
    next_amplitude: FloatArray  # (N, 2)
    clip_time_s: FloatArray  # (N, MAX_CLIPS) seconds since each BVH clip last started
    seat_height_m: FloatArray  # (N,) seat of a sit stop; NaN: none (see PersonTimeline)
    turn_rate_rps: FloatArray  # (N,) heading rate over the step before


def pose_inputs(
    timeline: PersonTimeline, track: AnimationTrack, dt_s: float, steps: NDArray[np.int64]
) -> PoseInputs:
    """One person's PoseInputs at `steps`."""
    k = np.asarray(steps, dtype=np.int64)
    td, nx = track.plant[k], track.next_plant[k]
    return PoseInputs(
        timeline.position_xy[k],
        timeline.heading_rad[k],
        timeline.phase_rad[k],
        timeline.amplitude[k],
        track.weights[k],
        track.speed_mps[k],
        k.astype(np.float64) * dt_s,
        timeline.position_xy[td],
        timeline.heading_rad[td],
        timeline.amplitude[td],
        timeline.position_xy[nx],
        timeline.heading_rad[nx],
        timeline.amplitude[nx],
        np.maximum(k[:, None] - track.clip_start[k], 0) * dt_s,
        timeline.seat_height_m[k],
        np.remainder(
            timeline.heading_rad[k] - timeline.heading_rad[np.maximum(k - 1, 0)] + math.pi,
            2 * math.pi,
        )
        / dt_s
        - math.pi / dt_s,
    )


def stack_inputs(inputs: list[PoseInputs]) -> PoseInputs:
    """PoseInputs of several people (each of one step) as one batch."""
    return PoseInputs(
        *(np.concatenate([getattr(i, f.name) for i in inputs]) for f in fields(PoseInputs))
    )


def _smooth(x: FloatArray, dt_s: float, first: FloatArray) -> FloatArray:
    """First-order low-pass along axis 0, starting settled at `first`."""
    a = 1.0 - math.exp(-dt_s / BLEND_TAU_S)
    zi = (1.0 - a) * np.asarray(first, dtype=np.float64).reshape(1, *np.shape(x)[1:])
    out: FloatArray = lfilter([a], [1.0, -(1.0 - a)], x, axis=0, zi=zi)[0]
    return out


def animation_track(timeline: PersonTimeline, dt_s: float) -> AnimationTrack:
    """Clip weights and speed of every step of `timeline` (physics step dt_s)."""
    codes = timeline.motion.astype(np.int64)
    onehot = np.zeros((len(codes), N_CODES))
    onehot[np.arange(len(codes)), codes] = 1.0
    weights = _smooth(onehot, dt_s, onehot[0])
    step = np.linalg.norm(np.diff(timeline.position_xy, axis=0), axis=1) / dt_s
    raw_speed = np.concatenate([step[:1] if len(step) else np.zeros(1), step])
    speed = _smooth(raw_speed, dt_s, raw_speed[0])
    n = len(codes)
    steps = np.arange(n)
    touchdown = np.zeros((n, 2), dtype=np.int64)
    following = np.zeros((n, 2), dtype=np.int64)
    plant = np.zeros((n, 2), dtype=np.int64)
    next_plant = np.zeros((n, 2), dtype=np.int64)
    reached = np.maximum.accumulate(timeline.phase_rad)  # the phase settles back a little
    duty = stance_duty(run_weight(speed))
    cap = max(1, round(PLANT_MAX_S / dt_s))
    for foot, offset in enumerate(FOOT_PHASE_OFFSETS):
        cycle = np.floor(timeline.phase_rad / (2 * math.pi) + offset)
        # Step 0 counts as a touchdown; the last step stands in for a touchdown after the end.
        starts = np.concatenate([[0], np.flatnonzero(np.diff(cycle) != 0) + 1, [n - 1]])
        last = np.searchsorted(starts[:-1], steps, side="right") - 1
        touchdown[:, foot] = starts[last]
        following[:, foot] = starts[last + 1]
        target = reached[starts] + 2 * math.pi * PLANT_AT_STANCE * duty[starts]
        at = np.searchsorted(reached, target, side="left")
        limit = np.minimum(np.append(starts[1:], n - 1), starts + cap)
        at = np.clip(at, starts, np.maximum(limit, starts))
        plant[:, foot] = at[last]
        next_plant[:, foot] = at[last + 1]
    clip_start = np.empty((n, MAX_CLIPS), dtype=np.int64)
    for c in range(MAX_CLIPS):
        on = codes == CLIP_CODE + c
        begins = on & ~np.concatenate([[False], on[:-1]])
        clip_start[:, c] = np.maximum.accumulate(np.where(begins, steps, -1))
    return AnimationTrack(weights, speed, touchdown, following, plant, next_plant, clip_start)


def feet_in_stance(phase_rad: FloatArray, speed_mps: FloatArray) -> NDArray[np.bool_]:
    """(..., 2) whether each foot (left, right) is in the stance part of its gait cycle."""
    duty = stance_duty(run_weight(speed_mps))[..., None]
    u = np.mod(np.asarray(phase_rad)[..., None] / (2 * math.pi) + np.array(FOOT_PHASE_OFFSETS), 1.0)
    out: NDArray[np.bool_] = u < duty
    return out


SIT_PRESS_M = 0.01  # how far a seated body presses into the seat
SIT_MAX_SLOPE_RAD = math.radians(6.0)  # seated thighs slope down to the knees at most this much
# What rests on the seat of a seated body (buttocks, upper thighs): from its hip joints
# forwards (x) and sideways (|y|). Further forward the thighs of short people on high seats
# slope down to the knees, as they do sitting on the front of a chair.
SIT_UNDER_X_M = (-0.16, 0.12)
SIT_UNDER_Y_M = 0.25


def sit_hip_over_seat(bodies: Sequence[BodyParams], seat_height_m: FloatArray) -> FloatArray:
    """(N,) height of seated people's hip joints over their seats (NaN seat: 0), so that their
    skin rests on it, pressed SIT_PRESS_M in."""
    out: FloatArray = np.array(
        [
            _sit_hip_over_seat(b, round(float(h) * 1000)) if np.isfinite(h) else 0.0
            for b, h in zip(bodies, seat_height_m, strict=True)
        ]
    )
    return out


@functools.lru_cache(maxsize=1024)
def _sit_hip_over_seat(body: BodyParams, seat_mm: int) -> float:
    """The skin's depth under the hips and thighs of the body seated on a seat seat_mm high
    (grade_people.body_mesh; its shape does not depend on the clothing). The legs' IK keeps the feet
    on the floor, so the thighs' slope depends on the hips' height: a few rounds."""
    mesh = body_mesh(body, random_clothing(np.random.default_rng(0)))
    rest = rest_positions(body)
    hip_over = 0.1 * body.girth
    for _ in range(3):
        inp = PoseInputs(
            *(np.zeros((1, 2)), np.zeros(1), np.zeros(1), np.zeros(1)),
            weights=np.eye(N_CODES)[[MOTION_CODES[PersonMotion.SIT]]],
            speed_mps=np.zeros(1),
            time_s=np.zeros(1),
            plant_xy=np.zeros((1, 2, 2)),
            plant_heading=np.zeros((1, 2)),
            plant_amplitude=np.zeros((1, 2)),
            next_xy=np.zeros((1, 2, 2)),
            next_heading=np.zeros((1, 2)),
            next_amplitude=np.zeros((1, 2)),
            clip_time_s=np.zeros((1, MAX_CLIPS)),
            seat_height_m=np.array([seat_mm / 1000]),
            turn_rate_rps=np.zeros(1),
        )
        pos, rot = pose([body], inp, hip_over_seat_m=np.array([hip_over]))
        skin = skin_vertices(mesh, rest, pos[0], rot[0])
        hip = pos[0, J["hip_l"]]
        under = (
            (skin[:, 0] > hip[0] + SIT_UNDER_X_M[0])
            & (skin[:, 0] < hip[0] + SIT_UNDER_X_M[1])
            & (np.abs(skin[:, 1]) < SIT_UNDER_Y_M)
        )
        hip_over = float(hip[2] - skin[under, 2].min()) - SIT_PRESS_M
    return hip_over


def pose(
    bodies: list[BodyParams],
    inp: PoseInputs,
    clips: Sequence[Sequence[RetargetedMotion]] = (),
    hip_over_seat_m: FloatArray | None = None,
    group_rows: int | None = None,
) -> tuple[FloatArray, FloatArray]:
    """World joint positions (N, J, 3) and rotations (N, J, 3, 3) of N people at one instant.

    `inp` from pose_inputs / stack_inputs; its time_s drives the idle, look and wave cycles.
    `clips[i]`: person i's BVH clips (people.clips retargeted onto their skeleton), needed when
    a clip's weight is not zero. `hip_over_seat_m`: the seated hips' height over the seat
    (default: sit_hip_over_seat). `group_rows`: the rows come in groups of this many, each a
    call of its own (the people of one step, several steps in one pass): the ankles' blend
    with sitting, done for every row of a call where anyone sits, is then done per group, so
    that each group gets the values of a call with its rows alone.

    In steps: the captured gait's rotations (`_gait_rotations`), the walking legs' feet and IK
    (`_walking_legs`), the seated legs (`_seated_legs`), the legs' joint rotations as a blend of
    the two (`_leg_rotations`), the torso, head and arms (`_upper_body_angles`), then the clips.
    """
    n = len(bodies)
    offsets = np.stack([rest_offsets(b) for b in bodies])
    w = inp.weights
    w_sit = w[:, MOTION_CODES[PersonMotion.SIT]]
    run = np.maximum(run_weight(inp.speed_mps), w[:, MOTION_CODES[PersonMotion.RUN]])
    gait = _gait_rotations(inp, run)
    walking = _walking_legs(bodies, inp, offsets, run, gait)
    seated = _seated_legs(bodies, inp, offsets, w_sit, hip_over_seat_m)
    ang = np.zeros((n, N_JOINTS, 3))  # local roll, pitch, yaw per joint
    hip_rot, ankle_rot = _leg_rotations(ang, gait.sway, walking, seated, group_rows or n)
    _upper_body_angles(ang, inp, seated.w_sit, gait.amplitude)
    pelvis_z = (1 - seated.w_sit) * walking.pelvis_z + seated.w_sit * seated.pelvis_z

    ang[:, J["pelvis"], 2] = inp.heading_rad
    rot = euler_to_matrix(ang)
    rot[:, J["pelvis"]] = rot[:, J["pelvis"]] @ gait.sway
    upper = list(GAIT_JOINTS[1:])
    rot[:, upper] = gait.rotations[:, 1:] @ rot[:, upper]
    for side, r in hip_rot.items():
        rot[:, J["hip_" + side]] = r
        rot[:, J["ankle_" + side]] = ankle_rot[side]
    root = np.stack([inp.position_xy[:, 0], inp.position_xy[:, 1], pelvis_z], axis=1)
    w_clip = w[:, CLIP_CODE : CLIP_CODE + MAX_CLIPS]
    if np.any(w_clip > CLIP_MIN_WEIGHT):
        _blend_clips(rot, root, inp.heading_rad, w_clip, inp.clip_time_s, clips)
    return forward_kinematics(offsets, rot, root)


@dataclass(frozen=True)
class _Gait:
    """The motion capture's gait at one instant: the gait joints' rotations (N, G, 3, 3) (the
    pelvis's first: its sway), the cycle position u_body (N,), the amplitude clipped to [0, 1]."""

    rotations: FloatArray
    u_body: FloatArray
    amplitude: FloatArray

    @property
    def sway(self) -> FloatArray:
        """The pelvis's tilt/obliquity/rotation about the heading (N, 3, 3)."""
        return self.rotations[:, 0]


def _gait_rotations(inp: PoseInputs, run: FloatArray) -> _Gait:
    """The upper body's, the pelvis's sway and the swing's rotations from the captured walk,
    run and turn cycles, blended by speed and turn rate, faded to rest with the amplitude."""
    w = inp.weights
    lib = gait_cycles()
    gait_amp = np.clip(inp.amplitude, 0.0, 1.0)
    u_body = np.mod(inp.phase_rad / (2 * math.pi), 1.0)
    joints = list(GAIT_JOINTS)

    def captured(cycle: GaitCycle, like: FloatArray | None = None) -> FloatArray:
        q = sample_table(cycle.quat_wxyz[:, joints], u_body)
        if like is not None:  # the same hemisphere, so that the blend goes the short way
            q *= np.where(np.einsum("njk,njk->nj", q, like) < 0, -1.0, 1.0)[..., None]
        return q

    q_walk = captured(lib.walk)
    q_run = captured(lib.run, q_walk)
    w_turn = np.maximum(
        w[:, MOTION_CODES[PersonMotion.TURN]], turn_clip_weight(inp.turn_rate_rps, inp.speed_mps)
    ) * (1 - run)
    left = (inp.turn_rate_rps >= 0)[:, None, None]
    q_turn = np.where(left, captured(lib.turn_left, q_walk), captured(lib.turn_right, q_walk))
    q_gait = (
        (1 - run - w_turn)[:, None, None] * q_walk
        + run[:, None, None] * q_run
        + w_turn[:, None, None] * q_turn
    )
    # Fade to the rest pose (identity) as the gait's amplitude goes to 0.
    q_gait = (1 - gait_amp)[:, None, None] * np.array([1.0, 0.0, 0.0, 0.0]) + gait_amp[
        :, None, None
    ] * q_gait
    return _Gait(quat_to_matrix(q_gait), u_body, gait_amp)  # (N, len(GAIT_JOINTS), 3, 3)


@dataclass(frozen=True)
class _LegLengths:
    """The legs' lengths from the rest offsets (N,): thigh, shin, and the ankle's rest height
    relative to the pelvis joint's parent."""

    thigh: FloatArray
    shin: FloatArray
    ankle_z: FloatArray

    @classmethod
    def of(cls, offsets: FloatArray) -> _LegLengths:
        thigh = -offsets[:, J["knee_l"], 2]
        shin = -offsets[:, J["ankle_l"], 2]
        hip_rest_z = offsets[:, J["pelvis"], 2] + offsets[:, J["hip_l"], 2]
        return cls(thigh, shin, hip_rest_z - thigh - shin)


@dataclass(frozen=True)
class _WalkingLegs:
    """Per side ("l", "r"): the hip's flexion, the knee's, the foot's pitch and yaw and the
    hip's abduction (N,) each; the toes' roll; and the walking pelvis's height (N,)."""

    legs: dict[str, tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]]
    toe_flat: dict[str, FloatArray]
    pelvis_z: FloatArray


def _walking_legs(
    bodies: list[BodyParams], inp: PoseInputs, offsets: FloatArray, run: FloatArray, gait: _Gait
) -> _WalkingLegs:
    """The walking legs: each foot planted (stance) or swinging along the capture's path to its
    next footfall, rolled about its toe, then the pelvis's height and the legs' IK."""
    position_xy, heading_rad, phase_rad = inp.position_xy, inp.heading_rad, inp.phase_rad
    speed_mps = inp.speed_mps
    scale = np.array([b.scale for b in bodies])
    height = np.array([b.height_m for b in bodies])
    amp = inp.amplitude
    walk_c, run_c = gait_cycles().walk, gait_cycles().run
    sway = gait.sway
    lengths = _LegLengths.of(offsets)
    thigh, shin, ankle_z = lengths.thigh, lengths.shin, lengths.ankle_z
    leg_m = thigh + shin
    duty = stance_duty(run)
    stride = 2.0 * speed_mps / cadence_hz(speed_mps, height)  # one gait cycle of travel
    front = PLANT_AT_STANCE * duty * stride  # how far ahead of the hip a foot touches down
    back = (1 - PLANT_AT_STANCE) * duty * stride  # ... and behind it when it lifts off
    toe = offsets[:, J["toe_l"]]
    pivot = -0.08 * scale
    # Lower the pelvis just enough that the front of the stance stays inside the leg's reach;
    # the motion capture's bob only lowers it further.
    margin = 1.0 - 0.015 * np.minimum(1.0, 2 * amp)  # a standing leg is straight
    need = np.sqrt(np.maximum((margin * leg_m) ** 2 - front**2, 0.0))
    drop = np.maximum(0.0, leg_m - need)
    bob_walk = sample_table(walk_c.pelvis_bob - walk_c.pelvis_bob.max(), gait.u_body)
    bob_run = sample_table(run_c.pelvis_bob - run_c.pelvis_bob.max(), gait.u_body)
    bob = ((1 - run) * bob_walk + run * bob_run) * leg_m * gait.amplitude
    pelvis_z_walk = offsets[:, J["pelvis"], 2] - drop + bob
    c, s_ = np.cos(heading_rad), np.sin(heading_rad)

    def to_body(world_xy: FloatArray) -> tuple[FloatArray, FloatArray]:
        d = world_xy - position_xy
        return c * d[:, 0] + s_ * d[:, 1], -s_ * d[:, 0] + c * d[:, 1]

    def planted(xy: FloatArray, hd: FloatArray, hip_y: FloatArray) -> FloatArray:
        """World xy of a flat foot under the hip of a body at (xy, hd)."""
        return np.stack([xy[:, 0] - np.sin(hd) * hip_y, xy[:, 1] + np.cos(hd) * hip_y], axis=1)

    def rolled(
        x_flat: FloatArray, y_flat: FloatArray, roll: FloatArray, yaw: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray]:
        """Ankle (x, y, z above its flat height; body frame) of a foot at (x_flat, y_flat)
        pointing `yaw` from the heading, pitched by `roll` about its toe."""
        cr, sr = np.cos(roll), np.sin(roll)
        ahead = toe[:, 0] - (toe[:, 0] * cr + toe[:, 2] * sr)
        z = toe[:, 2] - (-toe[:, 0] * sr + toe[:, 2] * cr)
        return x_flat + ahead * np.cos(yaw), y_flat + ahead * np.sin(yaw), z

    def blend_curve(a: FloatArray, b: FloatArray, x: FloatArray) -> FloatArray:
        out: FloatArray = (1 - run) * sample_curve(a, x) + run * sample_curve(b, x)
        return out

    leg: dict[str, tuple[FloatArray, ...]] = {}
    target: dict[str, tuple[FloatArray, FloatArray, FloatArray, FloatArray, NDArray[np.bool_]]] = {}
    toe_flat: dict[str, FloatArray] = {}
    for foot, (side, offset) in enumerate(zip(("l", "r"), FOOT_PHASE_OFFSETS, strict=True)):
        hip_off = offsets[:, J["hip_" + side]]
        hip_y = hip_off[:, 1]
        u = np.mod(phase_rad / (2 * math.pi) + offset, 1.0)
        stance = u < duty
        sw = np.clip((u - duty) / np.maximum(1.0 - duty, 1e-9), 0.0, 1.0)
        ease = blend_curve(walk_c.swing_progress, run_c.swing_progress, sw)
        p0 = planted(inp.plant_xy[:, foot], inp.plant_heading[:, foot], hip_y)
        p1 = planted(inp.next_xy[:, foot], inp.next_heading[:, foot], hip_y)
        turn = np.remainder(
            inp.next_heading[:, foot] - inp.plant_heading[:, foot] + math.pi, 2 * math.pi
        )
        foot_yaw = inp.plant_heading[:, foot] + np.where(stance, 0.0, ease * (turn - math.pi))
        yaw = np.remainder(foot_yaw - heading_rad + math.pi, 2 * math.pi) - math.pi
        # Stance: the foot stays where it was put down (world), whatever the body does.
        x_flat, y_flat = to_body(p0)
        roll_st = ROLL_PER_M * np.maximum(0.0, pivot - x_flat)
        x_st, y_st, z_st = rolled(x_flat, y_flat, roll_st, yaw)
        # Swing: from where it lifted to where it will land along the capture's path, unrolling.
        x_sw_flat, y_sw_flat = to_body(p0 + (p1 - p0) * ease[:, None])
        roll_sw = ROLL_PER_M * np.maximum(0.0, pivot + back) * (1 - ease)
        x_sw, y_sw, z_sw = rolled(x_sw_flat, y_sw_flat, roll_sw, yaw)
        lift = leg_m * blend_curve(walk_c.swing_lift, run_c.swing_lift, sw)
        flex = blend_curve(walk_c.swing_pitch, run_c.swing_pitch, sw)
        pitch_sw = roll_sw + flex * np.minimum(1.0, 2 * amp)
        # Lift the swing foot at least as far as its pitch would put its toe (toes down) or
        # heel (toes up) below the floor.
        cp, sp = np.cos(pitch_sw), np.sin(pitch_sw)
        toe_drop = toe[:, 2] - (-toe[:, 0] * sp + toe[:, 2] * cp)
        heel_drop = toe[:, 2] - (HEEL_PER_TOE * toe[:, 0] * sp + toe[:, 2] * cp)
        clear = np.maximum(np.maximum(toe_drop, heel_drop), 0.0)
        z_sw_lift = np.maximum(z_sw + lift * np.minimum(1.0, 2.0 * amp), clear)
        x = np.where(stance, x_st, x_sw)
        y = np.where(stance, y_st, y_sw)
        z = np.where(stance, z_st, z_sw_lift)
        pitch = np.where(stance, roll_st, pitch_sw)
        # The hip joint where the swaying pelvis carries it (body frame, heading removed).
        hip_at = np.einsum("nab,nb->na", sway, hip_off)
        target[side] = (x, y, z, hip_at, stance)
        yaw = np.remainder(foot_yaw - heading_rad + math.pi, 2 * math.pi) - math.pi
        leg[side] = (pitch * np.minimum(1.0, 2 * amp), yaw)
        # The toes stay flat while the heel rises over them (the foot rolls about the toe
        # joint; rigid toes would push the shoe's tip into the floor).
        toe_flat[side] = np.where(stance, roll_st, roll_sw) * np.minimum(1.0, 2 * amp)
    # A stance foot further behind than the stride's (a walk starting from a stand, whose
    # standing foot keeps its stance while the body sets off) lowers the pelvis until the leg
    # reaches it, rather than dragging the foot.
    for x, y, z, hip_at, stance in target.values():
        reach = (1.0 - 0.015) * leg_m
        flat = np.maximum(reach**2 - (x - hip_at[:, 0]) ** 2 - (y - hip_at[:, 1]) ** 2, 0.0)
        highest = ankle_z + z + np.sqrt(flat) - hip_at[:, 2]
        pelvis_z_walk = np.where(stance, np.minimum(pelvis_z_walk, highest), pelvis_z_walk)
    legs = {}
    for side in ("l", "r"):
        x, y, z, hip_at, _ = target[side]
        hip_z = pelvis_z_walk + hip_at[:, 2]
        dx = x - hip_at[:, 0]
        dz = ankle_z + z - hip_z
        dy = y - hip_at[:, 1]
        abduct = np.arctan2(dy, -dz)
        hip, knee = leg_ik(dx, -np.hypot(dy, dz), thigh, shin)
        ankle, yaw = leg[side]
        legs[side] = (hip, knee, ankle, yaw, abduct)
    return _WalkingLegs(legs, toe_flat, pelvis_z_walk)


@dataclass(frozen=True)
class _SeatedLegs:
    """The seated pose's blend weight (0 without a seat), hip and knee flexion, the feet's
    toes-down pitch and the pelvis's height (N,) each."""

    w_sit: FloatArray
    hip: FloatArray
    knee: FloatArray
    toe_down: FloatArray
    pelvis_z: FloatArray


def _seated_legs(
    bodies: list[BodyParams],
    inp: PoseInputs,
    offsets: FloatArray,
    w_sit: FloatArray,
    hip_over_seat_m: FloatArray | None,
) -> _SeatedLegs:
    """Sitting: the thighs rest on the seat (the hip joints SIT_HIP_OVER_SEAT above it, about
    a thigh's radius), the feet flat on the floor a thigh's length ahead (leg IK)."""
    lengths = _LegLengths.of(offsets)
    thigh, shin, ankle_z = lengths.thigh, lengths.shin, lengths.ankle_z
    seated = np.isfinite(inp.seat_height_m)
    w_sit = np.where(seated, w_sit, 0.0)
    if hip_over_seat_m is None:
        hip_over_seat_m = (
            sit_hip_over_seat(bodies, inp.seat_height_m) if seated.any() else np.zeros(len(bodies))
        )
    hip_z_sit = np.where(seated, inp.seat_height_m, 0.0) + hip_over_seat_m
    sit_hip, sit_knee = leg_ik(0.95 * thigh, ankle_z - hip_z_sit, thigh, shin)
    # Short legs on a high seat: rather than thighs sloping into the seat's front, they stay
    # within SIT_MAX_SLOPE_RAD of level, the shins hang and the feet point their toes down to
    # the floor (as short people sit on high chairs).
    steep = sit_hip < math.pi / 2 - SIT_MAX_SLOPE_RAD
    sit_hip = np.where(steep, math.pi / 2 - SIT_MAX_SLOPE_RAD, sit_hip)
    sit_knee = np.where(steep, sit_hip, sit_knee)
    hover = np.where(
        steep, hip_z_sit - thigh * np.cos(sit_hip) - shin - ankle_z, 0.0
    )  # the flat foot's height over the floor
    toe_x, toe_z = offsets[:, J["toe_l"], 0], offsets[:, J["toe_l"], 2]
    # Pitching the foot toes-down by a puts the ball of the foot at toe_z cos a - toe_x sin a
    # = R cos(a + b) under the ankle (R, b: the toe offset's length and angle): `hover` lower.
    reach, angle = np.hypot(toe_x, toe_z), np.arctan2(toe_x, toe_z)
    toe_down = np.where(steep, np.arccos(np.clip((toe_z - hover) / reach, -1.0, 1.0)) - angle, 0.0)
    pelvis_z_sit = hip_z_sit - offsets[:, J["hip_l"], 2]
    return _SeatedLegs(w_sit, sit_hip, sit_knee, toe_down, pelvis_z_sit)


def _leg_rotations(
    ang: FloatArray, sway: FloatArray, walking: _WalkingLegs, seated: _SeatedLegs, group_rows: int
) -> tuple[dict[str, FloatArray], dict[str, FloatArray]]:
    """The hips' and ankles' rotations (N, 3, 3) per side, walking blended with sitting; the
    knees' and toes' angles go into `ang`. The ankles go through the sitting blend in every
    group of `group_rows` rows where anyone sits."""
    w_sit = seated.w_sit
    n = len(w_sit)
    if n % group_rows:
        raise ValueError(f"pose: group_rows {group_rows} does not divide the {n} rows")
    anyone_sits = np.repeat((w_sit > 0).reshape(-1, group_rows).any(axis=1), group_rows)
    # All rows (one group, a call of one step) take the blend as they always did, in place.
    b: slice | NDArray[np.int64] = slice(None) if anyone_sits.all() else np.flatnonzero(anyone_sits)
    hip_rot = {}
    ankle_rot: dict[str, FloatArray] = {}
    for side, sign in (("l", 1.0), ("r", -1.0)):
        hip, knee, ankle, yaw, abduct = walking.legs[side]
        flex = (1 - w_sit) * hip + w_sit * seated.hip
        out = (1 - w_sit) * abduct + w_sit * sign * 0.08
        # Roll the leg's sagittal plane about x after flexing in it (R = Rx Ry), so the IK above
        # (solved in that plane) is exact.
        zeros = np.zeros_like(flex)
        leg_body = euler_to_matrix(np.stack([out, zeros, zeros], 1)) @ euler_to_matrix(
            np.stack([zeros, -flex, zeros], 1)
        )
        # The IK solved the leg in the heading's frame; the hip joint's parent is the swaying
        # pelvis.
        hip_rot[side] = np.swapaxes(sway, -1, -2) @ leg_body
        ang[:, J["knee_" + side], 1] = (1 - w_sit) * knee + w_sit * seated.knee
        # The foot's orientation in the heading's frame is exactly yaw, then pitch: the ankle's
        # local rotation is what is left of it after the hip and knee.
        knee_m = euler_to_matrix(np.stack([zeros, ang[:, J["knee_" + side], 1], zeros], 1))
        foot_body = euler_to_matrix(np.stack([zeros, ankle, yaw], 1))
        walk_ankle = np.swapaxes(leg_body @ knee_m, -1, -2) @ foot_body
        if anyone_sits.any():
            walk_q = matrices_to_quats(walk_ankle[b])
            sit_q = matrices_to_quats(
                euler_to_matrix(
                    np.stack(
                        [zeros[b], (seated.hip - seated.knee + seated.toe_down)[b], zeros[b]], 1
                    )
                )
            )
            sit_q *= np.where(np.einsum("nk,nk->n", sit_q, walk_q) < 0, -1.0, 1.0)[:, None]
            q = (1 - w_sit[b])[:, None] * walk_q + w_sit[b][:, None] * sit_q
            walk_ankle[b] = quats_to_matrices(q / np.linalg.norm(q, axis=1, keepdims=True))
        ankle_rot[side] = walk_ankle
        ang[:, J["toe_" + side], 1] = (
            -(1 - w_sit) * walking.toe_flat[side] - w_sit * seated.toe_down
        )
    return hip_rot, ankle_rot


def _upper_body_angles(
    ang: FloatArray, inp: PoseInputs, w_sit: FloatArray, gait_amp: FloatArray
) -> None:
    """The torso's, head's and arms' angles into `ang`: breathing, looking around, the phone,
    waving and the seated arms (the gait's swing comes from the capture, on top of these)."""
    t = inp.time_s
    w = inp.weights
    w_wave = w[:, MOTION_CODES[PersonMotion.WAVE]]
    w_look = w[:, MOTION_CODES[PersonMotion.LOOK]]
    w_phone = w[:, MOTION_CODES[PersonMotion.PHONE]]
    breathe = 0.02 * np.sin(2 * math.pi * 0.25 * t)
    ang[:, J["spine"], 1] = -0.08 * w_sit
    ang[:, J["chest"], 1] = breathe
    look = 0.7 * np.sin(2 * math.pi * t / 5.0)
    ang[:, J["neck"], 2] = w_look * 0.5 * look
    ang[:, J["head"], 2] = w_look * 0.6 * look + 0.05 * np.sin(2 * math.pi * t / 7.0)
    ang[:, J["head"], 1] = 0.45 * w_phone + w_look * 0.12 * np.sin(2 * math.pi * t / 3.1)
    elbow = 0.2 * (1 - gait_amp)
    for side, sign in (("l", 1.0), ("r", -1.0)):
        ang[:, J["shoulder_" + side], 0] = sign * 0.1
        ang[:, J["elbow_" + side], 1] = -elbow
        # Sitting: upper arms a little forward, forearms sloping down so the hands rest on the
        # thighs (wrists ~0.10 m over the thigh's axis, 60 % of the way to the knee).
        ang[:, J["shoulder_" + side], 1] += -0.2 * w_sit
        ang[:, J["elbow_" + side], 1] += -0.6 * w_sit
    # Wave (right arm up, forearm swinging in the frontal plane) and phone (right hand at chest).
    wave = 0.45 * np.sin(2 * math.pi * 1.6 * t)
    ang[:, J["shoulder_r"], 0] += w_wave * -2.3
    ang[:, J["shoulder_r"], 1] += w_wave * -0.3
    ang[:, J["elbow_r"], 0] += w_wave * (-0.55 + wave)
    ang[:, J["elbow_r"], 1] += w_wave * elbow
    ang[:, J["shoulder_r"], 1] += w_phone * -0.35
    ang[:, J["shoulder_r"], 0] += w_phone * 0.2
    ang[:, J["elbow_r"], 1] += w_phone * -1.75
    ang[:, J["wrist_r"], 0] += w_phone * 0.4


def _blend_clips(
    rot: FloatArray,
    root: FloatArray,
    heading_rad: FloatArray,
    weights: FloatArray,
    time_s: FloatArray,
    clips: Sequence[Sequence[RetargetedMotion]],
) -> None:
    """Blend BVH clips into local rotations `rot` (N, J, 3, 3) and pelvis heights `root[:, 2]`
    in place, by weight: normalised sums of sign-aligned quaternions. A clip plays in place:
    its pelvis turns with the person's heading and keeps the clip's height, not its travel."""
    playing = weights > CLIP_MIN_WEIGHT
    for i in (int(v) for v in np.flatnonzero(np.any(playing, axis=1))):
        used = [int(c) for c in np.flatnonzero(playing[i])]
        if i >= len(clips) or len(clips[i]) <= max(used):
            raise ValueError(
                "pose: a BVH clip is playing but its retargeted motion was not given (clips)"
            )
        rest = 1.0 - float(weights[i, used].sum())
        q = matrices_to_quats(rot[i]) * rest
        base = q.copy()
        z = root[i, 2] * rest
        for c in used:
            clip = clips[i][c]
            frame = min(int(time_s[i, c] / clip.frame_time_s), len(clip.local_rot) - 1)
            local = clip.local_rot[frame].copy()
            local[0] = euler_to_matrix(np.array([0.0, 0.0, heading_rad[i]])) @ local[0]
            qc = matrices_to_quats(local)
            qc *= np.where(np.einsum("jk,jk->j", qc, base) < 0.0, -1.0, 1.0)[:, None]
            q += weights[i, c] * qc
            z += weights[i, c] * clip.root_position[frame, 2]
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        rot[i] = quats_to_matrices(q)
        root[i, 2] = z


def pose_timeline(
    body: BodyParams,
    timeline: PersonTimeline,
    track: AnimationTrack,
    dt_s: float,
    steps: NDArray[np.int64],
) -> tuple[FloatArray, FloatArray]:
    """Joint positions (K, J, 3) and rotations (K, J, 3, 3) of one person at steps `steps`."""
    k = np.asarray(steps, dtype=np.int64)
    return pose([body] * len(k), pose_inputs(timeline, track, dt_s, k))


def foot_slip(ankles_world: FloatArray, dt_s: float, contact_m: float = 0.01) -> FloatArray:
    """Horizontal speed (m/s) of each foot at each step where it stays on the ground.

    Args:
        ankles_world: (K, 2, 3) both ankles over K consecutive steps.
        contact_m: a foot counts as planted at steps k and k+1 when its ankle is within this
            height of its lowest height over the sequence.

    Returns:
        1-D array of slip speeds of every (planted step pair, foot); empty when none.
    """
    z = ankles_world[..., 2]
    planted = z <= z.min(axis=0, keepdims=True) + contact_m
    both = planted[1:] & planted[:-1]
    move = np.linalg.norm(np.diff(ankles_world[..., :2], axis=0), axis=-1) / dt_s
    out: FloatArray = move[both]
    return out
