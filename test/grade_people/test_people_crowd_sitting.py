"""Sit stops: people walk up to a free chair of the world, sit on its seat facing away from the
backrest with their feet on the floor, one to a chair, then get up; nobody sits in mid-air."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from grade_people.body_mesh import body_mesh, random_clothing, skin_vertices
from grade_people.config import PeopleConfig, PersonMotion
from grade_people.crowd import Crowd
from grade_people.motion import animation_track, pose_timeline
from grade_people.people import MOTION_CODES, PersonSpec, PersonTimeline, sit_weights
from grade_people.seat import Seat
from grade_people.skeleton import JOINT_INDEX, random_body, rest_positions
from grade_sim.actors.placement import check_traces, seat_in_use
from grade_sim.config.scenario import LightsConfig, ProceduralConfig
from grade_sim.world.model import World
from grade_sim.world.procedural import generate_rooms

DT_S = 1 / 120
N_STEPS = 60 * 120
HEIGHTS = (1.6, 1.75, 1.9, 1.68)
CONFIG = PeopleConfig(
    count=len(HEIGHTS),
    motions=(PersonMotion.WALK, PersonMotion.SIT),
    walk_fraction=0.2,
    pause_s=(2.0, 4.0),
)
COLORS = {k: (0.5, 0.5, 0.5, 1.0) for k in ("skin", "shirt", "pants", "shoes")}


@pytest.fixture(scope="module")
def world() -> World:
    """One room with two chairs or more (the first such seed)."""
    config = ProceduralConfig(
        rooms_x=1, rooms_y=1, room_size_m=(6.0, 7.0), furniture_per_room=(5, 8)
    )
    for seed in range(100):
        w = generate_rooms(config, LightsConfig(), np.random.default_rng(seed))
        if len(w.seats) >= 2:
            return w
    raise AssertionError("no seed gives a room with two chairs")


@pytest.fixture(scope="module")
def crowd(world: World) -> Crowd:
    crowd = Crowd(
        world.free_space, CONFIG, HEIGHTS, N_STEPS, DT_S, np.random.default_rng(3),
        seats=world.seats, names=[f"person_{i}" for i in range(len(HEIGHTS))],
    )  # fmt: skip
    crowd.run_to_end()
    return crowd


def _stops(world: World, tl: PersonTimeline) -> list[tuple[Seat, np.ndarray]]:
    """Each sit stop of a timeline: its seat and the steps the person is fully seated."""
    use = seat_in_use(world.seats, tl, DT_S)
    w = sit_weights(tl.motion, DT_S)
    out = []
    for s in sorted(set(use[use >= 0].tolist())):
        seated = np.flatnonzero((use == s) & (w > 0.999))
        out.append((world.seats[s], seated))
    return out


def _local(seat: Seat, xy: np.ndarray) -> np.ndarray:
    """xy in the seat's frame: x towards its front, y to its left."""
    c, s = math.cos(seat.facing_rad), math.sin(seat.facing_rad)
    d = np.asarray(xy) - seat.centre_xy
    return np.stack([c * d[..., 0] + s * d[..., 1], -s * d[..., 0] + c * d[..., 1]], axis=-1)


def test_people_sit_on_chairs_facing_away_from_the_backrest(world: World, crowd: Crowd) -> None:
    sat = 0
    for tl in crowd.timelines:
        for seat, seated in _stops(world, tl):
            if not len(seated):
                continue
            sat += 1
            local = _local(seat, tl.position_xy[seated])
            assert np.all(np.abs(local[:, 0]) < seat.depth_m / 2)  # hips over the seat
            assert np.all(np.abs(local[:, 1]) < seat.width_m / 2)
            facing = np.cos(tl.heading_rad[seated] - seat.facing_rad)
            assert facing.min() > 0.999
            assert np.all(tl.seat_height_m[seated] == seat.height_m)
            assert np.all(tl.motion[seated] == MOTION_CODES[PersonMotion.SIT])
    assert sat >= 2


def test_one_sitter_per_chair(world: World, crowd: Crowd) -> None:
    use = np.stack([seat_in_use(world.seats, tl, DT_S) for tl in crowd.timelines], axis=1)
    for row in use:
        taken = row[row >= 0]
        assert len(taken) == len(set(taken.tolist()))
    assert (use >= 0).any()


