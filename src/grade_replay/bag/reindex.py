"""`grade bag reindex`: GRADE's clock re-indexing of a bag whose clock was published late.

For each topic with a known rate, the messages keep their order and count; their stamps are
replaced by the perfectly periodic series the rate implies, aligned on the last message (by the
end of a run the late clock has caught up, so the last stamps are the trustworthy ones). Both the
bag receive time and `header.stamp` (every transform's stamp for tf2_msgs/TFMessage) are
rewritten (and the `clock` of rosgraph_msgs/Clock). A stamp within `tolerance_ns` of its
periodic value is kept as it was, so a bag that needs no repair comes out unchanged. Depth beyond
a cut-off can become NaN.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from grade_replay.bag.io import (
    NS_PER_S,
    BagSource,
    atomic_output,
    copy_connection,
    header_stamp_ns,
    open_bag,
    open_writer,
    stamp_to_ns,
    with_header_stamp,
)
from grade_replay.errors import BagFormatError, ReplayConfigError

TF_TYPE = "tf2_msgs/msg/TFMessage"
IMAGE_TYPE = "sensor_msgs/msg/Image"


class Alignment(enum.Enum):
    """Which end each periodic series is pinned to."""

    TOPIC_LAST = "topic-last"  # each topic's last message keeps its stamp
    COMMON_LAST = "common-last"  # GRADE: every topic's last message at the latest last stamp


class StampKind(enum.Enum):
    """Where a topic's stamps live in its messages."""

    HEADER = "header"  # first field std_msgs/Header: patched in the CDR bytes
    TIME = "time"  # first field builtin_interfaces/Time (rosgraph_msgs/Clock): patched the same
    TF = "tf"  # tf2_msgs/TFMessage: every transform's header
    RECEIVE = "receive"  # no header: only the bag receive time


# Stamps are integer nanoseconds: above 1 MHz a period is under 1000 ns and rounding would
# bunch them up (1e12 Hz gave every message the same stamp); no sensor publishes that fast.
MAX_RATE_HZ = 1e6


@dataclass(frozen=True)
class ReindexConfig:
    """Options of `reindex`, validated once.

    Attributes:
        rates_hz: topic -> known publishing rate (Hz); other topics are copied untouched.
        tolerance_ns: a stamp closer than this to its periodic value is left as it is.
        alignment: which last stamp the periodic series ends on.
        depth_cutoff_m: depth beyond this (metres) becomes NaN on `depth_topic`.
        depth_topic: a sensor_msgs/Image 32FC1 topic.
    """

    rates_hz: dict[str, float] = field(default_factory=dict)
    tolerance_ns: int = 1000
    alignment: Alignment = Alignment.TOPIC_LAST
    depth_cutoff_m: float | None = None
    depth_topic: str | None = None

    def __post_init__(self) -> None:
        for topic, rate in self.rates_hz.items():
            if not math.isfinite(rate) or not 0 < rate <= MAX_RATE_HZ:
                raise ReplayConfigError(
                    f"reindex: rate of {topic} = {rate} Hz is not allowed; "
                    f"use (0, {MAX_RATE_HZ:g}] Hz"
                )
        if not 0 <= self.tolerance_ns <= NS_PER_S:
            raise ReplayConfigError(
                f"reindex: tolerance_ns={self.tolerance_ns} must be in [0, 1e9]"
            )
        if (self.depth_cutoff_m is None) != (self.depth_topic is None):
            raise ReplayConfigError(
                "reindex: --depth-cutoff-m and --depth-topic go together "
                f"(got {self.depth_cutoff_m!r} and {self.depth_topic!r})"
            )
        if self.depth_cutoff_m is not None and not (
            math.isfinite(self.depth_cutoff_m) and self.depth_cutoff_m > 0
        ):
            raise ReplayConfigError(
                f"reindex: depth_cutoff_m={self.depth_cutoff_m} must be a finite number > 0"
            )
        if not self.rates_hz and self.depth_topic is None:
            raise ReplayConfigError(
                "reindex: nothing to do; give --rate TOPIC=HZ and/or "
                "--depth-cutoff-m with --depth-topic"
            )


