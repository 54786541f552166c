"""Quadrupeds (zebra, horse, gazelle, dog): articulated figures moved like the people.

An animal is 12 rigid parts: an ellipsoid barrel, neck, head, four legs of two segments each,
and a tail. As for people, the poses are a function of a small state per physics step (ground
position, heading, gait phase, gait amplitude, how far the gait has blended into a run, how far
the head is down for grazing); that timeline is drawn once from the seeded generator (walk or
run to a reachable goal, graze on the spot) and sampled at the physics rate, so the experiment
record can store it and replay restores it exactly.

Gaits: the walk is the four-beat lateral sequence of horses (hind left, fore left, hind right,
fore right a quarter cycle apart); the run is a transverse gallop (hind pair, then fore pair,
each leg of a pair a tenth of a cycle after the other). Between the two, leg phase offsets,
swing amplitudes and stride length are blended, so a gait change never makes a leg jump.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from grade_common.occupancy import OccupancyGrid
from grade_common.rotations import quat_mul
from grade_common.types import FloatArray
from grade_people.paths import coarsen, plan_path, sample_free_point
from grade_people.people import GaitTimeline
from grade_sim.config.scenario import AnimalGait, AnimalKind, AnimalsConfig

HEADING_RATE_RPS = 2.0
BLEND_RATE = 1.5  # 1/s: gait amplitude, run and graze blends change at most this fast
RUN_MIN_DISTANCE_M = 6.0  # a run goes at least this far (a short dash reads as a glitch)
GRAZE_HEAD_CLEARANCE_M = 0.05  # the muzzle stops this far above the ground

PART_NAMES = (
    "body",
    "neck",
    "head",
    "upper_leg_fl",
    "lower_leg_fl",
    "upper_leg_fr",
    "lower_leg_fr",
    "upper_leg_hl",
    "lower_leg_hl",
    "upper_leg_hr",
    "lower_leg_hr",
    "tail",
)
# Leg order of the gait tables: fore left, fore right, hind left, hind right.
_LEG_FORE = np.array([1.0, 1.0, -1.0, -1.0])
_LEG_LEFT = np.array([1.0, -1.0, 1.0, -1.0])
_WALK_OFFSET = np.array([0.25, 0.75, 0.0, 0.5])  # cycles
_RUN_OFFSET = np.array([0.5, 0.6, 0.0, 0.1])
GAIT_CODES = {AnimalGait.WALK: 0, AnimalGait.GRAZE: 1, AnimalGait.RUN: 2}
# The AnimalTimeline arrays that pose the parts (what the experiment record stores).
ANIMAL_STATE_KEYS = (
    "position_xy",
    "heading_rad",
    "phase_rad",
    "amplitude",
    "run_blend",
    "graze_blend",
)


@dataclass(frozen=True)
class Anatomy:
    """Proportions of a kind at size factor 1 (metres)."""

    body_half: tuple[float, float, float]  # barrel ellipsoid half sizes (length, width, height)
    upper_leg: float
    lower_leg: float
    leg_radius: tuple[float, float]  # upper, lower
    neck: tuple[float, float]  # length, radius
    head: tuple[float, float]
    tail: tuple[float, float]
    neck_up_rad: float  # neck above horizontal while walking
    walk_stride_m: float  # ground covered per gait cycle
    run_stride_m: float
    colors: tuple[tuple[float, float, float], tuple[float, float, float]]  # coat, points
    striped: bool


ANATOMY = {
    AnimalKind.ZEBRA: Anatomy(
        (0.7, 0.23, 0.28), 0.42, 0.45, (0.07, 0.04), (0.52, 0.15), (0.5, 0.1), (0.5, 0.03),
        0.62, 1.6, 4.5, ((0.93, 0.92, 0.88), (0.08, 0.08, 0.08)), True,
    ),
    AnimalKind.HORSE: Anatomy(
        (0.78, 0.25, 0.31), 0.48, 0.5, (0.08, 0.045), (0.62, 0.15), (0.55, 0.1), (0.6, 0.05),
        0.75, 1.8, 5.0, ((0.45, 0.28, 0.15), (0.12, 0.08, 0.06)), False,
    ),
    AnimalKind.GAZELLE: Anatomy(
        (0.42, 0.12, 0.16), 0.25, 0.3, (0.04, 0.022), (0.5, 0.045), (0.24, 0.045), (0.15, 0.02),
        0.9, 1.1, 3.5, ((0.76, 0.55, 0.32), (0.95, 0.92, 0.86)), False,
    ),
    AnimalKind.DOG: Anatomy(
        (0.35, 0.13, 0.15), 0.2, 0.22, (0.045, 0.03), (0.3, 0.06), (0.22, 0.06), (0.3, 0.025),
        0.6, 0.8, 2.2, ((0.55, 0.47, 0.36), (0.22, 0.18, 0.14)), False,
    ),
}  # fmt: skip


@dataclass(frozen=True)
class AnimalSpec:
    """What an animal looks like (fixed for a run)."""

    name: str
    instance_id: int
    kind: AnimalKind
    scale: float
    coat_rgb: tuple[float, float, float]
    points_rgb: tuple[float, float, float]  # legs below the knee, tail; zebra: the stripes

    @property
    def anatomy(self) -> Anatomy:
        return ANATOMY[self.kind]

    @property
    def hip_height_m(self) -> float:
        a = self.anatomy
        return (a.upper_leg + a.lower_leg) * self.scale

    @property
    def footprint_radius_m(self) -> float:
        """Half the body length: what planning keeps free around the animal's centre."""
        return (self.anatomy.body_half[0] + 0.15) * self.scale

    def part_shapes(self) -> tuple[tuple[str, tuple[float, ...]], ...]:
        """(MuJoCo geom type, size) of each part in PART_NAMES order: the barrel is an
        ellipsoid (half sizes), every other part a capsule (radius, half-length)."""
        a, s = self.anatomy, self.scale
        hx, hy, hz = a.body_half
        leg = (
            ("capsule", (a.leg_radius[0] * s, a.upper_leg * s / 2)),
            ("capsule", (a.leg_radius[1] * s, a.lower_leg * s / 2)),
        )
        return (
            ("ellipsoid", (hx * s, hy * s, hz * s)),
            ("capsule", (a.neck[1] * s, a.neck[0] * s / 2)),
            ("capsule", (a.head[1] * s, a.head[0] * s / 2)),
            *leg,
            *leg,
            *leg,
            *leg,
            ("capsule", (a.tail[1] * s, a.tail[0] * s / 2)),
        )

    def part_uses_points_color(self) -> tuple[bool, ...]:
        """Which parts wear the points colour: lower legs and tail (a zebra's stripes are a
        texture over the coat; its lower legs are striped too)."""
        striped = self.anatomy.striped
        return tuple(
            (name.startswith("lower_leg") and not striped) or name == "tail" for name in PART_NAMES
        )


