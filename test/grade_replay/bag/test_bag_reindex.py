"""Clock re-indexing on bags built with known delays and jitter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from bagkit import NS, BagSpec, T, decode, image, read_bag, stamp, string, tf_message, write_bag
from hypothesis import given, settings
from hypothesis import strategies as st

from grade_replay.bag.reindex import (
    Alignment,
    ReindexConfig,
    StampKind,
    periodic_stamps_ns,
    reindex_bag,
    snap_to_series,
)
from grade_replay.errors import BagFormatError, ReplayConfigError, TopicNotFoundError

IMG = "sensor_msgs/msg/Image"
TF = "tf2_msgs/msg/TFMessage"
STR = "std_msgs/msg/String"
RATES = {"/cam/rgb": 30.0, "/tf": 120.0, "/ticks": 10.0}
COUNTS = {"/cam/rgb": 60, "/tf": 240, "/ticks": 20}
T0_NS = 3 * NS


def _late_clock_bag(path: Path, seed: int = 7) -> Path:
    """Stamps lag up to 200 ms at the start (late clock), catching up halfway, plus jitter."""
    rng = np.random.default_rng(seed)
    spec = BagSpec()
    for topic, count in COUNTS.items():
        period = NS / RATES[topic]
        for k in range(count):
            true_ns = T0_NS + round(k * period)
            lag_ns = round(max(0.0, 0.2 * (1 - 2 * k / count)) * NS)
            jitter_ns = 0 if k == count - 1 else int(rng.integers(-3_000_000, 3_000_000))
            t_ns = true_ns - lag_ns + jitter_ns
            if topic == "/cam/rgb":
                msg = image(t_ns, np.full((2, 3, 3), k, np.uint8), "rgb8")
            elif topic == "/tf":
                msg = tf_message(
                    t_ns,
                    [
                        ("r/odom", "r/base_link", (float(k), 0.0, 0.0)),
                        ("r/base_link", "r/cam_link", (0.1, 0.0, 0.0)),
                    ],
                )
            else:
                msg = string(f"tick{k}")
            # header-stamped topics arrive 1 ms after their stamp; others only have receive time
            spec.add(
                topic,
                {"/cam/rgb": IMG, "/tf": TF, "/ticks": STR}[topic],
                t_ns + (1_000_000 if topic == "/cam/rgb" else 0),
                msg,
            )
        spec.add("/other", STR, T0_NS + 5, string("untouched"))
    spec.messages.sort(key=lambda m: m[2])
    return write_bag(path, spec)


def _stamps(messages: list[tuple[str, int, bytes]], topic: str) -> tuple[np.ndarray, list[object]]:
    recv = np.array([t for tp, t, _ in messages if tp == topic], dtype=np.int64)
    msgtype = {"/cam/rgb": IMG, "/tf": TF}.get(topic, STR)
    return recv, [decode(d, msgtype) for tp, _, d in messages if tp == topic]


def test_reindex_makes_late_and_jittered_stamps_periodic(tmp_path: Path) -> None:
    src = _late_clock_bag(tmp_path / "late")
    before = read_bag(src)
    report = reindex_bag(src, tmp_path / "fixed", ReindexConfig(dict(RATES)))
    after = read_bag(tmp_path / "fixed")
    assert read_bag(src) == before  # input untouched
    assert len(after) == len(before)
    for topic, rate in RATES.items():
        old_recv, old_msgs = _stamps(before, topic)
        recv, msgs = _stamps(after, topic)
        assert len(msgs) == COUNTS[topic]  # nothing dropped or duplicated
        if topic == "/cam/rgb":
            stamps = np.array([m.header.stamp.sec * NS + m.header.stamp.nanosec for m in msgs])
            assert [int(m.data[0]) for m in msgs] == list(range(COUNTS[topic]))  # order kept
            np.testing.assert_array_equal(recv, stamps)  # receive time = new header stamp
        elif topic == "/tf":
            stamps = np.array(
                [
                    m.transforms[0].header.stamp.sec * NS + m.transforms[0].header.stamp.nanosec
                    for m in msgs
                ]
            )
            assert all(m.transforms[1].header.stamp == m.transforms[0].header.stamp for m in msgs)
            assert [m.transforms[0].transform.translation.x for m in msgs] == [
                float(k) for k in range(COUNTS[topic])
            ]
            np.testing.assert_array_equal(recv, stamps)
        else:
            stamps = recv
            assert [m.data for m in msgs] == [f"tick{k}" for k in range(COUNTS[topic])]
        periods = np.diff(stamps)
        assert np.all(np.abs(periods - NS / rate) <= 1), topic  # periodic to the nanosecond
        expected = T0_NS + np.round(np.arange(COUNTS[topic]) * NS / rate).astype(np.int64)
        assert np.all(np.abs(stamps - expected) <= 1), topic  # the true series, end-aligned
        shift = {s.topic: s for s in report.topics}[topic]
        assert shift.count == COUNTS[topic]
        assert 150 < shift.max_shift_ms < 205
        assert shift.moved > COUNTS[topic] // 2
        assert shift.mean_shift_ms > 0  # late clock: stamps move later
        del old_recv, old_msgs
    kinds = {s.topic: s.stamp_kind for s in report.topics}
    assert kinds == {"/cam/rgb": StampKind.HEADER, "/tf": StampKind.TF, "/ticks": StampKind.RECEIVE}
    other_before = [m for m in before if m[0] == "/other"]
    assert [m for m in after if m[0] == "/other"] == other_before


def test_bag_that_needs_no_repair_comes_out_unchanged(tmp_path: Path) -> None:
    spec = BagSpec()
    for k in range(90):
        t_ns = T0_NS + round(k * NS / 30)
        spec.add("/cam/rgb", IMG, t_ns, image(t_ns, np.full((2, 2, 3), k, np.uint8), "rgb8"))
        if k % 3 == 0:
            spec.add("/ticks", STR, T0_NS + k * NS // 30, string(f"t{k}"))
    src = write_bag(tmp_path / "good", spec)
    report = reindex_bag(src, tmp_path / "same", ReindexConfig({"/cam/rgb": 30.0, "/ticks": 10.0}))
    assert read_bag(tmp_path / "same") == read_bag(src)
    assert all(s.moved == 0 and s.receive_moved == 0 for s in report.topics)


def test_common_alignment_ends_every_topic_on_the_latest_stamp(tmp_path: Path) -> None:
    src = _late_clock_bag(tmp_path / "late")
    reindex_bag(
        src,
        tmp_path / "common",
        ReindexConfig({"/cam/rgb": 30.0, "/ticks": 10.0}, alignment=Alignment.COMMON_LAST),
    )
    after = read_bag(tmp_path / "common")
    last_cam = max(t for tp, t, _ in after if tp == "/cam/rgb")
    last_ticks = max(t for tp, t, _ in after if tp == "/ticks")
    assert last_cam == last_ticks


def test_depth_beyond_cutoff_becomes_nan(tmp_path: Path) -> None:
    depth = np.array([[0.5, 2.0, 5.0], [5.5, 9.0, 0.0]], dtype=np.float32)
    spec = BagSpec()
    for k in range(3):
        spec.add(
            "/cam/depth", IMG, T0_NS + k * NS // 30, image(T0_NS + k * NS // 30, depth + k, "32FC1")
        )
    src = write_bag(tmp_path / "depth", spec)
    report = reindex_bag(
        src, tmp_path / "cut", ReindexConfig(depth_cutoff_m=5.0, depth_topic="/cam/depth")
    )
    out = [decode(d, IMG) for _, _, d in read_bag(tmp_path / "cut")]
    expected_cut = 0
    for k, msg in enumerate(out):
        got = msg.data.view(np.float32).reshape(2, 3)
        want = depth + k
        beyond = want > 5.0
        expected_cut += int(beyond.sum())
        assert np.all(np.isnan(got[beyond]))
        np.testing.assert_array_equal(got[~beyond], want[~beyond])
    assert report.depth_pixels_cut == expected_cut == 2 + 3 + 3


def test_depth_cutoff_needs_32fc1(tmp_path: Path) -> None:
    spec = BagSpec()
    spec.add("/cam/depth", IMG, T0_NS, image(T0_NS, np.ones((2, 2), np.uint16), "16UC1"))
    src = write_bag(tmp_path / "d16", spec)
    with pytest.raises(BagFormatError, match=r"d16: depth topic /cam/depth has encoding '16UC1'"):
        reindex_bag(
            src, tmp_path / "out", ReindexConfig(depth_cutoff_m=1.0, depth_topic="/cam/depth")
        )
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / ".out.partial").exists()


def test_rate_too_low_for_the_count_is_an_error(tmp_path: Path) -> None:
    src = _late_clock_bag(tmp_path / "late")
    with pytest.raises(ReplayConfigError, match=r"/tf has 240 messages; at 1.0 Hz"):
        reindex_bag(src, tmp_path / "out", ReindexConfig({"/tf": 1.0}))


def test_unknown_rate_topic_is_named(tmp_path: Path) -> None:
    src = _late_clock_bag(tmp_path / "late")
    with pytest.raises(TopicNotFoundError, match=r"late: topic\(s\) \['/nope'\] not in the bag"):
        reindex_bag(src, tmp_path / "out", ReindexConfig({"/nope": 10.0}))


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rates_hz": {"/a": 0.0}}, r"rate of /a = 0.0 Hz is not allowed; use \(0, 1e\+06\] Hz"),
        ({"rates_hz": {"/a": 1e12}}, r"rate of /a = 1000000000000.0 Hz is not allowed"),
        ({"rates_hz": {"/a": float("nan")}}, r"rate of /a = nan Hz"),
        ({"rates_hz": {"/a": 1.0}, "tolerance_ns": -1}, r"tolerance_ns=-1 must be in"),
        ({"depth_cutoff_m": 3.0}, r"--depth-cutoff-m and --depth-topic go together"),
        ({"depth_cutoff_m": -1.0, "depth_topic": "/d"}, r"depth_cutoff_m=-1.0 must be"),
        ({}, r"nothing to do"),
    ],
)
def test_config_rejects_bad_values(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ReplayConfigError, match=match):
        ReindexConfig(**kwargs)  # type: ignore[arg-type]


@settings(max_examples=50, deadline=None)
@given(
    count=st.integers(1, 5000), rate_hz=st.floats(0.5, 1000.0), last_ns=st.integers(10**10, 10**13)
)
def test_periodic_series_ends_on_anchor_with_the_rate(
    count: int, rate_hz: float, last_ns: int
) -> None:
    series = periodic_stamps_ns(count, rate_hz, last_ns)
    assert series.size == count
    assert series[-1] == last_ns
    assert np.all(np.abs(np.diff(series) - NS / rate_hz) <= 1)
    assert np.array_equal(snap_to_series(series, series, 0), series)


def test_clock_messages_get_their_clock_field_restamped(tmp_path: Path) -> None:
    spec = BagSpec()
    for k in range(50):
        t_ns = T0_NS + k * NS // 100 - (20_000_000 if k < 10 else 0)  # late first 0.1 s
        spec.add(
            "/clock",
            "rosgraph_msgs/msg/Clock",
            t_ns,
            T["rosgraph_msgs/msg/Clock"](clock=stamp(t_ns)),
        )
    src = write_bag(tmp_path / "clock", spec)
    report = reindex_bag(src, tmp_path / "out", ReindexConfig({"/clock": 100.0}))
    out = read_bag(tmp_path / "out")
    clocks = [decode(d, "rosgraph_msgs/msg/Clock").clock for _, _, d in out]
    clock_ns = np.array([c.sec * NS + c.nanosec for c in clocks])
    np.testing.assert_array_equal(clock_ns, [t for _, t, _ in out])
    np.testing.assert_array_equal(clock_ns, T0_NS + np.arange(50) * NS // 100)
    assert report.topics[0].stamp_kind is StampKind.TIME
    assert report.topics[0].moved == 10
    assert report.topics[0].max_shift_ms == pytest.approx(20.0)
