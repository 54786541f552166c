"""grade_common.bagfile: chunked MCAP with CRCs, what a kill leaves readable, recovery."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from grade_common import ros_distro
from grade_common.bagfile.compression import Compression
from grade_common.bagfile.integrity import BagIntegrityError, verify_bag
from grade_common.bagfile.recover import recover_bag
from grade_common.bagfile.rosbag2 import Rosbag2Topic, Rosbag2Writer
from grade_common.bagfile.scan import ChannelInfo, SchemaInfo, scan_mcap
from grade_common.bagfile.writer import McapWriter

pytestmark = pytest.mark.distro


NS = 1_000_000_000
QOS = [{"history": "keep_last", "depth": 5, "reliability": "best_effort"}]
HASH = "RIHS01_" + "ab" * 32


def _topic(name: str) -> Rosbag2Topic:
    return Rosbag2Topic(name, "std_msgs/msg/String", "string data\n", HASH, QOS)


def _payloads(seed: int, n: int, size: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 4, size, dtype=np.uint8).tobytes() for _ in range(n)]


def _write(
    bag: Path, compression: Compression, n: int = 60, size: int = 20_000
) -> list[tuple[str, int, bytes]]:
    """n messages on two topics, 0.1 s apart; returns them as (topic, t_ns, data)."""
    writer = Rosbag2Writer(bag, compression=compression)
    ids = {t: writer.add_topic(_topic(t)) for t in ("/a", "/b")}
    sent: list[tuple[str, int, bytes]] = []
    for k, data in enumerate(_payloads(0, n, size)):
        topic = "/a" if k % 3 else "/b"
        t_ns = NS + k * NS // 10
        writer.write(ids[topic], t_ns, data)
        sent.append((topic, t_ns, data))
    writer.close()
    return sent


def _read(mcap: Path) -> list[tuple[str, int, bytes]]:
    got: list[tuple[str, int, bytes]] = []

    def sink(ch: ChannelInfo, schema: SchemaInfo | None, t: int, data: memoryview) -> None:
        got.append((ch.topic, t, bytes(data)))

    scan_mcap(mcap, sink)
    return got


@pytest.mark.parametrize("compression", list(Compression))
def test_round_trip_every_chunk_has_a_crc(tmp_path: Path, compression: Compression) -> None:
    bag = tmp_path / "bag"
    sent = _write(bag, compression)
    mcap = bag / "bag.mcap"
    assert _read(mcap) == sent
    report = scan_mcap(mcap)
    assert report.has_summary
    assert report.chunks > 1
    assert report.chunks_without_crc == 0
    assert verify_bag(bag).chunks == report.chunks
    size = mcap.stat().st_size
    raw = sum(len(d) for _, _, d in sent)
    if compression is Compression.NONE:
        assert size > raw
    else:  # 2-bit random values: zstd and lz4 both get well under 3/4
        assert size < raw * 0.75


def test_metadata_is_rosbag2_v9_with_distro_and_type_hashes(tmp_path: Path) -> None:
    bag = tmp_path / "bag"
    _write(bag, Compression.ZSTD, n=6)
    info = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["version"] == 9
    assert info["ros_distro"] == ros_distro.current_distro().value
    assert info["storage_identifier"] == "mcap"
    assert info["relative_file_paths"] == ["bag.mcap"]
    assert info["message_count"] == 6
    topics = {t["topic_metadata"]["name"]: t for t in info["topics_with_message_count"]}
    assert topics["/a"]["message_count"] == 4
    assert topics["/b"]["message_count"] == 2
    assert topics["/a"]["topic_metadata"]["type_description_hash"] == HASH
    assert topics["/a"]["topic_metadata"]["offered_qos_profiles"] == QOS
    channels = scan_mcap(bag / "bag.mcap").channels
    assert {c.metadata["topic_type_hash"] for c in channels.values()} == {HASH}


def test_an_open_writer_has_everything_but_the_last_second_on_disk(tmp_path: Path) -> None:
    """What a kill -9 would leave: every message older than one chunk span is readable."""
    path = tmp_path / "open.mcap"
    writer = McapWriter(path, compression=Compression.ZSTD)
    channel = writer.add_channel(
        "/a", writer.add_schema("std_msgs/msg/String", "ros2msg", b""), "cdr", {}
    )
    for k in range(100):
        t_ns = k * NS // 30
        writer.write(channel, t_ns, b"x" * 100)
        on_disk = [t for _, t, _ in _read(path)]
        assert on_disk == [j * NS // 30 for j in range(len(on_disk))]
        assert t_ns - (on_disk[-1] if on_disk else 0) <= NS  # lost if killed now: < 1 s
    writer.abort()


def test_an_open_writer_keeps_at_most_one_big_chunk_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "open.mcap"
    writer = McapWriter(path, compression=Compression.NONE, chunk_size_bytes=1 << 20)
    channel = writer.add_channel("/img", writer.add_schema("x/msg/Y", "ros2msg", b""), "cdr", {})
    for k in range(10):
        writer.write(channel, k, bytes(600_000))
        assert len(_read(path)) >= k  # at most this one message and the one before it pending
    writer.abort()


@pytest.mark.parametrize("compression", [Compression.ZSTD, Compression.NONE])
def test_truncated_files_recover_to_a_prefix(tmp_path: Path, compression: Compression) -> None:
    source = tmp_path / "full"
    sent = _write(source, compression)
    data = (source / "full.mcap").read_bytes()
    for cut in (40, len(data) // 3, len(data) // 2, len(data) - 100, len(data) - 1):
        killed = tmp_path / f"killed{cut}"
        killed.mkdir()
        (killed / "killed.mcap").write_bytes(data[:cut])
        before = hashlib.sha256((killed / "killed.mcap").read_bytes()).hexdigest()
        with pytest.raises(BagIntegrityError, match="grade bag recover"):
            verify_bag(killed)
        out = tmp_path / f"rec{cut}"
        report = recover_bag(killed, out)
        got = _read(out / f"rec{cut}.mcap")
        assert got == sent[: len(got)], cut
        assert report.messages == len(got)
        assert report.problems
        assert hashlib.sha256((killed / "killed.mcap").read_bytes()).hexdigest() == before
        verify_bag(out)
    assert len(got) == len(sent)  # cut inside the summary: every message is still there


def test_a_flipped_byte_is_reported_with_topics_and_times(tmp_path: Path) -> None:
    bag = tmp_path / "bag"
    sent = _write(bag, Compression.NONE)
    mcap = bag / "bag.mcap"
    offset, length = scan_mcap(mcap).chunk_records[3]
    data = bytearray(mcap.read_bytes())
    data[offset + length - 40] ^= 0xFF
    mcap.write_bytes(bytes(data))
    with pytest.raises(BagIntegrityError) as info:
        verify_bag(bag)
    text = str(info.value)
    assert "CRC" in text
    assert f"chunk at byte {offset}" in text
    assert "/a" in text
    assert " s to " in text
    assert "grade bag recover" in text
    report = recover_bag(bag, tmp_path / "rec")
    got = _read(tmp_path / "rec" / "rec.mcap")
    assert len(got) < len(sent)
    assert set(got) <= set(sent)
    assert any("CRC" in p for p in report.problems)


def test_recover_never_writes_into_or_over_its_source(tmp_path: Path) -> None:
    bag = tmp_path / "bag"
    _write(bag, Compression.ZSTD, n=3)
    with pytest.raises(BagIntegrityError, match="inside"):
        recover_bag(bag, bag / "sub")
    (tmp_path / "taken").mkdir()
    with pytest.raises(Exception, match="exists already"):
        recover_bag(bag, tmp_path / "taken")
    shutil.rmtree(tmp_path / "taken")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bag"]