def periodic_stamps_ns(count: int, rate_hz: float, last_ns: int) -> np.ndarray:
    """The series of `count` stamps at `rate_hz` whose last element is `last_ns`."""
    steps_back = np.arange(count - 1, -1, -1, dtype=np.float64)
    return np.int64(last_ns) - np.round(steps_back * (NS_PER_S / rate_hz)).astype(np.int64)


def snap_to_series(stamps_ns: np.ndarray, series_ns: np.ndarray, tolerance_ns: int) -> np.ndarray:
    """`series_ns`, except where a stamp is already within tolerance (kept bit-exact)."""
    keep = np.abs(stamps_ns - series_ns) <= tolerance_ns
    return np.where(keep, stamps_ns, series_ns)


@dataclass(frozen=True)
class TopicShift:
    """What reindex did to one topic's stamps."""

    topic: str
    stamp_kind: StampKind
    count: int
    rate_hz: float
    moved: int  # messages whose stamp changed
    max_shift_ms: float  # largest |new - old| stamp change
    mean_shift_ms: float  # mean (new - old), signed: negative = moved earlier
    receive_moved: int  # messages whose bag receive time changed


@dataclass(frozen=True)
class ReindexReport:
    """Per-topic shifts, plus the depth cut-off count."""

    topics: tuple[TopicShift, ...]
    messages: int
    depth_pixels_cut: int

    def format(self) -> str:
        """Table: one line per re-indexed topic."""
        lines = [
            f"{'topic':<40} {'stamps':<8} {'count':>7} {'rate_hz':>8} {'moved':>7} "
            f"{'max_ms':>10} {'mean_ms':>10} {'recv_moved':>10}"
        ]
        lines += [
            f"{t.topic:<40} {t.stamp_kind.value:<8} {t.count:>7} {t.rate_hz:>8.3f} "
            f"{t.moved:>7} {t.max_shift_ms:>10.3f} {t.mean_shift_ms:>10.3f} "
            f"{t.receive_moved:>10}"
            for t in self.topics
        ]
        lines.append(
            f"{self.messages} messages written; {self.depth_pixels_cut} depth pixels "
            "beyond the cut-off set to NaN"
        )
        return "\n".join(lines)


def _stamp_kind(bag: BagSource, msgtype: str) -> StampKind:
    if bag.has_header(msgtype):
        return StampKind.HEADER
    if bag.starts_with_time(msgtype):
        return StampKind.TIME
    if msgtype == TF_TYPE:
        return StampKind.TF
    return StampKind.RECEIVE


def _read_stamp(bag: BagSource, kind: StampKind, msgtype: str, t_ns: int, data: bytes) -> int:
    if kind in (StampKind.HEADER, StampKind.TIME):
        return header_stamp_ns(data)
    if kind is StampKind.TF:
        msg = bag.deserialize(data, msgtype)
        return stamp_to_ns(msg.transforms[0].header.stamp) if msg.transforms else t_ns
    return t_ns


def _cut_depth(bag: BagSource, data: bytes, cutoff_m: float, topic: str) -> tuple[bytes, int]:
    msg = bag.deserialize(data, IMAGE_TYPE)
    if msg.encoding != "32FC1":
        raise BagFormatError(
            f"{bag.path}: depth topic {topic} has encoding {msg.encoding!r}; "
            "the depth cut-off needs 32FC1 (metres)"
        )
    dtype = np.dtype(">f4" if msg.is_bigendian else "<f4")
    rows = np.frombuffer(msg.data.tobytes(), dtype=np.uint8).reshape(msg.height, msg.step)
    depth_m = rows[:, : msg.width * 4].copy().view(dtype).reshape(msg.height, msg.width)
    beyond = depth_m > cutoff_m
    cut = int(np.count_nonzero(beyond))
    if cut == 0:
        return data, 0
    depth_m[beyond] = np.nan
    rows = rows.copy()
    rows[:, : msg.width * 4] = depth_m.view(np.uint8).reshape(msg.height, msg.width * 4)
    msg.data = rows.reshape(-1)
    return bag.serialize(msg, IMAGE_TYPE), cut