@dataclass(frozen=True)
class AnimalTimeline(GaitTimeline):
    """The state of one animal at every physics step: the walker's track, then its gait's run
    and graze blends and its gait code."""

    run_blend: FloatArray  # (n,) 0 walk .. 1 run (gait offsets, swing, stride)
    graze_blend: FloatArray  # (n,) 0 head up .. 1 head at the ground
    gait: NDArray[np.int8]  # (n,) GAIT_CODES


def random_animal(
    name: str, instance_id: int, config: AnimalsConfig, rng: np.random.Generator
) -> AnimalSpec:
    kind = config.kinds[int(rng.integers(len(config.kinds)))]
    a = ANATOMY[kind]
    scale = float(rng.uniform(*config.size_scale))
    shade = rng.uniform(0.85, 1.1)
    coat = np.clip(np.asarray(a.colors[0]) * shade + rng.uniform(-0.04, 0.04, 3), 0, 1)
    points = np.clip(np.asarray(a.colors[1]) + rng.uniform(-0.04, 0.04, 3), 0, 1)
    return AnimalSpec(
        name,
        instance_id,
        kind,
        scale,
        (float(coat[0]), float(coat[1]), float(coat[2])),
        (float(points[0]), float(points[1]), float(points[2])),
    )


def _clip(value: float, limit: float) -> float:
    """value clipped to [-limit, limit] (np.clip's result, without its cost per scalar)."""
    return max(-limit, min(limit, value))


def _toward(value: float, target: float, rate: float) -> float:
    return value + _clip(target - value, rate)


