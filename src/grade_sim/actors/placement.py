"""Placement over the whole animation (GRADE): every person's 3D trace checked with FCL.

Each skinned person's (people.body makehuman or skinned) collision capsules, fitted per bone
to their own skin (grade_people/capsules.py), are posed with their skeleton by the motion
library at every physics step, as the skin is drawn; rigid-part people (people.body: parts)
pose their capsules, spheres and boxes (grade_people/people.py). They are tested against the
environment's static boxes and meshes (the floor they stand on excepted), the other people and
the robots' planned bodies. During a sit stop the body sits, and the chair sat on (only that
one) may be touched. A cheap
bounding-box test picks the steps where contact is possible at all; FCL decides those exactly.

A scripted crowd that collides is planned again from the next draws of the same generator
(`placement.retries` times); people still colliding after that are rejected with the reason,
and the crowd is planned once more without them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import fcl
import numpy as np

from grade_common.types import FloatArray
from grade_people.bvh import BvhMotion, retarget
from grade_people.capsules import body_capsules, capsule_poses
from grade_people.config import PeopleConfig
from grade_people.crowd import Crowd, RobotObstacle, RobotSchedule
from grade_people.motion import animation_track
from grade_people.people import (
    PartShape,
    PersonSpec,
    PersonTimeline,
    part_poses,
    sit_weights,
)
from grade_people.seat import Seat
from grade_sim.world.model import World

SUPPORT_LABELS = ("floor", "ground")  # what people stand on: touching it is no collision
MESH_FLOOR_M = 0.1  # mesh triangles entirely below this height are floor


@dataclass(frozen=True)
class Collision:
    """The first contact found of one person's trace."""

    person: str
    step: int
    other: str  # "wall_3 (wall)", "person_2", "robot uav1 (planned path)"

    @property
    def reason(self) -> str:
        return f"{self.person} collides with {self.other} at step {self.step}"


@dataclass(frozen=True)
class Rejection:
    """An actor left out of the scene because its trace still collided after the retries."""

    name: str
    instance_id: int
    reason: str  # the last collision found (Collision.reason)


@dataclass(frozen=True)
class PlacementReport:
    """What the placement check did: to the log and the run directory (placement.yaml)."""

    checked: bool = False
    steps: int = 0
    attempts: int = 0
    rejected: tuple[Rejection, ...] = ()
    collisions_seen: tuple[str, ...] = field(default=())  # every attempt's contacts, in order
    # `sit` stops that became other stops (no free chair could be reached), of the kept plan.
    sit_fallbacks: tuple[str, ...] = field(default=())
    animal_draws: int = 0  # animal timelines drawn (actors/animal_placement.py)

    def to_mapping(self) -> dict[str, object]:
        return {
            "checked": self.checked,
            "steps_checked": self.steps,
            "attempts": self.attempts,
            "rejected": [
                {"name": r.name, "instance_id": r.instance_id, "reason": r.reason}
                for r in self.rejected
            ],
            "collisions_seen": list(self.collisions_seen),
            "sit_fallbacks": list(self.sit_fallbacks),
            "animal_draws": self.animal_draws,
        }


def _geometry(shape: PartShape, size: tuple[float, float, float]) -> fcl.CollisionGeometry:
    if shape is PartShape.CAPSULE:
        return fcl.Capsule(size[0], 2 * size[1])  # long axis = the part's z axis
    if shape is PartShape.SPHERE:
        return fcl.Sphere(size[0])
    return fcl.Box(2 * size[0], 2 * size[1], 2 * size[2])


def _yaw_quat(yaw: float) -> FloatArray:
    return np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])


