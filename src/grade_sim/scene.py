"""Everything a run is made of, drawn once from the scenario's seed: world, actors, robots.

Each part draws from its own child generator of one SeedSequence, so e.g. changing the number of
people leaves the room layout untouched, and the same scenario + seed gives the same scene.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

import numpy as np

from grade_common.types import FloatArray
from grade_people.bvh import BvhMotion
from grade_people.clips import clip_duration_s, load_clips
from grade_people.config import CrowdMode, PersonBody, PersonMotion
from grade_people.crowd import RobotSchedule
from grade_people.makehuman.dress import dress_makehuman
from grade_people.paths import NoFreeSpaceError, sample_free_point
from grade_people.people import PersonSpec, PersonTimeline, dress_skinned, random_person
from grade_sim.actors.animal_group import Animals
from grade_sim.actors.animal_placement import (
    AnimalPlacement,
    MovingObstacles,
    animal_discs,
    merge_reports,
    people_animal_collisions,
    place_animals,
)
from grade_sim.actors.flying import (
    FlyingObjects,
    FlyingObjectSpec,
    FlyingTimeline,
    plan_object_timeline,
    random_object,
)
from grade_sim.actors.geometry import InstanceInfo
from grade_sim.actors.group import ActorGroup, stacked_poses
from grade_sim.actors.people_group import CrowdStart, People
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

__all__ = ["InstanceInfo", "RobotSetup", "Scene", "build_scene"]

ROBOT_CLEARANCE_M = 0.5
_LOG = logging.getLogger(__name__)
# The animals draw from their own SeedSequence child, keyed apart from spawn()'s 0, 1, 2, ...,
# so adding animals leaves the world, objects and robots of a seed unchanged (people avoid them).
ANIMALS_SPAWN_KEY = 1001
G = TypeVar("G", bound=ActorGroup)


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
    the robots' start poses and path followers, the actor groups (people, flying objects,
    animals, ...: see `grade_sim.actors.group`) with their planned motion, every instance id with
    its name and label, and the number of physics steps. The engine builds its model from it,
    the sensors and the ground truth label and pose what it holds, and a replay rebuilds the
    same scene from the recorded scenario.

    The actors' bodies are the groups' bodies, group after group (`actor_body_poses`). A group
    with run state (reactive people, whose crowd the simulator's loop steps) starts it afresh
    for every run (`started`): the scene as built never changes and runs again and again the
    same. Construct it by keyword.
    """

    scenario: Scenario
    world: World
    n_steps: int
    robots: tuple[RobotSetup, ...] = ()
    groups: tuple[ActorGroup, ...] = ()
    instances: dict[int, InstanceInfo] = field(default_factory=dict)
    placement: PlacementReport = field(default_factory=PlacementReport)

    def group(self, kind: type[G]) -> G:
        """The scene's group of this kind (an empty one when the scene has none)."""
        for group in self.groups:
            if isinstance(group, kind):
                return group
        return kind()

    def with_group(self, group: ActorGroup) -> Scene:
        """This scene with one more actor group (after the others) and its instances.

        Raises:
            ValueError: an instance id of the group is already taken (names it).
        """
        taken = [info for info in group.instances() if info.instance_id in self.instances]
        if taken:
            info = taken[0]
            raise ValueError(
                f"actor group {group.kind!r}: instance id {info.instance_id} of {info.name!r} is "
                f"already {self.instances[info.instance_id].name!r}'s; use ids from "
                f"{max(self.instances, default=0) + 1}"
            )
        instances = dict(self.instances)
        instances.update((info.instance_id, info) for info in group.instances())
        return replace(self, groups=(*self.groups, group), instances=instances)

    def started(self) -> Scene:
        """The scene of one run: every group with its run state made fresh (a reactive
        crowd at its start). A scene already started is returned as it is."""
        groups = tuple(g.started() for g in self.groups)
        if all(a is b for a, b in zip(groups, self.groups, strict=True)):
            return self
        return replace(self, groups=groups)

    @property
    def n_actor_bodies(self) -> int:
        return sum(len(g.body_names()) for g in self.groups)

    def actor_body_poses(self, step: int) -> tuple[FloatArray, FloatArray]:
        """Poses of every actor body at physics step `step`: positions (B, 3) and wxyz
        quaternions (B, 4), the groups' bodies group after group."""
        return stacked_poses(self.groups, step)

    def prepare_actor_poses(self, steps: Sequence[int]) -> None:
        """Let every group compute these steps' poses together, ahead of actor_body_poses for
        each (the same values, at a fraction of the cost for people)."""
        for group in self.groups:
            group.prepare_poses(steps)

    def actor_collisions(
        self, people: Sequence[PersonSpec], timelines: Sequence[PersonTimeline]
    ) -> list[Collision]:
        """First contacts of people's traces with every group's actors (FCL)."""
        return [c for g in self.groups for c in g.collisions_with(people, timelines)]


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
    groups: tuple[ActorGroup, ...] = (
        People(
            specs=motion.people,
            timelines=motion.timelines,
            config=scenario.people,
            n_steps=n_steps,
            dt_s=dt,
            crowd_start=motion.crowd_start,
            clips=motion.clips,
        ),
        FlyingObjects(specs=objects, timelines=object_timelines, n_steps=n_steps),
        Animals(
            specs=placed.animals,
            timelines=placed.timelines,
            n_steps=n_steps,
            dt_s=dt,
            clearance_m=scenario.animals.clearance_m,
        ),
    )
    for robot in robots:
        label = f"robot_{robot.model.config.type.value}"
        instances[robot.instance_id] = InstanceInfo(robot.instance_id, robot.model.name, label)
    for group in groups:
        instances.update((info.instance_id, info) for info in group.instances())
    return Scene(
        scenario=scenario,
        world=world,
        n_steps=n_steps,
        robots=robots,
        groups=groups,
        instances=instances,
        placement=merge_reports(placed.report, motion.report),
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
    """The people kept after placement, their timelines, where a reactive crowd starts, the
    placement report and the parsed motion-capture clips."""

    people: tuple[PersonSpec, ...]
    timelines: tuple[PersonTimeline, ...]
    crowd_start: CrowdStart | None
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
        start = CrowdStart(
            grid=world.free_space,
            config=scenario.people,
            heights_m=tuple(p.height_m for p in people),
            n_steps=n_steps,
            dt_s=dt,
            rng=people_rng,
            start_clear_of=tuple(starts),
            clip_durations_s=tuple(durations),
            seats=tuple(world.seats),
            names=tuple(p.name for p in people),
            obstacles_at_start=tuple(discs(0)),
        )
        # The timelines of the scene as built: where the crowd starts (each run steps its own).
        timelines = tuple(start.crowd().timelines)
        return _PeopleMotion(people, timelines, start, PlacementReport(), clips)
    obstacles = MovingObstacles(schedule, discs)
    planner = crowd_planner(
        world, scenario.people, n_steps, dt, obstacles, starts, durations, robot_plans=schedule
    )

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


@dataclass(frozen=True)
class FacingCounts:
    """How often a scene's people stand in front of its first robot and face it, over every
    (step, person) pair (`pairs`): `in_view` within a forward camera's reach of the robot's
    planned pose, `facing` those of them whose heading is within 90 degrees of pointing at it
    (people.toward_robots' measure, docs/crowd.md)."""

    pairs: int
    in_view: int
    facing: int


def people_facing_robot(scene: Scene, view_m: float, half_fov_rad: float) -> FacingCounts:
    """The FacingCounts of `scene`: a person is in view within `view_m` of the first robot and
    `half_fov_rad` of its planned heading."""
    schedule = planned_robot_schedule(
        [(r.model.config, r.follower) for r in scene.robots],
        scene.n_steps,
        scene.scenario.physics_dt_s,
        scene.scenario.bootstrap_s,
    )
    robot = schedule.position_xyz[:, 0, :2]
    yaw = schedule.yaw_rad[:, 0]
    ahead = np.stack([np.cos(yaw), np.sin(yaw)], axis=1)
    pairs = in_view = facing = 0
    for _, timeline in scene.group(People).with_timelines():
        rel = timeline.position_xy - robot
        dist = np.linalg.norm(rel, axis=1)
        cos = np.einsum("ij,ij->i", rel, ahead) / np.maximum(dist, 1e-9)
        view = (dist < view_m) & (cos > np.cos(half_fov_rad))
        looks = np.stack([np.cos(timeline.heading_rad), np.sin(timeline.heading_rad)], axis=1)
        toward = np.einsum("ij,ij->i", looks, -rel) > 0.0
        pairs += len(dist)
        in_view += int(view.sum())
        facing += int((view & toward).sum())
    return FacingCounts(pairs, in_view, facing)
