"""Animals in the collision-free world: placed over the whole animation, avoided by people.

Animals are planned one after another, before the people. Each animal's timeline is drawn
(actors/animals.py), its 12 parts are posed at every physics step and tested with FCL against
the environment's static boxes and meshes (the ground excepted), the animals accepted before it
and the robots' planned bodies; every part is grown by `animals.clearance_m`. A trace that
touches anything is drawn again from the next draws of the same generator (`animals.retries`
times); an animal still colliding after that is rejected, with the reason, in the same
placement report as the people.

People then see every animal as a moving obstacle that does not yield, like a robot: two discs
covering the front and back halves of its ground footprint, from the known timelines, in
scripted and reactive mode alike (`AnimalDiscs`); and the FCL check of the people's traces
includes the animals' parts (`people_animal_collisions`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import fcl
import numpy as np

from grade_common.occupancy import OccupancyGrid
from grade_common.types import FloatArray
from grade_people.crowd import RobotObstacle, RobotSchedule
from grade_people.people import PersonSpec, PersonTimeline, part_poses
from grade_sim.actors.animals import (
    AnimalSpec,
    AnimalTimeline,
    animal_part_poses_at,
    body_extent_local,
    plan_animal_timeline,
    random_animal,
)
from grade_sim.actors.placement import (
    Collision,
    PlacementReport,
    Rejection,
    _Environment,
    _geometry,
    _overlap,
    _part_reach,
    _yaw_quat,
)
from grade_sim.config.scenario import AnimalsConfig
from grade_sim.world.model import World

# People start stepping aside from an animal this many seconds before they would meet: a
# running animal (up to ~6 m/s) does not yield, and a walker (~1 m/s) needs the head start.
ANIMAL_TIME_HORIZON_S = 4.0
# ... and keep out of where it will be this far ahead (see AnimalDiscs).
ANIMAL_LOOKAHEAD_S = (0.25, 0.5, 1.0, 1.5)
_REQUEST = fcl.CollisionRequest()


def _collide(a: fcl.CollisionObject, b: fcl.CollisionObject) -> bool:
    return bool(fcl.collide(a, b, _REQUEST, fcl.CollisionResult()) > 0)


class PartTrace:
    """One actor's rigid parts posed at every step, with the boxes of the cheap pre-test.

    Args:
        name: the actor's name (what a collision reason says).
        geometries: one FCL geometry per part.
        reach_m: per part, the radius of a sphere around its centre that holds it.
        position_xyz: (S, parts, 3) part centres; quat_wxyz: (S, parts, 4).
    """

    def __init__(
        self,
        name: str,
        geometries: Sequence[fcl.CollisionGeometry],
        reach_m: FloatArray,
        position_xyz: FloatArray,
        quat_wxyz: FloatArray,
    ) -> None:
        self.name = name
        self.objects = [fcl.CollisionObject(g) for g in geometries]
        self.position_xyz = position_xyz
        self.quat_wxyz = quat_wxyz
        self.lo = position_xyz - reach_m[None, :, None]
        self.hi = position_xyz + reach_m[None, :, None]
        self.body_lo = self.lo.min(axis=1)
        self.body_hi = self.hi.max(axis=1)

    @property
    def n_steps(self) -> int:
        return len(self.position_xyz)

    def posed(self, step: int, part: int) -> fcl.CollisionObject:
        obj = self.objects[part]
        obj.setTransform(fcl.Transform(self.quat_wxyz[step, part], self.position_xyz[step, part]))
        return obj


def animal_trace(
    spec: AnimalSpec, timeline: AnimalTimeline, n_steps: int, clearance_m: float
) -> PartTrace:
    """The animal's 12 parts (grown by clearance_m) at steps 0 .. n_steps-1."""
    pos, quat = animal_part_poses_at((spec,), (timeline,), np.arange(n_steps))
    geometries = []
    reach = []
    for kind, size in spec.part_shapes():
        if kind == "ellipsoid":
            geometries.append(fcl.Ellipsoid(*(s + clearance_m for s in size)))
            reach.append(max(size) + clearance_m)
        else:  # capsule: radius, half-length along the part's z axis
            geometries.append(fcl.Capsule(size[0] + clearance_m, 2 * size[1]))
            reach.append(size[0] + clearance_m + size[1])
    return PartTrace(spec.name, geometries, np.array(reach), pos[:, 0], quat[:, 0])


