"""Animals in the collision-free world: an animal driven into a wall, onto another animal or
onto a robot's path is drawn again or rejected with the reason; people go around animals; a
scene with animals and people keeps every body apart; same seed, same bytes."""

from __future__ import annotations

import math
from collections.abc import Callable
from itertools import combinations

import numpy as np
import pytest

from grade_common.occupancy import OccupancyGrid
from grade_people.config import AvoidanceConfig, PeopleConfig, PersonMotion
from grade_people.crowd import Crowd, RobotSchedule
from grade_people.people import PersonSpec
from grade_sim.actors.animal_group import Animals
from grade_sim.actors.animal_placement import (
    animal_discs,
    animal_trace,
    min_distance,
    people_animal_collisions,
    person_trace,
    place_animals,
)
from grade_sim.actors.animals import (
    GAIT_CODES,
    AnimalSpec,
    AnimalTimeline,
    animal_part_poses_at,
    plan_animal_timeline,
    random_animal,
)
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import (
    AnimalGait,
    AnimalKind,
    AnimalsConfig,
    LightsConfig,
    ProceduralConfig,
    Scenario,
    scenario_from_mapping,
)
from grade_sim.scene import Scene, build_scene
from grade_sim.world.model import World
from grade_sim.world.procedural import generate_rooms
from scenario_kit import inner_wall

DT_S = 1 / 60
N_STEPS = 240
COLORS = {k: (0.5, 0.5, 0.5, 1.0) for k in ("skin", "shirt", "pants", "shoes")}
ZEBRAS = AnimalsConfig(count=1, kinds=(AnimalKind.ZEBRA,), retries=2)


@pytest.fixture(scope="module")
def world() -> World:
    """Two empty rooms side by side: one inner wall (with a door) between them."""
    config = ProceduralConfig(
        rooms_x=2, rooms_y=1, room_size_m=(5.0, 5.0), furniture_per_room=(0, 0)
    )
    return generate_rooms(config, LightsConfig(), np.random.default_rng(0))


def _walk(
    spec: AnimalSpec, a: tuple[float, float], b: tuple[float, float], n: int = N_STEPS
) -> AnimalTimeline:
    """A hand-made walk from a to b at constant speed (or standing at a when a == b)."""
    t = np.linspace(0.0, 1.0, n)[:, None]
    pos = np.asarray(a) + t * (np.asarray(b) - np.asarray(a))
    dist = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(pos, axis=0), axis=1))])
    moving = float(dist[-1]) > 0.0
    return AnimalTimeline(
        pos,
        np.full(n, math.atan2(b[1] - a[1], b[0] - a[0])),
        2 * np.pi * dist / (spec.anatomy.walk_stride_m * spec.scale),
        np.full(n, 1.0 if moving else 0.0),
        np.zeros(n),
        np.zeros(n),
        np.full(n, GAIT_CODES[AnimalGait.WALK], dtype=np.int8),
    )


Route = tuple[tuple[float, float], tuple[float, float]]


def _planner(routes: list[Route]) -> Callable[..., AnimalTimeline]:
    """A planner that hands out the given routes in order (one per draw)."""
    queue = list(routes)

    def plan(
        grid: OccupancyGrid,
        config: AnimalsConfig,
        spec: AnimalSpec,
        n_steps: int,
        dt_s: float,
        rng: np.random.Generator,
    ) -> AnimalTimeline:
        a, b = queue.pop(0)
        return _walk(spec, a, b, n_steps)

    return plan


def _room_centres(world: World) -> tuple[tuple[float, float], tuple[float, float]]:
    x, _ = inner_wall(world)
    lo, hi = world.bounds_min_xyz, world.bounds_max_xyz
    y = (lo[1] + hi[1]) / 2
    return ((lo[0] + x) / 2, y), ((x + hi[0]) / 2, y)


