"""Quadrupeds: seeded looks and timelines, gaits, grazing, no jumps, config validation."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from grade_common.errors import ConfigError
from grade_common.occupancy import OccupancyGrid
from grade_sim.actors.animals import (
    GAIT_CODES,
    PART_NAMES,
    AnimalSpec,
    AnimalTimeline,
    animal_part_poses,
    plan_animal_timeline,
    random_animal,
)
from grade_sim.config.scenario import AnimalGait, AnimalKind, AnimalsConfig, scenario_from_mapping

DT = 1 / 60


def _grid() -> OccupancyGrid:
    blocked = np.zeros((150, 150), dtype=bool)
    blocked[70:80, 40:110] = True  # a wall in the middle
    return OccupancyGrid((-15.0, -15.0), 0.2, blocked)


def _draw(
    seed: int, kind: AnimalKind = AnimalKind.ZEBRA, seconds: float = 120.0, **cfg: Any
) -> tuple[AnimalSpec, AnimalTimeline]:
    config = AnimalsConfig(count=1, kinds=(kind,), **cfg)
    rng = np.random.default_rng(seed)
    spec = random_animal("animal_0", 5, config, rng)
    return spec, plan_animal_timeline(_grid(), config, spec, int(seconds / DT), DT, rng)


def _arrays(tl: AnimalTimeline) -> list[np.ndarray]:
    return [getattr(tl, f) for f in tl.__dataclass_fields__]


def test_same_seed_same_animal_and_timeline() -> None:
    a_spec, a_tl = _draw(3, seconds=30.0)
    b_spec, b_tl = _draw(3, seconds=30.0)
    c_spec, c_tl = _draw(4, seconds=30.0)
    assert a_spec == b_spec
    assert all(np.array_equal(x, y) for x, y in zip(_arrays(a_tl), _arrays(b_tl), strict=True))
    assert a_spec != c_spec
    assert not np.array_equal(a_tl.position_xy, c_tl.position_xy)


def test_all_gaits_occur_and_run_is_faster_than_walk() -> None:
    _, tl = _draw(1, seconds=240.0, run_fraction=0.3, graze_fraction=0.3)
    gaits = set(tl.gait.tolist())
    assert gaits == set(GAIT_CODES.values())
    speed = np.linalg.norm(np.diff(tl.position_xy, axis=0), axis=1) / DT
    running = (tl.run_blend[1:] > 0.99) & (tl.amplitude[1:] > 0.99)
    walking = (tl.run_blend[1:] < 0.01) & (tl.amplitude[1:] > 0.99) & (tl.graze_blend[1:] < 0.01)
    assert running.sum() > 60
    assert walking.sum() > 60
    assert np.median(speed[running]) > 2.0 * np.median(speed[walking])
    # Grazing stands still.
    grazing = tl.graze_blend[1:] > 0.99
    assert grazing.sum() > 60
    assert speed[grazing].max() < 1e-9


def test_stays_in_free_space() -> None:
    _spec, tl = _draw(2, seconds=120.0)
    grid = _grid()
    assert all(grid.is_free(p) for p in tl.position_xy[::10])
    _, tl_b = _draw(2, kind=AnimalKind.GAZELLE)
    assert all(grid.is_free(p) for p in tl_b.position_xy[::10])


@pytest.mark.parametrize("kind", list(AnimalKind))
def test_hooves_stay_on_or_above_ground_and_parts_never_jump(kind: AnimalKind) -> None:
    spec, tl = _draw(5, kind=kind, seconds=25.0, run_fraction=0.5, graze_fraction=0.3)
    shapes = spec.part_shapes()
    prev = None
    max_step = 0.0
    lowest = math.inf
    for k in range(0, len(tl.heading_rad)):
        pos, quat = animal_part_poses((spec,), (tl,), k)
        assert np.allclose(np.linalg.norm(quat, axis=-1), 1.0)
        for j, name in enumerate(PART_NAMES):
            if name.startswith("lower_leg"):
                axis = _z_axis(quat[0, j])
                hoof = pos[0, j] - axis * shapes[j][1][1]  # the segment's lower end
                lowest = min(lowest, float(hoof[2]))
        if prev is not None:
            max_step = max(max_step, float(np.linalg.norm(pos[0] - prev, axis=1).max()))
        prev = pos[0]
    assert lowest > -0.01
    # No part moves more than a fast limb swing per 1/60 s step (a gait switch without
    # blending would snap the legs by tens of centimetres).
    assert max_step < 0.25 * spec.scale


def _z_axis(q: np.ndarray) -> np.ndarray:
    w, x, y, z = q
    return np.array([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)])


def test_grazing_puts_the_muzzle_at_the_ground() -> None:
    spec, tl = _draw(1, seconds=240.0, graze_fraction=0.5)
    k = int(np.argmax(tl.graze_blend > 0.999))
    assert tl.graze_blend[k] > 0.999
    pos, quat = animal_part_poses((spec,), (tl,), k)
    head = PART_NAMES.index("head")
    half = spec.part_shapes()[head][1][1]
    muzzle = pos[0, head] - _z_axis(quat[0, head]) * half
    assert 0.0 < muzzle[2] < 0.15
    walk = int(np.argmax((tl.graze_blend < 1e-6) & (tl.amplitude > 0.99)))
    pos_w, _ = animal_part_poses((spec,), (tl,), walk)
    assert pos_w[0, head, 2] > spec.hip_height_m  # head up while walking


def test_kinds_differ_in_size() -> None:
    zebra, _ = _draw(1, AnimalKind.ZEBRA, seconds=1.0)
    gazelle, _ = _draw(1, AnimalKind.GAZELLE, seconds=1.0)
    assert zebra.anatomy.striped
    assert not gazelle.anatomy.striped
    assert zebra.hip_height_m > 1.3 * gazelle.hip_height_m


@pytest.mark.parametrize(
    ("animals", "message"),
    [
        ({"count": 2, "gaits": ["graze"]}, r"animals.gaits: must include 'walk'"),
        ({"count": 2, "kinds": ["unicorn"]}, r"animals.kinds.*unicorn"),
        ({"count": 65}, r"animals.count: value 65 is out of range"),
        ({"run_fraction": 0.7, "graze_fraction": 0.5}, r"run_fraction \+ graze_fraction"),
        ({"size_scale": [1.2, 1.0]}, r"animals.size_scale"),
        ({"retries": 51}, r"animals.retries: value 51 is out of range"),
        ({"clearance_m": -0.1}, r"animals.clearance_m: value -0.1 is out of range"),
    ],
)
def test_config_errors_name_the_field(animals: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        scenario_from_mapping({"animals": animals})


def test_default_has_no_animals() -> None:
    assert scenario_from_mapping({}).animals.count == 0
    assert AnimalGait.WALK in AnimalsConfig().gaits
