"""`sim_node`: the simulator as a ROS 2 node.

Runs a scenario (parameters below), publishes /clock and every sensor in simulated time under each
robot's namespace, subscribes to /<robot>/joint_commands, and records the run directory (bag,
ground truth, experiment record) exactly as `grade run` does. Messages are encoded once by the
core; the same CDR bytes are published and recorded.
"""

from __future__ import annotations

import contextlib
import enum
import importlib
import json
import math
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import rclpy
from geometry_msgs.msg import PointStamped
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import (
    DurabilityPolicy,
    HistoryPolicy,
    QoSProfile,
    ReliabilityPolicy,
)
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Header

from grade_common.errors import ConfigError, GradeError
from grade_common.names import ROS_NAME_PATTERN
from grade_common.schema import KEY_PATH, bounds, from_mapping, text
from grade_common.signals import stop_flag, stopped_exit_code
from grade_people.crowd import Crowd
from grade_sim.actors.people_group import People
from grade_sim.config.scenario import FramesConfig, MotionMode, load_scenario
from grade_sim.robots.model import robot_model
from grade_sim.scene import build_scene
from grade_sim.sensors.messages import QosPolicy, QosProfile, TopicSpec
from grade_sim.sensors.observer import SimObserver
from grade_sim.sim.acks import AckGate, parse_ack_links
from grade_sim.sim.commands import CommandStore, LockstepTimeoutError
from grade_sim.sim.pacing import PacedSender, PaceReport
from grade_sim.sim.run import SimulatorSpec, run_scenario


def rclpy_qos(policy: QosPolicy) -> QoSProfile:
    """The rclpy profile of a row of the simulator's QoS table."""
    return QoSProfile(
        depth=policy.depth,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE
        if policy.reliable
        else ReliabilityPolicy.BEST_EFFORT,
        durability=(
            DurabilityPolicy.TRANSIENT_LOCAL
            if policy.transient_local
            else DurabilityPolicy.VOLATILE
        ),
    )


QOS = {profile: rclpy_qos(profile.policy) for profile in QosProfile}

IMAGE_MSGTYPE = "sensor_msgs/msg/Image"
# The log line that carries the per-topic counts of published messages at the end of a run
# (`grade bench delivery` compares subscribers' counts with it).
PUBLISHED_COUNTS_PREFIX = "published counts: "


class Reliability(enum.Enum):
    """A sensor publisher's reliability. A reliable publisher matches reliable and best-effort
    subscribers alike (RViz's default and the sensor-data preset); best effort matches only
    best-effort subscribers."""

    RELIABLE = "reliable"
    BEST_EFFORT = "best_effort"


_RELIABILITY = {
    Reliability.RELIABLE: ReliabilityPolicy.RELIABLE,
    Reliability.BEST_EFFORT: ReliabilityPolicy.BEST_EFFORT,
}

_DOC = "doc"


def _parameter(default: Any, doc: str, check: dict[str, Any] | None = None) -> Any:
    """A parameter field: its default, its description (for `ros2 param describe`), its check."""
    return field(default=default, metadata={**(check or {}), _DOC: doc})


_TEXT = text(allow_empty=True)
_NONNEGATIVE = bounds(0.0)
# A frame name: a ROS name token (grade_common.names), or "" to keep the scenario's.
_FRAME = text(ROS_NAME_PATTERN, allow_empty=True)