def test_an_animal_walking_through_a_wall_is_rejected_with_the_reason(world: World) -> None:
    x, y = inner_wall(world)
    through = ((x - 2.0, y), (x + 2.0, y))
    placed = place_animals(
        world, ZEBRAS, N_STEPS, DT_S, np.random.default_rng(0), planner=_planner([through] * 3)
    )
    assert placed.animals == ()
    (rejected,) = placed.report.rejected
    assert rejected.name == "animal_0"
    assert "animal_0 collides with" in rejected.reason
    assert "(wall)" in rejected.reason
    assert placed.report.animal_draws == 3  # retries + 1
    assert placed.report.to_mapping()["rejected"][0]["reason"] == rejected.reason


def test_an_animal_drawn_onto_another_is_drawn_again_then_rejected(world: World) -> None:
    a, b = _room_centres(world)
    config = AnimalsConfig(count=3, kinds=(AnimalKind.ZEBRA,), retries=1)
    # animal_0 stands in room a; animal_1 first lands on it, then draws room b; animal_2
    # lands on animal_0, then on animal_1: rejected.
    routes = [(a, a), (a, a), (b, b), (a, a), (b, b)]
    placed = place_animals(
        world, config, N_STEPS, DT_S, np.random.default_rng(0), planner=_planner(routes)
    )
    assert [s.name for s in placed.animals] == ["animal_0", "animal_1"]
    (rejected,) = placed.report.rejected
    assert rejected.reason == "animal_2 collides with animal_1 at step 0"
    assert placed.report.collisions_seen == (
        "animal_1 collides with animal_0 at step 0",
        "animal_2 collides with animal_0 at step 0",
        "animal_2 collides with animal_1 at step 0",
    )
    assert placed.report.animal_draws == 5
    # The kept ones are clear of each other by twice the clearance.
    traces = [
        animal_trace(s, t, N_STEPS, 0.0)
        for s, t in zip(placed.animals, placed.timelines, strict=True)
    ]
    gap, _ = min_distance(traces[0], traces[1], cap_m=1.0)
    assert gap >= 2 * config.clearance_m


def test_an_animal_on_a_robots_planned_path_is_rejected(world: World) -> None:
    a, _ = _room_centres(world)
    robot_xy = np.array([a[0] + 0.4, a[1]])
    schedule = RobotSchedule(
        ("rover",),
        np.broadcast_to(np.array([*robot_xy, 0.2]), (N_STEPS, 1, 3)).copy(),
        np.zeros((N_STEPS, 1, 2)),
        np.zeros((N_STEPS, 1)),
        np.ones((N_STEPS, 1), dtype=bool),
        np.array([0.35]),
        np.array([[0.25, 0.2, 0.2]]),
    )
    placed = place_animals(
        world, ZEBRAS, N_STEPS, DT_S, np.random.default_rng(0), schedule, 7, _planner([(a, a)] * 3)
    )
    (rejected,) = placed.report.rejected
    assert rejected.instance_id == 7
    assert rejected.reason == "animal_0 collides with robot rover (planned path) at step 0"