def test_seated_skin_rests_on_the_seat_with_the_feet_on_the_floor(
    world: World, crowd: Crowd
) -> None:
    rng = np.random.default_rng(0)
    checked = 0
    for i, tl in enumerate(crowd.timelines):
        for seat, seated in _stops(world, tl):
            if not len(seated):
                continue
            body = random_body(HEIGHTS[i], rng)
            mesh = body_mesh(body, random_clothing(rng))
            k = seated[len(seated) // 2]
            pos, rot = pose_timeline(body, tl, animation_track(tl, DT_S), DT_S, np.array([k]))
            skin = skin_vertices(mesh, rest_positions(body), pos[0], rot[0])
            # The skin over the seat (thighs, buttocks) rests on it: its lowest point there is
            # within 3 cm of the seat's top, neither floating nor sunk in.
            local = _local(seat, skin[:, :2])
            over = (np.abs(local[:, 0]) < seat.depth_m / 2 - 0.03) & (
                np.abs(local[:, 1]) < seat.width_m / 2 - 0.03
            )
            assert over.sum() > 50
            assert abs(skin[over, 2].min() - seat.height_m) < 0.03
            # The hip joints: over the seat, above it by about a thigh's radius.
            hips = pos[0, [JOINT_INDEX["hip_l"], JOINT_INDEX["hip_r"]]]
            assert np.all(np.abs(_local(seat, hips[:, :2])[:, 0]) < seat.depth_m / 2)
            assert np.all((hips[:, 2] - seat.height_m > 0.05) & (hips[:, 2] - seat.height_m < 0.14))
            # Feet on the floor (the balls of the feet, at least), in front of the seat.
            rest = rest_positions(body)
            toes = pos[0, [JOINT_INDEX["toe_l"], JOINT_INDEX["toe_r"]]]
            assert np.all(np.abs(toes[:, 2] - rest[JOINT_INDEX["toe_l"], 2]) < 0.015)
            assert abs(skin[:, 2].min()) < 0.02
            ankles = pos[0, [JOINT_INDEX["ankle_l"], JOINT_INDEX["ankle_r"]]]
            assert np.all(_local(seat, ankles[:, :2])[:, 0] > seat.depth_m / 2)
            # No skin inside any other piece of furniture or wall.
            for box in world.boxes:
                if box.label in ("floor", "ceiling") or box.name.startswith(seat.name + "/"):
                    continue
                inside = np.all(
                    np.abs(skin - box.center_xyz) < np.asarray(box.half_size_xyz) - 0.01, axis=1
                )
                assert not inside.any(), box.name
            checked += 1
    assert checked >= 2


def test_sitters_touch_only_their_own_chair(world: World, crowd: Crowd) -> None:
    people = [PersonSpec(f"person_{i}", 100 + i, h, COLORS) for i, h in enumerate(HEIGHTS)]
    assert check_traces(world, people, crowd.timelines, dt_s=DT_S) == []
    # Without the exemption (the chairs not known as seats), sitters collide with them.
    found = check_traces(replace(world, seats=()), people, crowd.timelines, dt_s=DT_S)
    assert found
    assert all("(chair)" in c.other for c in found)


def test_no_reachable_chair_means_another_stop_and_a_note() -> None:
    config = ProceduralConfig(rooms_x=2, rooms_y=1, furniture_per_room=(0, 0))
    world = generate_rooms(config, LightsConfig(), np.random.default_rng(0))
    people = replace(CONFIG, motions=(PersonMotion.WALK, PersonMotion.STAND, PersonMotion.SIT))
    crowd = Crowd(
        world.free_space, people, HEIGHTS, 30 * 120, DT_S, np.random.default_rng(1),
        names=["ana", "bo", "cy", "di"],
    )  # fmt: skip
    timelines = crowd.run_to_end()
    assert crowd.notes
    for note in crowd.notes:
        assert note.split(" ")[0] in {"ana", "bo", "cy", "di"}
        assert "did not sit" in note
        assert "the world has no chairs" in note
        assert "did 'stand' instead" in note
    for tl in timelines:
        assert not np.any(tl.motion == MOTION_CODES[PersonMotion.SIT])
        assert np.all(np.isnan(tl.seat_height_m))


def test_sitting_is_seeded(world: World, crowd: Crowd) -> None:
    again = Crowd(
        world.free_space, CONFIG, HEIGHTS, N_STEPS, DT_S, np.random.default_rng(3),
        seats=world.seats,
    )  # fmt: skip
    for a, b in zip(crowd.timelines, again.run_to_end(), strict=True):
        for field in ("position_xy", "heading_rad", "phase_rad", "amplitude", "motion"):
            assert getattr(a, field).tobytes() == getattr(b, field).tobytes()
        assert a.seat_height_m.tobytes() == b.seat_height_m.tobytes()