@dataclass(frozen=True)
class SimNodeParameters:
    """The node's ROS 2 parameters, validated once at start-up.

    ROS 2 parameters cannot be unset, so -1 stands for "keep the scenario's value".
    """

    scenario: str = _parameter("", "scenario YAML file (required)", _TEXT)
    output_dir: str = _parameter(
        "", "new run directory for bag + ground truth; empty: publish only", _TEXT
    )
    overwrite: bool = _parameter(
        False, "replace an existing output_dir once the new run is complete"
    )
    duration_s: float = _parameter(-1.0, "override the scenario's duration (> 0), -1: keep")
    seed: int = _parameter(-1, "override the scenario's seed (>= 0), -1: keep", bounds(-1))
    robot_count: int = _parameter(
        -1, "simulate the scenario's first N robots (1..number of robots), -1: all"
    )
    realtime: bool = _parameter(False, "pace the simulation to wall-clock time")
    pace_publishing: bool = _parameter(
        True,
        "realtime (not lockstep): publish each message when the wall clock reaches its stamp, "
        "evenly; false: as soon as it is simulated (in bursts after a slow camera frame)",
    )
    pace_delay_s: float = _parameter(
        0.25,
        "paced publishing: wall-clock seconds between the simulation and its publishing, a "
        "buffer that absorbs slow frames",
        bounds(0.0, 10.0),
    )
    command_timeout_s: float = _parameter(
        0.5, "hold still when the last joint command is older (sim time)", _NONNEGATIVE
    )
    lockstep: bool = _parameter(
        False, "wait at each odometry sample for the controller's command (reproducible)"
    )
    lockstep_timeout_s: float = _parameter(
        10.0, "wall-clock seconds to wait for a lockstep command", _NONNEGATIVE
    )
    lockstep_acks: str = _parameter(
        "",
        "lockstep: INPUT:ACK topic pairs, comma-separated; each message on INPUT waits for the "
        "previous one's stamp on ACK (std_msgs/Header) from a follower such as the explorer",
        _TEXT,
    )
    start_delay_s: float = _parameter(
        1.0, "wall-clock seconds to let subscribers connect before stepping", _NONNEGATIVE
    )
    # _parameter returns a dataclasses.field (an immutable enum default): RUF009 cannot tell.
    image_qos: Reliability = _parameter(  # noqa: RUF009
        Reliability.RELIABLE,
        "reliability of the image topics (rgb, depth, instance): reliable | best_effort",
    )
    image_qos_depth: int = _parameter(
        30, "history depth of the image topics (30: one second at 30 Hz)", bounds(1, 1000)
    )
    sensor_qos: Reliability = _parameter(  # noqa: RUF009
        Reliability.RELIABLE,
        "reliability of the other sensor topics (imu, odom, joint_states, camera_info, pose): "
        "reliable | best_effort",
    )
    sensor_qos_depth: int = _parameter(
        100, "history depth of the other sensor topics (0.4 s of IMU at 240 Hz)", bounds(1, 10000)
    )

    world_frame: str = _parameter(
        "", "fixed frame of the ground truth (e.g. world or map); empty: the scenario's", _FRAME
    )
    odom_frame: str = _parameter(
        "", "odometry frame, per robot <robot>/<odom_frame>; empty: the scenario's", _FRAME
    )
    base_frame: str = _parameter(
        "", "body frame, per robot <robot>/<base_frame>; empty: the scenario's", _FRAME
    )
    publish_world_odom: bool = _parameter(
        True,
        "publish the static world -> <robot>/odom link; false: a SLAM stack owns map -> odom",
    )

    def validate(self, path: str) -> None:
        if not self.scenario:
            raise ConfigError("parameter 'scenario' is required: the path of a scenario YAML file")
        if self.duration_s != -1.0 and self.duration_s <= 0:
            raise ConfigError(
                f"parameter 'duration_s': {self.duration_s} must be > 0 (or -1 to keep)"
            )
        parse_ack_links(self.lockstep_acks)

    @property
    def paced(self) -> bool:
        """Whether live messages leave at their stamps (realtime; lockstep sets its own pace)."""
        return self.realtime and self.pace_publishing and not self.lockstep

    def sensor_qos_profile(self, topic: TopicSpec) -> QoSProfile:
        """The publisher QoS of a sensor topic (the core marks them QosProfile.SENSOR)."""
        image = topic.msgtype == IMAGE_MSGTYPE
        return QoSProfile(
            depth=self.image_qos_depth if image else self.sensor_qos_depth,
            reliability=_RELIABILITY[self.image_qos if image else self.sensor_qos],
            history=HistoryPolicy.KEEP_LAST,
        )

    def publisher_qos(self, topic: TopicSpec) -> QoSProfile:
        """The publisher QoS of any topic: sensor topics as configured, the rest fixed."""
        return self.sensor_qos_profile(topic) if topic.qos is QosProfile.SENSOR else QOS[topic.qos]

    def frames(self, scenario: FramesConfig) -> FramesConfig:
        """The scenario's frames with the names these parameters set and the world -> odom
        choice (always the parameter's: a launch argument decides it)."""
        names = {"world": self.world_frame, "odom": self.odom_frame, "base": self.base_frame}
        return replace(
            scenario,
            **{key: value for key, value in names.items() if value},
            publish_world_odom=self.publish_world_odom,
        )

    def scenario_overrides(self) -> dict[str, Any]:
        """The scenario keys these parameters override."""
        overrides: dict[str, Any] = {"realtime": self.realtime}
        if self.duration_s != -1.0:
            overrides["duration_s"] = self.duration_s
        if self.seed != -1:
            overrides["seed"] = self.seed
        return overrides


