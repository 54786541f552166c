"""Walking people: articulated figures moved kinematically along collision-free paths.

A person is 12 rigid parts (torso, head, upper/lower arms and legs, feet). Their poses are a
function of a small state per physics step: ground position, heading, gait phase and gait
amplitude. The timeline of those states is drawn once from the seeded generator (walk to a random
reachable goal, stand, turn on the spot) and sampled at the physics rate, so the experiment
record can store it exactly and replay can restore it bit for bit.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray
from scipy.signal import lfilter

from grade_common.occupancy import OccupancyGrid
from grade_common.rotations import quat_mul
from grade_common.types import FloatArray
from grade_people.body_mesh import Clothing, random_clothing
from grade_people.config import MAX_CLIPS, PeopleConfig, PersonMotion
from grade_people.paths import coarsen, plan_path, sample_free_point
from grade_people.skeleton import JOINT_NAMES, BodyParams, random_body

PERSON_RADIUS_M = 0.35
HEADING_RATE_RPS = 3.0
TURN_RATE_RPS = 1.0
AMPLITUDE_RATE = 2.5  # 1/s: how fast the gait starts and stops
# Cadence (steps per second) against speed, as in gait data: about 1.6 steps/s at 0.8 m/s and
# 2.0 at 1.6 m/s for a 1.75 m walker (step length grows with speed, as speed^0.68), taller people
# stepping slower (Froude scaling, cadence ~ 1/sqrt(height)); runs step faster.
CADENCE_WALK_HZ = 1.8  # at CADENCE_REF_MPS
CADENCE_REF_MPS = 1.2
CADENCE_EXPONENT = 0.32
CADENCE_RUN_HZ = 2.6  # at 3 m/s
RUN_FROM_MPS = 2.0  # gait turns into a run between this and +RUN_BLEND_MPS
RUN_BLEND_MPS = 0.6
TURN_CADENCE_HZ = 2.0  # stepping on the spot
# A walker turning sharply steps faster, as people do: at least one step per TURN_PER_STEP_RAD
# of heading (the turn on the spot's TURN_RATE_RPS / TURN_CADENCE_HZ), up to TURN_STEP_MAX_HZ,
# so the planted foot is not left twisted against the turning body.
TURN_PER_STEP_RAD = 0.5
TURN_STEP_MAX_HZ = 3.0
BLEND_TAU_S = 0.35  # time constant of every blend between motions (grade_people.motion)


class PartShape(enum.Enum):
    """The geom of one rigid body part (people.body: parts)."""

    CAPSULE = "capsule"  # limbs and torso: radius and half length
    SPHERE = "sphere"  # the head: radius
    BOX = "box"  # the feet: half sizes


@dataclass(frozen=True)
class PartSpec:
    name: str
    shape: PartShape
    size: tuple[
        float, float, float
    ]  # capsule: (radius, half-length, 0); sphere: (r, 0, 0); box: half sizes
    color: str  # "skin", "shirt", "pants", "shoes"


# Segment lengths and radii for a 1.75 m person; scaled by height / 1.75. The left and right
# limbs are alike: each part below stands twice, as NAME_l and NAME_r.
_ARM = (
    PartSpec("upper_arm", PartShape.CAPSULE, (0.05, 0.14, 0.0), "shirt"),
    PartSpec("lower_arm", PartShape.CAPSULE, (0.043, 0.13, 0.0), "skin"),
)
_LEG = (
    PartSpec("upper_leg", PartShape.CAPSULE, (0.07, 0.2, 0.0), "pants"),
    PartSpec("lower_leg", PartShape.CAPSULE, (0.055, 0.19, 0.0), "pants"),
    PartSpec("foot", PartShape.BOX, (0.12, 0.05, 0.035), "shoes"),
)
_PARTS = (
    PartSpec("torso", PartShape.CAPSULE, (0.15, 0.17, 0.0), "shirt"),
    PartSpec("head", PartShape.SPHERE, (0.11, 0.0, 0.0), "skin"),
    *(
        replace(part, name=f"{part.name}_{side}")
        for limb in (_ARM, _LEG)
        for side in "lr"
        for part in limb
    ),
)
PART_NAMES = tuple(p.name for p in _PARTS)
HIP_Z, SHOULDER_Z, HIP_Y, SHOULDER_Y = 0.93, 1.43, 0.1, 0.21
UPPER_LEG, LOWER_LEG, UPPER_ARM, LOWER_ARM = 0.44, 0.43, 0.29, 0.27


@dataclass(frozen=True)
class PersonSpec:
    """What a person looks like (fixed for a run)."""

    name: str
    instance_id: int
    height_m: float
    colors: dict[str, tuple[float, float, float, float]]
    # Skinned people (PersonBody.SKINNED) have a body and clothing; rigid-part people have none.
    body: BodyParams | None = None
    clothing: Clothing | None = None

    @property
    def scale(self) -> float:
        return self.height_m / 1.75

    def body_names(self) -> tuple[str, ...]:
        """Names of this person's actor bodies, in Scene.actor_body_poses order."""
        return JOINT_NAMES if self.body is not None else PART_NAMES

    def parts(self) -> tuple[PartSpec, ...]:
        s = self.scale
        return tuple(
            PartSpec(p.name, p.shape, (p.size[0] * s, p.size[1] * s, p.size[2] * s), p.color)
            for p in _PARTS
        )


