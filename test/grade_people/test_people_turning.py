"""Turning people step: turns on the spot and sharp turns while walking re-plant the feet
(stance feet stay put and on the floor, are not left twisted against the body, swing feet lift)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grade_people.body_mesh import body_mesh, random_clothing, skin_vertices
from grade_people.config import PeopleConfig, PersonMotion
from grade_people.motion import animation_track, feet_in_stance, pose_timeline
from grade_people.people import MOTION_CODES, PersonTimeline, plan_timeline
from grade_people.skeleton import JOINT_INDEX, BodyParams, rest_positions
from grade_sim.config.scenario import LightsConfig, ProceduralConfig
from grade_sim.world.procedural import generate_rooms

DT_S = 1 / 240
BODY = BodyParams(1.7, 0.4, 1.0, 1.0, 1.0)
SHARP_RPS = 1.0  # a walker turning faster than this counts as turning sharply


def _stances(on: np.ndarray) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.concatenate([[0], on.astype(np.int8), [0]])))
    return [(int(a), int(b)) for a, b in zip(edges[::2], edges[1::2], strict=True) if b - a > 1]


@pytest.fixture(scope="module")
def turning() -> tuple[PersonTimeline, np.ndarray, np.ndarray, np.ndarray]:
    grid = generate_rooms(
        ProceduralConfig(rooms_x=2, rooms_y=1), LightsConfig(), np.random.default_rng(2)
    ).free_space
    config = PeopleConfig(
        motions=(PersonMotion.WALK, PersonMotion.TURN), walk_fraction=0.3, speed_mps=(0.4, 1.6)
    )
    n = 240 * 20
    tl = plan_timeline(grid, config, n, DT_S, np.random.default_rng(5), BODY.height_m)
    steps = np.arange(1, n, 4)
    pos, rot = pose_timeline(BODY, tl, animation_track(tl, DT_S), DT_S, steps)
    return tl, steps, pos, rot


def test_turning_feet_step_stay_put_and_are_not_twisted(
    turning: tuple[PersonTimeline, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    tl, steps, pos, rot = turning
    speed = np.linalg.norm(tl.position_xy[steps] - tl.position_xy[steps - 1], axis=1) / DT_S
    stance = feet_in_stance(tl.phase_rad[steps], speed)
    turn = np.remainder(np.diff(tl.heading_rad)[steps - 1] + math.pi, 2 * math.pi) - math.pi
    on_spot = tl.motion[steps] == MOTION_CODES[PersonMotion.TURN]
    sharp = (tl.motion[steps] == MOTION_CODES[PersonMotion.WALK]) & (
        np.abs(turn) / DT_S > SHARP_RPS
    )
    assert on_spot.sum() > 200
    assert sharp.sum() > 50
    mesh = body_mesh(BODY, random_clothing(np.random.default_rng(0)))
    rest = rest_positions(BODY)
    for sel in (on_spot, sharp):
        lowest = np.array(
            [skin_vertices(mesh, rest, pos[k], rot[k])[:, 2].min() for k in np.flatnonzero(sel)]
        )
        assert np.abs(lowest).max() <= 0.02  # on the floor, on every sample
        for foot, side in enumerate("lr"):
            toe = pos[:, JOINT_INDEX["toe_" + side], :2]
            on = stance[:, foot] & sel
            spans = _stances(on)
            assert spans
            for a, b in spans:  # a stance foot stays where it was put down
                assert np.linalg.norm(toe[a:b] - toe[a], axis=1).max() < 0.02
            # ... and turns with the body one step at a time: never left more than 40 degrees
            # against the heading (before sharp turns stepped faster: 74 degrees).
            foot_x = rot[:, JOINT_INDEX["ankle_" + side], :, 0]
            yaw = np.arctan2(foot_x[:, 1], foot_x[:, 0]) - tl.heading_rad[steps]
            twist = np.abs(np.remainder(yaw + math.pi, 2 * math.pi) - math.pi)
            assert np.degrees(twist[on].max()) < 40.0
    # Turning on the spot lifts the feet (steps, not a shuffle): every swing between two
    # stances raises the toe at least 3 cm.
    for foot, side in enumerate("lr"):
        swing = ~stance[:, foot] & on_spot
        lifts = [pos[a:b, JOINT_INDEX["toe_" + side], 2].max() for a, b in _stances(swing)]
        assert len(lifts) >= 4
        floor_toe = pos[stance[:, foot] & on_spot, JOINT_INDEX["toe_" + side], 2].min()
        assert min(lifts) - floor_toe > 0.03
