"""A rosbag2 directory (metadata.yaml + one MCAP file) written through `McapWriter`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grade_common.bagfile.compression import Compression
from grade_common.bagfile.metadata import (
    DISTRO_KEY,
    MCAP_METADATA_NAME,
    QOS_KEY,
    ROS_DISTRO,
    SERIALIZED_METADATA_KEY,
    TYPE_HASH_KEY,
    TopicEntry,
    bagfile_information,
    dump_yaml,
    write_metadata_yaml,
)
from grade_common.bagfile.writer import ChunkStats, McapWriter

IDL_MARK = "=" * 80 + "\nIDL: "


@dataclass(frozen=True)
class Rosbag2Topic:
    """What a channel needs: the message definition text (rosbag2 `ros2msg`, or `ros2idl`
    when it starts with the IDL separator) and the RIHS01 hash of the type."""

    name: str
    msgtype: str
    msgdef: str
    type_hash: str
    qos: list[dict[str, Any]]
    serialization_format: str = "cdr"


def storage_file_name(bag_dir: Path) -> str:
    return f"{bag_dir.name}.mcap"


class Rosbag2Writer:
    """Write a new rosbag2 directory; `close()` writes metadata.yaml and the MCAP summary.

    Raises:
        FileExistsError: `bag_dir` exists.
    """

    def __init__(self, bag_dir: Path, *, compression: Compression = Compression.ZSTD) -> None:
        bag_dir.mkdir()
        self.bag_dir = bag_dir
        self.storage_file = storage_file_name(bag_dir)
        # The writer's default chunk bounds (1 MiB, 1 s) are the crash-loss bound documented
        # in docs/recording.md.
        self._mcap = McapWriter(bag_dir / self.storage_file, compression=compression)
        self._schema_ids: dict[str, int] = {}
        self._topics: dict[int, Rosbag2Topic] = {}

    def add_topic(self, topic: Rosbag2Topic) -> int:
        """Register a topic; returns the channel id to `write` with."""
        schema_id = self._schema_ids.get(topic.msgtype)
        if schema_id is None:
            encoding = "ros2idl" if topic.msgdef.startswith(IDL_MARK) else "ros2msg"
            schema_id = self._mcap.add_schema(topic.msgtype, encoding, topic.msgdef.encode())
            self._schema_ids[topic.msgtype] = schema_id
        metadata = {QOS_KEY: dump_yaml(topic.qos).strip(), TYPE_HASH_KEY: topic.type_hash}
        channel_id = self._mcap.add_channel(
            topic.name, schema_id, topic.serialization_format, metadata
        )
        self._topics[channel_id] = topic
        return channel_id

    def write(self, channel_id: int, stamp_ns: int, data: bytes | memoryview) -> None:
        self._mcap.write(channel_id, stamp_ns, data)

    def flush_chunk(self) -> None:
        self._mcap.flush_chunk()

    @property
    def stats(self) -> ChunkStats:
        return self._mcap.stats

    def close(self) -> None:
        counts = self._mcap.channel_counts
        entries = [
            TopicEntry(t.name, t.msgtype, t.type_hash, t.qos, counts[cid], t.serialization_format)
            for cid, t in self._topics.items()
        ]
        start, end = self._mcap.time_range_ns
        info = bagfile_information(self.storage_file, entries, start, end)
        self._mcap.close(
            {
                MCAP_METADATA_NAME: {
                    SERIALIZED_METADATA_KEY: dump_yaml(info).strip(),
                    DISTRO_KEY: ROS_DISTRO,
                }
            }
        )
        write_metadata_yaml(self.bag_dir, info)

    def abort(self) -> None:
        self._mcap.abort()
