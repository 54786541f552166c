"""FCL placement over the whole animation: a walk through a wall, into another person or into a
robot's planned path is found and the person rejected with the reason; clean crowds pass."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from grade_people.config import PeopleConfig, PersonMotion, PlacementConfig
from grade_people.crowd import RobotSchedule
from grade_people.people import MOTION_CODES, PersonSpec, PersonTimeline
from grade_sim.actors.placement import check_traces, place_scripted_crowd
from grade_sim.config.scenario import LightsConfig, ProceduralConfig
from grade_sim.world.model import World
from grade_sim.world.procedural import generate_rooms
from scenario_kit import inner_wall

N_STEPS = 240
DT_S = 1 / 240
COLORS = {k: (0.5, 0.5, 0.5, 1.0) for k in ("skin", "shirt", "pants", "shoes")}


@pytest.fixture(scope="module")
def world() -> World:
    """Two rooms side by side, no furniture: one inner wall (with a door) between them."""
    config = ProceduralConfig(
        rooms_x=2, rooms_y=1, room_size_m=(5.0, 5.0), furniture_per_room=(0, 0)
    )
    return generate_rooms(config, LightsConfig(), np.random.default_rng(0))


def _person(i: int) -> PersonSpec:
    return PersonSpec(f"person_{i}", 100 + i, 1.75, COLORS)


def _walk(a: Sequence[float], b: Sequence[float]) -> PersonTimeline:
    t = np.linspace(0.0, 1.0, N_STEPS)[:, None]
    pos = np.asarray(a) + t * (np.asarray(b) - np.asarray(a))
    heading = np.full(N_STEPS, np.arctan2(b[1] - a[1], b[0] - a[0]))
    dist = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(pos, axis=0), axis=1))])
    return PersonTimeline(
        pos,
        heading,
        2 * np.pi * dist / 1.3,
        np.ones(N_STEPS),
        np.full(N_STEPS, MOTION_CODES[PersonMotion.WALK], dtype=np.int8),
        np.full(N_STEPS, np.nan),
    )


def _empty_robots() -> RobotSchedule:
    return RobotSchedule(
        (), np.zeros((1, 0, 3)), np.zeros((1, 0, 2)), np.zeros((1, 0)),
        np.zeros((1, 0), dtype=bool), np.zeros(0), np.zeros((0, 3)),
    )  # fmt: skip


def test_walk_through_a_wall_is_found(world: World) -> None:
    x, y = inner_wall(world)
    through = _walk((x - 1.5, y), (x + 1.5, y))
    along = _walk((x - 1.5, y - 1.2), (x - 1.5, y - 1.19))
    got = check_traces(world, [_person(0), _person(1)], [through, along], dt_s=DT_S)
    assert [c.person for c in got] == ["person_0"]
    assert "(wall)" in got[0].other
    # It touches the wall about where its body reaches it, not at the start.
    assert 0.3 * N_STEPS < got[0].step < 0.5 * N_STEPS


def test_scripted_placement_rejects_the_person_walking_through_a_wall(world: World) -> None:
    x, y = inner_wall(world)
    calls = []

    def planner(
        people: Sequence[PersonSpec], rng: np.random.Generator
    ) -> tuple[PersonTimeline, ...]:
        calls.append([p.name for p in people])
        plans = {
            "person_0": _walk((x - 1.5, y), (x + 1.5, y)),
            "person_1": _walk((x - 1.5, y - 1.2), (x - 2.0, y - 1.2)),
        }
        return tuple(plans[p.name] for p in people)

    config = PeopleConfig(count=2, placement=PlacementConfig(retries=1))
    kept, timelines, report = place_scripted_crowd(
        world,
        config,
        (_person(0), _person(1)),
        np.random.default_rng(0),
        _empty_robots(),
        planner,
        dt_s=DT_S,
    )
    assert [p.name for p in kept] == ["person_1"]
    assert len(timelines) == 1
    assert [r.name for r in report.rejected] == ["person_0"]
    assert "collides with" in report.rejected[0].reason
    assert "(wall)" in report.rejected[0].reason
    # Planned, re-planned once (retries: 1), then planned without the rejected person.
    assert calls == [["person_0", "person_1"]] * 2 + [["person_1"]]
    assert report.to_mapping()["rejected"] == [
        {"name": "person_0", "instance_id": 100, "reason": report.rejected[0].reason}
    ]


def test_two_people_walking_into_each_other_reject_the_later_one(world: World) -> None:
    x, y = inner_wall(world)
    a = _walk((x - 3.0, y - 1.0), (x - 1.0, y - 1.0))
    b = _walk((x - 1.0, y - 1.0), (x - 3.0, y - 1.0))
    got = check_traces(world, [_person(0), _person(1)], [a, b], dt_s=DT_S)
    assert {(c.person, c.other) for c in got} == {
        ("person_0", "person_1"),
        ("person_1", "person_0"),
    }
    config = PeopleConfig(count=2, placement=PlacementConfig(retries=0))
    kept, _, report = place_scripted_crowd(
        world, config, (_person(0), _person(1)), np.random.default_rng(0), _empty_robots(),
        lambda people, rng: tuple({"person_0": a, "person_1": b}[p.name] for p in people),
        dt_s=DT_S,
    )  # fmt: skip
    assert [p.name for p in kept] == ["person_0"]
    assert [r.name for r in report.rejected] == ["person_1"]


def test_standing_in_a_robots_planned_path_is_found(world: World) -> None:
    x, y = inner_wall(world)
    stand = _walk((x - 2.0, y), (x - 2.0, y + 1e-3))
    # A ground robot drives through where the person stands, half-way through the trace.
    pos = np.zeros((N_STEPS, 1, 3))
    pos[:, 0, 0] = np.linspace(x - 4.0, x - 0.5, N_STEPS)
    pos[:, 0, 1] = y
    pos[:, 0, 2] = 0.2
    robots = RobotSchedule(
        ("rover",), pos, np.zeros((N_STEPS, 1, 2)), np.zeros((N_STEPS, 1)),
        np.ones((N_STEPS, 1), dtype=bool), np.array([0.3]), np.array([[0.2, 0.2, 0.2]]),
    )  # fmt: skip
    got = check_traces(world, [_person(0)], [stand], robots, robot_clearance_m=0.05, dt_s=DT_S)
    assert len(got) == 1
    assert got[0].other == "robot rover (planned path)"
    # Flying overhead instead: no contact.
    high = pos.copy()
    high[:, 0, 2] = 2.4
    robots_high = RobotSchedule(
        ("uav",), high, robots.velocity_xy, robots.yaw_rad, robots.near_floor, robots.radius_m,
        robots.half_size_xyz,
    )  # fmt: skip
    assert (
        check_traces(world, [_person(0)], [stand], robots_high, robot_clearance_m=0.05, dt_s=DT_S)
        == []
    )


def test_a_planned_crowd_passes_the_check(world: World) -> None:
    from grade_sim.actors.placement import crowd_planner

    config = PeopleConfig(count=4)
    people = tuple(_person(i) for i in range(4))
    planner = crowd_planner(world, config, 6 * 240, 1 / 240, _empty_robots())
    kept, _, report = place_scripted_crowd(
        world, config, people, np.random.default_rng(1), _empty_robots(), planner, dt_s=DT_S
    )
    assert report.checked
    assert report.rejected == ()
    assert len(kept) == 4
    assert report.steps == 6 * 240


def _makehuman(i: int) -> PersonSpec:
    from grade_people.makehuman.dress import dress_makehuman

    return dress_makehuman(_person(i), (1.6, 1.85), np.random.default_rng(20 + i))


def _skins(person: PersonSpec, tl: PersonTimeline) -> np.ndarray:
    """(steps, V, 3) the person's drawn skin along the timeline."""
    from grade_people.body_mesh import body_mesh, skin_vertices
    from grade_people.motion import animation_track, pose_timeline
    from grade_people.skeleton import rest_positions

    assert person.body is not None
    assert person.clothing is not None
    mesh = body_mesh(person.body, person.clothing)
    steps = np.arange(N_STEPS)
    pos, rot = pose_timeline(person.body, tl, animation_track(tl, DT_S), DT_S, steps)
    rest = rest_positions(person.body)
    return np.stack([skin_vertices(mesh, rest, p, r) for p, r in zip(pos, rot, strict=True)])