@dataclass(frozen=True)
class GaitTimeline:
    """Where a walker (a person, an animal) is at every physics step (k = 0 .. n-1): its ground
    position and heading, its gait cycle's phase and amplitude (0 standing .. 1 moving)."""

    position_xy: FloatArray  # (n, 2)
    heading_rad: FloatArray  # (n,)
    phase_rad: FloatArray  # (n,)
    amplitude: FloatArray  # (n,)


@dataclass(frozen=True)
class PersonTimeline(GaitTimeline):
    """The state of one person at every physics step: the walker's track, then what the
    person does (motion) and where they sit."""

    motion: NDArray[np.int8]  # (n,) MOTION_CODES of each step's motion
    # (n,) Height of the seat of the person's sit stop (walking up to a chair, sitting, standing
    # up and stepping away); NaN outside sit stops.
    seat_height_m: FloatArray


MOTION_CODES = {
    PersonMotion.WALK: 0,
    PersonMotion.STAND: 1,
    PersonMotion.TURN: 2,
    PersonMotion.RUN: 3,
    PersonMotion.SIT: 4,
    PersonMotion.WAVE: 5,
    PersonMotion.LOOK: 6,
    PersonMotion.PHONE: 7,
    PersonMotion.CLIP: 8,  # clip c of people.clips has code CLIP_CODE + c
}
CLIP_CODE = MOTION_CODES[PersonMotion.CLIP]
N_MOTION_CODES = CLIP_CODE + MAX_CLIPS


def run_weight(speed_mps: FloatArray | float) -> FloatArray:
    """0 walking .. 1 running, by ground speed."""
    out: FloatArray = np.clip(
        (np.asarray(speed_mps, dtype=np.float64) - RUN_FROM_MPS) / RUN_BLEND_MPS, 0.0, 1.0
    )
    return out


def cadence_hz(speed_mps: FloatArray | float, height_m: FloatArray | float) -> FloatArray:
    """Steps per second of a person of `height_m` moving at `speed_mps` (see CADENCE_*)."""
    v = np.maximum(np.asarray(speed_mps, dtype=np.float64), 1e-3)
    size = np.sqrt(1.75 / np.asarray(height_m, dtype=np.float64))
    walk = CADENCE_WALK_HZ * (v / CADENCE_REF_MPS) ** CADENCE_EXPONENT
    run = CADENCE_RUN_HZ * (v / 3.0) ** 0.2
    r = run_weight(v)
    out: FloatArray = size * ((1 - r) * walk + r * run)
    return out


def phase_step_rad(
    distance_m: FloatArray,
    dt_s: float,
    height_m: FloatArray | float,
    turn_rad: FloatArray | float = 0.0,
) -> FloatArray:
    """How far the gait phase advances (rad; 2 pi per cycle of two steps) over one physics
    step of dt_s in which the body covers distance_m while its heading turns by turn_rad:
    at the cadence of its speed, or faster in a sharp turn (TURN_PER_STEP_RAD)."""
    turning = np.minimum(np.abs(np.asarray(turn_rad)) / dt_s / TURN_PER_STEP_RAD, TURN_STEP_MAX_HZ)
    cadence = np.maximum(cadence_hz(np.asarray(distance_m) / dt_s, height_m), turning)
    out: FloatArray = math.pi * cadence * dt_s
    return np.where(np.asarray(distance_m) > 0.0, out, 0.0)


