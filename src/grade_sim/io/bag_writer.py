"""rosbag2 recording of every simulator topic (MCAP storage written by grade_common.bagfile).

Messages arrive as CDR bytes (the same bytes that are published), stamped in simulated time.
Chunks are compressed (zstd by default), carry CRCs and are flushed to the file as they close:
after 1 MiB, one simulated second or one wall-clock second, whichever comes first, so a killed
simulator loses at most the one open chunk and `grade bag recover` rebuilds the rest. The bag is
closed in `close()` whatever the run status.
"""

from __future__ import annotations

import queue
import threading
import time
from pathlib import Path
from typing import Any

from grade_common.bagfile.compression import Compression
from grade_common.bagfile.rosbag2 import Rosbag2Topic, Rosbag2Writer, topic_of
from grade_sim.sensors.messages import QosProfile, TopicSpec, typestore

# The longest a message waits in an open chunk (wall-clock seconds), however slow the run.
MAX_CHUNK_AGE_S = 1.0


# rosbag2's spelling of an infinite duration (rmw's, 2**63 - 1 ns, does not fit its fields).
_INFINITE_NS = 2**63 - 1
_INFINITE_SEC_NSEC = (2147483647, 4294967295)


def bag_qos(
    *,
    history: str,
    depth: int,
    reliability: str,
    durability: str,
    deadline_ns: int = 0,
    lifespan_ns: int = 0,
    liveliness: str = "AUTOMATIC",
    liveliness_lease_ns: int = 0,
    avoid_ros_namespace_conventions: bool = False,
) -> Any:
    """One offered QoS profile as the bag's metadata records it (rosbags' `Qos`), its policies
    named as ROS 2 names them (KEEP_LAST, RELIABLE, TRANSIENT_LOCAL, AUTOMATIC, ...); durations
    in ns, negative or 2**63 - 1 meaning infinite."""
    from rosbags.interfaces import (
        Qos,
        QosDurability,
        QosHistory,
        QosLiveliness,
        QosReliability,
        QosTime,
    )

    def span(ns: int) -> QosTime:
        if ns >= _INFINITE_NS or ns < 0:
            return QosTime(*_INFINITE_SEC_NSEC)
        return QosTime(*divmod(ns, 1_000_000_000))

    return Qos(
        QosHistory[history],
        depth,
        QosReliability[reliability],
        QosDurability[durability],
        span(deadline_ns),
        span(lifespan_ns),
        QosLiveliness[liveliness],
        span(liveliness_lease_ns),
        avoid_ros_namespace_conventions,
    )


def offered_qos(profile: QosProfile) -> list[Any]:
    """The rosbag2 offered-QoS record of a topic published with `profile` (its policy)."""
    policy = profile.policy
    return [
        bag_qos(
            history="KEEP_LAST",
            depth=policy.depth,
            reliability="RELIABLE" if policy.reliable else "BEST_EFFORT",
            durability="TRANSIENT_LOCAL" if policy.transient_local else "VOLATILE",
        )
    ]


def rosbag2_topic(topic: TopicSpec) -> Rosbag2Topic:
    """The channel description of a simulator topic: definition, RIHS01 hash, offered QoS."""
    return topic_of(
        topic.name,
        topic.msgtype,
        typestore=typestore(),
        offered_qos_profiles=offered_qos(topic.qos),
    )


class BagWriter:
    """SimObserver writing a rosbag2 directory; topics are registered up front.

    Writes (and compression) happen on a background thread (zstd, lz4 and file I/O release the
    GIL), in the order messages were produced; the bounded queue keeps memory flat if the disk
    is slower than the simulation.
    """

    def __init__(
        self,
        path: Path,
        topics: list[TopicSpec],
        queue_size: int = 256,
        compression: Compression = Compression.ZSTD,
    ) -> None:
        self.path = path
        self._writer = Rosbag2Writer(path, compression=compression)
        self._channels = {
            topic.name: self._writer.add_topic(rosbag2_topic(topic)) for topic in topics
        }
        self._queue: queue.Queue[tuple[int, int, bytes] | None] = queue.Queue(maxsize=queue_size)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._write_loop, name="bag-writer", daemon=True)
        self._thread.start()
        self._closed = False

    def _write_loop(self) -> None:
        flushed = time.monotonic()
        while True:
            item: tuple[int, int, bytes] | tuple[()] | None
            try:
                item = self._queue.get(timeout=MAX_CHUNK_AGE_S)
            except queue.Empty:
                item = ()  # nothing for a second: the open chunk goes to disk below
            if item is None:
                return
            if self._error is not None:
                continue
            try:
                if item:
                    self._writer.write(*item)
                if time.monotonic() - flushed >= MAX_CHUNK_AGE_S:
                    self._writer.flush_chunk()
                    flushed = time.monotonic()
            except BaseException as err:  # reported by close(); the run still ends cleanly
                self._error = err

    def on_message(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        self._queue.put((self._channels[topic.name], stamp_ns, cdr))

    def on_camera(self, sample: object) -> None:
        return None

    def wants_messages(self, topics: tuple[TopicSpec, ...]) -> bool:
        # The bag keeps every registered topic, the bootstrap included.
        return any(t.name in self._channels for t in topics)

    def wants_sample(self, robot: str, sensor: str, step: int, stamp_ns: int) -> bool:
        return False

    def on_step(self, step: int, stamp_ns: int, robot_states: object) -> None:
        return None

    def close(self, status: str) -> None:
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._thread.join()
        if self._error is not None:
            self._writer.abort()
            raise OSError(f"writing bag {self.path} failed: {self._error}") from self._error
        self._writer.close()