def test_makehuman_people_are_checked_with_capsules_fitted_to_their_skin(world: World) -> None:
    """Skinned people collide where their posed skin does: a walk into a wall is found within
    a few centimetres of travel of where the skin first enters it (the rigid parts scaled by
    height are another shape), and two people passing 8 cm apart (skin to skin) are clear
    (measured: 5.6 cm apart, swinging hands' capsules touch: a capsule is round, a hand flat)."""
    x, y = inner_wall(world)
    person = _makehuman(0)
    through = _walk((x - 1.5, y), (x + 1.5, y))
    got = check_traces(world, [person], [through], dt_s=DT_S)
    assert len(got) == 1
    assert "(wall)" in got[0].other
    wall = min(
        (b for b in world.boxes if b.label == "wall"),
        key=lambda b: np.hypot(b.center_xyz[0] - x, b.center_xyz[1] - y),
    )
    skin = _skins(person, through)
    front = wall.center_xyz[0] - wall.half_size_xyz[0]
    entered = int(np.argmax(skin[:, :, 0].max(axis=1) > front))
    speed_m_per_step = 3.0 / N_STEPS
    assert entered - 0.05 / speed_m_per_step <= got[0].step <= entered
    # Two people walking past each other, their skins 8 cm apart at the closest.
    other = _makehuman(1)
    a = _walk((x - 3.0, y - 1.0), (x - 1.0, y - 1.0))
    skin_a = _skins(person, a)
    from scipy.spatial import cKDTree

    def gap(dy: float) -> float:
        b = _walk((x - 1.0, y - 1.0 + dy), (x - 3.0, y - 1.0 + dy))
        skin_b = _skins(other, b)
        return min(
            float(cKDTree(sa).query(sb)[0].min())
            for sa, sb in zip(skin_a[::4], skin_b[::4], strict=True)
        )

    dy = 0.6
    for _ in range(3):  # move b sideways until the skins pass 8 cm apart
        dy += 0.08 - gap(dy)
    assert abs(gap(dy) - 0.08) < 0.01
    b = _walk((x - 1.0, y - 1.0 + dy), (x - 3.0, y - 1.0 + dy))
    assert check_traces(world, [person, other], [a, b], dt_s=DT_S) == []
    # ... and walking into each other they collide.
    b = _walk((x - 1.0, y - 1.0 + 0.1), (x - 3.0, y - 1.0 + 0.1))
    assert len(check_traces(world, [person, other], [a, b], dt_s=DT_S)) == 2
