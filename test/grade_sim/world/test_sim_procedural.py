"""Procedural rooms: connected through doorways, furniture outside the corridors, seeded."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.ndimage import label

from grade_people.people import PERSON_RADIUS_M
from grade_sim.config.scenario import LightsConfig, ProceduralConfig
from grade_sim.world import furniture
from grade_sim.world.model import StaticBox, World
from grade_sim.world.procedural import CORRIDOR_HALF_WIDTH_M, generate_rooms

LAYOUTS = [
    (ProceduralConfig(), 0),
    (ProceduralConfig(), 1),
    (ProceduralConfig(rooms_x=3, rooms_y=2, furniture_per_room=(4, 8)), 2),
    (ProceduralConfig(rooms_x=1, rooms_y=3, room_size_m=(3.0, 4.0)), 3),
    (ProceduralConfig(rooms_x=4, rooms_y=1, door_width_m=1.0), 4),
    (ProceduralConfig(rooms_x=2, rooms_y=2, furniture_per_room=(8, 12)), 5),
]


# Structural labels besides the furniture classes.
STRUCTURE = {"floor", "ceiling", "wall", "door", "window"}


def world_of(config: ProceduralConfig, seed: int) -> World:
    return generate_rooms(config, LightsConfig(), np.random.default_rng(seed))


def room_edges(world: World) -> tuple[np.ndarray, np.ndarray]:
    """x of the walls along y and y of the walls along x (the room grid lines)."""
    xs = sorted({round(b.center_xyz[0], 9) for b in world.boxes if b.name.startswith("wall_y")})
    ys = sorted({round(b.center_xyz[1], 9) for b in world.boxes if b.name.startswith("wall_x")})
    return np.array(xs), np.array(ys)


def rect(box: StaticBox) -> tuple[float, float, float, float]:
    (cx, cy, _), (hx, hy, _) = box.center_xyz, box.half_size_xyz
    return cx - hx, cy - hy, cx + hx, cy + hy


@pytest.mark.parametrize(("config", "seed"), LAYOUTS)
def test_room_grid_matches_config(config: ProceduralConfig, seed: int) -> None:
    world = world_of(config, seed)
    xs, ys = room_edges(world)
    assert len(xs) == config.rooms_x + 1
    assert len(ys) == config.rooms_y + 1
    lo, hi = config.room_size_m
    assert np.all(np.diff(xs) >= lo - 1e-9)
    assert np.all(np.diff(xs) <= hi + 1e-9)
    assert np.all(np.diff(ys) >= lo - 1e-9)
    assert np.all(np.diff(ys) <= hi + 1e-9)
    labels = {b.label for b in world.boxes}
    assert {"floor", "ceiling", "wall"} <= labels <= STRUCTURE | set(furniture.KINDS)
    # One instance per object; the parts of an object are consecutive boxes.
    ids = [b.instance_id for b in world.boxes]
    assert sorted(set(ids)) == list(range(1, len(set(ids)) + 1))
    assert ids == sorted(ids)
    assert len({b.name for b in world.boxes}) == len(world.boxes)
    assert world.ceiling_height_m == config.wall_height_m
    assert len(world.lights) == LightsConfig().count
    assert world.terrain is None
    np.testing.assert_array_equal(world.terrain_height(np.zeros(3), np.ones(3)), np.zeros(3))
    n_rooms = config.rooms_x * config.rooms_y
    assert len(set(world.tour_xy)) == n_rooms


@pytest.mark.parametrize(("config", "seed"), LAYOUTS)
def test_rooms_are_connected(config: ProceduralConfig, seed: int) -> None:
    """Every tour segment (room centre to the next, through a doorway) is free for a person,
    and all room centres lie in one connected free region."""
    world = world_of(config, seed)
    free = world.free_space.inflated(PERSON_RADIUS_M)
    tour = [np.array(p) for p in world.tour_xy]
    for a, b in zip(tour, tour[1:] + tour[:1], strict=True):
        assert free.segment_is_free(a, b), f"segment {a} -> {b} is blocked"
    regions, _ = label(~free.blocked)
    region_ids = {int(regions[tuple(free.cell_of(p))]) for p in tour}
    assert len(region_ids) == 1
    assert 0 not in region_ids


@pytest.mark.parametrize(("config", "seed"), LAYOUTS)
def test_walls_block_and_rooms_are_closed(config: ProceduralConfig, seed: int) -> None:
    world = world_of(config, seed)
    grid = world.free_space
    xs, ys = room_edges(world)
    # Outside the outer walls nothing is free; on a wall away from doorways nothing is free.
    assert not grid.is_free(np.array([xs[0] - 1.0, ys[0] - 1.0]))
    y_mid = (ys[0] + ys[1]) / 2
    assert not grid.is_free(np.array([xs[0], y_mid]))
    assert not grid.is_free(np.array([xs[-1], y_mid]))
    # Room centres are free.
    for p in world.tour_xy:
        assert grid.is_free(np.array(p))


@pytest.mark.parametrize(("config", "seed"), LAYOUTS)
def test_furniture_stays_out_of_corridors_and_inside_its_room(
    config: ProceduralConfig, seed: int
) -> None:
    world = world_of(config, seed)
    xs, ys = room_edges(world)
    parts = [b for b in world.boxes if b.label in furniture.KINDS]
    pieces: dict[int, list[StaticBox]] = {}
    for part in parts:
        pieces.setdefault(part.instance_id, []).append(part)
    hi_count = config.furniture_per_room[1]
    assert len(pieces) <= hi_count * config.rooms_x * config.rooms_y
    for piece in pieces.values():
        assert min(b.center_xyz[2] - b.half_size_xyz[2] for b in piece) == 0.0  # on the floor
        assert len({b.label for b in piece}) == 1
        assert len({b.name.partition("/")[0] for b in piece}) == 1
    for box in parts:
        x0, y0, x1, y1 = rect(box)
        i = int(np.searchsorted(xs, box.center_xyz[0])) - 1
        j = int(np.searchsorted(ys, box.center_xyz[1])) - 1
        assert 0 <= i < config.rooms_x
        assert 0 <= j < config.rooms_y
        half_t = config.wall_thickness_m / 2
        assert xs[i] + half_t <= x0, box
        assert x1 <= xs[i + 1] - half_t, box
        assert ys[j] + half_t <= y0, box
        assert y1 <= ys[j + 1] - half_t, box
        xc, yc = (xs[i] + xs[i + 1]) / 2, (ys[j] + ys[j + 1]) / 2
        assert x1 <= xc - CORRIDOR_HALF_WIDTH_M or x0 >= xc + CORRIDOR_HALF_WIDTH_M, box
        assert y1 <= yc - CORRIDOR_HALF_WIDTH_M or y0 >= yc + CORRIDOR_HALF_WIDTH_M, box
        assert box.center_xyz[2] - box.half_size_xyz[2] >= 0.0
        if box.center_xyz[2] - box.half_size_xyz[2] < 1.0:  # low parts block walking
            assert not world.free_space.is_free(np.array(box.center_xyz[:2]))


def test_furniture_fills_rooms_when_asked() -> None:
    world = world_of(ProceduralConfig(rooms_x=2, rooms_y=2, furniture_per_room=(2, 2)), 11)
    assert len({b.instance_id for b in world.boxes if b.label in furniture.KINDS}) >= 4


def test_same_seed_same_world_different_seed_different_world() -> None:
    config = ProceduralConfig(rooms_x=3, rooms_y=2)
    a, b, c = world_of(config, 5), world_of(config, 5), world_of(config, 6)
    assert a.boxes == b.boxes
    assert a.lights == b.lights
    assert a.tour_xy == b.tour_xy
    np.testing.assert_array_equal(a.free_space.blocked, b.free_space.blocked)
    assert a.boxes != c.boxes
    assert [x.material for x in a.boxes] != [x.material for x in c.boxes]
    assert a.lights != c.lights


def test_lights_within_the_rooms_and_configured_intensity() -> None:
    lights = LightsConfig(count=5, intensity=(0.4, 0.5), color_jitter=0.0)
    world = generate_rooms(ProceduralConfig(), lights, np.random.default_rng(0))
    assert len(world.lights) == 5
    lo, hi = np.array(world.bounds_min_xyz), np.array(world.bounds_max_xyz)
    for light in world.lights:
        p = np.array(light.position_xyz)
        assert np.all(p[:2] >= lo[:2])
        assert np.all(p[:2] <= hi[:2])
        assert 0 < p[2] < hi[2]
        # The colour comes from a colour temperature; the intensity is its luminance.
        luminance = float(np.dot(light.diffuse_rgb, (0.2126, 0.7152, 0.0722)))
        assert 0.4 - 1e-9 <= luminance <= 0.5 + 1e-9


def test_first_instance_id_offsets_all_ids() -> None:
    world = generate_rooms(ProceduralConfig(), LightsConfig(), np.random.default_rng(0), 100)
    assert min(b.instance_id for b in world.boxes) == 100


@pytest.mark.parametrize(("config", "seed"), LAYOUTS)
def test_every_chair_is_a_seat_with_free_floor_in_front(
    config: ProceduralConfig, seed: int
) -> None:
    world = world_of(config, seed)
    chairs = {b.name.partition("/")[0] for b in world.boxes if b.label == "chair"}
    assert {s.name for s in world.seats} == chairs
    for seat in world.seats:
        parts = {
            b.name.partition("/")[2]: b for b in world.boxes if b.name.startswith(seat.name + "/")
        }
        top = parts["seat"]
        assert seat.instance_id == top.instance_id
        assert seat.centre_xy == pytest.approx(top.center_xyz[:2])
        assert seat.height_m == pytest.approx(top.center_xyz[2] + top.half_size_xyz[2])
        # The backrest is behind the seat centre, the open front ahead of it.
        back = np.asarray(parts["back"].center_xyz[:2]) - seat.centre_xy
        facing = np.array([np.cos(seat.facing_rad), np.sin(seat.facing_rad)])
        assert float(back @ facing) < -0.15
        # A person's disc stands at the seat's front and can turn there: the unblocked grid
        # holds it (walls and every other piece of furniture are farther than its radius).
        stand = seat.along(seat.depth_m / 2 + PERSON_RADIUS_M + 0.05)
        others = [
            b
            for b in world.boxes
            if b.label not in ("floor", "ceiling")
            and not b.name.startswith(seat.name + "/")
            and b.center_xyz[2] - b.half_size_xyz[2] < 1.0
        ]
        # ... and walks there straight from the room's corridor the chair faces.
        xs, ys = room_edges(world)
        i = int(np.searchsorted(xs, seat.centre_xy[0])) - 1
        j = int(np.searchsorted(ys, seat.centre_xy[1])) - 1
        centre = np.array([(xs[i] + xs[i + 1]) / 2, (ys[j] + ys[j + 1]) / 2])
        to_centre = float((centre - stand) @ facing)
        assert to_centre > 0.0  # the chair faces that corridor (it may stand at its edge)
        lane = [stand + facing * d for d in np.arange(0.0, to_centre - CORRIDOR_HALF_WIDTH_M, 0.05)]
        for b in others:
            x0, y0, x1, y1 = rect(b)
            for p in [stand, *lane]:
                gap = np.linalg.norm(p - np.clip(p, (x0, y0), (x1, y1)))
                assert gap > PERSON_RADIUS_M + 0.05, (seat.name, b.name)


def test_seats_are_seeded() -> None:
    config = ProceduralConfig(rooms_x=3, rooms_y=2, furniture_per_room=(4, 8))
    assert world_of(config, 2).seats == world_of(config, 2).seats
    assert world_of(config, 2).seats != world_of(config, 3).seats
    assert len(world_of(config, 2).seats) > 0
