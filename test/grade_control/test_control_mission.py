"""Waypoint missions: file validation and a closed loop with the controller on the plant."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from grade_control.config import ControllerConfig
from grade_control.controller import JointController, simulate_first_order
from grade_control.errors import ControlConfigError
from grade_control.geometry import rpy_to_quaternion
from grade_control.mission import (
    Mission,
    MissionConfig,
    MissionPhase,
    Waypoint,
    YawPolicy,
    load_mission,
    parse_mission,
)


@pytest.mark.parametrize("name", ["mission_uav.yaml", "mission_omni.yaml"])
def test_shipped_missions_load(repo_root: Path, name: str) -> None:
    mission = load_mission(repo_root / "config" / name)
    assert len(mission.waypoints) >= 4


GOOD = {"waypoints": [{"position": [0.0, 0.0, 1.0]}]}


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ([1, 2], r"a mission must be a mapping"),
        ({**GOOD, "speed": 2}, r"unknown field\(s\) \['speed'\]"),
        ({"waypoints": []}, r"waypoints = \[\] is invalid"),
        ({"waypoints": [{"position": [0, 0]}]}, r"waypoints\[0\]\.position = \[0, 0\] is invalid"),
        ({"waypoints": [{"position": [0, 0, ".nan"]}]}, r"waypoints\[0\]\.position\[2\]"),
        (
            {"waypoints": [{"position": [0, 0, 1], "hover_s": -1}]},
            r"waypoints\[0\]\.hover_s = -1 is invalid: must be >= 0",
        ),
        ({"waypoints": [{"position": [0, 0, 1], "speed": 1}]}, r"waypoints\[0\] = .* is invalid"),
        ({**GOOD, "yaw_policy": "spin"}, r"yaw_policy = 'spin' is invalid: allowed \['fixed', "),
        ({**GOOD, "rate_hz": 0}, r"rate_hz = 0\.0 is invalid: must be a number > 0"),
        ({**GOOD, "loop": "yes"}, r"loop = 'yes' must be true or false"),
    ],
)
def test_bad_mission_is_named(data: object, match: str) -> None:
    with pytest.raises(ControlConfigError, match=r"m\.yaml: " + match):
        parse_mission(data, "m.yaml")


def test_unreadable_or_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(ControlConfigError, match=r"missing\.yaml: cannot read mission file"):
        load_mission(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("waypoints: [\n")
    with pytest.raises(ControlConfigError, match=r"bad\.yaml: not valid YAML"):
        load_mission(bad)


def fly(mission: Mission, duration_s: float) -> tuple[np.ndarray, np.ndarray, list[tuple]]:
    """The mission drives the UAV controller (pose setpoints at 10 Hz) on the 240 Hz plant."""
    controller = JointController(ControllerConfig.uav())
    log: list[tuple] = []
    next_s = [0.0]

    def on_update(now_s: float, state: np.ndarray) -> None:
        if now_s + 1e-9 < next_s[0]:
            return
        next_s[0] += 0.1
        target = mission.update(now_s, state[:3], float(state[5]))
        log.append((now_s, target.index, target.phase, float(target.yaw_rad)))
        controller.tracker.set_pose(
            target.position_m, rpy_to_quaternion(0, 0, target.yaw_rad), "world", now_s, now_s
        )

    t, states, _ = simulate_first_order(
        controller, np.array([0.0, 0, 0.5, 0, 0, 0]), duration_s, on_update=on_update
    )
    return t, states, log


def test_square_mission_facing_travel_visits_hovers_and_finishes() -> None:
    corners = [(0.0, 0.0, 1.0), (1.0, 0.0, 1.0), (1.0, 1.0, 1.0), (0.0, 1.0, 1.0)]
    config = MissionConfig(
        waypoints=tuple(Waypoint(c, hover_s=1.0) for c in corners), yaw_policy=YawPolicy.FACE_TRAVEL
    )
    _t, states, log = fly(Mission(config), 40.0)
    assert log[-1][2] is MissionPhase.DONE
    assert np.linalg.norm(states[-1, :3] - corners[-1]) < 0.15
    # order of waypoints never goes back, every one was the goal
    indices = [entry[1] for entry in log]
    assert indices == sorted(indices)
    assert set(indices) == {0, 1, 2, 3}
    # yaw goal faces each leg: first leg is vertical (keeps heading 0), then 0, 90, 180 deg
    yaw_by_index = {entry[1]: entry[3] for entry in log}
    assert [math.degrees(yaw_by_index[k]) for k in range(4)] == pytest.approx(
        [0.0, 0.0, 90.0, 180.0], abs=1e-6
    )
    # hovered at each corner: within the acceptance radius for at least hover_s
    for corner in corners[:-1]:
        near = np.linalg.norm(states[:, :3] - corner, axis=1) <= 0.15
        assert np.count_nonzero(near) / 240.0 >= 1.0


def test_fixed_yaw_and_loop() -> None:
    config = MissionConfig(
        waypoints=(Waypoint((0.5, 0.0, 1.0), yaw_rad=0.5), Waypoint((0.0, 0.0, 1.0), yaw_rad=-0.5)),
        loop=True,
    )
    _, _, log = fly(Mission(config), 20.0)
    indices = [entry[1] for entry in log]
    assert indices.count(0) > 0
    assert 0 in indices[indices.index(1) :]
    assert {round(entry[3], 6) for entry in log} == {0.5, -0.5}
    assert all(entry[2] is not MissionPhase.DONE for entry in log)
