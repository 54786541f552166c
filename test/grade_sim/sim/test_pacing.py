"""Real-time pacing of live messages (grade_sim.sim.pacing): stamps in, release times out."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from grade_common.errors import ConfigError
from grade_sim.sim.pacing import NS_PER_S, PacedSender, PaceReport, PaceSchedule

IMU_NS = NS_PER_S // 240  # 240 Hz, as the default scenario's IMU (4 166 666 ns)


def imu_stamps(n: int) -> list[int]:
    return [k * IMU_NS for k in range(n)]


def test_a_burst_leaves_with_the_spacing_of_its_stamps() -> None:
    """The IMU samples held back by a slow camera frame arrive together and leave evenly."""
    schedule = PaceSchedule(delay_s=0.25)
    stamps = imu_stamps(32)
    first = schedule.release_s(stamps[0], arrival_s=100.0)
    # The other 31 arrive in one burst 120 ms later (a frame took long; they waited behind it).
    releases = [first] + [schedule.release_s(s, arrival_s=100.12) for s in stamps[1:]]
    assert first == pytest.approx(100.25)
    np.testing.assert_allclose(np.diff(releases), IMU_NS / NS_PER_S, rtol=0, atol=1e-9)
    report = schedule.report(now_s=101.0)
    assert report.behind_s == 0.0
    assert report.late_messages == 0
    assert report.messages == 32


def test_a_message_too_late_for_the_buffer_moves_the_schedule_later_not_into_a_burst() -> None:
    schedule = PaceSchedule(delay_s=0.05)
    stamps = imu_stamps(20)
    schedule.release_s(stamps[0], arrival_s=0.0)  # anchor: leaves at 0.05
    # The rest arrive at 0.5 s, long after the 50 ms buffer: the first of them leaves at once,
    # the others at their stamps' spacing from it (not all at once).
    releases = [schedule.release_s(s, arrival_s=0.5) for s in stamps[1:]]
    assert releases[0] == 0.5
    np.testing.assert_allclose(np.diff(releases), IMU_NS / NS_PER_S, rtol=0, atol=1e-9)
    report = schedule.report(now_s=1.0)
    assert report.late_messages == 1
    assert report.behind_s == pytest.approx(0.5 - (0.05 + IMU_NS / NS_PER_S))
    # The schedule never moves earlier again: a fast simulator later does not cause a burst.
    after = schedule.release_s(stamps[-1] + IMU_NS, arrival_s=0.51)
    assert after == pytest.approx(releases[-1] + IMU_NS / NS_PER_S)


def test_hand_out_order_is_kept_when_a_stamp_is_earlier_than_the_one_before() -> None:
    """A lidar scan is stamped at its first ray, before the step that hands it out."""
    schedule = PaceSchedule(delay_s=0.1)
    a = schedule.release_s(10 * IMU_NS, arrival_s=0.0)
    scan = schedule.release_s(8 * IMU_NS, arrival_s=0.0)
    b = schedule.release_s(11 * IMU_NS, arrival_s=0.0)
    assert a <= scan <= b
    assert scan == a


def test_messages_of_one_step_leave_together_in_order() -> None:
    schedule = PaceSchedule(delay_s=0.1)
    same = [schedule.release_s(IMU_NS, arrival_s=0.0) for _ in range(3)]
    assert same == [same[0]] * 3


def test_the_report_gives_the_rate_the_simulator_reached() -> None:
    """A simulator at half real time: every message is late, the rate reported is 0.5."""
    schedule = PaceSchedule(delay_s=0.0)
    stamps = imu_stamps(241)  # one simulated second
    for s in stamps:
        schedule.release_s(s, arrival_s=2.0 * s / NS_PER_S)
    report = schedule.report(now_s=2.0)
    assert report.sim_s == pytest.approx(1.0, abs=1e-6)
    assert report.rate == pytest.approx(0.5)
    assert report.late_messages == 240
    assert report.behind_s > 0
    assert "rate 0.50 of real time" in report.describe()
    assert "sending thread" not in report.describe()  # the schedule does not send
    # The next span starts empty; the run's report still covers everything.
    assert schedule.report(now_s=3.0).messages == 0
    assert schedule.run_report(now_s=2.0).messages == 241


@pytest.mark.parametrize("delay_s", [-0.1, float("inf"), float("nan")])
def test_a_bad_delay_is_refused(delay_s: float) -> None:
    with pytest.raises(ConfigError, match="delay_s"):
        PaceSchedule(delay_s)


class _Clock:
    """A clock the test moves (the sender's thread reads it)."""

    def __init__(self) -> None:
        self.now_s = 0.0

    def __call__(self) -> float:
        return self.now_s


def test_the_sender_sends_everything_in_order_and_reports_falling_behind() -> None:
    clock = _Clock()
    sent: list[int] = []
    behind: list[PaceReport] = []
    sender: PacedSender[int] = PacedSender(
        sent.append, 0.0, on_behind=behind.append, report_period_s=1000.0, clock=clock
    )
    for k in range(50):
        sender.put(k * IMU_NS, k)
    clock.now_s = 10.0  # everything queued is due; the next one arrives 10 s late
    sender.put(50 * IMU_NS, 50)
    report = sender.close()
    assert sent == list(range(51))
    assert report.messages == 51
    assert report.late_messages == 1
    assert report.sends_late is not None
    assert "sending thread" in report.describe()
    assert [r.late_messages for r in behind] == [1]  # reported at close (the last span)


def test_close_with_flush_now_sends_what_waits_without_waiting_for_its_time() -> None:
    clock = _Clock()
    sent: list[str] = []
    sender: PacedSender[str] = PacedSender(sent.append, 3600.0, on_behind=print, clock=clock)
    sender.put(0, "a")
    sender.put(IMU_NS, "b")
    sender.close(flush_now=True)
    assert sent == ["a", "b"]


def test_an_error_in_send_reaches_the_caller() -> None:
    failed = threading.Event()

    def send(item: int) -> None:
        failed.set()
        raise RuntimeError(f"publisher gone ({item})")

    sender: PacedSender[int] = PacedSender(send, 0.0, on_behind=print)
    sender.put(0, 7)
    failed.wait()
    with pytest.raises(RuntimeError, match=r"publisher gone \(7\)"):
        sender.close()


@pytest.mark.parametrize(
    ("realtime", "pace_publishing", "lockstep", "paced"),
    [
        (True, True, False, True),
        (True, False, False, False),  # pace_publishing:=false: as soon as simulated
        (False, True, False, False),  # as fast as possible: nothing to pace against
        (True, True, True, False),  # lockstep: the controller sets the pace, unchanged
    ],
)
def test_sim_node_paces_only_realtime_runs_without_lockstep(
    realtime: bool, pace_publishing: bool, lockstep: bool, paced: bool
) -> None:
    from grade_sim.node.sim_node import SimNodeParameters

    params = SimNodeParameters(
        scenario="s.yaml", realtime=realtime, pace_publishing=pace_publishing, lockstep=lockstep
    )
    assert params.paced is paced