def random_person(
    name: str, instance_id: int, config: PeopleConfig, rng: np.random.Generator
) -> PersonSpec:
    skin = np.array([0.98, 0.8, 0.65]) * rng.uniform(0.35, 1.0)
    colors = {
        "skin": (*np.clip(skin, 0, 1), 1.0),
        "shirt": (*rng.uniform(0.05, 0.95, 3), 1.0),
        "pants": (*rng.uniform(0.05, 0.6, 3), 1.0),
        "shoes": (*rng.uniform(0.02, 0.3, 3), 1.0),
    }
    clean = {k: tuple(float(c) for c in v) for k, v in colors.items()}
    return PersonSpec(name, instance_id, float(rng.uniform(*config.height_m)), clean)  # type: ignore[arg-type]


def dress_skinned(spec: PersonSpec, rng: np.random.Generator) -> PersonSpec:
    """`spec` with a seeded skeleton shape and clothing (a skinned person)."""
    return replace(spec, body=random_body(spec.height_m, rng), clothing=random_clothing(rng))


def plan_timeline(
    grid: OccupancyGrid,
    config: PeopleConfig,
    n_steps: int,
    dt_s: float,
    rng: np.random.Generator,
    height_m: float,
) -> PersonTimeline:
    """Draw a person's motion for n_steps physics steps of dt_s in free space of `grid`."""
    free = grid.inflated(PERSON_RADIUS_M)
    planning = coarsen(free, 2)
    speed = float(rng.uniform(*config.speed_mps))
    pos = sample_free_point(planning, rng)
    heading = float(rng.uniform(-math.pi, math.pi))
    phase = 0.0
    amp = 0.0
    out_pos = np.empty((n_steps, 2))
    out_heading = np.empty(n_steps)
    out_phase = np.empty(n_steps)
    out_amp = np.empty(n_steps)
    out_motion = np.empty(n_steps, dtype=np.int8)
    others = [m for m in config.motions if m is not PersonMotion.WALK]
    k = 0
    while k < n_steps:
        choose_walk = not others or rng.random() < config.walk_fraction
        if choose_walk:
            path = None
            for _ in range(20):
                goal = sample_free_point(planning, rng)
                if np.linalg.norm(goal - pos) < 1.5:
                    continue
                path = plan_path(planning, pos, goal)
                if path is not None:
                    break
            if path is None:  # boxed in: stand instead of walking through walls
                motion, target_heading, waypoints = PersonMotion.STAND, heading, [pos]
            else:
                motion, target_heading, waypoints = PersonMotion.WALK, heading, path[1:]
            duration_steps = n_steps  # until the path ends
        else:
            motion = others[int(rng.integers(len(others)))]
            waypoints = [pos]
            if motion is PersonMotion.TURN:
                target_heading = heading + float(
                    rng.choice([-1, 1]) * rng.uniform(math.pi / 3, math.pi)
                )
                duration_steps = int(abs(target_heading - heading) / TURN_RATE_RPS / dt_s) + 1
            else:
                target_heading = heading
                duration_steps = int(rng.uniform(1.5, 5.0) / dt_s)
        wp = 0
        start_k = k
        while k < n_steps and k - start_k < duration_steps:
            if motion is PersonMotion.WALK:
                target = waypoints[wp]
                delta = target - pos
                dist = float(np.linalg.norm(delta))
                want = math.atan2(delta[1], delta[0]) if dist > 1e-6 else heading
                err = math.remainder(want - heading, 2 * math.pi)
                turn = float(np.clip(err, -HEADING_RATE_RPS * dt_s, HEADING_RATE_RPS * dt_s))
                heading += turn
                # Slow down while the body still faces away from the path.
                step = min(dist, speed * dt_s * max(0.2, math.cos(err)))
                if dist > 1e-9:
                    pos = pos + delta / dist * step
                if dist - step < 1e-6:
                    wp += 1
                    if wp >= len(waypoints):
                        duration_steps = 0
                amp = min(1.0, amp + AMPLITUDE_RATE * dt_s)
                phase += float(phase_step_rad(np.array(step), dt_s, height_m, turn))
            elif motion is PersonMotion.TURN:
                err = target_heading - heading
                heading += float(np.clip(err, -TURN_RATE_RPS * dt_s, TURN_RATE_RPS * dt_s))
                amp = amp + float(np.clip(0.3 - amp, -AMPLITUDE_RATE * dt_s, AMPLITUDE_RATE * dt_s))
                phase += math.pi * TURN_CADENCE_HZ * dt_s  # stepping on the spot
            else:
                amp = max(0.0, amp - AMPLITUDE_RATE * dt_s)
                # Let the legs come together at the nearest neutral phase.
                phase += math.remainder(-phase, math.pi) * min(1.0, 4 * dt_s)
            out_pos[k] = pos
            out_heading[k] = heading
            out_phase[k] = phase
            out_amp[k] = amp
            out_motion[k] = MOTION_CODES[motion]
            k += 1
    return PersonTimeline(
        out_pos, out_heading, out_phase, out_amp, out_motion, np.full(n_steps, np.nan)
    )


