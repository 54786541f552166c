"""`topic_counter`: count the messages that arrive on every topic, with one QoS profile.

A delivery probe (`grade bench delivery`, the transport tests): it subscribes to each topic as
it appears (matching `--include`, a regular expression), counts raw messages (no
deserialisation), and at SIGINT/SIGTERM prints one line `received counts: {"topic": n, ...}`
and one `publish timing: {"topic": {...}, ...}` (grade_replay.publish_timing: the gaps between
the messages' DDS source timestamps and the largest burst, as their publisher wrote them).
With `--progress-period-s S` it also prints `counts so far: {...}` every S seconds, so that a
caller can wait for a count (a condition) instead of for a time.

The profile sets reliability and durability (sensor-data: best effort; default: reliable); the
history depth is `--depth` (default 1000) for both, so that a moment without CPU in the counter
itself (2 loaded cores) does not drop 240 Hz IMU samples from a keep-last-5 queue: what is
measured is what the transport delivers. `--depth 5` / `--depth 10` give the presets' own.

    python -m grade_replay.node.topic_counter --qos sensor_data --include '^/uav1/'
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
from typing import Any

from rclpy.node import Node
from rclpy.qos import HistoryPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data

from grade_common.node import spin as grade_spin
from grade_replay.publish_timing import publish_timing

RECEIVED_COUNTS_PREFIX = "received counts: "
PROGRESS_COUNTS_PREFIX = "counts so far: "
PUBLISH_TIMING_PREFIX = "publish timing: "
READY_LINE = "topic_counter ready"
# The two profiles subscribers use in practice: the sensor-data preset (best effort, keep last
# 5; SLAM front ends, image pipelines) and the ROS 2 default (reliable, keep last 10; RViz).
QOS_PROFILES: dict[str, QoSProfile] = {
    "sensor_data": qos_profile_sensor_data,
    "reliable": QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE),
}
_DISCOVERY_PERIOD_S = 0.2
_ALWAYS_IGNORED = ("/rosout", "/parameter_events")


def _msg_class(msgtype: str) -> Any:
    pkg, _, name = msgtype.split("/")
    return getattr(importlib.import_module(f"{pkg}.msg"), name)


class TopicCounter(Node):
    """Subscribes to every matching topic with one QoS and counts what arrives."""

    def __init__(
        self, qos_name: str, include: str, name: str, depth: int, progress_period_s: float = 0.0
    ) -> None:
        super().__init__(name)
        preset = QOS_PROFILES[qos_name]
        self._qos = QoSProfile(
            history=HistoryPolicy.KEEP_LAST,
            depth=depth,
            reliability=preset.reliability,
            durability=preset.durability,
        )
        self._include = re.compile(include)
        self.counts: dict[str, int] = {}
        self.source_stamps_ns: dict[str, list[int]] = {}
        self._subs: list[Any] = []
        self.create_timer(_DISCOVERY_PERIOD_S, self._discover)
        if progress_period_s > 0:
            self.create_timer(progress_period_s, self._progress)
        print(READY_LINE, flush=True)

    def _progress(self) -> None:
        print(PROGRESS_COUNTS_PREFIX + json.dumps(self.counts, sort_keys=True), flush=True)

    def _discover(self) -> None:
        for topic, types in self.get_topic_names_and_types():
            if topic in self.counts or topic in _ALWAYS_IGNORED or len(types) != 1:
                continue
            if not self._include.search(topic):
                continue
            try:
                cls = _msg_class(types[0])
            except (ImportError, AttributeError, ValueError):
                continue  # a type this environment cannot load: not ours to count
            self.counts[topic] = 0
            self.source_stamps_ns[topic] = []
            self._subs.append(
                self.create_subscription(
                    cls,
                    topic,
                    lambda _msg, info, t=topic: self._count(t, info),
                    self._qos,
                    raw=True,
                )
            )

    def _count(self, topic: str, info: dict[str, Any]) -> None:
        self.counts[topic] += 1
        self.source_stamps_ns[topic].append(info["source_timestamp"])

    def destroy_node(self) -> None:
        # The counts are the node's output: print them before the node goes away.
        print(RECEIVED_COUNTS_PREFIX + json.dumps(self.counts, sort_keys=True), flush=True)
        timing = {t: publish_timing(s).as_dict() for t, s in self.source_stamps_ns.items() if s}
        print(PUBLISH_TIMING_PREFIX + json.dumps(timing, sort_keys=True), flush=True)
        super().destroy_node()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="topic_counter", description=__doc__)
    parser.add_argument("--qos", choices=sorted(QOS_PROFILES), required=True)
    parser.add_argument("--include", default="", help="regular expression on topic names")
    parser.add_argument("--name", default="", help="node name (default: counter_<qos>)")
    parser.add_argument("--depth", type=int, default=1000, help="history depth (1000)")
    parser.add_argument(
        "--progress-period-s", type=float, default=0.0, help="print the counts so far (0: off)"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    args, ros_args = build_parser().parse_known_args(sys.argv[1:] if argv is None else argv)
    return grade_spin.run_node(
        "topic_counter",
        lambda: TopicCounter(
            args.qos,
            args.include,
            args.name or f"counter_{args.qos}",
            args.depth,
            args.progress_period_s,
        ),
        ros_args,
    )


if __name__ == "__main__":
    sys.exit(main())