def plan_animal_timeline(
    grid: OccupancyGrid,
    config: AnimalsConfig,
    spec: AnimalSpec,
    n_steps: int,
    dt_s: float,
    rng: np.random.Generator,
) -> AnimalTimeline:
    """Draw an animal's motion for n_steps physics steps of dt_s in the free space of `grid`."""
    planning = coarsen(grid.inflated(spec.footprint_radius_m), 2)
    walk_speed = float(rng.uniform(*config.walk_speed_mps)) * math.sqrt(spec.scale)
    run_speed = float(rng.uniform(*config.run_speed_mps)) * math.sqrt(spec.scale)
    anatomy = spec.anatomy
    pos = sample_free_point(planning, rng)
    heading = float(rng.uniform(-math.pi, math.pi))
    phase = amp = run = graze = 0.0
    out = np.empty((n_steps, 7))
    out_gait = np.empty(n_steps, dtype=np.int8)
    k = 0
    while k < n_steps:
        roll = rng.random()
        gait = AnimalGait.WALK
        if AnimalGait.RUN in config.gaits and roll < config.run_fraction:
            gait = AnimalGait.RUN
        elif (
            AnimalGait.GRAZE in config.gaits and roll < config.run_fraction + config.graze_fraction
        ):
            gait = AnimalGait.GRAZE
        waypoints: list[FloatArray] = []
        if gait is not AnimalGait.GRAZE:
            min_dist = RUN_MIN_DISTANCE_M if gait is AnimalGait.RUN else 1.5
            for _ in range(20):
                goal = sample_free_point(planning, rng)
                if np.linalg.norm(goal - pos) < min_dist:
                    continue
                path = plan_path(planning, pos, goal)
                if path is not None:
                    waypoints = path[1:]
                    break
            if not waypoints:  # boxed in: graze rather than walk through an obstacle
                gait = AnimalGait.GRAZE
        graze_steps = int(float(rng.uniform(*config.graze_s)) / dt_s)
        speed = run_speed if gait is AnimalGait.RUN else walk_speed
        wp = 0
        start_k = k
        while k < n_steps:
            step = 0.0
            if gait is AnimalGait.GRAZE:
                if k - start_k >= graze_steps:
                    break
                amp = _toward(amp, 0.0, BLEND_RATE * dt_s)
                graze = _toward(graze, 1.0, BLEND_RATE * dt_s) if amp < 0.3 else graze
                # Legs settle at the nearest neutral phase.
                phase += math.remainder(-phase, math.pi) * min(1.0, 3 * dt_s)
            else:
                if wp >= len(waypoints):
                    break
                graze = _toward(graze, 0.0, BLEND_RATE * dt_s)
                run = _toward(run, 1.0 if gait is AnimalGait.RUN else 0.0, BLEND_RATE * dt_s)
                amp = _toward(amp, 1.0, BLEND_RATE * dt_s)
                delta = waypoints[wp] - pos
                dist = float(np.linalg.norm(delta))
                want = math.atan2(delta[1], delta[0]) if dist > 1e-6 else heading
                err = math.remainder(want - heading, 2 * math.pi)
                heading += _clip(err, HEADING_RATE_RPS * dt_s)
                # Speed follows the gait blend and the head: no running while still grazing.
                v = (walk_speed + run * (speed - walk_speed)) * amp * (1.0 - graze)
                step = min(dist, v * dt_s * max(0.2, math.cos(err)))
                if dist > 1e-9:
                    pos = pos + delta / dist * step
                if dist - step < 1e-6:
                    wp += 1
            stride = anatomy.walk_stride_m + run * (anatomy.run_stride_m - anatomy.walk_stride_m)
            phase += 2 * math.pi * step / (stride * spec.scale)
            out[k] = (pos[0], pos[1], heading, phase, amp, run, graze)
            k += 1
            if gait is AnimalGait.GRAZE:
                run = _toward(run, 0.0, BLEND_RATE * dt_s)
        out_gait[start_k:k] = GAIT_CODES[gait]
    return AnimalTimeline(
        out[:, 0:2].copy(),
        out[:, 2].copy(),
        out[:, 3].copy(),
        out[:, 4].copy(),
        out[:, 5].copy(),
        out[:, 6].copy(),
        out_gait,
    )


def _segment_quat(direction: FloatArray) -> FloatArray:
    """wxyz quaternions (..., 4) turning +z onto unit directions (..., 3) (never exactly -z)."""
    d = direction / np.linalg.norm(direction, axis=-1, keepdims=True)
    q = np.stack([1.0 + d[..., 2], -d[..., 1], d[..., 0], np.zeros_like(d[..., 0])], axis=-1)
    out: FloatArray = q / np.linalg.norm(q, axis=-1, keepdims=True)
    return out


def animal_part_poses(
    specs: tuple[AnimalSpec, ...], timelines: tuple[AnimalTimeline, ...], step: int
) -> tuple[FloatArray, FloatArray]:
    """World poses of every part of the animals at physics step `step`: positions (A, 12, 3)
    and wxyz quaternions (A, 12, 4), part order PART_NAMES."""
    pos, quat = animal_part_poses_at(specs, timelines, np.array([step]))
    return pos[0], quat[0]


