"""`scene_arm` as a real process: it publishes sim-time joint states and follows a
JointTrajectory and a gripper command sent over ROS 2."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from grade_scenes.pick.record import ARM_JOINT_NAMES
from grade_scenes.reach.robot import HOME_Q


@pytest.mark.ros
@pytest.mark.slow
def test_node_follows_a_trajectory_and_the_gripper_command(box_scene: Path, observer: Any) -> None:
    from builtin_interfaces.msg import Duration
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    node = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grade_scenes.node.arm_node",
            "--ros-args",
            "-p",
            f"scene_file:={box_scene}",
            "-p",
            "steps_per_tick:=2",
            "-r",
            "joint_states:=/arm_test/joint_states",
            "-r",
            "arm/joint_trajectory:=/arm_test/joint_trajectory",
            "-r",
            "gripper/command:=/arm_test/gripper",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    states: list[Any] = []
    target = HOME_Q.copy()
    target[0] += 0.3
    try:
        observer.create_subscription(JointState, "/arm_test/joint_states", states.append, 10)
        arm = observer.create_publisher(JointTrajectory, "/arm_test/joint_trajectory", 10)
        gripper = observer.create_publisher(Float64, "/arm_test/gripper", 10)
        executor = SingleThreadedExecutor(context=observer.context)
        executor.add_node(observer)
        deadline = time.monotonic() + 90.0
        sent = False
        done = False
        while time.monotonic() < deadline and node.poll() is None and not done:
            executor.spin_once(timeout_sec=0.1)
            if (
                states
                and not sent
                and arm.get_subscription_count()
                and gripper.get_subscription_count()
            ):
                # Reversed joint order: the node must match by name.
                msg = JointTrajectory()
                msg.joint_names = list(reversed(ARM_JOINT_NAMES))
                msg.points = [
                    JointTrajectoryPoint(
                        positions=[float(v) for v in target[::-1]],
                        time_from_start=Duration(sec=1, nanosec=0),
                    )
                ]
                arm.publish(msg)
                gripper.publish(Float64(data=0.0))
                sent = True
            if sent and states:
                last = states[-1]
                done = abs(last.position[0] - target[0]) < 0.01 and last.position[7] < 0.002
        executor.remove_node(observer)
        assert states, "no joint states within 90 s"
        assert done, f"not at the target: {states[-1].position if states else None}"
        stamps = [s.header.stamp.sec + 1e-9 * s.header.stamp.nanosec for s in states]
        assert np.all(np.diff(stamps) > 0)  # simulated time moves on
        assert list(states[-1].name[:7]) == list(ARM_JOINT_NAMES)
        np.testing.assert_allclose(states[-1].position[:7], target, atol=0.01)
    finally:
        node.terminate()
        output, _ = node.communicate(timeout=20)
    assert node.returncode in (0, -15), output