def person_trace(spec: PersonSpec, timeline: PersonTimeline, n_steps: int) -> PartTrace:
    """A person's rigid parts (grade_people.people, as placement.py checks them) at every step."""
    n = min(n_steps, len(timeline.position_xy))
    pos, quat = part_poses(
        np.full(n, spec.scale),
        timeline.position_xy[:n],
        timeline.heading_rad[:n],
        timeline.phase_rad[:n],
        timeline.amplitude[:n],
    )
    parts = spec.parts()
    geometries = [_geometry(q.shape, q.size) for q in parts]
    reach = np.array([_part_reach(q.shape, q.size) for q in parts])
    return PartTrace(spec.name, geometries, reach, pos, quat)


def first_contact(a: PartTrace, b: PartTrace) -> int | None:
    """The first step at which two traces touch (FCL on the parts whose boxes overlap)."""
    n = min(a.n_steps, b.n_steps)
    (ks,) = np.nonzero(_overlap(a.body_lo[:n], a.body_hi[:n], b.body_lo[:n], b.body_hi[:n]))
    if not len(ks):
        return None
    parts = _overlap(a.lo[ks, :, None], a.hi[ks, :, None], b.lo[ks, None], b.hi[ks, None])
    for c, p, q in zip(*np.nonzero(parts), strict=True):
        if _collide(a.posed(int(ks[c]), int(p)), b.posed(int(ks[c]), int(q))):
            return int(ks[c])
    return None


def _first_world_contact(trace: PartTrace, env: _Environment) -> tuple[int, str] | None:
    if not len(env.objects):
        return None
    ss, ee = np.nonzero(_overlap(trace.body_lo[:, None], trace.body_hi[:, None], env.lo, env.hi))
    if not len(ss):
        return None
    parts = _overlap(trace.lo[ss], trace.hi[ss], env.lo[ee, None], env.hi[ee, None])
    for c, q in zip(*np.nonzero(parts), strict=True):
        if _collide(trace.posed(int(ss[c]), int(q)), env.objects[ee[c]]):
            return int(ss[c]), env.names[ee[c]]
    return None


def _first_robot_contact(trace: PartTrace, robots: RobotSchedule) -> tuple[int, str] | None:
    best: tuple[int, str] | None = None
    kk = np.minimum(np.arange(trace.n_steps), len(robots.position_xyz) - 1)
    for r, half in enumerate(robots.half_size_xyz):
        obj = fcl.CollisionObject(fcl.Box(*(2 * half)))
        centre = robots.position_xyz[kk, r]
        reach = float(np.linalg.norm(half))
        close = _overlap(trace.lo, trace.hi, (centre - reach)[:, None], (centre + reach)[:, None])
        for s, q in zip(*np.nonzero(close), strict=True):
            if best is not None and s >= best[0]:
                break
            obj.setTransform(fcl.Transform(_yaw_quat(float(robots.yaw_rad[kk[s], r])), centre[s]))
            if _collide(trace.posed(int(s), int(q)), obj):
                best = (int(s), f"robot {robots.names[r]} (planned path)")
                break
    return best


def first_collision(
    trace: PartTrace,
    env: _Environment,
    others: Sequence[PartTrace],
    robots: RobotSchedule | None,
) -> Collision | None:
    """The earliest contact of an animal's trace with the world, other actors or robots."""
    hits: list[tuple[int, str]] = []
    world = _first_world_contact(trace, env)
    if world is not None:
        hits.append(world)
    for earlier in others:
        step = first_contact(trace, earlier)
        if step is not None:
            hits.append((step, earlier.name))
    if robots is not None and robots.names:
        robot = _first_robot_contact(trace, robots)
        if robot is not None:
            hits.append(robot)
    if not hits:
        return None
    step, other = min(hits, key=lambda h: h[0])
    return Collision(trace.name, step, other)


AnimalPlanner = Callable[
    [OccupancyGrid, AnimalsConfig, AnimalSpec, int, float, np.random.Generator], AnimalTimeline
]