def leg_ik(
    dx: FloatArray, dz: FloatArray, thigh: FloatArray, shin: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Hip flexion and knee flexion (rad) putting the ankle at (dx forward, dz up) from the hip."""
    reach = np.minimum(np.hypot(dx, dz), 0.9995 * (thigh + shin))
    along = np.arctan2(dx, -dz)
    cos_hip = (thigh**2 + reach**2 - shin**2) / (2 * thigh * reach)
    cos_knee = (thigh**2 + shin**2 - reach**2) / (2 * thigh * shin)
    hip = along + np.arccos(np.clip(cos_hip, -1.0, 1.0))
    knee = math.pi - np.arccos(np.clip(cos_knee, -1.0, 1.0))
    return hip, knee


def sit_weights(motion: NDArray[np.int8], dt_s: float) -> FloatArray:
    """How far into the sit pose a person is at every step: the SIT motion code through the
    motion library's blend filter (BLEND_TAU_S), starting settled."""
    x: FloatArray = (np.asarray(motion) == MOTION_CODES[PersonMotion.SIT]).astype(np.float64)
    if not len(x):
        return x
    a = 1.0 - math.exp(-dt_s / BLEND_TAU_S)
    out: FloatArray = lfilter([a], [1.0, -(1.0 - a)], x, zi=[(1.0 - a) * x[0]])[0]
    return out


def _quat_about_y(angle: FloatArray) -> FloatArray:
    """wxyz quaternions of rotations by `angle` about y (any shape -> shape + (4,))."""
    h = 0.5 * angle
    z = np.zeros_like(h)
    return np.stack([np.cos(h), z, np.sin(h), z], axis=-1)


def _quat_about_z(angle: FloatArray) -> FloatArray:
    h = 0.5 * angle
    z = np.zeros_like(h)
    return np.stack([np.cos(h), z, z, np.sin(h)], axis=-1)


def part_poses(
    scale: FloatArray,
    position_xy: FloatArray,
    heading_rad: FloatArray,
    phase_rad: FloatArray,
    amplitude: FloatArray,
    sit_weight: FloatArray | None = None,
    seat_height_m: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """World poses of every part of P people: positions (P, 12, 3) and wxyz quaternions (P, 12, 4).

    Args are arrays of shape (P,) (position_xy (P, 2)). Part order is PART_NAMES. With
    `sit_weight` (0 standing .. 1 seated, see sit_weights) and `seat_height_m` (NaN: no seat)
    the parts blend into sitting: upper legs resting on the seat, feet on the floor.
    """
    s = scale[:, None]
    p = len(scale)
    w_sit = np.zeros(p) if sit_weight is None else np.asarray(sit_weight, dtype=np.float64)
    seat = np.zeros(p) if seat_height_m is None else np.asarray(seat_height_m, dtype=np.float64)
    w_sit = np.where(np.isfinite(seat), w_sit, 0.0)
    seat = np.where(np.isfinite(seat), seat, 0.0)
    # Seated: hips one upper-leg radius over the seat, ankles on the floor a thigh ahead.
    hip_sit = seat + _PARTS[6].size[0] * s[:, 0]
    sit_hip, sit_knee = leg_ik(
        0.95 * UPPER_LEG * s[:, 0],
        (HIP_Z - UPPER_LEG - LOWER_LEG) * s[:, 0] - hip_sit,
        UPPER_LEG * s[:, 0],
        LOWER_LEG * s[:, 0],
    )
    drop = w_sit * (HIP_Z * s[:, 0] - hip_sit)
    sin_p = np.sin(phase_rad)[:, None]
    amp = amplitude[:, None]
    # Sagittal-plane joint angles (positive = limb swings forward).
    hip = 0.42 * amp * np.concatenate([sin_p, -sin_p], axis=1)  # (P, 2): left, right
    knee = amp * (
        0.15
        + 0.55
        * np.clip(
            np.concatenate([np.cos(phase_rad)[:, None], -np.cos(phase_rad)[:, None]], axis=1), 0, 1
        )
    )
    shoulder = -0.35 * amp * np.concatenate([sin_p, -sin_p], axis=1)
    elbow = 0.25 + 0.2 * amplitude
    bob = 0.015 * amp[:, 0] * np.cos(2 * phase_rad) - drop
    hip = (1 - w_sit[:, None]) * hip + w_sit[:, None] * sit_hip[:, None]
    knee = (1 - w_sit[:, None]) * knee + w_sit[:, None] * sit_knee[:, None]
    shoulder = shoulder + 0.45 * w_sit[:, None]  # hands towards the knees

    pos_local = np.zeros((p, 12, 3))
    angle = np.zeros((p, 12))  # rotation about the body's y axis of each part's long axis
    z0 = bob[:, None]
    pos_local[:, 0] = np.stack([np.zeros(p), np.zeros(p), (1.18 * s[:, 0] + z0[:, 0])], axis=1)
    pos_local[:, 1] = np.stack([np.zeros(p), np.zeros(p), (1.62 * s[:, 0] + z0[:, 0])], axis=1)
    for side, sign in ((0, 1.0), (1, -1.0)):
        # Arms: shoulder -> elbow -> wrist, hanging down and swinging in the sagittal plane.
        sh = np.stack(
            [np.zeros(p), sign * SHOULDER_Y * s[:, 0], SHOULDER_Z * s[:, 0] + z0[:, 0]], axis=1
        )
        a1 = shoulder[:, side]
        d1 = np.stack([np.sin(a1), np.zeros(p), -np.cos(a1)], axis=1)
        el = sh + d1 * (UPPER_ARM * s)
        a2 = a1 + elbow
        d2 = np.stack([np.sin(a2), np.zeros(p), -np.cos(a2)], axis=1)
        base = 2 + 2 * side
        pos_local[:, base] = (sh + el) / 2
        pos_local[:, base + 1] = el + d2 * (LOWER_ARM * s / 2)
        angle[:, base], angle[:, base + 1] = -a1, -a2
        # Legs: hip -> knee -> ankle -> foot.
        hp = np.stack([np.zeros(p), sign * HIP_Y * s[:, 0], HIP_Z * s[:, 0] + z0[:, 0]], axis=1)
        b1 = hip[:, side]
        e1 = np.stack([np.sin(b1), np.zeros(p), -np.cos(b1)], axis=1)
        kn = hp + e1 * (UPPER_LEG * s)
        b2 = b1 - knee[:, side]
        e2 = np.stack([np.sin(b2), np.zeros(p), -np.cos(b2)], axis=1)
        an = kn + e2 * (LOWER_LEG * s)
        leg = 6 + 3 * side
        pos_local[:, leg] = (hp + kn) / 2
        pos_local[:, leg + 1] = (kn + an) / 2
        pos_local[:, leg + 2] = an + np.array([0.06, 0.0, -0.02]) * s
        angle[:, leg], angle[:, leg + 1] = -b1, -b2
        angle[:, leg + 2] = 0.0
    c, sn = np.cos(heading_rad)[:, None], np.sin(heading_rad)[:, None]
    world = np.empty_like(pos_local)
    world[..., 0] = position_xy[:, 0:1] + c * pos_local[..., 0] - sn * pos_local[..., 1]
    world[..., 1] = position_xy[:, 1:2] + sn * pos_local[..., 0] + c * pos_local[..., 1]
    world[..., 2] = pos_local[..., 2]
    quat = quat_mul(
        _quat_about_z(np.repeat(heading_rad[:, None], 12, axis=1)), _quat_about_y(angle)
    )
    return world, quat
