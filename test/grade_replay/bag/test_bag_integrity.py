"""Recorded bags: three third-party readers open them; every grade tool that reads a bag
detects a flipped byte and names the topic and time; `grade bag recover` rebuilds a bag whose
writer was killed, without touching it."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from bagkit import NS, TS, BagSpec, flip_chunk_byte, image, pose_stamped, write_grade_bag
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory
from rosbags.rosbag2 import Reader

from grade_cli.main import main
from grade_common import ros_distro
from grade_common.bagfile.compression import Compression
from grade_common.bagfile.integrity import verify_bag
from grade_sim.io.bag_writer import BagWriter
from grade_sim.sensors.messages import QosProfile, TopicSpec

pytestmark = pytest.mark.distro


IMG = "sensor_msgs/msg/Image"
RGB, POSE = "/cam/rgb", "/cam/pose"


def _spec(frames: int = 60) -> BagSpec:
    rng = np.random.default_rng(1)
    spec = BagSpec()
    for k in range(frames):
        t_ns = NS + k * NS // 30
        rgb = rng.integers(0, 255, (48, 64, 3), dtype=np.uint8)
        spec.add(RGB, IMG, t_ns, image(t_ns, rgb, "rgb8"))
        spec.add(
            POSE, "geometry_msgs/msg/PoseStamped", t_ns, pose_stamped(t_ns, (k, 0, 0), (0, 0, 0, 1))
        )
    return spec


def _record(bag: Path, compression: str, spec: BagSpec) -> None:
    """Write `spec` through the simulator's own bag observer."""
    topics = {t: TopicSpec(t, m, QosProfile.SENSOR) for t, m, _, _ in spec.messages}
    writer = BagWriter(bag, list(topics.values()), compression=Compression(compression))
    for topic, msgtype, t_ns, msg in spec.messages:
        writer.on_message(topics[topic], t_ns, bytes(TS.serialize_cdr(msg, msgtype)))
    writer.close("complete")


@pytest.mark.parametrize("compression", ["zstd", "lz4", "none"])
def test_three_third_party_readers_open_a_recorded_bag(tmp_path: Path, compression: str) -> None:
    spec = _spec(20)
    bag = tmp_path / "bag"
    _record(bag, compression, spec)
    sent = [(t, s, bytes(TS.serialize_cdr(m, ty))) for t, ty, s, m in spec.messages]

    with Reader(bag) as reader:  # rosbags
        got = [(c.topic, t, bytes(raw)) for c, t, raw in reader.messages()]
        digests = {c.topic: c.digest for c in reader.connections}
    assert got == sent
    assert digests[RGB] == TS.hash_rihs01(IMG)

    with open(bag / "bag.mcap", "rb") as f:  # the official reader, every CRC checked
        reader = make_reader(f, validate_crcs=True, decoder_factories=[DecoderFactory()])
        summary = reader.get_summary()
        assert summary is not None
        assert summary.statistics is not None
        assert summary.statistics.message_count == len(sent)
        chunks = summary.chunk_indexes
        expected = "" if compression == "none" else compression
        assert chunks
        assert {c.compression for c in chunks} == {expected}
        decoded = [  # mcap-ros2-support decodes with the schema in the file
            (channel.topic, message.log_time, ros)
            for _, channel, message, ros in reader.iter_decoded_messages()
        ]
        meta = {m.name: m.metadata for m in reader.iter_metadata()}
    assert [(t, s) for t, s, _ in decoded] == [(t, s) for t, s, _ in sent]
    assert decoded[0][2].height == 48
    assert decoded[1][2].pose.position.x == 0.0
    assert meta["rosbag2"]["ROS_DISTRO"] == ros_distro.current_distro().value
    info = yaml.safe_load((bag / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    assert info["ros_distro"] == ros_distro.current_distro().value
    assert info["version"] == 9
    hashes = {
        t["topic_metadata"]["name"]: t["topic_metadata"]["type_description_hash"]
        for t in info["topics_with_message_count"]
    }
    assert hashes == {
        RGB: TS.hash_rihs01(IMG),
        POSE: TS.hash_rihs01("geometry_msgs/msg/PoseStamped"),
    }


NOISE_PARAMS = {
    "noise_node": {
        "ros__parameters": {
            "seed": 1,
            "input_topics": [RGB],
            "output_topics": ["/cam/rgb/noisy"],
            "models": ["rgb"],
            "presets": ["photometric_only"],
        }
    }
}


def _commands(bag: Path, tmp: Path) -> dict[str, list[str]]:
    params = tmp / "noise.yaml"
    params.write_text(yaml.safe_dump(NOISE_PARAMS))
    return {
        "info": ["bag", "--no-progress", "info", str(bag)],
        "clip": [
            "bag",
            "--no-progress",
            "clip",
            str(bag),
            "--out",
            str(tmp / "o_clip"),
            "--start",
            "0",
        ],
        "export": [
            "bag",
            "--no-progress",
            "export",
            str(bag),
            "--out",
            str(tmp / "o_export"),
            "--rgb",
            RGB,
            "--pose-topic",
            POSE,
        ],
        "noise": [
            "noise",
            "apply",
            str(bag),
            str(tmp / "o_noise"),
            "--params",
            str(params),
            "--no-progress",
        ],
    }


@pytest.mark.parametrize("compression", ["zstd", "none"])
@pytest.mark.parametrize("tool", ["info", "clip", "export", "noise"])
def test_every_reading_tool_reports_a_flipped_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tool: str, compression: str
) -> None:
    bag = write_grade_bag(tmp_path / "bag", _spec(), compression)
    flip_chunk_byte(bag, chunk=1)
    code = main(_commands(bag, tmp_path)[tool])
    err = capsys.readouterr().err
    assert code == 1, err
    assert "chunk at byte" in err, err
    assert RGB in err, err
    assert " s to " in err, err
    assert "grade bag recover" in err, err
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(("o_", ".o_"))]


