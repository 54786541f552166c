"""CommandStore: free-running hold on stale commands, lockstep waiting, resending and timeouts."""

from __future__ import annotations

import numpy as np
import pytest

from grade_sim.sim.commands import CommandStore, LockstepTimeoutError

JOINTS = ("x", "y", "z", "roll", "pitch", "yaw")


def test_free_running_applies_latest_and_holds_when_stale() -> None:
    store = CommandStore(timeout_s=0.5)
    assert store.joint_velocities("uav1", JOINTS, 0) is None
    assert store.update("uav1", 1_000_000_000, ["x", "yaw"], [0.3, -0.1], JOINTS) is None
    np.testing.assert_allclose(
        store.joint_velocities("uav1", JOINTS, 1_200_000_000), [0.3, 0, 0, 0, 0, -0.1]
    )
    assert store.joint_velocities("uav1", JOINTS, 1_600_000_000) is None  # stale: hold


@pytest.mark.parametrize(
    ("names", "values", "reason"),
    [
        (["x", "wheel"], [0.1, 0.2], "unknown joint"),
        (["x"], [float("nan")], "non-finite"),
        (["x", "y"], [0.1], "2 joint names but 1 velocities"),
    ],
)
def test_bad_commands_are_rejected_with_a_reason(
    names: list[str], values: list[float], reason: str
) -> None:
    store = CommandStore()
    got = store.update("uav1", 0, names, values, JOINTS)
    assert got is not None
    assert reason in got
    assert store.joint_velocities("uav1", JOINTS, 0) is None


def test_lockstep_waits_for_the_answer_to_the_required_state() -> None:
    store = CommandStore(lockstep=True, lockstep_timeout_s=5.0)
    store.require("uav1", 20_000_000)
    resent: list[str] = []

    def controller() -> None:
        store.update("uav1", 10_000_000, ["x"], [9.0], JOINTS)  # answer to an older state
        store.update("uav1", 20_000_000, ["x"], [0.2], JOINTS)

    def resend(robot: str) -> None:
        # The controller answers the resent state (the store releases its lock around resend):
        # no timer racing the 0.5 s resend period, however slow the machine.
        resent.append(robot)
        controller()

    store.resend = resend
    got = store.joint_velocities("uav1", JOINTS, 24_000_000)
    assert got is not None
    assert got[0] == pytest.approx(0.2)
    assert resent == ["uav1"]  # after 0.5 s without an answer the state was sent again


def test_lockstep_timeout_names_the_robot() -> None:
    store = CommandStore(lockstep=True, lockstep_timeout_s=0.2)
    store.require("uav1", 0)
    with pytest.raises(LockstepTimeoutError, match="robot 'uav1'"):
        store.joint_velocities("uav1", JOINTS, 4_000_000)
