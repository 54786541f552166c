"""An unstabilised UAV (motion.stabilised: false) tilts as a multirotor must to follow its path:
pitched forward while speeding up, back while slowing down, level when cruising or turning; a
stabilised one flies level."""

from __future__ import annotations

import math

import numpy as np
import pytest

from grade_common.errors import ConfigError
from grade_sim.config.scenario import scenario_from_mapping
from grade_sim.robots.model import robot_model
from grade_sim.robots.path_follower import ACCEL_MPS2, GRAVITY_MPS2, PathFollower


def _follower(stabilised: bool) -> PathFollower:
    scenario = scenario_from_mapping(
        {"robots": [{"name": "uav1", "motion": {"stabilised": stabilised, "speed_mps": 1.5}}]}
    )
    model = robot_model(scenario.robots[0])
    start = np.array([0.0, 0.0, 1.4])
    return PathFollower(model, start, 0.0, [np.array([6.0, 0.0, 1.4])], 1.5, 0.6, False)


def test_stabilised_flight_is_level() -> None:
    follower = _follower(True)
    for t in np.linspace(0.0, follower.period_s, 40):
        assert follower.tilt(float(t)) == {"roll": 0.0, "pitch": 0.0}
        q, _, _ = follower.joint_trajectory(float(t), ("x", "y", "z", "yaw", "pitch", "roll"), 0.01)
        assert q[4] == 0.0
        assert q[5] == 0.0


def test_unstabilised_flight_pitches_into_the_acceleration() -> None:
    follower = _follower(False)
    speeding_up = follower.tilt(0.75)["pitch"]  # mid-ramp of the 1.5 s speed-up
    cruising = follower.tilt(follower.period_s / 2)["pitch"]
    slowing_down = follower.tilt(follower.period_s - 0.75)["pitch"]
    expected = math.atan2(ACCEL_MPS2, GRAVITY_MPS2)
    assert speeding_up == pytest.approx(expected, rel=1e-6)
    assert slowing_down == pytest.approx(-expected, rel=1e-6)
    assert cruising == pytest.approx(0.0, abs=1e-12)
    assert follower.tilt(0.75)["roll"] == pytest.approx(0.0, abs=1e-12)  # straight along x


def test_the_tilt_is_continuous_with_finite_rates() -> None:
    follower = _follower(False)
    names = ("x", "y", "z", "yaw", "pitch", "roll")
    dt = 1 / 240
    pitch = [follower.joint_trajectory(t, names, dt)[0][4] for t in np.arange(0.0, 3.0, dt)]
    rates = np.abs(np.diff(pitch)) / dt
    assert rates.max() < 1.0  # rad/s: the response window smooths the profile's steps
    _, qd, _ = follower.joint_trajectory(0.75, names, dt)
    assert qd[4] == pytest.approx(0.0, abs=1e-9)  # mid-ramp: the averaged acceleration is flat


def test_only_a_uav_may_fly_unstabilised() -> None:
    with pytest.raises(ConfigError, match=r"robots\[0\]\.motion\.stabilised.*omni"):
        scenario_from_mapping(
            {"robots": [{"name": "r", "type": "omni", "motion": {"stabilised": False}}]}
        )
