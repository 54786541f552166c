"""Feet on the floor and gait against speed: lowest skin point, stance slide, cadence."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grade_people.body_mesh import body_mesh, random_clothing, skin_vertices
from grade_people.config import PeopleConfig, PersonMotion
from grade_people.gait_stats import PersonGaitSamples, gait_stats
from grade_people.motion import animation_track, feet_in_stance, pose_timeline
from grade_people.people import MOTION_CODES, cadence_hz, plan_timeline
from grade_people.skeleton import JOINT_INDEX, BodyParams, rest_positions
from grade_sim.config.scenario import LightsConfig, ProceduralConfig
from grade_sim.world.procedural import generate_rooms

DT_S = 1 / 240
BODY = BodyParams(1.7, 0.4, 1.0, 1.0, 1.0)


@pytest.mark.parametrize("height_m", [1.55, 1.75, 1.95])
def test_cadence_follows_speed_like_gait_data(height_m: float) -> None:
    speeds = np.linspace(0.8, 1.6, 9)
    cadence = cadence_hz(speeds, height_m)
    # Gait data: about 1.6 to 2.0 steps/s over 0.8 to 1.6 m/s, more steps and longer ones as
    # the speed grows (not a fixed stride walked in slow motion).
    assert np.all(np.diff(cadence) > 0)
    assert np.all(np.diff(speeds / cadence) > 0)
    assert cadence.min() > 1.4
    assert cadence.max() < 2.2
    if height_m == 1.75:
        assert cadence[0] == pytest.approx(1.6, abs=0.05)
        assert cadence[-1] == pytest.approx(2.0, abs=0.08)


def _planned(seed: int, n_steps: int) -> tuple[object, np.ndarray, np.ndarray]:
    grid = generate_rooms(
        ProceduralConfig(rooms_x=2, rooms_y=1), LightsConfig(), np.random.default_rng(2)
    ).free_space
    config = PeopleConfig(motions=(PersonMotion.WALK, PersonMotion.STAND), speed_mps=(0.4, 1.6))
    tl = plan_timeline(grid, config, n_steps, DT_S, np.random.default_rng(seed), BODY.height_m)
    steps = np.arange(1, n_steps, 6)
    pos, rot = pose_timeline(BODY, tl, animation_track(tl, DT_S), DT_S, steps)
    return tl, steps, (pos, rot)  # type: ignore[return-value]


def test_feet_stay_on_the_floor_and_do_not_slide() -> None:
    tl, steps, (pos, rot) = _planned(3, 240 * 14)
    mesh = body_mesh(BODY, random_clothing(np.random.default_rng(0)))
    rest = rest_positions(BODY)
    lowest = np.array(
        [skin_vertices(mesh, rest, p, r)[:, 2].min() for p, r in zip(pos, rot, strict=True)]
    )
    speed = np.linalg.norm(tl.position_xy[steps] - tl.position_xy[steps - 1], axis=1) / DT_S
    samples = PersonGaitSamples(
        lowest_z_m=lowest,
        stance=feet_in_stance(tl.phase_rad[steps], speed),
        toe_xy=pos[:, [JOINT_INDEX["toe_l"], JOINT_INDEX["toe_r"]], :2],
        speed_mps=speed,
        phase_rate_rps=(tl.phase_rad[steps] - tl.phase_rad[steps - 1]) / DT_S,
        walking=tl.motion[steps] == MOTION_CODES[PersonMotion.WALK],
    )
    stats = gait_stats([samples])
    assert stats.stance_steps > 300
    assert stats.within_2cm >= 0.99
    assert stats.within_3cm == 1.0
    assert stats.stances > 10
    # Every stance, walk starts from a stand included (measured: under 1 cm).
    assert stats.slide_max_m < 0.02
    # The timeline's phase steps at the cadence of its speed (people.cadence_hz).
    walked = [(lo, hi, c) for lo, hi, n, c, _ in stats.by_speed if n > 20]
    assert walked
    for lo, hi, c in walked:
        assert cadence_hz(lo, BODY.height_m) - 0.05 <= c <= cadence_hz(hi, BODY.height_m) + 0.05


def test_poses_are_deterministic() -> None:
    a = _planned(4, 240 * 4)[2]
    b = _planned(4, 240 * 4)[2]
    for x, y in zip(a, b, strict=True):
        assert x.tobytes() == y.tobytes()
    assert math.isfinite(float(np.asarray(a[0]).sum()))