@pytest.mark.parametrize("kind", [AnimalKind.ZEBRA, AnimalKind.GAZELLE, AnimalKind.DOG])
def test_the_two_discs_cover_every_part_as_it_moves(kind: AnimalKind) -> None:
    config = AnimalsConfig(count=1, kinds=(kind,), run_fraction=0.3, graze_fraction=0.3)
    rng = np.random.default_rng(3)
    spec = random_animal("animal_0", 1, config, rng)
    grid = OccupancyGrid((-15.0, -15.0), 0.2, np.zeros((150, 150), dtype=bool))
    n = round(240.0 / DT_S)
    timeline = plan_animal_timeline(grid, config, spec, n, DT_S, rng)
    assert len(set(timeline.gait.tolist())) == 3  # walks, runs and grazes
    discs = animal_discs((spec,), (timeline,), n, DT_S)
    steps = np.arange(0, n, 5)
    pos, quat = animal_part_poses_at((spec,), (timeline,), steps)
    w, x, y, z = (quat[:, 0, 1:, i] for i in range(4))
    axis = np.stack([2 * (x * z + w * y), 2 * (y * z - w * x)], axis=-1)
    shapes = spec.part_shapes()[1:]
    half = np.array([size[1] for _, size in shapes])[None, :, None]
    radius = np.array([size[0] for _, size in shapes])[None, :]
    ends = np.concatenate([pos[:, 0, 1:, :2] - axis * half, pos[:, 0, 1:, :2] + axis * half], 1)
    centres = discs.position_xy[steps]  # (S, 2, 2)
    # Eight points around each end's circle (the part's outline seen from above).
    around = np.linspace(0.0, 2 * np.pi, 8, endpoint=False)
    ring = np.stack([np.cos(around), np.sin(around)], axis=1)  # (8, 2)
    outline = ends[:, :, None] + np.tile(radius, 2)[..., None, None] * ring  # (S, E, 8, 2)
    dist = np.linalg.norm(outline[:, :, :, None] - centres[:, None, None], axis=4)
    inside = dist <= discs.radius_m[None, None, None] + 1e-9
    assert inside.any(axis=3).all()
    # The barrel too: its tips along the heading.
    heading = timeline.heading_rad[steps]
    hx = spec.anatomy.body_half[0] * spec.scale
    tips = (
        timeline.position_xy[steps][:, None]
        + np.array([-hx, hx])[None, :, None]
        * np.stack([np.cos(heading), np.sin(heading)], axis=1)[:, None]
    )
    gap = np.linalg.norm(tips[:, :, None] - centres[:, None], axis=3) - discs.radius_m
    assert (gap.min(axis=2) <= 1e-9).all()


def _crossing(avoid: bool) -> tuple[float, float, bool]:
    """A person walks east 10 m; a zebra walks north across the path, timed to meet it at the
    crossing point. Returns the closest body distance, the person's delay at the crossing (s)
    and whether FCL finds contact between the traces. `avoid_robots` is off: animals are
    avoided anyway."""
    n_steps = round(14.0 / DT_S) + 1
    grid = OccupancyGrid((-15.0, -15.0), 0.2, np.zeros((150, 150), dtype=bool))
    config = PeopleConfig(
        count=1, motions=(PersonMotion.WALK,), avoidance=AvoidanceConfig(avoid_robots=False)
    )
    crowd = Crowd(grid, config, [1.75], n_steps, DT_S, np.random.default_rng(1))
    start, goal = np.array([-5.0, 0.0]), np.array([5.0, 0.0])
    crowd.position_xy[0] = start
    crowd.heading_rad[0] = 0.0
    crowd.set_goal(0, goal)
    meet_s = 5.0 / crowd.pref_speed[0]
    spec = random_animal("animal_0", 9, ZEBRAS, np.random.default_rng(2))
    speed = 1.0
    y0 = -speed * meet_s
    animal = _walk(spec, (0.0, y0), (0.0, y0 + speed * (n_steps - 1) * DT_S), n_steps)
    discs = animal_discs((spec,), (animal,), n_steps, DT_S)
    for k in range(n_steps):
        crowd.advance(k, discs(k) if avoid else [])
    person = PersonSpec("person_0", 1, 1.75, COLORS)
    people_trace = person_trace(person, crowd.timelines[0], n_steps)
    gap, _ = min_distance(people_trace, animal_trace(spec, animal, n_steps, 0.0), 2.0)
    contact = bool(people_animal_collisions([animal_trace(spec, animal, n_steps, 0.0)],
                                            [person], crowd.timelines))  # fmt: skip
    xs = crowd.timelines[0].position_xy[:, 0]
    assert abs(xs[-1] - goal[0]) < 0.2, "the person reaches the goal"
    return gap, float(np.argmax(xs >= 0.0) * DT_S), contact


def test_a_person_goes_around_an_animal_crossing_its_path() -> None:
    gap, at_s, contact = _crossing(avoid=True)
    ignored_gap, ignored_at_s, ignored_contact = _crossing(avoid=False)
    print(f"person-zebra: {gap:.3f} m avoiding, {ignored_gap:.3f} m ignoring")
    assert ignored_contact
    assert ignored_gap <= 0.0
    assert not contact
    assert gap > 0.1
    assert at_s != ignored_at_s  # it changed its walk to let the zebra pass


