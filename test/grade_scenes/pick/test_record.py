"""The arm's bag: joint states at the configured rate in simulated time, and the trajectory
commands it recorded are the ones the arm then followed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from rosbags.highlevel import AnyReader

from grade_scenes.pick.protocol import PickConfig, run_scene
from grade_scenes.pick.record import ARM_JOINT_NAMES, FINGER_JOINT_NAMES


@pytest.mark.slow
def test_bag_holds_joint_states_and_the_commands_that_were_executed(
    box_scene: Path, tmp_path: Path
) -> None:
    outcome = run_scene(box_scene, PickConfig(hold_s=0.5), bag_dir=tmp_path / "bag")
    assert outcome.objects[0].lifted
    with AnyReader([tmp_path / "bag"]) as reader:
        messages: dict[str, list[tuple[int, object]]] = {}
        for connection, stamp_ns, raw in reader.messages():
            msg = reader.deserialize(raw, connection.msgtype)
            messages.setdefault(connection.topic, []).append((stamp_ns, msg))
    states = messages["/joint_states"]
    stamps = np.array([s for s, _ in states])
    assert list(states[0][1].name) == [*ARM_JOINT_NAMES, *FINGER_JOINT_NAMES]  # type: ignore[attr-defined]
    np.testing.assert_array_equal(np.diff(stamps) % 20_000_000, 0)  # 50 Hz of simulated time
    assert len(messages["/clock"]) == len(states)
    openings = [m.data for _, m in messages["/gripper/command"]]  # type: ignore[attr-defined]
    assert 0.0 in openings  # closed on the box
    assert openings[-1] == pytest.approx(0.08)  # and opened over the bin
    # Each trajectory's last waypoint is where the arm is once its time has passed.
    for stamp_ns, trajectory in messages["/arm/joint_trajectory"]:
        last = trajectory.points[-1]  # type: ignore[attr-defined]
        end_ns = stamp_ns + last.time_from_start.sec * 1_000_000_000 + last.time_from_start.nanosec
        # the last sample of the 0.3 s the arm settles after each path
        after = [m for s, m in states if s <= end_ns + 300_000_000][-1]
        np.testing.assert_allclose(after.position[:7], last.positions, atol=0.02)  # type: ignore[attr-defined]
