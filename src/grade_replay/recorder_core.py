"""Core of the recording node: its validated config and a raw-bytes rosbag2 (MCAP) writer.

No rclpy here: the node discovers topics, converts QoS and hands raw CDR bytes to `BagRecorder`,
which writes them under a temporary name and renames the bag into place when closed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rosbags.interfaces import Nodetype, Qos
from rosbags.typesys import get_types_from_msg
from rosbags.typesys.store import Typestore

from grade_common import ros_distro
from grade_common.bagfile.rosbag2 import BagOutput, OutputConnection
from grade_replay.bag.io import atomic_output, open_writer
from grade_replay.errors import BagFormatError, BagOutputExistsError, ReplayConfigError

# Topics every ROS 2 graph has; recorded only when listed explicitly.
DEFAULT_EXCLUDED_TOPICS = ("/rosout", "/parameter_events")


@dataclass(frozen=True)
class RecorderConfig:
    """Parameters of the `recorder` node.

    Attributes:
        output: the bag directory to create (must not exist).
        topics: topics to record; empty = every topic discovered on the graph (except
            /rosout and /parameter_events).
        discovery_period_s: how often the graph is searched for new topics/publishers.
        queue_depth: subscription history depth (keep last).
    """

    output: str
    topics: tuple[str, ...] = ()
    discovery_period_s: float = 0.5
    queue_depth: int = 100

    def __post_init__(self) -> None:
        if not self.output:
            raise ReplayConfigError("recorder: output='' must name a new bag directory")
        bad = [t for t in self.topics if not t.startswith("/") or " " in t]
        if bad:
            raise ReplayConfigError(
                f"recorder: topics {bad} must be absolute names ('/name', no spaces)"
            )
        if len(set(self.topics)) != len(self.topics):
            raise ReplayConfigError(f"recorder: topics {list(self.topics)} has duplicates")
        if not (math.isfinite(self.discovery_period_s) and 0.01 <= self.discovery_period_s <= 60):
            raise ReplayConfigError(
                f"recorder: discovery_period_s={self.discovery_period_s} must be in [0.01, 60]"
            )
        if not 1 <= self.queue_depth <= 100_000:
            raise ReplayConfigError(
                f"recorder: queue_depth={self.queue_depth} must be in [1, 100000]"
            )

    def wants(self, topic: str) -> bool:
        """Whether a discovered topic is to be recorded."""
        if self.topics:
            return topic in self.topics
        return topic not in DEFAULT_EXCLUDED_TOPICS


def register_type(
    typestore: Typestore, msgtype: str, load_msg: Callable[[str], str | None]
) -> None:
    """Make `msgtype` (and the types it uses) known to `typestore`.

    Args:
        load_msg: type name ("pkg/msg/Name") -> the text of its .msg file, or None if unknown.

    Raises:
        BagFormatError: a definition cannot be found or parsed.
    """
    pending = [msgtype]
    while pending:
        name = pending.pop()
        if name in typestore.fielddefs:
            continue
        text = load_msg(name)
        if text is None:
            raise BagFormatError(
                f"message type {name!r}: no definition in the ROS 2 "
                "typestore nor an installed .msg file"
            )
        try:
            types = get_types_from_msg(text, name)
        except Exception as err:
            raise BagFormatError(f"message type {name!r}: cannot parse its .msg: {err}") from err
        deps = [
            field_type[1]
            for _, fields in types.values()
            for _, field_type in fields
            if field_type[0] == Nodetype.NAME
        ]
        deps += [
            field_type[1][0][1]
            for _, fields in types.values()
            for _, field_type in fields
            if field_type[0] in (Nodetype.ARRAY, Nodetype.SEQUENCE)
            and field_type[1][0][0] == Nodetype.NAME
        ]
        missing = [d for d in deps if d not in typestore.fielddefs and d not in types]
        if missing:
            pending.append(name)
            pending.extend(missing)
            continue
        typestore.register(types)


class BagRecorder:
    """Writes raw CDR messages of discovered topics to a new rosbag2 MCAP directory."""

    def __init__(self, output: Path | str, typestore: Typestore | None = None) -> None:
        """Open `<parent>/.<name>.partial/<name>`; `close` renames it to `output`.

        Raises:
            BagOutputExistsError: `output` (or a leftover partial one) exists.
        """
        self.output = Path(output)
        self._staged = atomic_output(self.output)
        self.typestore = typestore or ros_distro.typestore()
        self._writer: BagOutput | None = open_writer(self._staged.path)
        self._connections: dict[str, OutputConnection] = {}
        self.counts: dict[str, int] = {}

    @property
    def topics(self) -> dict[str, str]:
        """Recorded topic -> type."""
        return {t: c.msgtype for t, c in self._connections.items()}

    def add_topic(self, topic: str, msgtype: str, offered_qos: Sequence[Qos]) -> None:
        """Start recording a topic; its type must be known to the typestore (`register_type`)."""
        if self._writer is None:
            raise BagFormatError(f"{self.output}: recorder already closed")
        if msgtype not in self.typestore.fielddefs:
            raise BagFormatError(f"{self.output}: type {msgtype!r} of {topic} is not registered")
        self._connections[topic] = self._writer.add_connection(
            topic, msgtype, typestore=self.typestore, offered_qos_profiles=list(offered_qos)
        )
        self.counts[topic] = 0

    def write(self, topic: str, receive_ns: int, data: bytes) -> None:
        """Append one raw CDR message received at `receive_ns`."""
        if self._writer is None:
            return
        self._writer.write(self._connections[topic], receive_ns, data)
        self.counts[topic] += 1

    def close(self) -> Path:
        """Finish the bag (index, metadata.yaml) and move it into place; idempotent."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.close()
            try:
                self._staged.commit()
            except BagOutputExistsError as err:
                raise BagOutputExistsError(f"{err}; the bag stays at {self._staged.path}") from err
        return self.output
