"""Multi-part furniture: parts inside the footprint, quarter turns, seeded, one instance per
piece, round legs as cylinders, and every piece blocks the walking grid under it."""

from __future__ import annotations

import numpy as np
import pytest

from grade_common.occupancy import OccupancyGrid
from grade_sim.config.scenario import LightsConfig, ProceduralConfig
from grade_sim.world import furniture
from grade_sim.world.model import StaticShape
from grade_sim.world.procedural import generate_rooms


@pytest.mark.parametrize("kind", furniture.KINDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_parts_fill_the_footprint_and_stay_inside_it(kind: str, seed: int) -> None:
    piece = furniture.design(kind, np.random.default_rng(seed))
    assert piece.kind == kind
    assert len(piece.parts) >= 3  # made of several parts, not one cuboid
    size = np.array(piece.size_xyz)
    lo = np.min([p.lo for p in piece.parts], axis=0)
    hi = np.max([p.hi for p in piece.parts], axis=0)
    np.testing.assert_allclose(lo[:2], -size[:2] / 2, atol=1e-9)
    np.testing.assert_allclose(hi[:2], size[:2] / 2, atol=1e-9)
    assert lo[2] == 0.0
    assert hi[2] == pytest.approx(size[2])
    for part in piece.parts:
        assert np.all(np.array(part.hi) > np.array(part.lo)), part.name
    assert len({p.name for p in piece.parts}) == len(piece.parts)


@pytest.mark.parametrize("kind", furniture.KINDS)
def test_same_seed_same_design_other_seed_other_design(kind: str) -> None:
    a = furniture.design(kind, np.random.default_rng(7))
    b = furniture.design(kind, np.random.default_rng(7))
    c = furniture.design(kind, np.random.default_rng(8))
    assert a == b
    assert a != c


@pytest.mark.parametrize("turns", [0, 1, 2, 3])
def test_quarter_turns_move_the_front_and_keep_one_instance(turns: int) -> None:
    piece = furniture.design("sofa", np.random.default_rng(3))
    boxes = furniture.place(piece, "sofa_0", 42, (5.0, -2.0), turns)
    assert {b.instance_id for b in boxes} == {42}
    assert {b.label for b in boxes} == {"sofa"}
    assert all(b.name.startswith("sofa_0/") for b in boxes)
    assert all(b.yaw_rad == 0.0 for b in boxes)
    lo = np.min([np.subtract(b.center_xyz, b.half_size_xyz) for b in boxes], axis=0)
    hi = np.max([np.add(b.center_xyz, b.half_size_xyz) for b in boxes], axis=0)
    np.testing.assert_allclose((lo[:2] + hi[:2]) / 2, (5.0, -2.0), atol=1e-9)
    np.testing.assert_allclose(hi[:2] - lo[:2], furniture.footprint(piece, turns), atol=1e-9)
    # The back rest sits on the side opposite the front: -x turned by `turns` quarter turns.
    back = next(b for b in boxes if b.name == "sofa_0/back")
    away = np.subtract(back.center_xyz[:2], (5.0, -2.0))
    expected = [(-1, 0), (0, -1), (1, 0), (0, 1)][turns]
    assert float(np.dot(away, expected)) > 0.2


def test_round_legs_are_cylinders_and_every_piece_blocks_its_footprint() -> None:
    kinds_seen = set()
    for seed in range(12):
        piece = furniture.design("table", np.random.default_rng(seed))
        kinds_seen |= {p.shape for p in piece.parts}
        boxes = furniture.place(piece, "table_0", 1, (2.0, 2.0), seed % 4)
        grid = OccupancyGrid.from_boxes(boxes, (0.0, 0.0), (4.0, 4.0), 0.1, (), 1.0)
        sx, sy = furniture.footprint(piece, seed % 4)
        for fx in (-0.4, 0.0, 0.4):
            for fy in (-0.4, 0.0, 0.4):
                assert not grid.is_free(np.array([2.0 + fx * sx, 2.0 + fy * sy]))
        assert grid.is_free(np.array([0.2, 0.2]))
    assert kinds_seen == {StaticShape.BOX, StaticShape.CYLINDER}


def test_rooms_get_doors_in_doorways_and_windows_on_outer_walls() -> None:
    config = ProceduralConfig(rooms_x=3, rooms_y=2)
    world = generate_rooms(config, LightsConfig(), np.random.default_rng(4))
    doors = {b.instance_id for b in world.boxes if b.label == "door"}
    windows = {b.instance_id for b in world.boxes if b.label == "window"}
    interior_sides = (config.rooms_x - 1) * config.rooms_y + (config.rooms_y - 1) * config.rooms_x
    assert len(doors) == interior_sides
    assert 0 < len(windows) <= 2 * (config.rooms_x + config.rooms_y)
    lo, hi = np.array(world.bounds_min_xyz), np.array(world.bounds_max_xyz)
    t = config.wall_thickness_m
    for box in world.boxes:
        if box.label != "window":
            continue
        c = np.array(box.center_xyz[:2])
        # Windows hang on the inside of the outer walls.
        to_outer = min(c[0] - lo[0], hi[0] - c[0], c[1] - lo[1], hi[1] - c[1])
        assert t <= to_outer < t + 0.2, box.name
    # Open leaves keep the tour through every doorway free.
    for a, b in zip(world.tour_xy, world.tour_xy[1:] + world.tour_xy[:1], strict=True):
        assert world.free_space.segment_is_free(np.array(a), np.array(b))