def _states_at(
    timelines: tuple[AnimalTimeline, ...], steps: NDArray[np.int64], name: str
) -> FloatArray:
    """A state array over (steps, animals); steps past a timeline's end hold its last value."""
    cols = [getattr(tl, name)[np.minimum(steps, len(tl.heading_rad) - 1)] for tl in timelines]
    out: FloatArray = np.stack(cols, axis=1)
    return out


def animal_part_poses_at(
    specs: tuple[AnimalSpec, ...], timelines: tuple[AnimalTimeline, ...], steps: NDArray[np.int64]
) -> tuple[FloatArray, FloatArray]:
    """World poses of every part of the animals at several physics steps: positions
    (S, A, 12, 3) and wxyz quaternions (S, A, 12, 4), part order PART_NAMES."""
    m, n = len(steps), len(specs)
    if not specs:
        return np.zeros((m, 0, 12, 3)), np.zeros((m, 0, 12, 4))
    steps = np.asarray(steps, dtype=np.int64)
    dims = {key: np.tile(value, m) for key, value in _dims(specs).items()}

    def at(name: str) -> FloatArray:
        values = _states_at(timelines, steps, name)
        return values.reshape(m * n, *values.shape[2:])

    centres, quats = _pose_local(
        dims, at("phase_rad"), at("amplitude"), at("run_blend"), at("graze_blend")
    )
    heading = at("heading_rad")
    c, s = np.cos(heading)[:, None], np.sin(heading)[:, None]
    pos = np.empty_like(centres)
    xy = at("position_xy")
    pos[..., 0] = xy[:, 0:1] + c * centres[..., 0] - s * centres[..., 1]
    pos[..., 1] = xy[:, 1:2] + s * centres[..., 0] + c * centres[..., 1]
    pos[..., 2] = centres[..., 2]
    half = 0.5 * heading
    zero = np.zeros_like(half)
    q_heading = np.stack([np.cos(half), zero, zero, np.sin(half)], axis=-1)[:, None, :]
    quat = quat_mul(np.broadcast_to(q_heading, quats.shape), quats)
    return pos.reshape(m, n, 12, 3), quat.reshape(m, n, 12, 4)