class _Environment:
    """The static world as FCL objects, with their bounding boxes for the cheap pre-test."""

    def __init__(self, world: World) -> None:
        self.objects: list[fcl.CollisionObject] = []
        self.names: list[str] = []
        self.pieces: list[str] = []  # the object each solid belongs to (`<piece>/<part>`)
        lo, hi = [], []
        for box in world.boxes:
            if box.label in SUPPORT_LABELS:
                continue
            tf = fcl.Transform(_yaw_quat(box.yaw_rad), np.asarray(box.center_xyz))
            half = np.asarray(box.half_size_xyz)
            self.objects.append(fcl.CollisionObject(fcl.Box(*(2 * half)), tf))
            self.names.append(f"{box.name} ({box.label})")
            self.pieces.append(box.name.partition("/")[0])
            c, s = abs(np.cos(box.yaw_rad)), abs(np.sin(box.yaw_rad))
            reach = np.array([c * half[0] + s * half[1], s * half[0] + c * half[1], half[2]])
            lo.append(np.asarray(box.center_xyz) - reach)
            hi.append(np.asarray(box.center_xyz) + reach)
        for mesh in world.meshes:
            if not mesh.collides:  # drawn only, walked through (grass, terrain)
                continue
            tri = mesh.faces[mesh.vertices_xyz[mesh.faces][:, :, 2].max(axis=1) > MESH_FLOOR_M]
            if not len(tri):
                continue
            model = fcl.BVHModel()
            model.beginModel(len(mesh.vertices_xyz), len(tri))
            model.addSubModel(mesh.vertices_xyz, tri)
            model.endModel()
            self.objects.append(fcl.CollisionObject(model, fcl.Transform()))
            self.names.append(f"{mesh.name} ({mesh.label})")
            self.pieces.append(mesh.name.partition("/")[0])
            used = mesh.vertices_xyz[np.unique(tri)]
            lo.append(used.min(axis=0))
            hi.append(used.max(axis=0))
        self.lo = np.array(lo).reshape(-1, 3)
        self.hi = np.array(hi).reshape(-1, 3)
        # Which of world.seats each solid is part of (-1: none).
        seat_of = {seat.name: k for k, seat in enumerate(world.seats)}
        self.seat = np.array([seat_of.get(p, -1) for p in self.pieces], dtype=np.int64)


def seat_in_use(seats: Sequence[Seat], timeline: PersonTimeline, dt_s: float) -> np.ndarray:
    """(n,) index into `seats` of the chair the person's sit stop at each step is on (-1: not
    in a sit stop): the seat nearest to where the person is when most seated."""
    out = np.full(len(timeline.seat_height_m), -1, dtype=np.int64)
    stop = np.isfinite(timeline.seat_height_m)
    if not seats or not stop.any():
        return out
    weight = sit_weights(timeline.motion, dt_s)
    centres = np.array([s.centre_xy for s in seats])
    edges = np.flatnonzero(np.diff(np.concatenate([[0], stop.astype(np.int8), [0]])))
    for a, b in zip(edges[::2], edges[1::2], strict=True):
        k = a + int(np.argmax(weight[a:b]))
        out[a:b] = int(np.argmin(np.linalg.norm(centres - timeline.position_xy[k], axis=1)))
    return out


def _part_reach(shape: PartShape, size: tuple[float, float, float]) -> float:
    """Radius of a sphere around the part's centre that holds the whole part."""
    if shape is PartShape.CAPSULE:
        return size[0] + size[1]
    if shape is PartShape.SPHERE:
        return size[0]
    return float(np.linalg.norm(size))


def _capsule_objects(
    people: Sequence[PersonSpec],
) -> tuple[list[list[fcl.CollisionObject]], FloatArray]:
    """FCL capsules of skinned people (grade_people.capsules) and each one's reach, (P, C):
    people with fewer capsules repeat their first (the mannequins have no clavicle capsules)."""
    caps = [body_capsules(p.body) for p in people if p.body is not None]
    c_max = max(len(c.joint) for c in caps)
    objects, reach = [], []
    for c in caps:
        idx = _pad(np.arange(len(c.joint)), c_max)
        r, h = c.radius_m[idx], c.half_length_m[idx]
        objects.append(
            [
                fcl.CollisionObject(fcl.Capsule(float(ri), 2 * float(hi)))
                for ri, hi in zip(r, h, strict=True)
            ]
        )
        reach.append(r + h)
    return objects, np.array(reach)


def _pad(x: np.ndarray, n: int) -> np.ndarray:
    """x with its first capsule (axis 0 of a 1-D x, else axis 1) repeated up to n of them."""
    if x.ndim == 1:
        return np.concatenate([x, np.repeat(x[:1], n - len(x))])
    count = x.shape[1]  # (K, C, ...): capsules on axis 1
    return np.concatenate([x, np.repeat(x[:, :1], n - count, axis=1)], axis=1)


