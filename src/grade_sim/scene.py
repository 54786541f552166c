"""Everything a run is made of, drawn once from the scenario's seed: world, actors, robots.

Each part draws from its own child generator of one SeedSequence, so e.g. changing the number of
people leaves the room layout untouched, and the same scenario + seed gives the same scene.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from grade_common.rotations import matrices_to_quats
from grade_common.types import FloatArray
from grade_people.body_mesh import SkinMesh, body_mesh, skin_vertices
from grade_people.bvh import BvhMotion, RetargetedMotion, retarget
from grade_people.clips import clip_duration_s, load_clips
from grade_people.config import CrowdMode, PersonBody, PersonMotion
from grade_people.crowd import Crowd, RobotSchedule, avoidance_decimation, known_through
from grade_people.makehuman.dress import dress_makehuman
from grade_people.motion import (
    AnimationTrack,
    animation_track,
    pose,
    pose_inputs,
    stack_inputs,
)
from grade_people.paths import NoFreeSpaceError, sample_free_point
from grade_people.people import (
    PersonSpec,
    PersonTimeline,
    dress_skinned,
    part_poses,
    random_person,
)
from grade_people.skeleton import (
    coco17_world,
    face_points,
    rest_positions,
)
from grade_sim.actors.animal_placement import (
    AnimalDiscs,
    AnimalPlacement,
    MovingObstacles,
    animal_discs,
    animal_trace,
    merge_reports,
    people_animal_collisions,
    place_animals,
)
from grade_sim.actors.animals import PART_NAMES as ANIMAL_PART_NAMES
from grade_sim.actors.animals import (
    AnimalSpec,
    AnimalTimeline,
    animal_part_poses,
)
from grade_sim.actors.flying import (
    FlyingObjectSpec,
    FlyingTimeline,
    plan_object_timeline,
    random_object,
)
from grade_sim.actors.placement import (
    Collision,
    PlacementReport,
    crowd_planner,
    place_scripted_crowd,
)
from grade_sim.actors.robot_discs import planned_robot_schedule, start_obstacles
from grade_sim.config.scenario import EnvironmentKind, RobotKind, Scenario
from grade_sim.robots.model import RobotModel, robot_model
from grade_sim.robots.path_follower import PathFollower
from grade_sim.world.meshes import load_mesh_world
from grade_sim.world.model import World
from grade_sim.world.outdoor import generate_outdoor
from grade_sim.world.procedural import generate_rooms
from grade_sim.world.tabletop import load_tabletop_world

ROBOT_CLEARANCE_M = 0.5
# Steps whose skeleton poses Scene.skeleton_poses keeps: a pipelined loop is at most
# MAX_FRAMES_IN_FLIGHT frames (4 x 8 steps at 30 Hz, 240 Hz physics) ahead of the observers
# that ask again for a frame's step. 8 people x 163 joints: ~125 kB a step.
SKELETON_STEPS_KEPT = 64
_LOG = logging.getLogger(__name__)
# The animals draw from their own SeedSequence child, keyed apart from spawn()'s 0, 1, 2, ...,
# so adding animals leaves the world, objects and robots of a seed unchanged (people avoid them).
ANIMALS_SPAWN_KEY = 1001


@dataclass(frozen=True)
class InstanceInfo:
    instance_id: int
    name: str
    label: str


@dataclass(frozen=True)
class RobotSetup:
    model: RobotModel
    instance_id: int
    start_xyz: FloatArray
    start_yaw: float
    follower: PathFollower | None


@dataclass(frozen=True, kw_only=True)
class Scene:
    """Everything one run is made of, drawn once from the scenario (`build_scene`): the world,
    the robots' start poses and path followers, and the actors (people, flying objects, animals)
    with their planned timelines, every instance id with its name and label, and the number of
    physics steps. The engine builds its model from it, the sensors and the ground truth label
    and pose what it holds, and a replay rebuilds the same scene from the recorded scenario.

    Reactive people are the exception to "drawn once": `crowd` is stepped by the simulator's loop,
    which fills `person_timelines` as it goes, so a scene with a crowd serves one run only
    (SceneReuseError). Construct it by keyword.
    """

    scenario: Scenario
    world: World
    n_steps: int
    people: tuple[PersonSpec, ...] = ()
    person_timelines: tuple[PersonTimeline, ...] = ()
    objects: tuple[FlyingObjectSpec, ...] = ()
    object_timelines: tuple[FlyingTimeline, ...] = ()
    robots: tuple[RobotSetup, ...] = ()
    instances: dict[int, InstanceInfo] = field(default_factory=dict)
    # Reactive people: stepped by the simulator's loop, which fills person_timelines as it goes.
    crowd: Crowd | None = None
    placement: PlacementReport = field(default_factory=PlacementReport)
    animals: tuple[AnimalSpec, ...] = ()
    animal_timelines: tuple[AnimalTimeline, ...] = ()
    clips: tuple[BvhMotion, ...] = ()  # people.clips, parsed (when 'clip' is in people.motions)

    @property
    def n_actor_bodies(self) -> int:
        return (
            sum(len(p.body_names()) for p in self.people)
            + len(self.objects)
            + len(self.animals) * len(ANIMAL_PART_NAMES)
        )

    @cached_property
    def animal_discs(self) -> AnimalDiscs:
        """The animals as people avoid them (discs over their footprints at every step)."""
        dt = self.scenario.physics_dt_s
        return animal_discs(self.animals, self.animal_timelines, self.n_steps, dt)

    def people_animal_collisions(
        self, people: Sequence[PersonSpec], timelines: Sequence[PersonTimeline]
    ) -> list[Collision]:
        """First contacts of people's traces with the animals' parts (grown by their clearance)."""
        if not self.animals:
            return []
        clearance = self.scenario.animals.clearance_m
        traces = [
            animal_trace(a, t, self.n_steps, clearance)
            for a, t in zip(self.animals, self.animal_timelines, strict=True)
        ]
        return people_animal_collisions(traces, people, timelines)

    @cached_property
    def person_tracks(self) -> tuple[AnimationTrack, ...]:
        """Motion-library state of every skinned person's timeline (empty for rigid parts)."""
        dt = self.scenario.physics_dt_s
        return tuple(
            animation_track(t, dt)
            for p, t in zip(self.people, self.person_timelines, strict=True)
            if p.body is not None
        )

    @cached_property
    def _causal_tracks(self) -> dict[int, tuple[tuple[PersonTimeline, AnimationTrack], ...]]:
        return {}

    def _tracks_at(self, k: int) -> tuple[tuple[PersonTimeline, AnimationTrack], ...]:
        """Timelines and motion tracks that pose step k.

        Scripted people: the whole timeline. Reactive people: only what the live crowd had fixed
        at step k (`known_through`), so the live run and its replay pose them identically; the
        swing foot then aims at the block's end instead of the true next footfall.
        """
        skinned = [
            t for p, t in zip(self.people, self.person_timelines, strict=True) if p.body is not None
        ]
        if self.scenario.people.mode is not CrowdMode.REACTIVE:
            return tuple(zip(skinned, self.person_tracks, strict=True))
        dt = self.scenario.physics_dt_s
        end = known_through(k, avoidance_decimation(self.scenario.people, dt), self.n_steps)
        cache = self._causal_tracks
        if end not in cache:
            cache.clear()  # runs go forward: only the current block is asked for again
            prefixes = [
                PersonTimeline(
                    t.position_xy[: end + 1],
                    t.heading_rad[: end + 1],
                    t.phase_rad[: end + 1],
                    t.amplitude[: end + 1],
                    t.motion[: end + 1],
                    t.seat_height_m[: end + 1],
                )
                for t in skinned
            ]
            cache[end] = tuple((t, animation_track(t, dt)) for t in prefixes)
        return cache[end]

    @cached_property
    def _last_skeleton(self) -> dict[int, tuple[FloatArray, FloatArray]]:
        return {}

    def skeleton_poses(self, step: int) -> tuple[FloatArray, FloatArray]:
        """Skinned people's joint positions (P, J, 3) and rotations (P, J, 3, 3) at a step
        (read-only arrays: a frame asks for them several times, for the engine, boxes, skins
        and keypoints; the last SKELETON_STEPS_KEPT steps' are kept, since a pipelined run's
        keypoints come for a frame's step after the loop has stepped on)."""
        k = min(step, self.n_steps - 1)
        cache = self._last_skeleton
        if k in cache:
            return cache[k]
        bodies = [p.body for p in self.people if p.body is not None]
        if not bodies:
            raise ValueError("skeleton_poses: the scene has no skinned people (people.body)")
        dt = self.scenario.physics_dt_s
        steps = np.array([k])
        inputs = [pose_inputs(t, track, dt, steps) for t, track in self._tracks_at(k)]
        joint_pos, joint_rot = pose(bodies, stack_inputs(inputs), self.person_clips)
        joint_pos.setflags(write=False)
        joint_rot.setflags(write=False)
        while len(cache) >= SKELETON_STEPS_KEPT:
            del cache[next(iter(cache))]  # the oldest (dicts keep insertion order)
        cache[k] = (joint_pos, joint_rot)
        return cache[k]

    @cached_property
    def person_clips(self) -> tuple[tuple[RetargetedMotion, ...], ...]:
        """people.clips retargeted onto every skinned person's skeleton."""
        return tuple(
            tuple(retarget(c, p.body) for c in self.clips)
            for p in self.people
            if p.body is not None
        )

    @cached_property
    def person_meshes(self) -> tuple[SkinMesh, ...]:
        """Rest-pose skin of every skinned person (empty for rigid parts)."""
        return tuple(
            body_mesh(p.body, p.clothing)
            for p in self.people
            if p.body is not None and p.clothing is not None
        )

    def person_skins_world(self, step: int) -> list[FloatArray]:
        """World vertices (V, 3) of every skinned person's skin at a step (what MuJoCo draws)."""
        joint_pos, joint_rot = self.skeleton_poses(step)
        bodies = [p.body for p in self.people if p.body is not None]
        return [
            skin_vertices(mesh, rest_positions(body), joint_pos[i], joint_rot[i])
            for i, (mesh, body) in enumerate(zip(self.person_meshes, bodies, strict=True))
        ]

    def person_keypoints_world(self, step: int) -> FloatArray:
        """COCO-17 keypoints of every skinned person at a step: (P, 17, 3) world coordinates."""
        joint_pos, joint_rot = self.skeleton_poses(step)
        scale = np.array([p.scale for p in self.people])
        face = np.stack([face_points(p.body) for p in self.people if p.body is not None])
        return coco17_world(joint_pos, joint_rot, scale, face)

    def rigid_person_states(
        self, step: int
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
        """Every person's state at physics step `step` (the last step after the end), as the
        rigid-part body functions take it (`part_poses`, `rigid_coco17_world`): scale (P,),
        position_xy (P, 2), heading_rad, phase_rad and amplitude (P,)."""
        k = min(step, self.n_steps - 1)
        tl = self.person_timelines
        return (
            np.array([p.scale for p in self.people]),
            np.array([t.position_xy[k] for t in tl]),
            np.array([t.heading_rad[k] for t in tl]),
            np.array([t.phase_rad[k] for t in tl]),
            np.array([t.amplitude[k] for t in tl]),
        )

    def actor_body_poses(self, step: int) -> tuple[FloatArray, FloatArray]:
        """Poses of every actor body at physics step `step`: people's bodies, then objects,
        then animals' parts."""
        k = min(step, self.n_steps - 1)
        positions = []
        quats = []
        if self.people and self.people[0].body is not None:
            joint_pos, joint_rot = self.skeleton_poses(k)
            positions.append(joint_pos.reshape(-1, 3))
            quats.append(matrices_to_quats(joint_rot).reshape(-1, 4))
        elif self.people:
            pos, quat = part_poses(*self.rigid_person_states(k))
            positions.append(pos.reshape(-1, 3))
            quats.append(quat.reshape(-1, 4))
        if self.objects:
            positions.append(np.array([t.position_xyz[k] for t in self.object_timelines]))
            quats.append(np.array([t.quat_wxyz[k] for t in self.object_timelines]))
        if self.animals:
            pos, quat = animal_part_poses(self.animals, self.animal_timelines, k)
            positions.append(pos.reshape(-1, 3))
            quats.append(quat.reshape(-1, 4))
        if not positions:
            return np.zeros((0, 3)), np.zeros((0, 4))
        return np.concatenate(positions), np.concatenate(quats)


def build_scene(scenario: Scenario) -> Scene:
    """Draw the world, people, objects and robot placements of a scenario from its seed.

    In this order, each from its own generator: the world, the people's bodies, the flying
    objects, the robots, the animals (clear of the robots' paths), then the people's motion (clear
    of the robots and the animals).
    """
    # spawn(5)[:4] == spawn(4): the bodies' stream was added without changing the others.
    world_ss, people_ss, objects_ss, robots_ss, bodies_ss = np.random.SeedSequence(
        scenario.seed
    ).spawn(5)
    world = _generate_world(scenario, np.random.default_rng(world_ss))
    instances = _world_instances(world)
    next_id = max(instances, default=0) + 1
    dt = scenario.physics_dt_s
    n_steps = round((scenario.bootstrap_s + scenario.duration_s) * scenario.rates.physics_hz) + 1
    people_rng = np.random.default_rng(people_ss)
    people = _draw_people(scenario, next_id, people_rng, np.random.default_rng(bodies_ss))
    next_id += len(people)
    objects, object_timelines = _draw_flying_objects(
        scenario, world, next_id, n_steps, np.random.default_rng(objects_ss)
    )
    next_id += len(objects)
    # Animals take the ids after the objects; they are drawn once the robots' paths are known.
    first_animal_id = next_id
    next_id += scenario.animals.count
    robots = _place_robots(scenario, world, next_id, np.random.default_rng(robots_ss))
    schedule = planned_robot_schedule(
        [(r.model.config, r.follower) for r in robots], n_steps, dt, scenario.bootstrap_s
    )
    # Animals next, one by one, each clear of the world, the earlier ones and the robots' paths.
    animals_rng = np.random.default_rng(
        np.random.SeedSequence(scenario.seed, spawn_key=(ANIMALS_SPAWN_KEY,))
    )
    placed = place_animals(
        world, scenario.animals, n_steps, dt, animals_rng, schedule, first_animal_id
    )
    for rejected in placed.report.rejected:
        _LOG.warning("placement rejected %s: %s", rejected.name, rejected.reason)
    # People move last: they avoid the robots' planned paths and the animals.
    motion = _plan_people(scenario, world, people, robots, placed, schedule, n_steps, people_rng)
    for spec in people:
        if spec in motion.people:
            instances[spec.instance_id] = InstanceInfo(spec.instance_id, spec.name, "person")
    for obj in objects:
        instances[obj.instance_id] = InstanceInfo(
            obj.instance_id, obj.name, f"flying_{obj.shape.value}"
        )
    for r in robots:
        label = f"robot_{r.model.config.type.value}"
        instances[r.instance_id] = InstanceInfo(r.instance_id, r.model.name, label)
    for animal in placed.animals:
        instances[animal.instance_id] = InstanceInfo(
            animal.instance_id, animal.name, animal.kind.value
        )
    return Scene(
        scenario=scenario,
        world=world,
        n_steps=n_steps,
        people=motion.people,
        person_timelines=motion.timelines,
        objects=objects,
        object_timelines=object_timelines,
        robots=robots,
        instances=instances,
        crowd=motion.crowd,
        placement=merge_reports(placed.report, motion.report),
        animals=placed.animals,
        animal_timelines=placed.timelines,
        clips=motion.clips,
    )


def _generate_world(scenario: Scenario, rng: np.random.Generator) -> World:
    """The scenario's environment: procedural rooms, the outdoor plain, a tabletop or a mesh."""
    env = scenario.environment
    if env.type is EnvironmentKind.PROCEDURAL:
        return generate_rooms(env.procedural, scenario.lights, rng)
    if env.type is EnvironmentKind.OUTDOOR:
        return generate_outdoor(env.outdoor, scenario.lights, rng)
    if env.type is EnvironmentKind.TABLETOP:
        return load_tabletop_world(env.tabletop, scenario.lights, rng)
    return load_mesh_world(env.mesh, scenario.lights, rng)


def _world_instances(world: World) -> dict[int, InstanceInfo]:
    """The world's instances; parts of one object (`<piece>/<part>`) share its instance, named
    after the piece."""
    instances: dict[int, InstanceInfo] = {}
    for box in world.boxes:
        piece = box.name.partition("/")[0]
        instances[box.instance_id] = InstanceInfo(box.instance_id, piece, box.label)
    for mesh in world.meshes:
        piece = mesh.name.partition("/")[0]
        instances[mesh.instance_id] = InstanceInfo(mesh.instance_id, piece, mesh.label)
    for body in world.free_bodies:
        instances[body.instance_id] = InstanceInfo(body.instance_id, body.name, body.label)
    return instances


def _draw_people(
    scenario: Scenario,
    first_id: int,
    people_rng: np.random.Generator,
    bodies_rng: np.random.Generator,
) -> tuple[PersonSpec, ...]:
    """people.count people (ids from first_id), dressed for the scenario's body kind."""
    people = []
    for i in range(scenario.people.count):
        spec = random_person(f"person_{i}", first_id + i, scenario.people, people_rng)
        if scenario.people.body is PersonBody.SKINNED:
            spec = dress_skinned(spec, bodies_rng)
        elif scenario.people.body is PersonBody.MAKEHUMAN:
            spec = dress_makehuman(spec, scenario.people.height_m, bodies_rng)
        people.append(spec)
    return tuple(people)


def _draw_flying_objects(
    scenario: Scenario, world: World, first_id: int, n_steps: int, rng: np.random.Generator
) -> tuple[tuple[FlyingObjectSpec, ...], tuple[FlyingTimeline, ...]]:
    """flying_objects.count objects (ids from first_id) and their planned flights."""
    objects = []
    timelines = []
    for i in range(scenario.flying_objects.count):
        obj = random_object(f"object_{i}", first_id + i, scenario.flying_objects, rng)
        objects.append(obj)
        timelines.append(
            plan_object_timeline(
                world.free_space, scenario.flying_objects, obj, n_steps, scenario.physics_dt_s, rng
            )
        )
    return tuple(objects), tuple(timelines)


def _place_robots(
    scenario: Scenario, world: World, first_id: int, rng: np.random.Generator
) -> tuple[RobotSetup, ...]:
    """Each robot's start (given, a room of the world's tour, or a free point) and its path
    follower over the tour from there (or its own waypoints)."""
    robots = []
    free = world.free_space.inflated(ROBOT_CLEARANCE_M)
    taken: list[FloatArray] = []
    for i, rc in enumerate(scenario.robots):
        model = robot_model(rc)
        z = rc.motion.altitude_m if rc.type is RobotKind.UAV else rc.body_size_m[2] / 2
        tour = [np.array([x, y, z]) for x, y in world.tour_xy]
        if rc.start_xyz is not None:
            start = np.array(rc.start_xyz, dtype=np.float64)
        elif tour and i < len(tour):
            start = tour[i].copy()
        else:
            start = _free_start(free, rng, taken, z)
        taken.append(start)
        if rc.motion.waypoints:
            waypoints = [np.array(w, dtype=np.float64) for w in rc.motion.waypoints]
        else:
            k = i % len(tour) if tour else 0
            waypoints = (tour[k + 1 :] + tour[:k]) if tour else []
        if rc.type is RobotKind.OMNI:
            for w in waypoints:
                w[2] = start[2]
        follower = PathFollower(
            model,
            start,
            rc.start_yaw,
            waypoints,
            rc.motion.speed_mps,
            rc.motion.yaw_rate_rps,
            rc.motion.loop,
        )
        robots.append(RobotSetup(model, first_id + i, start, rc.start_yaw, follower))
    return tuple(robots)


@dataclass(frozen=True)
class _PeopleMotion:
    """The people kept after placement, their timelines, the live crowd (reactive people), the
    placement report and the parsed motion-capture clips."""

    people: tuple[PersonSpec, ...]
    timelines: tuple[PersonTimeline, ...]
    crowd: Crowd | None
    report: PlacementReport
    clips: tuple[BvhMotion, ...]


def _plan_people(
    scenario: Scenario,
    world: World,
    people: tuple[PersonSpec, ...],
    robots: tuple[RobotSetup, ...],
    placed: AnimalPlacement,
    schedule: RobotSchedule,
    n_steps: int,
    people_rng: np.random.Generator,
) -> _PeopleMotion:
    """The people's motion, clear of the robots' planned paths and the animals: a live crowd
    (reactive people, stepped by the simulator) or scripted timelines checked with FCL, whose
    rejected people are dropped."""
    dt = scenario.physics_dt_s
    discs = animal_discs(placed.animals, placed.timelines, n_steps, dt)
    starts = start_obstacles([(r.model.config, r.start_xyz) for r in robots]) + discs(0)
    clips = load_clips(scenario.people) if PersonMotion.CLIP in scenario.people.motions else ()
    durations = [clip_duration_s(c) for c in clips]
    if scenario.people.mode is CrowdMode.REACTIVE:
        crowd = Crowd(
            world.free_space,
            scenario.people,
            [p.height_m for p in people],
            n_steps,
            dt,
            people_rng,
            starts,
            durations,
            world.seats,
            [p.name for p in people],
        )
        crowd.advance(0, discs(0))
        return _PeopleMotion(people, tuple(crowd.timelines), crowd, PlacementReport(), clips)
    obstacles = MovingObstacles(schedule, discs)
    planner = crowd_planner(world, scenario.people, n_steps, dt, obstacles, starts, durations)

    def animals_check(
        people: Sequence[PersonSpec], timelines: Sequence[PersonTimeline]
    ) -> list[Collision]:
        return people_animal_collisions(placed.traces, people, timelines)

    kept, timelines, report = place_scripted_crowd(
        world,
        scenario.people,
        people,
        people_rng,
        schedule,
        planner,
        animals_check,
        dt_s=dt,
        clips=clips,
    )
    for rejected in report.rejected:
        _LOG.warning("placement rejected %s: %s", rejected.name, rejected.reason)
    return _PeopleMotion(tuple(kept), tuple(timelines), None, report, clips)


def _free_start(
    free: object, rng: np.random.Generator, taken: list[FloatArray], z: float
) -> FloatArray:
    from grade_common.occupancy import OccupancyGrid

    assert isinstance(free, OccupancyGrid)
    for _ in range(99):
        xy = sample_free_point(free, rng)
        if all(np.linalg.norm(xy - t[:2]) > 2 * ROBOT_CLEARANCE_M for t in taken):
            return np.array([xy[0], xy[1], z])
    raise NoFreeSpaceError(
        "could not place robots collision-free after 99 tries; "
        "use a larger environment or fewer robots"
    )
