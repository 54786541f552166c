"""rosbag2's metadata.yaml (version 9) for one MCAP file, as `ros2 bag record` writes it:
per-topic offered QoS as a list and the RIHS01 type description hash, and the ROS distro
(grade_common.ros_distro: the one this environment runs)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from grade_common.atomic import write_bytes
from grade_common.ros_distro import current_distro

METADATA_YAML = "metadata.yaml"
METADATA_VERSION = 9
# Keys of the MCAP channel metadata and of the "rosbag2" metadata record (rosbag2_storage_mcap).
QOS_KEY = "offered_qos_profiles"
TYPE_HASH_KEY = "topic_type_hash"
MCAP_METADATA_NAME = "rosbag2"
SERIALIZED_METADATA_KEY = "serialized_metadata"
DISTRO_KEY = "ROS_DISTRO"


@dataclass(frozen=True)
class TopicEntry:
    """One topic of a bag as rosbag2 describes it."""

    name: str
    msgtype: str
    type_hash: str  # RIHS01_<64 hex>, '' when unknown
    qos: list[dict[str, Any]]  # offered QoS profiles, rosbag2 v9 layout
    count: int
    serialization_format: str = "cdr"


def bagfile_information(
    storage_file: str, topics: list[TopicEntry], start_ns: int, end_ns: int
) -> dict[str, Any]:
    """The `rosbag2_bagfile_information` mapping (`end_ns`: the last message's time)."""
    count = sum(t.count for t in topics)
    start = start_ns if count else 0
    duration = max(0, end_ns - start_ns) if count else 0
    return {
        "version": METADATA_VERSION,
        "storage_identifier": "mcap",
        "duration": {"nanoseconds": duration},
        "starting_time": {"nanoseconds_since_epoch": start},
        "message_count": count,
        "topics_with_message_count": [
            {
                "topic_metadata": {
                    "name": t.name,
                    "type": t.msgtype,
                    "serialization_format": t.serialization_format,
                    "offered_qos_profiles": t.qos,
                    "type_description_hash": t.type_hash,
                },
                "message_count": t.count,
            }
            for t in topics
        ],
        "compression_format": "",  # MCAP chunk compression is internal to the storage file
        "compression_mode": "",
        "relative_file_paths": [storage_file],
        "files": [
            {
                "path": storage_file,
                "starting_time": {"nanoseconds_since_epoch": start},
                "duration": {"nanoseconds": duration},
                "message_count": count,
            }
        ],
        "custom_data": None,
        "ros_distro": current_distro().value,
    }


def dump_yaml(data: object) -> str:
    return str(yaml.safe_dump(data, sort_keys=False, default_flow_style=False))


def write_metadata_yaml(bag_dir: Path, info: dict[str, Any]) -> Path:
    """bag_dir/metadata.yaml, replaced atomically (a reader never sees half a file)."""
    text = dump_yaml({"rosbag2_bagfile_information": info})
    return write_bytes(bag_dir / METADATA_YAML, text.encode(), overwrite=True)
