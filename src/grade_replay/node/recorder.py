"""ROS 2 node `recorder`: records topics raw (no deserialisation) into a rosbag2 MCAP bag.

Topics come from the `topics` parameter (or every topic on the graph when it is empty); their
types and offered QoS are discovered from the graph. Each message is written with its receive
time from the node clock (simulated time with use_sim_time). SIGINT/SIGTERM finish the bag so
it stays readable, and the counts are logged.
"""

from __future__ import annotations

import importlib
import sys
from functools import partial
from pathlib import Path
from typing import Any

import rclpy
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.signals import SignalHandlerOptions

from grade_common.signals import stop_flag
from grade_replay.errors import ReplayError
from grade_replay.recorder_core import BagRecorder, RecorderConfig, register_type
from grade_sim.io.bag_writer import bag_qos


def to_bag_qos(profile: QoSProfile) -> Any:
    """rclpy QoSProfile -> rosbags Qos (the offered_qos_profiles of the bag's metadata)."""
    return bag_qos(
        history=profile.history.name,
        depth=int(profile.depth),
        reliability=profile.reliability.name,
        durability=profile.durability.name,
        deadline_ns=int(profile.deadline.nanoseconds),
        lifespan_ns=int(profile.lifespan.nanoseconds),
        liveliness=profile.liveliness.name,
        liveliness_lease_ns=int(profile.liveliness_lease_duration.nanoseconds),
        avoid_ros_namespace_conventions=bool(profile.avoid_ros_namespace_conventions),
    )


def subscription_qos(offered: list[QoSProfile], depth: int) -> QoSProfile:
    """A QoS compatible with every publisher: reliable/transient local only if all offer it."""
    reliable = all(p.reliability == ReliabilityPolicy.RELIABLE for p in offered)
    latched = all(p.durability == DurabilityPolicy.TRANSIENT_LOCAL for p in offered)
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE,
    )


def message_class(msgtype: str) -> Any:
    """'pkg/msg/Name' -> the generated Python class."""
    package, _, name = msgtype.split("/")
    return getattr(importlib.import_module(f"{package}.msg"), name)


def load_msg_file(msgtype: str) -> str | None:
    """Text of an installed .msg file (share/<pkg>/msg/<Name>.msg), for custom types."""
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    package, kind, name = msgtype.split("/")
    try:
        path = Path(get_package_share_directory(package)) / kind / f"{name}.msg"
    except PackageNotFoundError:
        return None
    return path.read_text() if path.is_file() else None


class RecorderNode(Node):
    """Subscribes raw to the configured topics and writes them to a bag."""

    def __init__(self) -> None:
        super().__init__("recorder")
        self.config = self._config()
        self.recorder = BagRecorder(self.config.output)
        self._raw_subs: dict[str, Any] = {}
        self._warned: set[str] = set()
        self._discover()
        self.create_timer(self.config.discovery_period_s, self._discover)
        wanted = list(self.config.topics) or "all topics"
        self.get_logger().info(f"recording to {self.config.output} ({wanted})")

    def _param(self, name: str, default: Any, description: str) -> Any:
        return self.declare_parameter(
            name, default, ParameterDescriptor(description=description)
        ).value

    def _config(self) -> RecorderConfig:
        topics: list[str] | None = self.declare_parameter(
            "topics",
            Parameter.Type.STRING_ARRAY,
            ParameterDescriptor(description="topics to record; empty or unset = all"),
        ).value
        return RecorderConfig(
            output=self._param("output", "", "bag directory to create (must not exist)"),
            topics=tuple(t for t in (topics or []) if t),
            discovery_period_s=self._param(
                "discovery_period_s", 0.5, "seconds between graph scans for new topics"
            ),
            queue_depth=self._param("queue_depth", 100, "subscription queue depth"),
        )

    def _discover(self) -> None:
        for topic, types in self.get_topic_names_and_types():
            if topic in self._raw_subs or not self.config.wants(topic):
                continue
            publishers = self.get_publishers_info_by_topic(topic)
            if not publishers:
                continue
            if len(types) != 1:
                self._warn_once(topic, f"{topic} has several types {types}; not recorded")
                continue
            try:
                register_type(self.recorder.typestore, types[0], load_msg_file)
                cls = message_class(types[0])
            except (ReplayError, ImportError, AttributeError, ValueError) as err:
                self._warn_once(topic, f"{topic} ({types[0]}) cannot be recorded: {err}")
                continue
            offered = [p.qos_profile for p in publishers]
            self.recorder.add_topic(topic, types[0], [to_bag_qos(p) for p in offered])
            self._raw_subs[topic] = self.create_subscription(
                cls,
                topic,
                partial(self._on_message, topic),
                subscription_qos(offered, self.config.queue_depth),
                raw=True,
            )
            self.get_logger().info(f"recording {topic} ({types[0]})")

    def _warn_once(self, topic: str, text: str) -> None:
        if topic not in self._warned:
            self._warned.add(topic)
            self.get_logger().warning(text)

    def _on_message(self, topic: str, data: bytes) -> None:
        self.recorder.write(topic, self.get_clock().now().nanoseconds, data)

    def finish(self) -> None:
        """Close the bag and report what was recorded."""
        for sub in self._raw_subs.values():
            self.destroy_subscription(sub)
        path = self.recorder.close()
        counts = ", ".join(f"{t}: {n}" for t, n in sorted(self.recorder.counts.items()))
        text = (
            f"bag {path} finished: {sum(self.recorder.counts.values())} messages "
            f"({counts or 'no topics'})"
        )
        if self.context.ok():
            self.get_logger().info(text)
        else:  # the context was shut down from outside: no logger output any more
            print(f"[recorder] {text}", file=sys.stderr, flush=True)


def main(args: list[str] | None = None) -> None:
    """Entry point (`ros2 run grade recorder --ros-args -p output:=BAG`).

    SIGINT/SIGTERM only set a flag that the spin loop checks: an exception raised at an arbitrary
    point (rclpy's default handler) could land between opening the bag and keeping a reference
    to it, and leave the bag unfinished.
    """
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    node: RecorderNode | None = None
    try:
        with stop_flag() as stop:
            node = RecorderNode()
            executor = SingleThreadedExecutor()
            executor.add_node(node)
            while not stop.is_set() and rclpy.ok():
                executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ReplayError as err:
        print(f"recorder: error: {err}", file=sys.stderr)
        sys.exit(1)
    finally:
        if node is not None:
            node.finish()
            node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
