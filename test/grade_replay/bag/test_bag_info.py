"""`grade bag info` on a bag with known topics, rates and a start marker."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bagkit import NS, BagSpec, image, string, tf_message, write_bag

from grade_replay.bag.info import bag_info


def _bag(path: Path, marker: bool = True) -> Path:
    spec = BagSpec(latched={"/tf_static", "/starting_experiment"})
    spec.add(
        "/tf_static",
        "tf2_msgs/msg/TFMessage",
        NS,
        tf_message(NS, [("world", "r/odom", (0.0, 0.0, 0.0))]),
    )
    for k in range(61):  # 30 Hz for 2 s, with a 1-in-10 late frame (median ignores it)
        t_ns = NS + k * NS // 30 + (4_000_000 if k % 10 == 5 else 0)
        spec.add(
            "/cam/rgb",
            "sensor_msgs/msg/Image",
            t_ns,
            image(t_ns, np.zeros((2, 2, 3), np.uint8), "rgb8"),
        )
    for k in range(481):
        spec.add("/r/imu_like", "std_msgs/msg/String", NS + k * NS // 240, string("x"))
    if marker:
        spec.add("/starting_experiment", "std_msgs/msg/String", NS + NS // 2, string("starting"))
    spec.messages.sort(key=lambda m: m[2])
    return write_bag(path, spec)


def test_info_reports_topics_counts_rates_duration_and_marker(tmp_path: Path) -> None:
    info = bag_info(_bag(tmp_path / "b"))
    by_name = {t.name: t for t in info.topics}
    assert list(by_name) == sorted(by_name)
    assert by_name["/cam/rgb"].msgtype == "sensor_msgs/msg/Image"
    assert by_name["/cam/rgb"].count == 61
    assert by_name["/cam/rgb"].rate_hz == pytest.approx(30.0, rel=1e-6)
    assert by_name["/r/imu_like"].rate_hz == pytest.approx(240.0, rel=1e-6)
    assert by_name["/tf_static"].count == 1
    assert by_name["/tf_static"].rate_hz == 0.0
    assert info.message_count == 1 + 61 + 481 + 1
    assert info.start_ns == NS
    assert info.duration_s == pytest.approx(2.0)
    assert info.start_marker_ns == NS + NS // 2
    text = info.format()
    assert "start marker: 1.500000 s (+0.500 s after start)" in text
    assert "duration:     2.000000 s" in text


def test_info_without_marker_says_none(tmp_path: Path) -> None:
    info = bag_info(_bag(tmp_path / "b", marker=False))
    assert info.start_marker_ns is None
    assert "start marker: none" in info.format()
