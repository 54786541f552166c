"""Walking people: collision-free timelines, bounded speeds, a visible gait, seeded."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grade_common.occupancy import OccupancyGrid
from grade_people.config import PeopleConfig, PersonMotion
from grade_people.people import (
    MOTION_CODES,
    PART_NAMES,
    PERSON_RADIUS_M,
    PersonTimeline,
    part_poses,
    plan_timeline,
    random_person,
)
from grade_sim.config.scenario import LightsConfig, ProceduralConfig
from grade_sim.world.procedural import generate_rooms

DT_S = 1 / 60
N_STEPS = 60 * 40  # 40 s
WALK, STAND, TURN = (
    MOTION_CODES[m] for m in (PersonMotion.WALK, PersonMotion.STAND, PersonMotion.TURN)
)


@pytest.fixture(scope="module")
def grid() -> OccupancyGrid:
    config = ProceduralConfig(rooms_x=2, rooms_y=2, furniture_per_room=(2, 4))
    return generate_rooms(config, LightsConfig(), np.random.default_rng(1)).free_space


def timeline(grid: OccupancyGrid, seed: int, config: PeopleConfig) -> PersonTimeline:
    return plan_timeline(grid, config, N_STEPS, DT_S, np.random.default_rng(seed), 1.75)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_people_stay_in_free_space_at_bounded_speed(grid: OccupancyGrid, seed: int) -> None:
    config = PeopleConfig(speed_mps=(0.6, 1.2))
    tl = timeline(grid, seed, config)
    free = grid.inflated(PERSON_RADIUS_M)
    assert all(free.is_free(p) for p in tl.position_xy)
    speed = np.linalg.norm(np.diff(tl.position_xy, axis=0), axis=1) / DT_S
    assert speed.max() <= config.speed_mps[1] + 1e-6
    walking = tl.motion[1:] == WALK
    # A person walks at one speed drawn from the configured range (when facing the path).
    assert config.speed_mps[0] - 1e-6 <= speed[walking].max() <= config.speed_mps[1] + 1e-6
    assert np.all(speed[~walking] < 1e-9)  # standing and turning happen on the spot
    heading_rate = np.abs(np.diff(np.unwrap(tl.heading_rad))) / DT_S
    assert heading_rate.max() <= 3.0 + 1e-6


def test_timeline_has_walking_and_other_motions(grid: OccupancyGrid) -> None:
    seen: set[int] = set()
    for seed in range(4):
        tl = timeline(grid, seed, PeopleConfig())
        seen |= set(np.unique(tl.motion).tolist())
        assert len(tl.position_xy) == N_STEPS
        assert np.all((tl.amplitude >= 0) & (tl.amplitude <= 1))
    assert seen == {WALK, STAND, TURN}


def test_turning_changes_heading_in_place(grid: OccupancyGrid) -> None:
    for seed in range(6):
        tl = timeline(grid, seed, PeopleConfig(motions=(PersonMotion.WALK, PersonMotion.TURN)))
        turning = np.nonzero(tl.motion == TURN)[0]
        if len(turning) > 30:
            k0, k1 = turning[0], turning[0] + 30
            assert np.all(tl.motion[k0:k1] == TURN)
            np.testing.assert_array_equal(tl.position_xy[k0], tl.position_xy[k1])
            assert abs(tl.heading_rad[k1] - tl.heading_rad[k0]) > 0.3
            return
    pytest.fail("no person turned for 0.5 s in 6 seeds")


def test_walk_only_people_never_stand(grid: OccupancyGrid) -> None:
    tl = timeline(grid, 3, PeopleConfig(motions=(PersonMotion.WALK,)))
    assert set(np.unique(tl.motion).tolist()) <= {WALK, STAND}  # stand only when boxed in
    assert np.mean(tl.motion == WALK) > 0.9


def test_same_seed_same_timeline(grid: OccupancyGrid) -> None:
    a, b, c = (timeline(grid, s, PeopleConfig()) for s in (5, 5, 6))
    for field in ("position_xy", "heading_rad", "phase_rad", "amplitude", "motion"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    assert not np.array_equal(a.position_xy, c.position_xy)


def body_frame(pos: np.ndarray, xy: np.ndarray, heading: float) -> np.ndarray:
    c, s = math.cos(heading), math.sin(heading)
    rel = pos - np.array([xy[0], xy[1], 0.0])
    return np.stack([c * rel[:, 0] + s * rel[:, 1], -s * rel[:, 0] + c * rel[:, 1], rel[:, 2]], 1)


def poses_at(phase: float, amplitude: float, heading: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    xy = np.array([[1.0, 2.0]])
    pos, quat = part_poses(
        np.array([1.0]), xy, np.array([heading]), np.array([phase]), np.array([amplitude])
    )
    return body_frame(pos[0], xy[0], heading), quat[0]


LIMBS = [PART_NAMES.index(n) for n in ("lower_arm_l", "lower_arm_r", "foot_l", "foot_r")]


def test_limbs_move_while_walking() -> None:
    _, qa = poses_at(0.0, 1.0)
    b, qb = poses_at(math.pi / 2, 1.0)
    c, _ = poses_at(-math.pi / 2, 1.0)
    # Feet and hands swing forward/back by several centimetres over the gait cycle.
    assert np.all(np.abs(b[LIMBS, 0] - c[LIMBS, 0]) > 0.05)
    # Left and right swing in opposition.
    foot_l, foot_r = PART_NAMES.index("foot_l"), PART_NAMES.index("foot_r")
    assert np.sign(b[foot_l, 0] - c[foot_l, 0]) == -np.sign(b[foot_r, 0] - c[foot_r, 0])
    assert not np.allclose(qa, qb)


def test_limbs_still_while_standing() -> None:
    a, qa = poses_at(0.0, 0.0)
    for phase in (0.7, math.pi / 2, 2.0):
        b, qb = poses_at(phase, 0.0)
        np.testing.assert_allclose(a, b, atol=1e-12)
        np.testing.assert_allclose(qa, qb, atol=1e-12)


def test_limbs_move_along_a_walking_timeline(grid: OccupancyGrid) -> None:
    tl = timeline(grid, 0, PeopleConfig(motions=(PersonMotion.WALK,)))
    walk = np.nonzero((tl.motion == WALK) & (tl.amplitude == 1.0))[0]
    assert len(walk) > 60
    k0, k1 = walk[0], walk[0] + 10  # 1/6 s apart
    assert tl.phase_rad[k1] > tl.phase_rad[k0]
    a = body_frame(*_person_parts(tl, k0))
    b = body_frame(*_person_parts(tl, k1))
    assert np.max(np.abs(a[LIMBS] - b[LIMBS])) > 0.05


def _person_parts(tl: PersonTimeline, k: int) -> tuple[np.ndarray, np.ndarray, float]:
    pos, _ = part_poses(
        np.array([1.0]),
        tl.position_xy[k : k + 1],
        tl.heading_rad[k : k + 1],
        tl.phase_rad[k : k + 1],
        tl.amplitude[k : k + 1],
    )
    return pos[0], tl.position_xy[k], float(tl.heading_rad[k])


def test_part_poses_shapes_unit_quaternions_and_body_size() -> None:
    rng = np.random.default_rng(0)
    n = 50
    scale = rng.uniform(0.85, 1.1, n)
    pos, quat = part_poses(
        scale,
        rng.uniform(-5, 5, (n, 2)),
        rng.uniform(-4, 4, n),
        rng.uniform(-20, 20, n),
        rng.uniform(0, 1, n),
    )
    assert pos.shape == (n, len(PART_NAMES), 3)
    assert quat.shape == (n, len(PART_NAMES), 4)
    np.testing.assert_allclose(np.linalg.norm(quat, axis=-1), 1.0, atol=1e-12)
    head = PART_NAMES.index("head")
    np.testing.assert_allclose(pos[:, head, 2] / scale, 1.62, atol=0.02)  # head near the top
    feet = [PART_NAMES.index("foot_l"), PART_NAMES.index("foot_r")]
    assert np.all(pos[:, feet, 2].min(axis=1) / scale < 0.15)  # a foot near the floor
    assert np.all(pos[:, :, 2] > -0.05)


def test_random_person_is_seeded_and_within_config() -> None:
    config = PeopleConfig(height_m=(1.6, 1.7))
    a = random_person("p", 7, config, np.random.default_rng(3))
    b = random_person("p", 7, config, np.random.default_rng(3))
    assert a == b
    assert 1.6 <= a.height_m <= 1.7
    assert a.scale == pytest.approx(a.height_m / 1.75)
    assert set(a.colors) == {"skin", "shirt", "pants", "shoes"}
    assert all(0 <= c <= 1 for rgba in a.colors.values() for c in rgba)
    assert [p.name for p in a.parts()] == list(PART_NAMES)