@dataclass(frozen=True)
class AnimalPlacement:
    """The animals kept, their timelines and traces (what people are checked against)."""

    animals: tuple[AnimalSpec, ...]
    timelines: tuple[AnimalTimeline, ...]
    traces: tuple[PartTrace, ...]
    report: PlacementReport


def place_animals(
    world: World,
    config: AnimalsConfig,
    n_steps: int,
    dt_s: float,
    rng: np.random.Generator,
    robots: RobotSchedule | None = None,
    first_instance_id: int = 1,
    planner: AnimalPlanner = plan_animal_timeline,
) -> AnimalPlacement:
    """Draw `config.count` animals one by one, each clear of the world, the earlier ones and
    the robots' planned bodies over the whole run.

    Animal i is named animal_i with instance id first_instance_id + i; its look, then its
    timelines come from `rng`. An animal whose trace touches something is drawn again
    (`config.retries` times), then rejected with the reason of its last draw's first contact.
    """
    if not config.count:
        return AnimalPlacement((), (), (), PlacementReport())
    env = _Environment(world)
    kept: list[AnimalSpec] = []
    timelines: list[AnimalTimeline] = []
    traces: list[PartTrace] = []
    rejected: list[Rejection] = []
    seen: list[str] = []
    draws = 0
    for i in range(config.count):
        spec = random_animal(f"animal_{i}", first_instance_id + i, config, rng)
        for _ in range(config.retries + 1):
            timeline = planner(world.free_space, config, spec, n_steps, dt_s, rng)
            trace = animal_trace(spec, timeline, n_steps, config.clearance_m)
            draws += 1
            hit = first_collision(trace, env, traces, robots)
            if hit is None:
                kept.append(spec)
                timelines.append(timeline)
                traces.append(trace)
                break
            seen.append(hit.reason)
        else:
            rejected.append(Rejection(spec.name, spec.instance_id, seen[-1]))
    report = PlacementReport(
        checked=True,
        steps=n_steps,
        attempts=0,
        rejected=tuple(rejected),
        collisions_seen=tuple(seen),
        animal_draws=draws,
    )
    return AnimalPlacement(tuple(kept), tuple(timelines), tuple(traces), report)


def people_animal_collisions(
    animals: Sequence[PartTrace],
    people: Sequence[PersonSpec],
    timelines: Sequence[PersonTimeline],
) -> list[Collision]:
    """The first contact of every person whose trace touches an animal's (grown) parts."""
    out = []
    for spec, timeline in zip(people, timelines, strict=True):
        if not animals:
            break
        person = person_trace(spec, timeline, animals[0].n_steps)
        hits = [(s, a.name) for a in animals if (s := first_contact(person, a)) is not None]
        if hits:
            step, other = min(hits, key=lambda h: h[0])
            out.append(Collision(spec.name, step, f"{other} (animal)"))
    return out


def merge_reports(animals: PlacementReport, people: PlacementReport) -> PlacementReport:
    """One report of the run: the animals' rejections and contacts, then the people's."""
    return PlacementReport(
        checked=animals.checked or people.checked,
        steps=max(animals.steps, people.steps),
        attempts=people.attempts,
        rejected=animals.rejected + people.rejected,
        collisions_seen=animals.collisions_seen + people.collisions_seen,
        sit_fallbacks=people.sit_fallbacks,
        animal_draws=animals.animal_draws,
    )


@dataclass(frozen=True)
class AnimalDiscs:
    """Animals as the crowd sees them: per animal, two discs (front and back half of its ground
    footprint) at every physics step; animals do not yield.

    Arrays are indexed (step, disc); disc 2a is animal a's back half, 2a+1 its front half.
    The timelines are known ahead, so the crowd also sees each moving disc where it will be
    `lookahead_steps` later: an animal turning or breaking into a run next to a person does
    not yield, and the straight-line extrapolation of ORCA alone would see it too late.
    """

    names: tuple[str, ...]
    position_xy: FloatArray  # (n_steps, D, 2)
    velocity_xy: FloatArray  # (n_steps, D, 2)
    radius_m: FloatArray  # (D,) the largest the half needs over the run
    lookahead_steps: tuple[int, ...] = ()

    def __call__(self, step: int) -> list[RobotObstacle]:
        if not self.names:
            return []
        last = len(self.position_xy) - 1
        k = min(step, last)
        out = []
        for ahead in (0, *self.lookahead_steps):
            j = min(k + ahead, last)
            for d, r in enumerate(self.radius_m):
                if ahead and np.array_equal(self.position_xy[j, d], self.position_xy[k, d]):
                    continue  # standing still: the disc now covers it
                out.append(
                    RobotObstacle(
                        self.position_xy[j, d],
                        self.velocity_xy[j, d],
                        float(r),
                        is_animal=True,
                        time_horizon_s=ANIMAL_TIME_HORIZON_S,
                    )
                )
        return out


