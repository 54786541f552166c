"""`scene_arm`: the Panda in a tabletop scene as a live ROS 2 robot, in simulated time.

Loads a scene file into the pick-and-place world (`grade_scenes.pick.world`: the simulator's
tabletop model with robosuite's Panda and gripper) and steps its physics `rate_hz` times a
wall-clock second by 1 / rate_hz of simulated time (real time; `steps_per_tick` more per tick
runs faster). Publishes `/clock` (rosgraph_msgs/Clock) and `joint_states` (sensor_msgs/JointState,
franka_ros joint names, stamped in simulated time) every tick. Subscribes:

- `arm/joint_trajectory` (trajectory_msgs/JointTrajectory): the 7 arm joints by name (any
  order); the arm's joint-position loop follows the waypoints at their `time_from_start`,
  starting from where it is when the message arrives; a new message replaces the old one;
- `gripper/command` (std_msgs/Float64): the distance between the finger pads in metres
  (0.08 open, 0 closed: the fingers then squeeze with their 20 N).

Parameters: scene_file (a scene YAML from `grade scenes select`), rate_hz (50.0),
steps_per_tick (1).
"""

from __future__ import annotations

import mujoco
import numpy as np
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.node import Node
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64
from trajectory_msgs.msg import JointTrajectory

from grade_common.errors import ConfigError
from grade_common.node import spin as grade_spin
from grade_scenes.errors import ScenesError
from grade_scenes.pick.execute import Executor, TimedTrajectory
from grade_scenes.pick.record import ARM_JOINT_NAMES, FINGER_JOINT_NAMES
from grade_scenes.pick.world import BinSpec, build_pick_world
from grade_scenes.reach.robot import HOME_Q


class ArmNode(Node):
    def __init__(self) -> None:
        super().__init__("scene_arm")
        self.declare_parameter(
            "scene_file", "", ParameterDescriptor(description="tabletop scene YAML")
        )
        self.declare_parameter("rate_hz", 50.0)
        self.declare_parameter("steps_per_tick", 1)
        scene_file = str(self.get_parameter("scene_file").value)
        rate_hz = float(self.get_parameter("rate_hz").value)
        self.steps_per_tick = int(self.get_parameter("steps_per_tick").value)
        if not scene_file:
            raise ScenesError("scene_file: empty; give a scene YAML from `grade scenes select`")
        if not 1.0 <= rate_hz <= 1000.0:
            raise ConfigError(f"rate_hz: {rate_hz} outside [1, 1000]")
        if not 1 <= self.steps_per_tick <= 1000:
            raise ConfigError(f"steps_per_tick: {self.steps_per_tick} outside [1, 1000]")
        self.world = build_pick_world(scene_file, 0.002, BinSpec())
        d = self.world.data
        d.qpos[self.world.arm_qpos] = HOME_Q
        d.qpos[self.world.finger_qpos] = [0.04, -0.04]
        mujoco.mj_forward(self.world.model, d)
        self.control = Executor(self.world, max_speed_rad_s=1.0)
        self.physics_steps = max(1, round(1.0 / rate_hz / self.world.model.opt.timestep))
        self.trajectory: TimedTrajectory | None = None
        self.clock_pub = self.create_publisher(Clock, "/clock", 10)
        self.state_pub = self.create_publisher(JointState, "joint_states", 10)
        self.create_subscription(JointTrajectory, "arm/joint_trajectory", self._on_trajectory, 10)
        self.create_subscription(Float64, "gripper/command", self._on_gripper, 10)
        self.create_timer(1.0 / rate_hz, self._tick)

    def _on_trajectory(self, msg: JointTrajectory) -> None:
        names = list(msg.joint_names)
        if sorted(names) != sorted(ARM_JOINT_NAMES) or not msg.points:
            self.get_logger().warning(
                f"arm/joint_trajectory: joints {names} with {len(msg.points)} points; expected "
                f"points for {list(ARM_JOINT_NAMES)}; message dropped"
            )
            return
        order = [names.index(n) for n in ARM_JOINT_NAMES]
        times = np.array(
            [p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in msg.points]
        )
        positions = np.array([[p.positions[k] for k in order] for p in msg.points])
        if np.any(np.diff(times) <= 0) or times[0] <= 0:
            self.get_logger().warning("arm/joint_trajectory: times not increasing; dropped")
            return
        self.trajectory = TimedTrajectory(
            float(self.world.data.time), self.control.q_ref.copy(), times, positions
        )

    def _on_gripper(self, msg: Float64) -> None:
        self.control.command_gripper(float(msg.data))

    def _tick(self) -> None:
        for _ in range(self.steps_per_tick):
            for _ in range(self.physics_steps):
                if self.trajectory is not None:
                    self.control.q_ref = self.trajectory.at(float(self.world.data.time))
                self.control.step(watch=False)
        self._publish()

    def _publish(self) -> None:
        w, d = self.world, self.world.data
        stamp_ns = self.control.stamp_ns
        clock = Clock()
        clock.clock.sec, clock.clock.nanosec = divmod(stamp_ns, 1_000_000_000)
        self.clock_pub.publish(clock)
        state = JointState()
        state.header.stamp = clock.clock
        state.name = [*ARM_JOINT_NAMES, *FINGER_JOINT_NAMES]
        joints = np.concatenate([w.arm_qpos, w.finger_qpos])
        dofs = np.concatenate([w.arm_dofs, w.finger_dofs])
        state.position = [float(v) for v in d.qpos[joints]]
        state.velocity = [float(v) for v in d.qvel[dofs]]
        self.state_pub.publish(state)


main = grade_spin.node_main("scene_arm", ArmNode, config_errors=(ConfigError, ScenesError))

if __name__ == "__main__":
    import sys

    sys.exit(main())