def test_recover_a_killed_recording(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _spec()
    full = write_grade_bag(tmp_path / "full", spec)
    killed = tmp_path / "killed"
    killed.mkdir()
    data = (full / "full.mcap").read_bytes()
    (killed / "killed.mcap").write_bytes(data[: len(data) * 2 // 3])  # no summary, no metadata
    digest = hashlib.sha256((killed / "killed.mcap").read_bytes()).hexdigest()

    assert main(["bag", "info", str(killed)]) == 1
    err = capsys.readouterr().err
    assert "no metadata.yaml" in err
    assert f"grade bag recover {killed}" in err

    out = tmp_path / "recovered"
    assert main(["bag", "recover", str(killed), "--out", str(out)]) == 0
    report = capsys.readouterr().out
    assert "recovered" in report
    assert "lost:" in report
    assert RGB in report
    with Reader(out) as reader:
        got = [(c.topic, t, bytes(raw)) for c, t, raw in reader.messages()]
    sent = [(t, s, bytes(TS.serialize_cdr(m, ty))) for t, ty, s, m in spec.messages]
    assert 0 < len(got) < len(sent)
    assert got == sent[: len(got)]
    assert main(["bag", "--no-progress", "info", str(out)]) == 0
    assert "integrity:" in capsys.readouterr().out
    assert hashlib.sha256((killed / "killed.mcap").read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in killed.iterdir()) == ["killed.mcap"]
    assert main(["bag", "recover", str(killed), "--out", str(out)]) == 1  # never overwrites
    shutil.rmtree(out)


@pytest.mark.parametrize("tool", ["clip", "noise"])
def test_bags_that_tools_write_are_compressed_and_checked(tmp_path: Path, tool: str) -> None:
    bag = write_grade_bag(tmp_path / "bag", _spec(30))
    assert main(_commands(bag, tmp_path)[tool]) == 0
    out = tmp_path / f"o_{tool}"
    report = verify_bag(out)
    assert report.chunks > 0
    assert report.chunks_without_crc == 0
    with open(next(out.glob("*.mcap")), "rb") as f:
        summary = make_reader(f, validate_crcs=True).get_summary()
    assert summary is not None
    assert {c.compression for c in summary.chunk_indexes} == {"zstd"}