_REQUEST = fcl.CollisionRequest()


def _collide(a: fcl.CollisionObject, b: fcl.CollisionObject) -> bool:
    return bool(fcl.collide(a, b, _REQUEST, fcl.CollisionResult()) > 0)


def _overlap(lo_a: FloatArray, hi_a: FloatArray, lo_b: FloatArray, hi_b: FloatArray) -> FloatArray:
    """Whether boxes overlap, broadcasting over the leading axes (last axis: x, y, z)."""
    out: FloatArray = np.all((lo_a <= hi_b) & (hi_a >= lo_b), axis=-1)
    return out


CHUNK_STEPS = 512  # steps posed at once (memory: chunk x people x parts x 7 floats)


def check_traces(
    world: World,
    people: Sequence[PersonSpec],
    timelines: Sequence[PersonTimeline],
    robots: RobotSchedule | None = None,
    robot_clearance_m: float = 0.1,
    *,
    dt_s: float,
    clips: Sequence[BvhMotion] = (),
) -> list[Collision]:
    """The first collision of every person whose trace touches something (empty: all clear).

    Person-person contacts are reported for both people. `dt_s` is the timelines' step (the
    sit pose blends in over time). A person in a sit stop does not collide with its chair.
    `clips`: people.clips (needed when a skinned person plays one).
    """
    n = len(people)
    if n == 0:
        return []
    n_steps = len(timelines[0].position_xy)
    env = _Environment(world)
    skinned = all(p.body is not None for p in people)
    if skinned:
        objects, reach = _capsule_objects(people)
        tracks = [animation_track(t, dt_s) for t in timelines]
        person_clips = [tuple(retarget(c, p.body) for c in clips) for p in people if p.body]
    else:
        specs = [p.parts() for p in people]
        objects = [
            [fcl.CollisionObject(_geometry(q.shape, q.size)) for q in parts] for parts in specs
        ]
        reach = np.array([[_part_reach(q.shape, q.size) for q in parts] for parts in specs])
    scale = np.array([p.scale for p in people])
    robot_objects: list[fcl.CollisionObject] = []
    if robots is not None:
        for half in robots.half_size_xyz:
            robot_objects.append(fcl.CollisionObject(fcl.Box(*(2 * (half + robot_clearance_m)))))
    found: dict[int, Collision] = {}
    sit = np.stack([sit_weights(t.motion, dt_s) for t in timelines], axis=1)  # (steps, P)
    seat_h = np.stack([t.seat_height_m for t in timelines], axis=1)
    in_use = np.stack([seat_in_use(world.seats, t, dt_s) for t in timelines], axis=1)

    def hit(i: int, k: int, other: str) -> None:
        found.setdefault(i, Collision(people[i].name, k, other))

    for k0 in range(0, n_steps, CHUNK_STEPS):
        ks = np.arange(k0, min(n_steps, k0 + CHUNK_STEPS))
        m = len(ks)
        if skinned:
            posed = [
                capsule_poses(p.body, t, tr, dt_s, ks, c)
                for p, t, tr, c in zip(people, timelines, tracks, person_clips, strict=True)
                if p.body is not None
            ]
            n_parts = reach.shape[1]
            pos = np.stack([_pad(c, n_parts) for c, _ in posed], axis=1)  # (m, P, parts, 3)
            quat = np.stack([_pad(q, n_parts) for _, q in posed], axis=1)
        else:
            pos, quat = part_poses(
                np.tile(scale, m),
                np.stack([t.position_xy[ks] for t in timelines], axis=1).reshape(-1, 2),
                np.stack([t.heading_rad[ks] for t in timelines], axis=1).reshape(-1),
                np.stack([t.phase_rad[ks] for t in timelines], axis=1).reshape(-1),
                np.stack([t.amplitude[ks] for t in timelines], axis=1).reshape(-1),
                sit[ks].reshape(-1),
                seat_h[ks].reshape(-1),
            )
            n_parts = pos.shape[1]
            pos = pos.reshape(m, n, n_parts, 3)
            quat = quat.reshape(m, n, n_parts, 4)
        lo = pos - reach[None, ..., None]  # (m, P, parts, 3)
        hi = pos + reach[None, ..., None]
        body_lo, body_hi = lo.min(axis=2), hi.max(axis=2)  # (m, P, 3)

        def pose(
            s: int, i: int, q: int, pos: FloatArray = pos, quat: FloatArray = quat
        ) -> fcl.CollisionObject:
            obj = objects[i][q]
            obj.setTransform(fcl.Transform(quat[s, i, q], pos[s, i, q]))
            return obj

        # Environment: part boxes against object boxes, then FCL on the overlapping pairs.
        if len(env.objects):
            ss, ii, ee = np.nonzero(
                _overlap(body_lo[:, :, None], body_hi[:, :, None], env.lo, env.hi)
            )
            # A sitter's own chair is no obstacle to them.
            own = (env.seat[ee] >= 0) & (env.seat[ee] == in_use[ks[ss], ii])
            ss, ii, ee = ss[~own], ii[~own], ee[~own]
            parts = _overlap(lo[ss, ii], hi[ss, ii], env.lo[ee, None], env.hi[ee, None])
            for c, q in zip(*np.nonzero(parts), strict=True):
                s, i, e = ss[c], ii[c], ee[c]
                if i not in found and _collide(pose(s, i, q), env.objects[e]):
                    hit(int(i), int(ks[s]), env.names[e])
        # Other people: pairs whose bodies' boxes overlap, then their parts' boxes.
        near = _overlap(
            body_lo[:, :, None], body_hi[:, :, None], body_lo[:, None], body_hi[:, None]
        )
        ss, ii, jj = np.nonzero(np.triu(near, 1))
        parts = _overlap(
            lo[ss, ii, :, None], hi[ss, ii, :, None], lo[ss, jj, None], hi[ss, jj, None]
        )
        for c, q, r in zip(*np.nonzero(parts), strict=True):
            s, i, j = ss[c], ii[c], jj[c]
            if (i in found and j in found) or not _collide(pose(s, i, q), pose(s, j, r)):
                continue
            hit(int(i), int(ks[s]), people[j].name)
            hit(int(j), int(ks[s]), people[i].name)
        # Robots' planned bodies.
        if robots is None or not robot_objects:
            continue
        kk = np.minimum(ks, len(robots.position_xyz) - 1)
        for r, obj in enumerate(robot_objects):
            centre = robots.position_xyz[kk, r]  # (m, 3)
            half = robots.half_size_xyz[r] + robot_clearance_m
            reach_r = float(np.linalg.norm(half))
            close = _overlap(
                lo, hi, (centre - reach_r)[:, None, None], (centre + reach_r)[:, None, None]
            )
            for s, i, q in zip(*np.nonzero(close), strict=True):
                if i in found:
                    continue
                obj.setTransform(
                    fcl.Transform(_yaw_quat(float(robots.yaw_rad[kk[s], r])), centre[s])
                )
                if _collide(pose(s, i, q), obj):
                    hit(int(i), int(ks[s]), f"robot {robots.names[r]} (planned path)")
    return [found[i] for i in sorted(found)]


