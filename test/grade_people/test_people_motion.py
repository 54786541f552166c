"""The motion library: gaits without foot slip, clips, blended transitions, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grade_people.config import PeopleConfig, PersonMotion
from grade_people.motion import animation_track, feet_in_stance, pose_timeline
from grade_people.people import MOTION_CODES, PersonTimeline, cadence_hz, plan_timeline
from grade_people.skeleton import JOINT_INDEX, BodyParams, rest_positions
from grade_sim.config.scenario import LightsConfig, ProceduralConfig
from grade_sim.world.procedural import generate_rooms

DT_S = 1 / 200
BODY = BodyParams(1.75, 0.5, 1.0, 1.0, 1.0)
FEET = [JOINT_INDEX[j] for j in ("ankle_l", "ankle_r", "toe_l", "toe_r")]


def straight(speed_mps: float, n: int, motion: PersonMotion = PersonMotion.WALK) -> PersonTimeline:
    """A timeline walking along +x at constant speed, phase as plan_timeline advances it."""
    x = np.arange(n) * DT_S * speed_mps
    phase = math.pi * float(cadence_hz(speed_mps, BODY.height_m)) * np.arange(n) * DT_S
    code = np.full(n, MOTION_CODES[motion], dtype=np.int8)
    return PersonTimeline(
        np.stack([x, np.zeros(n)], 1), np.zeros(n), phase, np.ones(n), code, np.full(n, np.nan)
    )


def still(codes: list[tuple[PersonMotion, int]], seat_height_m: float = 0.45) -> PersonTimeline:
    """A person standing at the origin going through motions for the given step counts (any
    sitting on a seat of the given height there)."""
    code = np.concatenate([np.full(n, MOTION_CODES[m], dtype=np.int8) for m, n in codes])
    n = len(code)
    seat = np.full(n, seat_height_m)
    return PersonTimeline(np.zeros((n, 2)), np.zeros(n), np.zeros(n), np.zeros(n), code, seat)


def poses(tl: PersonTimeline) -> tuple[np.ndarray, np.ndarray]:
    return pose_timeline(BODY, tl, animation_track(tl, DT_S), DT_S, np.arange(len(tl.heading_rad)))


def stance_toe_speeds(tl: PersonTimeline, pos: np.ndarray) -> np.ndarray:
    """Horizontal speed (m/s) of each toe joint between consecutive steps both in its stance."""
    speed = np.linalg.norm(np.diff(tl.position_xy, axis=0, prepend=tl.position_xy[:1]), axis=1)
    stance = feet_in_stance(tl.phase_rad, speed / DT_S)
    toes = pos[:, [JOINT_INDEX["toe_l"], JOINT_INDEX["toe_r"]], :2]
    move = np.linalg.norm(np.diff(toes, axis=0), axis=-1) / DT_S
    out: np.ndarray = move[stance[1:] & stance[:-1]]
    return out


@pytest.mark.parametrize("speed", [0.6, 1.0, 1.4, 2.6])
def test_planted_feet_do_not_slide_on_straight_walks_and_runs(speed: float) -> None:
    tl = straight(speed, 1600)
    pos, _ = poses(tl)
    slip = stance_toe_speeds(tl, pos)
    assert len(slip) > 500  # feet do plant
    # The ball of a stance foot stays put (measured: 95th percentile under 7 mm/s, the first
    # step of a stance, which still finishes the swing's last millimetres).
    assert np.median(slip) < 1e-6
    assert np.percentile(slip, 95) < 0.01 * speed


def test_slip_on_a_planned_walk_is_small() -> None:
    grid = generate_rooms(
        ProceduralConfig(rooms_x=2, rooms_y=1), LightsConfig(), np.random.default_rng(2)
    ).free_space
    tl = plan_timeline(
        grid, PeopleConfig(motions=(PersonMotion.WALK,)), 4000, DT_S, np.random.default_rng(5), 1.75
    )
    pos, _ = poses(tl)
    slip = stance_toe_speeds(tl, pos)
    # Planted feet are locked in the world; what still moves is the ball of a foot rolling
    # while the body turns (the roll is applied along the body's heading, not the foot's) and
    # a stance foot of someone stopping (measured: median 0.3 mm/s, 95th percentile 5.3 cm/s).
    assert np.median(slip) < 1e-3
    assert np.percentile(slip, 95) < 0.07


def test_running_has_a_flight_phase_and_walking_does_not() -> None:
    for speed, flight in ((1.2, False), (2.8, True)):
        pos, _ = poses(straight(speed, 1600))
        z = pos[400:, FEET, 2]
        lifted = z > z.min(axis=0) + 0.01  # (steps, ankle_l, ankle_r, toe_l, toe_r)
        foot_off = lifted[:, :2] & lifted[:, 2:]  # neither heel nor toe down
        assert bool(np.any(foot_off.all(axis=1))) is flight


def test_sitting_lowers_the_pelvis_and_keeps_the_feet_on_the_floor() -> None:
    pos, _ = poses(still([(PersonMotion.STAND, 100), (PersonMotion.SIT, 800)]))
    rest = rest_positions(BODY)
    assert pos[-1, 0, 2] < rest[0, 2] - 0.3
    np.testing.assert_allclose(pos[-1, FEET[:2], 2], rest[FEET[:2], 2], atol=3e-3)
    knee, hip = pos[-1, JOINT_INDEX["knee_l"]], pos[-1, JOINT_INDEX["hip_l"]]
    assert abs(knee[2] - hip[2]) < 0.05  # thighs level


def test_seated_hands_rest_on_the_thighs() -> None:
    # The wrist a thigh's radius and a wrist's thickness over the thigh's axis (not hovering
    # a forearm's height above it), between the hip and the knee.
    pos, _ = poses(still([(PersonMotion.STAND, 100), (PersonMotion.SIT, 800)]))
    for side in ("l", "r"):
        hip, knee = pos[-1, JOINT_INDEX["hip_" + side]], pos[-1, JOINT_INDEX["knee_" + side]]
        wrist = pos[-1, JOINT_INDEX["wrist_" + side]]
        along = (wrist - hip) @ (knee - hip) / ((knee - hip) @ (knee - hip))
        over_axis = wrist[2] - (hip[2] + along * (knee[2] - hip[2]))
        assert 0.3 < along < 0.9
        assert 0.07 < over_axis < 0.12


@pytest.mark.parametrize("height_m", [1.55, 1.75, 1.9])
def test_seated_hips_follow_the_seat_height_with_the_feet_on_the_floor(height_m: float) -> None:
    body = BodyParams(height_m, 0.5, 1.0, 1.0, 1.0)
    rest = rest_positions(body)
    hips = []
    for seat in (0.42, 0.48):
        tl = still([(PersonMotion.STAND, 100), (PersonMotion.SIT, 800)], seat_height_m=seat)
        k = np.array([len(tl.motion) - 1])
        pos, _ = pose_timeline(body, tl, animation_track(tl, DT_S), DT_S, k)
        hips.append(pos[0, JOINT_INDEX["hip_l"], 2])
        assert 0.05 < hips[-1] - seat < 0.14  # about a thigh's radius over the seat
        # The balls of the feet on the floor (short legs point the toes down to it).
        np.testing.assert_allclose(pos[0, FEET[2:], 2], rest[FEET[2:], 2], atol=0.015)
        knee = pos[0, JOINT_INDEX["knee_l"]]
        slope = math.atan2(hips[-1] - knee[2], knee[0] - pos[0, JOINT_INDEX["hip_l"], 0])
        assert slope < math.radians(6.5)  # thighs about level, not sloping into the seat
    assert hips[1] - hips[0] == pytest.approx(0.06, abs=0.015)


def test_no_seat_no_sitting() -> None:
    """A SIT code without a seat (NaN) leaves the person standing: nobody sits in mid-air."""
    pos, _ = poses(still([(PersonMotion.STAND, 100), (PersonMotion.SIT, 800)], math.nan))
    stand, _ = poses(still([(PersonMotion.STAND, 900)], math.nan))
    np.testing.assert_allclose(pos[-1], stand[-1], atol=1e-9)


def test_wave_raises_the_right_hand_above_the_head_and_moves_it() -> None:
    pos, _ = poses(still([(PersonMotion.STAND, 100), (PersonMotion.WAVE, 800)]))
    wrist, head = pos[:, JOINT_INDEX["wrist_r"]], pos[:, JOINT_INDEX["head"]]
    assert wrist[0, 2] < 1.0
    assert (wrist[500:, 2] > head[500:, 2]).all()
    assert np.ptp(wrist[500:, 1]) > 0.1  # waving side to side


def test_phone_holds_the_hand_in_front_and_looks_down() -> None:
    pos, rot = poses(still([(PersonMotion.PHONE, 600)]))
    wrist, chest = pos[-1, JOINT_INDEX["wrist_r"]], pos[-1, JOINT_INDEX["chest"]]
    assert wrist[0] > chest[0] + 0.15
    assert chest[2] - 0.1 < wrist[2] < chest[2] + 0.3
    head_forward = rot[-1, JOINT_INDEX["head"]] @ np.array([1.0, 0.0, 0.0])
    assert head_forward[2] < -0.3


def test_look_around_turns_the_head() -> None:
    _, rot = poses(still([(PersonMotion.LOOK, 2000)]))
    fwd = rot[:, JOINT_INDEX["head"]] @ np.array([1.0, 0.0, 0.0])
    yaw = np.arctan2(fwd[:, 1], fwd[:, 0])
    assert yaw.max() > 0.6
    assert yaw.min() < -0.6


def test_transitions_are_blended_without_jumps() -> None:
    tl = still([(PersonMotion.STAND, 300), (PersonMotion.WAVE, 300), (PersonMotion.SIT, 600)])
    pos, _ = poses(tl)
    step = np.linalg.norm(np.diff(pos, axis=0), axis=2).max()
    assert step < 0.03  # m per 5 ms step: no joint teleports at a switch


def test_poses_are_a_pure_function_of_the_timeline() -> None:
    tl = straight(1.1, 500)
    a = poses(tl)
    b = poses(tl)
    assert a[0].tobytes() == b[0].tobytes()
    assert a[1].tobytes() == b[1].tobytes()