def _scenario(seed: int = 4, mode: str = "scripted") -> Scenario:
    return scenario_from_mapping(
        {
            "seed": seed,
            "duration_s": 12.0,
            "bootstrap_s": 0.5,
            "environment": {
                "type": "outdoor",
                "outdoor": {
                    "size_m": [14.0, 14.0],
                    "trees": 3,
                    "rocks": 3,
                    "bushes": 3,
                    "tour_radius_m": 3.0,
                    "tour_points": 4,
                    "tour_clearance_m": 0.5,
                },
            },
            "rates": {"physics_hz": 60.0, "clock_hz": 60.0, "imu_hz": 60.0, "tf_hz": 60.0,
                      "joint_states_hz": 60.0, "odom_hz": 60.0, "camera_pose_hz": 60.0},
            "people": {"count": 5, "mode": mode, "body": "parts"},
            "flying_objects": {"count": 0},
            "animals": {"count": 6, "kinds": ["zebra", "gazelle"], "graze_fraction": 0.2},
            "lights": {"count": 1},
            "robots": [{"name": "omni1", "type": "omni", "body_size_m": [0.5, 0.4, 0.25]}],
        }
    )  # fmt: skip


@pytest.fixture(scope="module")
def scene() -> Scene:
    return build_scene(_scenario())


def test_animals_and_people_keep_their_clearances_over_the_run(scene: Scene) -> None:
    clearance = scene.scenario.animals.clearance_m
    n = scene.n_steps
    animals = [animal_trace(a, t, n, 0.0) for a, t in scene.group(Animals).with_timelines()]
    people = [person_trace(p, t, n) for p, t in scene.group(People).with_timelines()]
    assert len(animals) >= 4
    assert len(people) >= 3
    between = min(min_distance(a, b, 1.0, stride=2)[0] for a, b in combinations(animals, 2))
    to_people = min(min_distance(a, p, 1.0, stride=2)[0] for a in animals for p in people)
    print(f"minimum animal-animal {between:.3f} m, animal-person {to_people:.3f} m")
    assert between >= 2 * clearance - 1e-6
    assert to_people >= clearance - 1e-6
    # They move (not a frozen scene that is trivially apart).
    walked = [np.linalg.norm(np.diff(t.position_xy, axis=0), axis=1).sum()
              for t in scene.group(Animals).timelines]  # fmt: skip
    assert np.median(walked) > 3.0
    report = scene.placement.to_mapping()
    assert report["checked"] is True
    assert report["animal_draws"] >= len(scene.group(Animals).specs)


def test_same_seed_same_bytes_other_seed_differs(scene: Scene) -> None:
    again = build_scene(_scenario())
    other = build_scene(_scenario(seed=5))

    def digest(s: Scene) -> bytes:
        arrays = [getattr(t, f) for t in s.group(Animals).timelines for f in t.__dataclass_fields__]
        arrays += [getattr(t, f) for t in s.group(People).timelines for f in t.__dataclass_fields__]
        return b"".join(np.ascontiguousarray(a).tobytes() for a in arrays)

    assert digest(scene) == digest(again)
    assert scene.placement == again.placement
    assert digest(scene) != digest(other)


@pytest.mark.parametrize("avoid", [True, False])
def test_reactive_people_keep_clear_of_the_animals(avoid: bool) -> None:
    scene = build_scene(_scenario(mode="reactive")).started()
    crowd = scene.group(People).crowd
    assert crowd is not None
    for k in range(1, scene.n_steps):
        crowd.advance(k, scene.group(Animals).discs(k) if crowd.updates_at(k) and avoid else [])
    contacts = scene.actor_collisions(scene.group(People).specs, scene.group(People).timelines)
    # Stepped live with the animals' discs nobody touches one; blind to them, people do.
    assert (contacts == []) is avoid, contacts
