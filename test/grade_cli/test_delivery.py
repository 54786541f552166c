"""The local transport with real processes: the simulator at real-time pace, a reliable and a
best-effort subscriber process; every message arrives, and no process binds a socket outside
loopback (read from the kernel's socket tables while they run); a best-effort subscriber that
had no CPU during a burst still gets all of it."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grade_common.ros_distro import fastdds_profile_env
from grade_common.transport import (
    DISCOVERY_RANGE_ENV,
    PROFILE_RELPATH,
    bound_sockets,
    local_transport_environment,
)

SMALL = Path(__file__).resolve().parents[1] / "grade_sim" / "node" / "data" / "indoor_small.yaml"


def test_socket_table_sees_a_non_loopback_bind() -> None:
    # The check the transport test relies on must be able to fail: bind 0.0.0.0 here.
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("0.0.0.0", 0))
        port = s.getsockname()[1]
        mine = [b for b in bound_sockets(os.getpid()) if b.port == port]
    assert [(b.table, b.address, b.is_loopback) for b in mine] == [("udp", "0.0.0.0", False)]


def test_environment_names_the_shipped_profile(repo_root: Path) -> None:
    env = local_transport_environment(repo_root / PROFILE_RELPATH)
    assert env == {
        fastdds_profile_env(): str(repo_root / "config/fastdds/localhost.xml"),
        DISCOVERY_RANGE_ENV: "SYSTEM_DEFAULT",
    }
    with pytest.raises(FileNotFoundError, match=r"nope\.xml"):
        local_transport_environment(repo_root / "nope.xml")


@pytest.mark.ros
@pytest.mark.slow
def test_reliable_and_best_effort_subscribers_receive_every_message(tmp_path: Path) -> None:
    from grade_cli.delivery import run_delivery

    result = run_delivery(
        scenario=SMALL, duration_s=3.0, noise_params=None, workdir=tmp_path, start_delay_s=4.0
    )
    assert result.published["/uav1/camera/rgb/image_raw"] >= 3 * 30
    assert result.published["/uav1/imu"] >= 3 * 240
    received = {
        qos: {t: result.received[qos].get(t, 0) for t in result.published}
        for qos in ("reliable", "sensor_data")
    }
    assert received == {"reliable": result.published, "sensor_data": result.published}
    # At real-time pace the simulator publishes through its pacing queue (grade_sim.sim.pacing),
    # which sent every message it was given; the reliable counter saw each one's source stamp.
    paced = re.search(r"paced publishing: (\d+) messages", result.sim_log)
    assert paced is not None, result.sim_log[-3000:]
    assert int(paced.group(1)) == sum(result.published.values())
    timing = result.timing["reliable"]
    assert {t: timing[t]["messages"] for t in result.published} == result.published
    assert set(result.sockets) == {"counter_reliable", "counter_sensor_data", "sim_node"}
    assert all(result.sockets.values()), result.sockets  # each process had sockets to check
    assert result.non_loopback() == {}


STALL_PUBLISHER = r"""
import sys, time
import rclpy
from rclpy.qos import QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image, Imu

image = sys.argv[1] == "image"
rclpy.init()
node = rclpy.create_node("stall_publisher")
# As the simulator publishes its IMU (reliable, keep last 100) and its 640x480 rgb images.
qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
pub = node.create_publisher(Image if image else Imu, "/stall/data", qos)
deadline = time.monotonic() + 120.0
while pub.get_subscription_count() == 0:
    if time.monotonic() > deadline:
        sys.exit("the counter never subscribed")
    time.sleep(0.05)
msg = Imu()
if image:
    msg = Image(height=480, width=640, encoding="rgb8", step=1920, data=bytes(921600))
for line in sys.stdin:  # one command a line: 'one' or 'burst N'
    words = line.split()
    for i in range(1 if words[0] == "one" else int(words[1])):
        msg.header.stamp.sec = i
        pub.publish(msg)
    print("sent", flush=True)