# Scenario-style phrasing naming the parameter: `parameter 'seed': value -2 is out of range; ...`.
WORDING = replace(KEY_PATH, root="parameters", name="parameter '{path}'")


def _msg_class(msgtype: str) -> Any:
    pkg, _, name = msgtype.split("/")
    return getattr(importlib.import_module(f"{pkg}.msg"), name)


class _Publisher:
    """SimObserver publishing the core's CDR bytes on ROS topics."""

    def __init__(
        self,
        node: Node,
        topics: list[TopicSpec],
        commands: CommandStore,
        odom_topics: dict[str, str],
        qos: Callable[[TopicSpec], QoSProfile] = lambda t: QOS[t.qos],
        acks: AckGate | None = None,
    ) -> None:
        self._pubs = {
            t.name: node.create_publisher(_msg_class(t.msgtype), t.name, qos(t)) for t in topics
        }
        self.published = {t.name: 0 for t in topics}
        self._commands = commands
        self._odom_robot = {topic: robot for robot, topic in odom_topics.items()}
        self._odom_topic = dict(odom_topics)
        self._last_state: dict[str, bytes] = {}
        commands.resend = self.resend_state
        self._acks = acks
        self._paced: PacedSender[tuple[str, bytes]] | None = None
        self._logger = node.get_logger()
        if acks is not None:
            unknown = [
                link.input_topic for link in acks.links if link.input_topic not in self._pubs
            ]
            if unknown:
                raise ConfigError(
                    f"parameter 'lockstep_acks': the simulator publishes no topic {unknown}; "
                    f"it publishes {sorted(self._pubs)}"
                )
            acks.resend = lambda topic, cdr: self._pubs[topic].publish(cdr)

    def on_message(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        if self._acks is not None:
            self._acks.before_publish(topic.name, stamp_ns, cdr)
        if self._paced is None:
            self._send((topic.name, cdr))
        else:
            self._paced.put(stamp_ns, (topic.name, cdr))
        robot = self._odom_robot.get(topic.name)
        if robot is not None:
            self._last_state[robot] = cdr
            self._commands.require(robot, stamp_ns)

    def _send(self, message: tuple[str, bytes]) -> None:
        topic, cdr = message
        self._pubs[topic].publish(cdr)
        self.published[topic] += 1

    def pace(self, delay_s: float) -> None:
        """Publish each message when the wall clock reaches its stamp (grade_sim.sim.pacing),
        `delay_s` after the first; say so in the log when the simulator cannot keep pace."""
        self._paced = PacedSender(
            self._send, delay_s, on_behind=self._log_behind, name="sim-paced-publisher"
        )

    def _log_behind(self, report: PaceReport) -> None:
        self._logger.warning(f"live publishing cannot keep real-time pace: {report.describe()}")

    def resend_state(self, robot: str) -> None:
        """Publish a robot's last lockstep state again (its answer is overdue)."""
        if robot in self._last_state:
            self._pubs[self._odom_topic[robot]].publish(self._last_state[robot])

    def wait_for_controllers(self, node: Node, stop: threading.Event, timeout_s: float) -> None:
        """Lockstep: block until every commanded robot's odometry has a subscriber and its
        joint_commands a publisher, so the first state is not sent into the void."""
        deadline = time.monotonic() + timeout_s
        for robot, topic in self._odom_topic.items():
            while not stop.is_set():
                if (
                    self._pubs[topic].get_subscription_count() > 0
                    and node.count_publishers(f"/{robot}/joint_commands") > 0
                ):
                    break
                if time.monotonic() > deadline:
                    raise LockstepTimeoutError(
                        f"lockstep: no controller for robot {robot!r} within {timeout_s} s "
                        f"(nothing subscribes to {topic} or publishes /{robot}/joint_commands)"
                    )
                stop.wait(0.05)
        for link in self._acks.links if self._acks is not None else ():
            while not stop.is_set():
                if (
                    self._pubs[link.input_topic].get_subscription_count() > 0
                    and node.count_publishers(link.ack_topic) > 0
                ):
                    break
                if time.monotonic() > deadline:
                    raise LockstepTimeoutError(
                        f"lockstep: no follower within {timeout_s} s (nothing subscribes to "
                        f"{link.input_topic} or publishes {link.ack_topic})"
                    )
                stop.wait(0.05)

    def on_camera(self, sample: object) -> None:
        return None

    def wants_messages(self, topics: tuple[TopicSpec, ...]) -> bool:
        # Nobody subscribed: the frame is not rendered for ROS (a lockstep follower subscribes
        # before the run starts, so it gets every frame).
        return any(self._pubs[t.name].get_subscription_count() > 0 for t in topics)

    def wants_sample(self, robot: str, sensor: str, step: int, stamp_ns: int) -> bool:
        return False

    def on_step(self, step: int, stamp_ns: int, robot_states: object) -> None:
        return None

    def close(self, status: str) -> None:
        """Paced: publish what still waits (at its time; at once when the run did not
        complete), so the counts logged afterwards are final."""
        if self._paced is not None:
            report = self._paced.close(flush_now=status != "complete")
            self._paced = None
            self._logger.info(f"paced publishing: {report.describe()}")


class SimNode(Node):
    def __init__(self) -> None:
        super().__init__("sim")
        for f in fields(SimNodeParameters):
            # Numbers accept ints and floats alike (`duration_s:=3` from a launch file is an int).
            numeric = isinstance(f.default, float)
            default = f.default.value if isinstance(f.default, enum.Enum) else f.default
            self.declare_parameter(
                f.name,
                default,
                ParameterDescriptor(description=f.metadata.get(_DOC, ""), dynamic_typing=numeric),
            )
        p = from_mapping(
            SimNodeParameters,
            {f.name: self.get_parameter(f.name).value for f in fields(SimNodeParameters)},
            wording=WORDING,
        )
        self.scenario = load_scenario(p.scenario, p.scenario_overrides())
        self.scenario = replace(self.scenario, frames=p.frames(self.scenario.frames))
        n_robots = len(self.scenario.robots)
        if p.robot_count != -1:
            if not 1 <= p.robot_count <= n_robots:
                raise GradeError(
                    f"parameter 'robot_count': {p.robot_count} is out of range; allowed 1.."
                    f"{n_robots} (the robots of {p.scenario}) or -1 for all"
                )
            self.scenario = replace(self.scenario, robots=self.scenario.robots[: p.robot_count])
        self.params = p
        self.commands = CommandStore(p.command_timeout_s, p.lockstep, p.lockstep_timeout_s)
        links = parse_ack_links(p.lockstep_acks) if p.lockstep else ()
        self.acks = AckGate(links, p.lockstep_timeout_s) if links else None
        for link in links:
            self.create_subscription(
                Header,
                link.ack_topic,
                lambda msg, t=link.ack_topic: self._on_ack(t, msg),
                QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE),
            )
        self._joints: dict[str, tuple[str, ...]] = {}
        for robot in self.scenario.robots:
            self._joints[robot.name] = robot_model(robot).joint_names
            if robot.motion.mode is MotionMode.COMMANDS:
                self.create_subscription(
                    JointState,
                    f"/{robot.name}/joint_commands",
                    lambda msg, r=robot.name: self._on_command(r, msg),
                    10,
                )
        self.get_logger().info(
            f"scenario {p.scenario} (seed {self.scenario.seed}, {self.scenario.duration_s} s, "
            f"{len(self.scenario.robots)} robot(s)), lockstep={p.lockstep}"
            + (f", acknowledged by followers: {p.lockstep_acks}" if links else "")
        )

    def _on_ack(self, ack_topic: str, msg: Header) -> None:
        if self.acks is not None:
            self.acks.acknowledge(ack_topic, msg.stamp.sec * 1_000_000_000 + msg.stamp.nanosec)

    def _on_command(self, robot: str, msg: JointState) -> None:
        stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        reason = self.commands.update(
            robot, stamp_ns, list(msg.name), list(msg.velocity), self._joints[robot]
        )
        if reason is not None:
            self.get_logger().warning(
                f"/{robot}/joint_commands rejected: {reason}", throttle_duration_sec=1.0
            )


