"""How evenly a topic's messages were published, from their DDS source timestamps.

A subscriber that receives every message (reliable) sees each one's source timestamp, the time
its publisher wrote it. Bursts show there: many messages of one topic written within a
millisecond, where their stamps are several milliseconds apart. `topic_counter` prints these
figures per topic and `grade bench delivery` reports them (docs/transport.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np

BURST_WINDOW_NS = 1_000_000  # messages written within 1 ms of each other count as one burst


@dataclass(frozen=True)
class PublishTiming:
    """Gaps between successive publications of one topic, and its largest burst.

    Attributes:
        messages: publications seen.
        gap_p50_ms, gap_p99_ms, gap_max_ms: gaps between successive source timestamps.
        burst_max: the most messages written within BURST_WINDOW_NS of the first of them.
        in_bursts: the share of gaps shorter than BURST_WINDOW_NS (0..1).
    """

    messages: int
    gap_p50_ms: float
    gap_p99_ms: float
    gap_max_ms: float
    burst_max: int
    in_bursts: float

    def as_dict(self) -> dict[str, float | int]:
        return asdict(self)


def publish_timing(source_stamps_ns: Sequence[int]) -> PublishTiming:
    """The timing of one topic's publications, given their source timestamps in arrival order.

    Raises:
        ValueError: no timestamps.
    """
    if len(source_stamps_ns) == 0:
        raise ValueError("publish_timing: no source timestamps (the topic received nothing)")
    stamps = np.sort(np.asarray(source_stamps_ns, dtype=np.int64))
    if stamps.size == 1:
        return PublishTiming(1, 0.0, 0.0, 0.0, 1, 0.0)
    gaps_ms = np.diff(stamps) / 1e6
    # For each message, how many (itself included) were written within the window after it.
    ends = np.searchsorted(stamps, stamps + BURST_WINDOW_NS, side="left")
    burst = int(np.max(ends - np.arange(stamps.size)))
    return PublishTiming(
        messages=int(stamps.size),
        gap_p50_ms=round(float(np.percentile(gaps_ms, 50)), 3),
        gap_p99_ms=round(float(np.percentile(gaps_ms, 99)), 3),
        gap_max_ms=round(float(gaps_ms.max()), 3),
        burst_max=burst,
        in_bursts=round(float(np.mean(gaps_ms < BURST_WINDOW_NS / 1e6)), 4),
    )