node.destroy_node()
rclpy.shutdown()
"""


def _wait_count(
    counter: subprocess.Popen[str],
    topic: str,
    want: int,
    limit_s: float,
    dead_below: int = 0,
    dead_after_s: float = 20.0,
) -> int:
    """Read the counter's progress lines until `topic` has `want` messages; return the last
    count seen (fewer when the limit, a bound on the condition, passed). A count still under
    `dead_below` that the counter's own progress lines show unchanged for `dead_after_s` ends
    the wait early: the transport gave the reader up and nothing more comes."""
    from grade_replay.node.topic_counter import PROGRESS_COUNTS_PREFIX

    assert counter.stdout is not None
    seen = 0
    deadline = time.monotonic() + limit_s
    last_change = time.monotonic()
    while seen < want and time.monotonic() < deadline:
        line = counter.stdout.readline()
        if not line:
            break
        if line.startswith(PROGRESS_COUNTS_PREFIX):
            count = json.loads(line[len(PROGRESS_COUNTS_PREFIX) :]).get(topic, 0)
            if count != seen:
                seen, last_change = count, time.monotonic()
            elif seen < dead_below and time.monotonic() - last_change > dead_after_s:
                break
    return seen


def _stall_trial(tmp_path: Path, kind: str, burst: int) -> tuple[int, int, bool]:
    """One stall: the counter is stopped (SIGSTOP) while `burst` samples are published, then
    continued. Returns the samples received before the stall, the samples received in all, and
    whether the reader's port is still served after the burst."""
    from grade_replay.node.topic_counter import READY_LINE

    script = tmp_path / "stall_publisher.py"
    script.write_text(STALL_PUBLISHER)
    counter = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grade_replay.node.topic_counter",
            *("--qos", "sensor_data", "--include", "^/stall/", "--depth", "3000"),
            *("--progress-period-s", "0.2"),
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    publisher = subprocess.Popen(
        [sys.executable, str(script), kind],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert publisher.stdin is not None
    assert publisher.stdout is not None
    assert publisher.stderr is not None
    assert counter.stdout is not None
    try:
        assert counter.stdout.readline().strip() == READY_LINE
        # Until one sample has arrived, the two ends may not be matched yet: repeat it.
        got = 0
        for _ in range(100):
            publisher.stdin.write("one\n")
            publisher.stdin.flush()
            assert publisher.stdout.readline().strip() == "sent", publisher.stderr.read()
            got = _wait_count(counter, "/stall/data", 1, 1.0)
            if got:
                break
        assert got >= 1, "the counter never received a sample"
        counter.send_signal(signal.SIGSTOP)
        publisher.stdin.write(f"burst {burst}\n")
        publisher.stdin.flush()
        assert publisher.stdout.readline().strip() == "sent", publisher.stderr.read()
        counter.send_signal(signal.SIGCONT)
        # A count that stops short of the burst stops for good: waiting out the minute adds
        # nothing.
        want = got + burst
        received = _wait_count(counter, "/stall/data", want, 60.0, dead_below=want)
        if received == want:
            return got, received, True
        # Short: is the reader's port still served? A sample published now reaches a live
        # reader whatever the burst lost; a port the transport gave up on gets nothing more.
        for _ in range(10):
            publisher.stdin.write("one\n")
            publisher.stdin.flush()
            assert publisher.stdout.readline().strip() == "sent", publisher.stderr.read()
            if _wait_count(counter, "/stall/data", received + 1, 1.0) > received:
                return got, received, True
        return got, received, False
    finally:
        counter.send_signal(signal.SIGCONT)
        for proc in (publisher, counter):
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            try:
                proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()


# A counter that stops counting: progress lines with the same count, every 0.05 s for 3 s.
_STUCK_COUNTER = (
    "import json, sys, time\n"
    "from grade_replay.node.topic_counter import PROGRESS_COUNTS_PREFIX as P\n"
    "for _ in range(60):\n"
    "    print(P + json.dumps({'/t': int(sys.argv[1])}), flush=True)\n"
    "    time.sleep(0.05)\n"
)


@pytest.mark.parametrize(("count", "ends_early"), [(3, True), (40, False)])
def test_a_wait_ends_early_only_for_a_reader_stuck_under_the_retry_share(
    count: int, ends_early: bool
) -> None:
    counter = subprocess.Popen(
        [sys.executable, "-c", _STUCK_COUNTER, str(count)], stdout=subprocess.PIPE, text=True
    )
    try:
        seen = _wait_count(counter, "/t", 100, 60.0, dead_below=10, dead_after_s=0.5)
        assert seen == count
        # Stuck under dead_below: the wait ends with most of the counter's lines unread; above
        # it, the wait reads them all, to the counter's end.
        rest, _ = counter.communicate(timeout=30)
        assert (rest != "") == ends_early
    finally:
        if counter.poll() is None:
            counter.kill()
            counter.communicate()


@pytest.mark.ros
@pytest.mark.parametrize(("kind", "burst"), [("imu", 2000), ("image", 100)])
def test_best_effort_subscriber_keeps_a_burst_it_had_no_cpu_for(
    tmp_path: Path, kind: str, burst: int
) -> None:
    # A process without CPU for a moment, made exact: the counter is stopped (SIGSTOP) while
    # a burst is published, then continued. What it gets afterwards is what the transport held
    # for it: of 2000 IMU samples (8 s at 240 Hz) the earlier profile (Fast DDS's default
    # 512-message port queue) kept 512, of 100 rgb images (3.3 s at 30 Hz, 92 MB; 64 MiB
    # segment) 18. grade's profile keeps all of both. Counts only: no rate, no pause.
    # A SIGSTOP can land while the counter's listener holds its port's interprocess mutex (no
    # scheduler ever parks a thread there for long); the publisher then waits out Fast DDS's
    # health check and declares the port dead, and nothing more arrives, not even samples
    # published after the burst (seen on a load-8 machine in about 1 of 8 stalls; in CI once
    # 244 samples into a burst). Such a trial says nothing about the queue and the segment,
    # whose failures leave the port served (a sample published after the burst still
    # arrives): it is run again, at most twice.
    got, received, served = 0, 0, False
    for _ in range(3):
        got, received, served = _stall_trial(tmp_path, kind, burst)
        if served:
            break
    assert served, "in three trials the transport gave the stopped reader's port up"
    assert received == got + burst


def test_report_shows_each_counter_and_the_publish_timing_of_the_fullest_reliable_one() -> None:
    import argparse

    from grade_cli.delivery import DeliveryResult, _depths, format_report

    assert _depths("5,50,200") == (5, 50, 200)
    for bad in ("5,x", "0"):
        with pytest.raises(argparse.ArgumentTypeError, match="depth"):
            _depths(bad)
    timing = {"messages": 8, "gap_p50_ms": 0.05, "gap_p99_ms": 30.0, "gap_max_ms": 40.0}
    result = DeliveryResult(
        published={"/uav1/imu": 8},
        noise_published={},
        received={"reliable depth 5": {"/uav1/imu": 5}, "reliable depth 50": {"/uav1/imu": 8}},
        timing={
            "reliable depth 5": {"/uav1/imu": {**timing, "messages": 5, "burst_max": 5}},
            "reliable depth 50": {"/uav1/imu": {**timing, "burst_max": 8}},
        },
    )
    report = format_report(result)
    assert "5 ( 62.50 %)" in report
    assert "8 (100.00 %)" in report
    imu_timing = [line for line in report.splitlines() if line.startswith("  /uav1/imu")]
    assert imu_timing == [f"  {'/uav1/imu':46s}     0.05    30.00    40.00      8"]


def test_the_results_table_has_a_row_per_topic_and_a_column_per_qos() -> None:
    from grade_cli.delivery import DeliveryResult, delivery_table

    result = DeliveryResult(
        published={"/a": 10},
        noise_published={"/a_noisy": 4},
        received={"reliable": {"/a": 10, "/a_noisy": 4}, "sensor": {"/a": 7}},
    )
    table = delivery_table(result)
    assert table.columns == ("topic", "published", "received, reliable", "received, sensor")
    assert table.rows == (("/a", 10, 10, 7), ("/a_noisy", 4, 4, 0))