def animal_discs(
    specs: Sequence[AnimalSpec], timelines: Sequence[AnimalTimeline], n_steps: int, dt_s: float
) -> AnimalDiscs:
    """Cover each animal's footprint (tail to muzzle, legs and swish included) with two discs.

    The footprint is a rectangle in the animal's frame; each half of it lies in the disc
    through its corners. Velocities are forward differences over one physics step.
    """
    n = len(specs)
    if not n:
        return AnimalDiscs((), np.zeros((n_steps, 0, 2)), np.zeros((n_steps, 0, 2)), np.zeros(0))
    steps = np.arange(n_steps)
    x_min, x_max, half_width = body_extent_local(tuple(specs), tuple(timelines), steps)
    quarter = (x_max - x_min) / 4  # (S, A)
    local_x = np.stack([x_min + quarter, x_max - quarter], axis=2)  # (S, A, 2): back, front
    heading = np.stack(
        [tl.heading_rad[np.minimum(steps, len(tl.heading_rad) - 1)] for tl in timelines], axis=1
    )
    centre = np.stack(
        [tl.position_xy[np.minimum(steps, len(tl.position_xy) - 1)] for tl in timelines], axis=1
    )
    direction = np.stack([np.cos(heading), np.sin(heading)], axis=-1)  # (S, A, 2)
    pos = centre[:, :, None] + local_x[..., None] * direction[:, :, None]  # (S, A, 2, 2)
    pos = pos.reshape(n_steps, 2 * n, 2)
    vel = np.zeros_like(pos)
    vel[:-1] = np.diff(pos, axis=0) / dt_s
    radius = np.hypot(quarter, half_width).max(axis=0)  # (A,)
    names = tuple(f"{s.name} {half}" for s in specs for half in ("back", "front"))
    lookahead = tuple(round(t / dt_s) for t in ANIMAL_LOOKAHEAD_S)
    return AnimalDiscs(names, pos, vel, np.repeat(radius, 2), lookahead)


@dataclass(frozen=True)
class MovingObstacles:
    """What a scripted crowd avoids at each step: the robots' planned bodies and the animals."""

    robots: RobotSchedule
    animals: AnimalDiscs

    def __call__(self, step: int) -> list[RobotObstacle]:
        return self.robots(step) + self.animals(step)


def min_distance(a: PartTrace, b: PartTrace, cap_m: float, stride: int = 1) -> tuple[float, int]:
    """The smallest distance between two traces' parts over every `stride`-th step, and its step.

    Pairs of parts whose boxes stay more than cap_m apart are not measured: a result of cap_m
    means "at least cap_m". Touching or overlapping parts give 0 or less.
    """
    n = min(a.n_steps, b.n_steps)
    ks = np.arange(0, n, stride)
    near = _overlap(a.body_lo[ks] - cap_m, a.body_hi[ks] + cap_m, b.body_lo[ks], b.body_hi[ks])
    ks = ks[near]
    best, best_step = cap_m, -1
    if not len(ks):
        return best, best_step
    parts = _overlap(
        a.lo[ks, :, None] - cap_m, a.hi[ks, :, None] + cap_m, b.lo[ks, None], b.hi[ks, None]
    )
    request = fcl.DistanceRequest()
    for c, p, q in zip(*np.nonzero(parts), strict=True):
        k = int(ks[c])
        d = fcl.distance(a.posed(k, int(p)), b.posed(k, int(q)), request, fcl.DistanceResult())
        if d < best:
            best, best_step = float(d), k
    return best, best_step
