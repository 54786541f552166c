"""`grade bag clip`: windows and everything after the start marker, latched topics kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from bagkit import NS, BagSpec, read_bag, string, tf_message, write_bag

from grade_replay.bag.clip import ClipConfig, clip_bag
from grade_replay.errors import ReplayConfigError

STR = "std_msgs/msg/String"


def _bag(path: Path) -> Path:
    spec = BagSpec(latched={"/tf_static", "/starting_experiment"})
    spec.add(
        "/tf_static",
        "tf2_msgs/msg/TFMessage",
        10 * NS,
        tf_message(10 * NS, [("world", "r/odom", (0.0, 0.0, 0.0))]),
    )
    for k in range(100):  # 10 Hz from t = 10 s
        spec.add("/ticks", STR, 10 * NS + k * NS // 10, string(f"t{k}"))
    spec.add("/starting_experiment", STR, 13 * NS, string("starting"))
    spec.messages.sort(key=lambda m: m[2])
    return write_bag(path, spec)


def _ticks(bag: Path) -> list[int]:
    return [t for topic, t, _ in read_bag(bag) if topic == "/ticks"]


def test_window_is_relative_to_the_first_message_and_half_open(tmp_path: Path) -> None:
    src = _bag(tmp_path / "b")
    report = clip_bag(src, tmp_path / "w", ClipConfig(start_s=2.0, end_s=4.0))
    ticks = _ticks(tmp_path / "w")
    assert ticks == [12 * NS + k * NS // 10 for k in range(20)]
    topics = [topic for topic, _, _ in read_bag(tmp_path / "w")]
    assert topics[0] == "/tf_static"  # latched, kept from before the window
    assert report.latched_kept == 1
    assert report.kept == 20 + 1 + 1  # ticks, tf_static, the marker at 13 s
    assert report.kept + report.dropped == 102
    kept = {(tp, t, d) for tp, t, d in read_bag(tmp_path / "w")}
    assert kept <= set(read_bag(src))  # same bytes and stamps as in the input


def test_after_start_marker_keeps_the_marker_and_everything_after(tmp_path: Path) -> None:
    src = _bag(tmp_path / "b")
    report = clip_bag(src, tmp_path / "m", ClipConfig(after_start_marker=True))
    assert _ticks(tmp_path / "m") == [13 * NS + k * NS // 10 for k in range(70)]
    topics = {topic for topic, _, _ in read_bag(tmp_path / "m")}
    assert topics == {"/tf_static", "/ticks", "/starting_experiment"}
    assert report.window_start_ns == 13 * NS


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, r"either a window"),
        ({"start_s": 1.0, "after_start_marker": True}, r"not both"),
        ({"start_s": -1.0}, r"start_s=-1.0 must be a finite number >= 0"),
        ({"end_s": float("inf")}, r"end_s=inf must be a finite number"),
        ({"start_s": 3.0, "end_s": 3.0}, r"end_s=3.0 must be greater than start_s=3.0"),
    ],
)
def test_clip_config_rejects(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ReplayConfigError, match=match):
        ClipConfig(**kwargs)  # type: ignore[arg-type]
