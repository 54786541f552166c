"""Real-time pacing of live messages: each one leaves when the wall clock reaches its stamp.

The simulator hands its messages out in bursts: a camera frame that renders late holds back the
IMU and odometry samples of every step after it (they reach the observers in step order), and
they then come out together, 8-30 IMU samples within a millisecond. A best-effort subscriber
with the sensor-data preset's depth (keep last 5) keeps the last 5 of such a burst
(docs/transport.md). `PaceSchedule` gives every message a wall-clock release time instead:

    release = anchor + stamp

with the anchor set by the first message (its arrival plus `delay_s`, a buffer that absorbs
frames that render late), so that messages leave with the spacing of their stamps. A message
that arrives after its release time means the simulator could not keep pace: it leaves at once,
and the anchor moves later by its lateness (never earlier: that would make a burst), so the
messages after it keep their stamps' spacing again. `PacedSender` runs the schedule on a thread.
No ROS here: the node (`grade_sim.node.sim_node`) gives it its publish function.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from grade_common.errors import ConfigError

T = TypeVar("T")
NS_PER_S = 1_000_000_000
# A message sent later than this after its release time counts as sent late: a 240 Hz IMU's
# samples are 4.2 ms apart, so two of them could then leave together.
SEND_LATE_S = 0.002


@dataclass(frozen=True)
class PaceReport:
    """How live publishing kept pace over a span of wall-clock time.

    Attributes:
        sim_s: simulated time (stamps) released in the span.
        wall_s: wall-clock length of the span.
        behind_s: how much later than scheduled the messages of the span had to leave in all
            (the anchor's moves): 0 when the simulator kept pace.
        late_messages: messages that arrived after their release time.
        messages: messages released in the span.
        sends_late: messages the sending thread sent more than SEND_LATE_S after their
            release time (it had no CPU then: a busy machine); None where not counted (only
            PacedSender's report of the whole run counts them).
        send_late_max_s: the most any message was sent after its release time.
    """

    sim_s: float
    wall_s: float
    behind_s: float
    late_messages: int
    messages: int
    sends_late: int | None = None
    send_late_max_s: float = 0.0

    @property
    def rate(self) -> float:
        """Simulated seconds released per wall-clock second (1.0: real time)."""
        return self.sim_s / self.wall_s if self.wall_s > 0 else 0.0

    def describe(self) -> str:
        text = (
            f"{self.messages} messages, {self.sim_s:.2f} s of simulated time in "
            f"{self.wall_s:.2f} s (rate {self.rate:.2f} of real time); "
            f"{self.late_messages} arrived after their time, publishing fell "
            f"{self.behind_s:.3f} s further behind the stamps"
        )
        if self.sends_late is None:
            return text
        return (
            f"{text}; {self.sends_late} sent more than {SEND_LATE_S * 1e3:.0f} ms after their "
            f"time (at most {self.send_late_max_s * 1e3:.1f} ms: the sending thread had no CPU)"
        )


class PaceSchedule:
    """Release times for stamped messages given in hand-out order (stamps in, times out).

    Pure bookkeeping on numbers: the caller says when each message arrived (`arrival_s`, any
    monotonic clock in seconds) and gets when it should leave on the same clock.
    """

    def __init__(self, delay_s: float) -> None:
        if not (delay_s >= 0 and delay_s < float("inf")):
            raise ConfigError(f"pacing delay_s: {delay_s} must be >= 0 seconds and finite")
        self.delay_s = delay_s
        self._anchor_s: float | None = None
        self._last_release_s = float("-inf")
        self._last_stamp_ns: int | None = None
        self._span = _Span()  # since the last report
        self._run = _Span()  # since the first message

    def release_s(self, stamp_ns: int, arrival_s: float) -> float:
        """When the message stamped `stamp_ns`, arriving at `arrival_s`, leaves.

        Never before an earlier message (hand-out order is kept: a lidar scan's stamp is its
        first ray's, earlier than the step's); never before it arrived."""
        if self._anchor_s is None:
            self._anchor_s = arrival_s + self.delay_s - stamp_ns / NS_PER_S
            self._span.start(arrival_s)
            self._run.start(arrival_s)
        release = max(self._anchor_s + stamp_ns / NS_PER_S, self._last_release_s)
        late_s = arrival_s - release if release < arrival_s else 0.0
        if late_s > 0:
            self._anchor_s += late_s
            release = arrival_s
        sim_ns = 0
        if self._last_stamp_ns is not None and stamp_ns > self._last_stamp_ns:
            sim_ns = stamp_ns - self._last_stamp_ns
        if self._last_stamp_ns is None or stamp_ns > self._last_stamp_ns:
            self._last_stamp_ns = stamp_ns
        for span in (self._span, self._run):
            span.add(sim_ns, late_s)
        self._last_release_s = release
        return release

    def report(self, now_s: float) -> PaceReport:
        """The span since the last report (or the first message) up to `now_s`; starts the next."""
        report = self._span.report(now_s)
        started = self._span.started
        self._span = _Span()
        if started:
            self._span.start(now_s)
        return report

    def run_report(self, now_s: float) -> PaceReport:
        """Everything since the first message, up to `now_s`."""
        return self._run.report(now_s)


@dataclass
class _Span:
    """The counts behind a PaceReport, over one report period or the whole run."""

    start_s: float = 0.0  # wall clock when the span started
    started: bool = False
    sim_ns: int = 0  # simulated time released
    behind_s: float = 0.0  # summed lateness of the late messages (PaceReport.behind_s)
    late: int = 0  # messages that arrived after their release time
    messages: int = 0

    def start(self, at_s: float) -> None:
        self.start_s = at_s
        self.started = True

    def add(self, sim_ns: int, late_s: float) -> None:
        self.messages += 1
        self.sim_ns += sim_ns
        if late_s > 0:
            self.late += 1
            self.behind_s += late_s

    def report(self, now_s: float) -> PaceReport:
        return PaceReport(
            sim_s=self.sim_ns / NS_PER_S,
            wall_s=max(0.0, now_s - self.start_s) if self.started else 0.0,
            behind_s=self.behind_s,
            late_messages=self.late,
            messages=self.messages,
        )


class PacedSender(Generic[T]):
    """Sends each item at its `PaceSchedule` release time from a thread of its own.

    `put` never blocks (the simulator goes on); `close` sends what is left at its time (or
    at once with `flush_now`) and ends the thread. Every `report_period_s` of wall-clock time in
    which the messages could not keep pace, `on_behind` gets the span's PaceReport.
    """

    def __init__(
        self,
        send: Callable[[T], None],
        delay_s: float,
        *,
        on_behind: Callable[[PaceReport], None],
        report_period_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
        name: str = "paced-sender",
    ) -> None:
        self._send = send
        self._schedule = PaceSchedule(delay_s)
        self._on_behind = on_behind
        self._report_period_s = report_period_s
        self._clock = clock
        self._queue: deque[tuple[float, T]] = deque()
        self._cond = threading.Condition()
        self._closing = False
        self._flush_now = False
        self._error: BaseException | None = None
        self._next_report_s = float("inf")
        self._sends_late = 0
        self._send_late_max_s = 0.0
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def put(self, stamp_ns: int, item: T) -> None:
        """Queue an item (a message) stamped `stamp_ns`; it leaves at its release time."""
        now = self._clock()
        with self._cond:
            if self._error is not None:
                raise self._error
            release = self._schedule.release_s(stamp_ns, now)
            if self._next_report_s == float("inf"):
                self._next_report_s = now + self._report_period_s
            self._queue.append((release, item))
            self._cond.notify()

    def close(self, *, flush_now: bool = False) -> PaceReport:
        """Send what is queued (at its time, or at once with `flush_now`), end the thread and
        return the whole run's PaceReport.

        Raises:
            BaseException: what `send` raised on the thread, if it failed."""
        with self._cond:
            self._closing = True
            self._flush_now = flush_now
            self._cond.notify()
        self._thread.join()
        if self._error is not None:
            raise self._error
        return replace(
            self._schedule.run_report(self._clock()),
            sends_late=self._sends_late,
            send_late_max_s=self._send_late_max_s,
        )

    def _loop(self) -> None:
        while True:
            with self._cond:
                due = self._next_due()
                if due is None:
                    return
            release, item = due
            late_s = self._clock() - release
            if late_s > SEND_LATE_S:
                self._sends_late += 1
            self._send_late_max_s = max(self._send_late_max_s, late_s)
            try:
                self._send(item)
            except BaseException as err:  # handed to the simulator thread at put/close
                with self._cond:
                    self._error = err
                    self._queue.clear()
                return

    def _next_due(self) -> tuple[float, T] | None:
        """Wait (holding the condition) until the head is due; None when closed and empty."""
        while True:
            now = self._clock()
            timeout: float | None = None  # nothing queued, no report due: until notified
            if now >= self._next_report_s:
                self._report_span(now)
                self._next_report_s = now + self._report_period_s
            if self._queue:
                release, _ = self._queue[0]
                if now >= release or self._flush_now:
                    return self._queue.popleft()
                timeout = min(release, self._next_report_s) - now
            elif self._closing:
                self._report_span(now)  # the last, shorter span
                return None
            elif self._next_report_s < float("inf"):
                timeout = self._next_report_s - now
            self._cond.wait(timeout)

    def _report_span(self, now: float) -> None:
        report = self._schedule.report(now)
        if report.behind_s > 0:
            self._on_behind(report)
