"""`grade bag info`: topics, types, counts, rates, duration and the experiment start marker."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from grade_replay.bag.io import NS_PER_S, START_MARKER_TOPIC, median_rate_hz, open_bag


@dataclass(frozen=True)
class TopicInfo:
    """One topic: type, message count and rate from the median receive period."""

    name: str
    msgtype: str
    count: int
    rate_hz: float


@dataclass(frozen=True)
class BagInfo:
    """What `grade bag info` reports about a bag."""

    path: Path
    storage_size_bytes: int
    message_count: int
    start_ns: int
    end_ns: int
    topics: tuple[TopicInfo, ...]
    start_marker_ns: int | None  # receive time of the first /starting_experiment message
    integrity: str  # what the CRC check of every chunk found

    @property
    def duration_s(self) -> float:
        """Seconds between the first and the last message."""
        return (self.end_ns - self.start_ns) / NS_PER_S

    def format(self) -> str:
        """Human-readable table."""
        marker = (
            "none"
            if self.start_marker_ns is None
            else f"{self.start_marker_ns / NS_PER_S:.6f} s "
            f"(+{(self.start_marker_ns - self.start_ns) / NS_PER_S:.3f} s after start)"
        )
        lines = [
            f"bag:          {self.path}",
            f"size:         {self.storage_size_bytes / 1e6:.3f} MB",
            f"messages:     {self.message_count}",
            f"start:        {self.start_ns / NS_PER_S:.6f} s",
            f"end:          {self.end_ns / NS_PER_S:.6f} s",
            f"duration:     {self.duration_s:.6f} s",
            f"start marker: {marker}",
            f"integrity:    {self.integrity}",
            "topics:",
        ]
        width = max((len(t.name) for t in self.topics), default=5)
        twidth = max((len(t.msgtype) for t in self.topics), default=4)
        lines.append(f"  {'topic':<{width}}  {'type':<{twidth}}  {'count':>8}  {'rate_hz':>9}")
        lines += [
            f"  {t.name:<{width}}  {t.msgtype:<{twidth}}  {t.count:>8}  {t.rate_hz:>9.3f}"
            for t in self.topics
        ]
        return "\n".join(lines)


def bag_info(path: Path | str, progress: bool = False) -> BagInfo:
    """Read a bag once and summarise it.

    Raises:
        BagError: the bag is missing, of an unknown format, truncated or corrupt.
    """
    with open_bag(path) as bag:
        integrity = bag.verify().describe()
        summaries = bag.topics()
        stamps: dict[str, list[int]] = {name: [] for name in summaries}
        marker: int | None = None
        for conn, t_ns, _ in bag.messages(progress=progress, desc="info"):
            stamps[conn.topic].append(t_ns)
            if conn.topic == START_MARKER_TOPIC and marker is None:
                marker = t_ns
        topics = tuple(
            TopicInfo(
                s.name,
                s.msgtype,
                len(stamps[s.name]),
                median_rate_hz(np.asarray(stamps[s.name], dtype=np.int64)),
            )
            for s in summaries.values()
        )
        return BagInfo(
            Path(path),
            bag.size_bytes,
            sum(t.count for t in topics),
            bag.start_ns,
            bag.end_ns,
            topics,
            marker,
            integrity,
        )