Planner = Callable[[Sequence[PersonSpec], np.random.Generator], tuple[PersonTimeline, ...]]
# More contacts of the people's traces (the animals': actors/animal_placement.py).
ExtraCheck = Callable[[Sequence[PersonSpec], Sequence[PersonTimeline]], list[Collision]]


class CrowdPlanner:
    """Plans a scripted crowd of the given people with Crowd; keeps the last plan's notes."""

    def __init__(
        self,
        make: Callable[[Sequence[PersonSpec], np.random.Generator], Crowd],
        robots: Callable[[int], list[RobotObstacle]],
    ) -> None:
        self._make = make
        self.robots = robots
        self.notes: tuple[str, ...] = ()

    def __call__(
        self, people: Sequence[PersonSpec], rng: np.random.Generator
    ) -> tuple[PersonTimeline, ...]:
        crowd = self._make(people, rng)
        timelines = crowd.run_to_end(self.robots)
        self.notes = tuple(crowd.notes)
        return timelines


def crowd_planner(
    world: World,
    config: PeopleConfig,
    n_steps: int,
    dt_s: float,
    robots: Callable[[int], list[RobotObstacle]],
    start_clear_of: Sequence[RobotObstacle] = (),
    clip_durations_s: Sequence[float] = (),
    robot_plans: RobotSchedule | None = None,
) -> Planner:
    """Plans a scripted crowd of the given people (the default planner of place_scripted_crowd);
    `robot_plans`: the robots' planned paths, for people.toward_robots."""

    def make(people: Sequence[PersonSpec], rng: np.random.Generator) -> Crowd:
        return Crowd(
            world.free_space,
            config,
            [p.height_m for p in people],
            n_steps,
            dt_s,
            rng,
            start_clear_of,
            clip_durations_s,
            world.seats,
            [p.name for p in people],
            robot_plans,
        )

    return CrowdPlanner(make, robots)


