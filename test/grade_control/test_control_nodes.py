"""joint_controller and waypoint_mission as real processes, driven from this test process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

rclpy = pytest.importorskip("rclpy")

from builtin_interfaces.msg import Time  # noqa: E402
from geometry_msgs.msg import PoseStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rcl_interfaces.msg import Parameter, ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rosgraph_msgs.msg import Clock  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def start(module: str, *ros_args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", module, "--ros-args", *ros_args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=os.environ.copy(),
    )


def stop(process: subprocess.Popen[str]) -> str:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        out, _ = process.communicate(timeout=60)  # shutdown is slow on a busy machine
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
    return out


class Harness:
    """A node of this test process with its own context and a spin helper."""

    def __init__(self) -> None:
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = Node("control_test", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_until(
        self, done: Callable[[], bool], timeout_s: float, tick: Callable[[], None] | None = None
    ) -> bool:
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if tick is not None:
                tick()
            self.executor.spin_once(timeout_sec=0.01)
            if done():
                return True
        return False

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def harness() -> Iterator[Harness]:
    h = Harness()
    yield h
    h.close()


def odometry(node: Node, x: float, y: float, z: float, stamp: Any = None) -> Odometry:
    msg = Odometry()
    msg.header.stamp = stamp if stamp is not None else node.get_clock().now().to_msg()
    msg.header.frame_id = "uav/odom"
    msg.child_frame_id = "uav/base_link"
    msg.pose.pose.position.x, msg.pose.pose.position.y, msg.pose.pose.position.z = x, y, z
    msg.pose.pose.orientation.w = 1.0
    return msg


def pose_setpoint(node: Node, x: float, y: float, z: float, frame: str = "world") -> PoseStamped:
    msg = PoseStamped()
    msg.header.stamp = node.get_clock().now().to_msg()
    msg.header.frame_id = frame
    msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = x, y, z
    msg.pose.orientation.w = 1.0
    return msg


def set_parameter(h: Harness, name: str, value: float) -> Any:
    client = h.node.create_client(SetParameters, "/joint_controller/set_parameters")
    assert client.wait_for_service(timeout_sec=10.0)
    request = SetParameters.Request()
    request.parameters = [
        Parameter(
            name=name, value=ParameterValue(type=ParameterType.PARAMETER_DOUBLE, double_value=value)
        )
    ]
    future = client.call_async(request)
    assert h.spin_until(future.done, 10.0)
    return future.result().results[0]


def test_joint_controller_commands_runtime_parameters_and_rejection(
    harness: Harness, repo_root: Path
) -> None:
    process = start(
        "grade_control.node.joint_controller",
        "--params-file",
        str(repo_root / "config" / "controller_uav.yaml"),
    )
    h = harness
    commands: list[JointState] = []
    h.node.create_subscription(JointState, "/uav/joint_commands", commands.append, 10)
    odom_pub = h.node.create_publisher(Odometry, "/uav/odom", 10)
    pose_pub = h.node.create_publisher(PoseStamped, "/uav/setpoint/pose", 10)
    goal = [2.0, 0.0, 1.5]

    def tick() -> None:
        odom_pub.publish(odometry(h.node, 0.0, 0.0, 1.0))
        pose_pub.publish(pose_setpoint(h.node, *goal))

    def moving() -> bool:
        return bool(commands) and commands[-1].velocity[0] > 0.4

    try:
        assert h.spin_until(moving, 20.0, tick), stop(process)
        last = commands[-1]
        assert list(last.name) == ["x", "y", "z", "roll", "pitch", "yaw"]
        vx, vy, vz, vroll, vpitch, vyaw = last.velocity
        assert 0.0 < vx <= 0.5
        assert 0.0 < vz <= 0.5
        assert vy == vroll == vpitch == vyaw == 0.0
        assert all(abs(v) <= 0.7 for msg in commands for v in msg.velocity)
        # rate: about 50 Hz
        count = len(commands)
        h.spin_until(lambda: False, 1.0, tick)
        assert 30 <= len(commands) - count <= 70

        # runtime parameters: a bad gain is refused with the reason, a good limit is applied
        refused = set_parameter(h, "axes.x.kp", -1.0)
        assert not refused.successful
        assert "axes.x.kp" in refused.reason
        accepted = set_parameter(h, "axes.x.velocity_limit", 0.2)
        assert accepted.successful, accepted.reason
        count = len(commands)
        h.spin_until(lambda: len(commands) > count + 10, 5.0, tick)
        assert commands[-1].velocity[0] == pytest.approx(0.2)

        # a setpoint in an unknown frame is rejected: the robot holds (zero command)
        goal_frame = "map"

        def tick_bad() -> None:
            odom_pub.publish(odometry(h.node, 0.0, 0.0, 1.0))
            pose_pub.publish(pose_setpoint(h.node, *goal, frame=goal_frame))

        count = len(commands)
        assert h.spin_until(
            lambda: len(commands) > count + 10 and all(v == 0.0 for v in commands[-1].velocity),
            5.0,
            tick_bad,
        )
    finally:
        output = stop(process)
    assert process.returncode == 0, output
    assert "frame 'map' is unknown" in output
    assert "holding position" in output


def test_joint_controller_uses_simulated_time(harness: Harness, repo_root: Path) -> None:
    process = start(
        "grade_control.node.joint_controller",
        "--params-file",
        str(repo_root / "config" / "controller_uav.yaml"),
        "-p",
        "use_sim_time:=true",
    )
    h = harness
    commands: list[JointState] = []
    h.node.create_subscription(JointState, "/uav/joint_commands", commands.append, 10)
    clock_pub = h.node.create_publisher(Clock, "/clock", 10)
    odom_pub = h.node.create_publisher(Odometry, "/uav/odom", 10)
    sim_ns = [1000 * 10**9]

    def tick() -> None:
        sim_ns[0] += 4_166_667  # 240 Hz
        stamp = Time(sec=sim_ns[0] // 10**9, nanosec=sim_ns[0] % 10**9)
        clock_pub.publish(Clock(clock=stamp))
        odom_pub.publish(odometry(h.node, 0.0, 0.0, 1.0, stamp))

    try:
        assert h.spin_until(lambda: len(commands) >= 5, 20.0, tick), stop(process)
    finally:
        output = stop(process)
    stamps = [m.header.stamp.sec + m.header.stamp.nanosec * 1e-9 for m in commands[-3:]]
    assert all(1000.0 <= s <= sim_ns[0] * 1e-9 for s in stamps), (stamps, output)


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        (("yaw: {kp: 1.2", "yaw: {kp: -1.0"), "axes.yaw.kp = -1.0 is invalid: must be >= 0"),
        (("rate_hz: 50.0", "rate_hz: 0.0"), "rate_hz = 0.0 is invalid"),
        (("x: {kp: 1.2", "x: {kpp: 1.2"), "['axes.x.kpp'] are unknown"),
    ],
)
def test_bad_params_file_fails_at_start_naming_the_parameter(
    tmp_path: Path, repo_root: Path, edit: tuple[str, str], match: str
) -> None:
    text = (repo_root / "config" / "controller_uav.yaml").read_text()
    assert edit[0] in text
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace(edit[0], edit[1], 1))
    process = start("grade_control.node.joint_controller", "--params-file", str(bad))
    out, _ = process.communicate(timeout=30)
    assert process.returncode == 2, out
    assert match in out


def test_waypoint_mission_publishes_the_first_waypoint(harness: Harness, repo_root: Path) -> None:
    process = start(
        "grade_control.node.waypoint_mission",
        "-p",
        f"mission_file:={repo_root / 'config' / 'mission_uav.yaml'}",
    )
    h = harness
    goals: list[PoseStamped] = []
    h.node.create_subscription(PoseStamped, "/uav/setpoint/pose", goals.append, 10)
    odom_pub = h.node.create_publisher(Odometry, "/uav/odom", 10)
    try:
        assert h.spin_until(
            lambda: len(goals) >= 3, 20.0, lambda: odom_pub.publish(odometry(h.node, 0.0, 0.0, 0.5))
        ), stop(process)
    finally:
        output = stop(process)
    goal = goals[-1]
    assert goal.header.frame_id == "world"
    assert (goal.pose.position.x, goal.pose.position.y, goal.pose.position.z) == (0.0, 0.0, 1.2)
    assert process.returncode == 0, output


def test_explorer_maps_depth_and_sends_a_path_to_a_frontier(harness: Harness) -> None:
    from nav_msgs.msg import OccupancyGrid
    from nav_msgs.msg import Path as PathMsg
    from sensor_msgs.msg import CameraInfo, Image
    from test_control_explorer import HEIGHT, WIDTH, K, camera_pose, render_box_depth

    process = start(
        "grade_control.node.explorer",
        "-p",
        "map_rate_hz:=10.0",
        "-p",
        "replan_period_s:=0.5",
        "-p",
        "pixel_stride:=4",
    )
    h = harness
    paths: list[PathMsg] = []
    maps: list[OccupancyGrid] = []
    h.node.create_subscription(PathMsg, "/uav/setpoint/path", paths.append, 10)
    h.node.create_subscription(OccupancyGrid, "/uav/explorer/map", maps.append, 10)
    depth_pub = h.node.create_publisher(Image, "/uav/camera/depth/image_raw", 10)
    info_pub = h.node.create_publisher(CameraInfo, "/uav/camera/camera_info", 10)
    pose_pub = h.node.create_publisher(PoseStamped, "/uav/camera/pose", 10)
    odom_pub = h.node.create_publisher(Odometry, "/uav/odom", 10)
    pose = camera_pose(0.0, 0.0, 1.2, 0.0)
    depth = render_box_depth(pose).astype("<f4")

    def tick() -> None:
        stamp = h.node.get_clock().now().to_msg()
        image = Image(
            height=HEIGHT, width=WIDTH, encoding="32FC1", step=WIDTH * 4, data=depth.tobytes()
        )
        image.header.stamp = stamp
        info = CameraInfo(height=HEIGHT, width=WIDTH, k=K.ravel().tolist())
        camera = PoseStamped()
        camera.header.stamp = stamp
        camera.header.frame_id = "world"
        camera.pose.position.z = 1.2
        # optical frame looking along +x: rotation matrix columns -> quaternion (x, y, z, w)
        camera.pose.orientation.x, camera.pose.orientation.y = -0.5, 0.5
        camera.pose.orientation.z, camera.pose.orientation.w = -0.5, 0.5
        pose_pub.publish(camera)
        info_pub.publish(info)
        depth_pub.publish(image)
        odom_pub.publish(odometry(h.node, 0.0, 0.0, 1.2))

    try:
        # The map and the path come from two timers: wait for both (a busy machine may deliver
        # the first path before the first map).
        assert h.spin_until(lambda: bool(paths) and bool(maps), 20.0, tick), stop(process)
    finally:
        output = stop(process)
    from grade_control.node.explorer import pose_matrix

    camera = PoseStamped()
    camera.pose.position.z = 1.2
    camera.pose.orientation.x, camera.pose.orientation.y = -0.5, 0.5
    camera.pose.orientation.z, camera.pose.orientation.w = -0.5, 0.5
    assert np.allclose(pose_matrix(camera.pose), pose)  # published pose = rendered pose
    path = paths[-1]
    assert path.header.frame_id == "world"
    assert len(path.poses) >= 1
    xy = np.array([[p.pose.position.x, p.pose.position.y] for p in path.poses])
    assert np.all(np.abs(xy) < 3.0)  # inside the room
    assert all(p.pose.position.z == 1.2 for p in path.poses)
    assert maps
    assert any(v == 100 for v in maps[-1].data)  # walls seen
    assert process.returncode == 0, output


def test_lockstep_answers_every_state_with_its_stamp(harness: Harness, repo_root: Path) -> None:
    process = start(
        "grade_control.node.joint_controller",
        "--params-file",
        str(repo_root / "config" / "controller_uav.yaml"),
        "-p",
        "lockstep:=true",
    )
    h = harness
    commands: list[JointState] = []
    h.node.create_subscription(JointState, "/uav/joint_commands", commands.append, 10)
    odom_pub = h.node.create_publisher(Odometry, "/uav/odom", 10)
    pose_pub = h.node.create_publisher(PoseStamped, "/uav/setpoint/pose", 10)
    k = [0]
    sent: list[int] = []

    def answered() -> bool:
        return bool(sent) and any(_ns(m.header.stamp) == sent[-1] for m in commands)

    last_send = [0.0]

    def tick() -> None:
        if sent and not answered():
            # like the simulator: wait for the answer before the next state (the first states
            # may go out before discovery has matched the controller: repeat them)
            if time.monotonic() - last_send[0] < 0.5:
                return
        else:
            k[0] += 1
        last_send[0] = time.monotonic()
        stamp_ns = 50 * 10**9 + k[0] * 16_666_667  # 60 Hz odometry in simulated time
        stamp = Time(sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9)
        goal = pose_setpoint(h.node, 1.0, 0.0, 1.0)
        goal.header.stamp = stamp
        pose_pub.publish(goal)
        odom_pub.publish(odometry(h.node, 0.0, 0.0, 1.0, stamp))
        if not sent or sent[-1] != stamp_ns:
            sent.append(stamp_ns)

    try:
        assert h.spin_until(lambda: len(sent) >= 30 and answered(), 30.0, tick), stop(process)
    finally:
        output = stop(process)
    stamps = {_ns(m.header.stamp) for m in commands}
    assert set(sent[:-1]) <= stamps  # one command per state, stamped with it
    assert commands[-1].velocity[0] > 0.0
    assert process.returncode == 0, output


def _ns(stamp: Any) -> int:
    return int(stamp.sec) * 10**9 + int(stamp.nanosec)