def goal_topic(person: str) -> str:
    """Where a person's goal is published (reactive people only)."""
    return f"/people/{person}/goal"


def _steer_people(node: SimNode, crowd: Crowd, people: list[str]) -> None:
    """Subscribe /people/<name>/goal (geometry_msgs/PointStamped, world frame) per person."""
    world = node.scenario.frames.world

    def on_goal(index: int, name: str, msg: PointStamped) -> None:
        frame = msg.header.frame_id
        if frame not in ("", world):
            node.get_logger().warning(
                f"{goal_topic(name)}: frame {frame!r} ignored; goals are in {world!r}",
                throttle_duration_sec=1.0,
            )
            return
        x, y = float(msg.point.x), float(msg.point.y)
        if not (math.isfinite(x) and math.isfinite(y)):
            node.get_logger().warning(f"{goal_topic(name)}: non-finite goal ({x}, {y}) ignored")
            return
        crowd.set_goal(index, (x, y))
        node.get_logger().info(f"{name}: new goal ({x:.2f}, {y:.2f})")

    for i, name in enumerate(people):
        node.create_subscription(
            PointStamped,
            goal_topic(name),
            lambda msg, i=i, name=name: on_goal(i, name, msg),
            10,
        )


def publishing_observer(node_name: str, topics: list[TopicSpec]) -> tuple[Node, SimObserver]:
    """A fresh rclpy node and an observer publishing every message on it (benchmarks)."""
    rclpy.init()
    node = rclpy.create_node(node_name)
    return node, _Publisher(node, topics, CommandStore(), {})