def place_scripted_crowd(
    world: World,
    config: PeopleConfig,
    people: tuple[PersonSpec, ...],
    rng: np.random.Generator,
    robots: RobotSchedule,
    planner: Planner,
    extra_check: ExtraCheck | None = None,
    *,
    dt_s: float,
    clips: Sequence[BvhMotion] = (),
) -> tuple[tuple[PersonSpec, ...], tuple[PersonTimeline, ...], PlacementReport]:
    """Plan the crowd, check its whole trace, re-plan or reject colliding people (`clips`:
    people.clips, see check_traces).

    Returns:
        (the people kept, their timelines, the report).
    """
    timelines = planner(people, rng)
    placement = config.placement

    def notes() -> tuple[str, ...]:
        return planner.notes if isinstance(planner, CrowdPlanner) else ()

    if not placement.check or not people:
        return people, timelines, PlacementReport(sit_fallbacks=notes())
    seen: list[str] = []
    rejected: list[Rejection] = []
    attempts = 1
    while True:
        clearance = config.avoidance.robot_clearance_m
        collisions = check_traces(
            world, people, timelines, robots, clearance, dt_s=dt_s, clips=clips
        )
        if extra_check is not None:
            collisions += extra_check(people, timelines)
        seen.extend(c.reason for c in collisions)
        if not collisions:
            break
        if attempts <= placement.retries:
            attempts += 1
            timelines = planner(people, rng)
            continue
        # Out of retries: reject; of two people touching each other, only the later one.
        index = {p.name: i for i, p in enumerate(people)}
        drop = {
            max(c.person, c.other, key=index.__getitem__) if c.other in index else c.person
            for c in collisions
        }
        reasons = {c.person: c.reason for c in collisions}
        rejected.extend(
            Rejection(p.name, p.instance_id, reasons[p.name]) for p in people if p.name in drop
        )
        people = tuple(p for p in people if p.name not in drop)
        attempts += 1
        timelines = planner(people, rng)
        if not people:
            break
    n_steps = len(timelines[0].position_xy) if timelines else 0
    return (
        people,
        timelines,
        PlacementReport(True, n_steps, attempts, tuple(rejected), tuple(seen), notes()),
    )


def check_recorded_trace(
    world: World,
    people: Sequence[PersonSpec],
    timelines: Sequence[PersonTimeline],
    steps: int,
    dt_s: float,
    extra_check: ExtraCheck | None = None,
    clips: Sequence[BvhMotion] = (),
) -> PlacementReport:
    """After a reactive run: the contacts of the trace as it happened (nothing can be rejected
    any more; the robots' live bodies are not part of this check)."""
    cut = [
        PersonTimeline(
            t.position_xy[:steps], t.heading_rad[:steps], t.phase_rad[:steps],
            t.amplitude[:steps], t.motion[:steps], t.seat_height_m[:steps],
        )
        for t in timelines
    ]  # fmt: skip
    found = check_traces(world, people, cut, dt_s=dt_s, clips=clips) if steps else []
    if steps and extra_check is not None:
        found += extra_check(people, cut)
    return PlacementReport(True, steps, 0, (), tuple(c.reason for c in found))