def reindex_bag(
    src: Path | str, out: Path | str, config: ReindexConfig, progress: bool = False
) -> ReindexReport:
    """Write `src` re-indexed to the new bag `out` and report what moved.

    Raises:
        BagError: the input bag cannot be read.
        TopicNotFoundError: a rate or depth topic is not in the bag.
        ReplayConfigError: a series would start before time 0 (rate too low for the count).
        BagOutputExistsError: `out` exists.
    """
    with open_bag(src) as bag:
        topics = sorted(config.rates_hz)
        rate_conns = bag.connections_of(topics)
        depth_topic = config.depth_topic
        if depth_topic is not None and bag.msgtype_of(depth_topic) != IMAGE_TYPE:
            raise BagFormatError(
                f"{bag.path}: depth topic {depth_topic} has type "
                f"{bag.msgtype_of(depth_topic)}, not {IMAGE_TYPE}"
            )
        kinds = {t: _stamp_kind(bag, bag.msgtype_of(t)) for t in topics}

        # Pass 1: the stamps of every re-indexed topic in message order.
        old: dict[str, list[int]] = {t: [] for t in topics}
        # (an empty connection list would mean "every topic" to the reader)
        scan = bag.messages(rate_conns, progress=progress, desc="reindex scan") if topics else ()
        for conn, t_ns, data in scan:
            old[conn.topic].append(_read_stamp(bag, kinds[conn.topic], conn.msgtype, t_ns, data))
        old_np = {t: np.asarray(v, dtype=np.int64) for t, v in old.items()}
        ends = {t: int(v[-1]) for t, v in old_np.items() if v.size}
        common_end = max(ends.values(), default=0)
        new_np: dict[str, np.ndarray] = {}
        for t, stamps in old_np.items():
            if not stamps.size:
                new_np[t] = stamps
                continue
            last = ends[t] if config.alignment is Alignment.TOPIC_LAST else common_end
            series = periodic_stamps_ns(stamps.size, config.rates_hz[t], last)
            if series[0] < 0:
                raise ReplayConfigError(
                    f"{bag.path}: {t} has {stamps.size} messages; at {config.rates_hz[t]} Hz "
                    f"ending at {last / NS_PER_S:.6f} s they would start before time 0; "
                    "check the rate"
                )
            new_np[t] = snap_to_series(stamps, series, config.tolerance_ns)

        # Pass 2: copy everything, restamping the re-indexed topics and cutting depth.
        index = dict.fromkeys(topics, 0)
        recv_moved = dict.fromkeys(topics, 0)
        written = cut_total = 0
        with atomic_output(out, src) as tmp:
            writer = open_writer(tmp)
            try:
                conn_map = {c.id: copy_connection(writer, c, bag) for c in bag.connections}
                for conn, t_ns, data in bag.messages(progress=progress, desc="reindex write"):
                    topic = conn.topic
                    if topic in index:
                        i = index[topic]
                        index[topic] = i + 1
                        new_stamp = int(new_np[topic][i])
                        if new_stamp != int(old_np[topic][i]):
                            data = _restamp(bag, kinds[topic], conn.msgtype, data, new_stamp)
                        if abs(new_stamp - t_ns) > config.tolerance_ns:
                            t_ns = new_stamp
                            recv_moved[topic] += 1
                    if topic == depth_topic and config.depth_cutoff_m is not None:
                        data, cut = _cut_depth(bag, data, config.depth_cutoff_m, topic)
                        cut_total += cut
                    writer.write(conn_map[conn.id], t_ns, data)
                    written += 1
            finally:
                writer.close()
    shifts = []
    for t in topics:
        delta = new_np[t] - old_np[t]
        shifts.append(
            TopicShift(
                t,
                kinds[t],
                int(delta.size),
                config.rates_hz[t],
                int(np.count_nonzero(delta)),
                float(np.max(np.abs(delta))) / 1e6 if delta.size else 0.0,
                float(np.mean(delta)) / 1e6 if delta.size else 0.0,
                recv_moved[t],
            )
        )
    return ReindexReport(tuple(shifts), written, cut_total)


def _restamp(bag: BagSource, kind: StampKind, msgtype: str, data: bytes, stamp_ns: int) -> bytes:
    if kind in (StampKind.HEADER, StampKind.TIME):
        return with_header_stamp(data, stamp_ns)
    if kind is StampKind.TF:
        msg = bag.deserialize(data, msgtype)
        sec, nanosec = divmod(stamp_ns, NS_PER_S)
        for transform in msg.transforms:
            transform.header.stamp.sec = sec
            transform.header.stamp.nanosec = nanosec
        return bag.serialize(msg, msgtype)
    return data
