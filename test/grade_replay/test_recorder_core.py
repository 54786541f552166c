"""Recorder core: config validation, custom type registration, the raw bag writer."""

from __future__ import annotations

from pathlib import Path

import pytest
from bagkit import TS, qos, string
from rosbags.rosbag2 import Reader

from grade_common import ros_distro
from grade_replay.errors import BagFormatError, BagOutputExistsError, ReplayConfigError
from grade_replay.recorder_core import BagRecorder, RecorderConfig, register_type

CUSTOM = {
    "my_pkg/msg/Sample": "std_msgs/Header header\nmy_pkg/Point2 at\nmy_pkg/Point2[] trail\n",
    "my_pkg/msg/Point2": "float64 x\nfloat64 y\n",
}


def test_config_defaults_and_topic_filter() -> None:
    config = RecorderConfig(output="bag")
    assert config.wants("/cam/rgb")
    assert not config.wants("/rosout")
    listed = RecorderConfig(output="bag", topics=("/rosout", "/a"))
    assert listed.wants("/rosout")
    assert not listed.wants("/b")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"output": ""}, r"output='' must name a new bag directory"),
        ({"output": "b", "topics": ("cam",)}, r"topics \['cam'\] must be absolute names"),
        ({"output": "b", "topics": ("/a", "/a")}, r"has duplicates"),
        ({"output": "b", "discovery_period_s": 0.0}, r"discovery_period_s=0.0 must be in"),
        ({"output": "b", "queue_depth": 0}, r"queue_depth=0 must be in \[1, 100000\]"),
    ],
)
def test_config_rejects(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ReplayConfigError, match=match):
        RecorderConfig(**kwargs)  # type: ignore[arg-type]


def test_register_type_resolves_custom_dependencies() -> None:
    store = ros_distro.typestore()
    register_type(store, "my_pkg/msg/Sample", CUSTOM.get)
    assert "my_pkg/msg/Sample" in store.fielddefs
    assert "my_pkg/msg/Point2" in store.fielddefs
    with pytest.raises(BagFormatError, match=r"'other/msg/Nope': no definition"):
        register_type(store, "other/msg/Nope", CUSTOM.get)


def test_bag_recorder_writes_raw_bytes_and_renames_on_close(tmp_path: Path) -> None:
    out = tmp_path / "rec"
    recorder = BagRecorder(out)
    assert not out.exists()
    assert (tmp_path / ".rec.partial").is_dir()
    recorder.add_topic("/chatter", "std_msgs/msg/String", [qos()])
    raw = [bytes(TS.serialize_cdr(string(f"m{i}"), "std_msgs/msg/String")) for i in range(5)]
    for i, data in enumerate(raw):
        recorder.write("/chatter", 1000 + i, data)
    assert recorder.close() == out
    assert recorder.close() == out  # idempotent
    assert not (tmp_path / ".rec.partial").exists()
    with Reader(out) as reader:
        assert [(t, bytes(d)) for _, t, d in reader.messages()] == [
            (1000 + i, d) for i, d in enumerate(raw)
        ]
    assert recorder.counts == {"/chatter": 5}


def test_bag_recorder_refuses_existing_output(tmp_path: Path) -> None:
    (tmp_path / "rec").mkdir()
    with pytest.raises(BagOutputExistsError, match=r"rec: output exists already"):
        BagRecorder(tmp_path / "rec")
