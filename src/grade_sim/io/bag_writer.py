"""rosbag2 recording of every simulator topic (MCAP storage via rosbags).

Messages arrive as CDR bytes (the same bytes that are published), stamped in simulated time. The
bag is closed in `close()` whatever the run status, so an interrupted run leaves a readable bag
with every message written so far.
"""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

from grade_sim.sensors.messages import QosProfile, TopicSpec, typestore


def offered_qos(profile: QosProfile) -> list[Any]:
    """The rosbag2 offered-QoS record of a topic published with `profile`."""
    from rosbags.interfaces import (
        Qos,
        QosDurability,
        QosHistory,
        QosLiveliness,
        QosReliability,
        QosTime,
    )

    zero = QosTime(0, 0)
    reliability = (
        QosReliability.BEST_EFFORT if profile is QosProfile.SENSOR else QosReliability.RELIABLE
    )
    durability = (
        QosDurability.TRANSIENT_LOCAL if profile is QosProfile.LATCHED else QosDurability.VOLATILE
    )
    depth = {QosProfile.SENSOR: 5, QosProfile.RELIABLE: 10, QosProfile.LATCHED: 1}[profile]
    return [
        Qos(
            QosHistory.KEEP_LAST,
            depth,
            reliability,
            durability,
            zero,
            zero,
            QosLiveliness.AUTOMATIC,
            zero,
            False,
        )
    ]


class BagWriter:
    """SimObserver writing a rosbag2 directory; topics are registered up front.

    Writes happen on a background thread (file I/O releases the GIL), in the order messages were
    produced; the bounded queue keeps memory flat if the disk is slower than the simulation.
    """

    def __init__(self, path: Path, topics: list[TopicSpec], queue_size: int = 256) -> None:
        from rosbags.rosbag2 import StoragePlugin, Writer

        self.path = path
        self._writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._connections: dict[str, Any] = {}
        store = typestore()
        for topic in topics:
            self._connections[topic.name] = self._writer.add_connection(
                topic.name,
                topic.msgtype,
                typestore=store,
                serialization_format="cdr",
                offered_qos_profiles=offered_qos(topic.qos),
            )
        self._queue: queue.Queue[tuple[Any, int, bytes] | None] = queue.Queue(maxsize=queue_size)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._write_loop, name="bag-writer", daemon=True)
        self._thread.start()
        self._closed = False

    def _write_loop(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is None:
                try:
                    self._writer.write(*item)
                except BaseException as err:  # reported by close(); the run still ends cleanly
                    self._error = err

    def on_message(self, topic: TopicSpec, stamp_ns: int, cdr: bytes) -> None:
        self._queue.put((self._connections[topic.name], stamp_ns, cdr))

    def on_camera(self, sample: object) -> None:
        return None

    def on_step(self, step: int, stamp_ns: int, robot_states: object) -> None:
        return None

    def close(self, status: str) -> None:
        if self._closed:
            return
        self._closed = True
        self._queue.put(None)
        self._thread.join()
        self._writer.close()
        if self._error is not None:
            raise OSError(f"writing bag {self.path} failed: {self._error}") from self._error
