"""Publication timing from DDS source timestamps (grade_replay.publish_timing)."""

from __future__ import annotations

import pytest

from grade_replay.publish_timing import publish_timing

MS = 1_000_000


def test_even_publications_have_no_burst() -> None:
    timing = publish_timing([k * 4 * MS for k in range(100)])
    assert timing.messages == 100
    assert (timing.gap_p50_ms, timing.gap_p99_ms, timing.gap_max_ms) == (4.0, 4.0, 4.0)
    assert timing.burst_max == 1
    assert timing.in_bursts == 0.0


def test_a_burst_after_a_stall_is_counted() -> None:
    # 10 messages 4 ms apart, then 8 written 0.1 ms apart after a 40 ms stall, then 4 ms again.
    stamps = [k * 4 * MS for k in range(10)]
    stamps += [stamps[-1] + 40 * MS + k * MS // 10 for k in range(8)]
    stamps += [stamps[-1] + (k + 1) * 4 * MS for k in range(10)]
    timing = publish_timing(stamps)
    assert timing.burst_max == 8
    assert timing.gap_max_ms == 40.0
    assert timing.in_bursts == pytest.approx(7 / 27, abs=1e-4)


def test_arrival_order_does_not_matter_and_one_message_is_no_gap() -> None:
    assert publish_timing([3 * MS, 0, 1 * MS]).gap_max_ms == 2.0
    assert publish_timing([5]).burst_max == 1
    with pytest.raises(ValueError, match="no source timestamps"):
        publish_timing([])