def body_extent_local(
    specs: tuple[AnimalSpec, ...], timelines: tuple[AnimalTimeline, ...], steps: NDArray[np.int64]
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Ground footprint of each animal in its own frame (x forward, y left) at several steps:
    the rearmost and foremost x of any part's surface and the largest |y|, each (S, A) metres
    (tail, muzzle and legs included, as they are posed)."""
    m, n = len(steps), len(specs)
    steps = np.asarray(steps, dtype=np.int64)
    dims = {key: np.tile(value, m) for key, value in _dims(specs).items()}

    def at(name: str) -> FloatArray:
        return _states_at(timelines, steps, name).reshape(m * n)

    centres, quats = _pose_local(
        dims, at("phase_rad"), at("amplitude"), at("run_blend"), at("graze_blend")
    )
    # Capsules: both ends of the axis (the part's z axis) grown by the radius.
    radius = np.array([[size[0] for _, size in spec.part_shapes()[1:]] for spec in specs])
    half_len = np.array([[size[1] for _, size in spec.part_shapes()[1:]] for spec in specs])
    w, x, y, z = (quats[:, 1:, i] for i in range(4))
    axis = np.stack([2 * (x * z + w * y), 2 * (y * z - w * x)], axis=-1)  # horizontal part
    reach = axis * np.tile(half_len, (m, 1))[..., None]
    ends = np.concatenate([centres[:, 1:, :2] - reach, centres[:, 1:, :2] + reach], axis=1)
    r = np.tile(np.concatenate([radius, radius], axis=1), (m, 1))
    barrel_x = dims["hx"]
    barrel_y = dims["hy"]
    x_min = np.minimum((ends[..., 0] - r).min(axis=1), -barrel_x)
    x_max = np.maximum((ends[..., 0] + r).max(axis=1), barrel_x)
    half_width = np.maximum((np.abs(ends[..., 1]) + r).max(axis=1), barrel_y)
    return x_min.reshape(m, n), x_max.reshape(m, n), half_width.reshape(m, n)


@lru_cache(maxsize=8)
def _dims(specs: tuple[AnimalSpec, ...]) -> dict[str, FloatArray]:
    """Scaled sizes of each animal (arrays over the animals), computed once per scene."""
    rows = [
        (
            *(v * a.scale for v in a.anatomy.body_half),
            a.anatomy.upper_leg * a.scale,
            a.anatomy.lower_leg * a.scale,
            a.anatomy.neck[0] * a.scale,
            a.anatomy.head[0] * a.scale,
            a.anatomy.tail[0] * a.scale,
            a.anatomy.neck_up_rad,
            a.scale,
        )
        for a in specs
    ]
    cols = np.array(rows).T
    names = ("hx", "hy", "hz", "upper", "lower", "neck", "head", "tail", "neck_up", "scale")
    return dict(zip(names, cols, strict=True))


def _pose_local(
    d: dict[str, FloatArray], phase: FloatArray, amp: FloatArray, run: FloatArray, graze: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Part centres (A, 12, 3) and orientations (A, 12, 4) in each animal's frame (x forward,
    y left, z up); the state arguments are arrays over the A animals."""
    hx, hy, hz = d["hx"], d["hy"], d["hz"]
    n = len(hx)
    hip_z = d["upper"] + d["lower"]
    # A gallop rocks the barrel; the walk barely moves it. Only upwards: the legs are
    # straight at the lowest point, so the hooves never sink into the ground.
    bob = (0.01 + 0.03 * run) * amp * 0.5 * (1.0 + np.cos(2 * phase)) * d["scale"]
    zc = hip_z + 0.35 * hz + bob
    starts = np.zeros((n, 12, 3))
    ends = np.zeros((n, 12, 3))
    # Legs (A, 4).
    offset = _WALK_OFFSET + run[:, None] * (_RUN_OFFSET - _WALK_OFFSET)
    leg_phase = phase[:, None] + 2 * math.pi * offset
    swing = (amp * (0.25 + 0.2 * run))[:, None] * np.sin(leg_phase)
    flex = (amp * (0.35 + 0.45 * run))[:, None] * np.clip(np.cos(leg_phase), 0.0, 1.0)
    zeros = np.zeros_like(swing)
    attach = np.stack(
        [
            0.72 * hx[:, None] * _LEG_FORE,
            0.6 * hy[:, None] * _LEG_LEFT,
            np.broadcast_to((zc - 0.35 * hz)[:, None], swing.shape),
        ],
        axis=-1,
    )
    d_upper = np.stack([np.sin(swing), zeros, -np.cos(swing)], axis=-1)
    knee = attach + d_upper * d["upper"][:, None, None]
    lower_angle = swing - flex
    d_lower = np.stack([np.sin(lower_angle), zeros, -np.cos(lower_angle)], axis=-1)
    hoof = knee + d_lower * d["lower"][:, None, None]
    starts[:, 3:11:2], ends[:, 3:11:2] = attach, knee
    starts[:, 4:12:2], ends[:, 4:12:2] = knee, hoof
    # Neck and head: up while walking, lower while running, at the ground while grazing.
    withers = np.stack([0.85 * hx, np.zeros(n), zc + 0.35 * hz], axis=-1)
    head_down = -1.35  # the head hangs almost vertically to graze
    sin_graze = (GRAZE_HEAD_CLEARANCE_M - withers[:, 2] - d["head"] * math.sin(head_down)) / d[
        "neck"
    ]
    neck_graze = np.arcsin(np.clip(sin_graze, -1.0, 1.0))
    neck_move = d["neck_up"] - 0.4 * run
    neck_angle = neck_move + graze * (neck_graze - neck_move)
    head_move = -0.9  # below horizontal, as a horse carries it
    head_angle = head_move + graze * (head_down - head_move)

    def along(angle: FloatArray, length: FloatArray) -> FloatArray:
        return np.stack([np.cos(angle), np.zeros(n), np.sin(angle)], axis=-1) * length[:, None]

    poll = withers + along(neck_angle, d["neck"])
    muzzle = poll + along(head_angle, d["head"])
    starts[:, 1], ends[:, 1] = withers, poll
    starts[:, 2], ends[:, 2] = poll, muzzle
    # Tail: hangs back and down, swishing sideways.
    root = np.stack([-0.95 * hx, np.zeros(n), zc + 0.3 * hz], axis=-1)
    swish = 0.25 * np.sin(0.5 * phase + 1.0) + 0.1 * np.sin(1.7 * phase)
    tail_dir = np.stack(
        [np.full(n, -math.sin(0.45)), np.sin(swish), np.full(n, -math.cos(0.45))], axis=-1
    )
    tail_dir /= np.linalg.norm(tail_dir, axis=-1, keepdims=True)
    starts[:, 11] = root
    ends[:, 11] = root + tail_dir * d["tail"][:, None]
    centres = (starts + ends) / 2
    quats = np.zeros((n, 12, 4))
    quats[:, 1:] = _segment_quat(starts[:, 1:] - ends[:, 1:])
    centres[:, 0] = np.stack([np.zeros(n), np.zeros(n), zc], axis=-1)
    quats[:, 0] = (1.0, 0.0, 0.0, 0.0)
    return centres, quats