def _wait_until_ready(node: SimNode, publisher: _Publisher, stop: threading.Event) -> None:
    """Lockstep: wait for the controllers; then give subscribers (recorders, controllers
    started alongside) time to match publishers. A stop request ends the wait early; the run
    then ends as interrupted."""
    if node.commands.lockstep:
        publisher.wait_for_controllers(node, stop, node.params.lockstep_timeout_s)
    stop.wait(node.params.start_delay_s)


def _run(node: SimNode) -> int:
    scenario = node.scenario
    odom_topics = {
        r.name: f"/{r.name}/odom" for r in scenario.robots if r.motion.mode is MotionMode.COMMANDS
    }
    scene = build_scene(scenario).started()  # the crowd steered below is the run's
    people = scene.group(People)
    if people.crowd is not None:
        _steer_people(node, people.crowd, [p.name for p in people.specs])
    elif people.specs:
        node.get_logger().info(
            "people are scripted (people.mode: scripted): /people/<name>/goal is not served"
        )
    spec = SimulatorSpec(scene, command_source=node.commands)
    publisher = _Publisher(
        node,
        spec.streams.topics(),
        node.commands,
        odom_topics,
        node.params.publisher_qos,
        node.acks,
    )
    if node.params.paced:
        publisher.pace(node.params.pace_delay_s)
    spec = spec.with_observers(publisher)
    out = node.params.output_dir
    if out:
        result = run_scenario(
            spec,
            Path(out),
            overwrite=node.params.overwrite,
            inputs=[node.params.scenario] if node.params.scenario else [],
            before_run=lambda: _wait_until_ready(node, publisher, spec.stop_event),
        )
        summary = result.summary
        node.get_logger().info(
            f"run {summary['status']}: {result.path} "
            f"(real-time factor {summary['real_time_factor']})"
        )
        _log_published(node, publisher)
        return 0
    # Publish only: no recorders, so no run directory.
    sim = spec.build()
    try:
        with stop_flag(sim.stop_event):
            _wait_until_ready(node, publisher, sim.stop_event)
            stats = sim.run()
    finally:
        sim.finish()
    if sim.failure is not None:
        raise sim.failure
    node.get_logger().info(f"run {stats.status} (real-time factor {stats.real_time_factor:.2f})")
    _log_published(node, publisher)
    return 0


def _log_published(node: SimNode, publisher: _Publisher) -> None:
    """One log line with the number of messages published per topic (for delivery checks)."""
    node.get_logger().info(PUBLISHED_COUNTS_PREFIX + json.dumps(publisher.published))


def main(args: list[str] | None = None) -> int:
    # The simulation loop handles SIGINT/SIGTERM itself so the bag is always closed cleanly.
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node: SimNode | None = None
    executor = SingleThreadedExecutor()
    spin_thread: threading.Thread | None = None
    try:
        node = SimNode()
        executor.add_node(node)
        spin_thread = threading.Thread(target=_spin, args=(executor,), daemon=True)
        spin_thread.start()
        return _run(node)
    except GradeError as err:
        print(f"sim_node: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return stopped_exit_code()
    finally:
        executor.shutdown(timeout_sec=1.0)
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()
        if spin_thread is not None:
            spin_thread.join(timeout=2.0)


def _spin(executor: SingleThreadedExecutor) -> None:
    with contextlib.suppress(ExternalShutdownException):
        executor.spin()


if __name__ == "__main__":
    sys.exit(main())
