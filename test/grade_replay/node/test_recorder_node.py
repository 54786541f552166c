"""The recorder node as a real process, fed by a separate publisher process."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rosbags.interfaces import ConnectionExtRosbag2, QosDurability, QosReliability
from rosbags.rosbag2 import Reader

from grade_common import ros_distro

TS = ros_distro.typestore()

PUBLISHER = """
import sys, time
import rclpy
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Imu
from std_msgs.msg import String

count = int(sys.argv[1])  # 0 = publish until killed
rclpy.init()
node = Node("test_publisher")
marker = node.create_publisher(String, "/starting_experiment", QoSProfile(
    depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE))
chatter = node.create_publisher(String, "/chatter", 1000)
imu = node.create_publisher(Imu, "/r/imu", 1000)
marker.publish(String(data="starting"))
deadline = time.monotonic() + 120
waited = [chatter, imu, marker] if sys.argv[2] == "all" else [chatter]
while any(p.get_subscription_count() == 0 for p in waited):
    if time.monotonic() > deadline:
        sys.exit("recorder never subscribed")
    time.sleep(0.05)
time.sleep(0.3)
print("publishing", flush=True)
i = 0
try:
    while count == 0 or i < count:
        chatter.publish(String(data=f"m{i}"))
        msg = Imu()
        msg.header.frame_id = "r/imu_link"
        msg.header.stamp.sec = i
        imu.publish(msg)
        i += 1
        if i == 50 and count == 0:
            # Tell the test that the recorder's reader holds 50 messages (a condition, not a
            # pause: on a busy machine that takes however long it takes).
            if not chatter.wait_for_all_acked(Duration(seconds=60)):
                sys.exit("the recorder did not acknowledge 50 messages in 60 s")
            print("acked", i, flush=True)
        time.sleep(0.005)
    # Every message in the recorder's reader before this node goes away.
    if not all(p.wait_for_all_acked(Duration(seconds=60)) for p in (chatter, imu)):
        sys.exit("the recorder did not acknowledge every message in 60 s")
finally:
    node.destroy_node()
    rclpy.try_shutdown()
print("done", i, flush=True)
"""


ALL_TEST_TOPICS = "['/chatter', '/starting_experiment', '/r/imu']"


def _start_recorder(bag: Path, topics: str | None = ALL_TEST_TOPICS) -> subprocess.Popen[str]:
    """The recorder on `topics` (a ROS parameter list), or on every topic when None."""
    topic_args = [] if topics is None else ["-p", f"topics:={topics}"]
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grade_replay.node.recorder",
            "--ros-args",
            "-p",
            f"output:={bag}",
            *topic_args,
            "-p",
            "discovery_period_s:=0.1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _stop(proc: subprocess.Popen[str], sig: signal.Signals) -> str:
    proc.send_signal(sig)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 0, out
    return out


def _read(bag: Path) -> dict[str, list[tuple[int, object]]]:
    with Reader(bag) as reader:
        out: dict[str, list[tuple[int, object]]] = {c.topic: [] for c in reader.connections}
        for conn, t_ns, data in reader.messages():
            out[conn.topic].append((t_ns, TS.deserialize_cdr(data, conn.msgtype)))
        return out


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.parametrize("topics", [ALL_TEST_TOPICS, None], ids=["listed", "all-discovered"])
def test_recorder_writes_every_message_with_types_and_qos(
    tmp_path: Path, topics: str | None
) -> None:
    bag = tmp_path / "rec_bag"
    script = tmp_path / "publisher.py"
    script.write_text(PUBLISHER)
    recorder = _start_recorder(bag, topics)
    try:
        pub = subprocess.run(
            [sys.executable, str(script), "60", "all"],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert pub.returncode == 0, pub.stdout + pub.stderr
    finally:
        log = _stop(recorder, signal.SIGINT)
    assert "finished: 121 messages" in log, log
    assert not (tmp_path / ".rec_bag.partial").exists()
    with Reader(bag) as reader:
        types = {c.topic: c.msgtype for c in reader.connections}
        qos = {
            c.topic: c.ext.offered_qos_profiles[0]
            for c in reader.connections
            if isinstance(c.ext, ConnectionExtRosbag2)
        }
    assert types == {
        "/chatter": "std_msgs/msg/String",
        "/starting_experiment": "std_msgs/msg/String",
        "/r/imu": "sensor_msgs/msg/Imu",
    }
    assert qos["/starting_experiment"].durability == QosDurability.TRANSIENT_LOCAL
    assert qos["/starting_experiment"].reliability == QosReliability.RELIABLE
    assert qos["/chatter"].durability == QosDurability.VOLATILE
    messages = _read(bag)
    assert [m.data for _, m in messages["/chatter"]] == [f"m{i}" for i in range(60)]
    assert [m.header.stamp.sec for _, m in messages["/r/imu"]] == list(range(60))
    assert [m.data for _, m in messages["/starting_experiment"]] == ["starting"]
    receive = [t for t, _ in messages["/chatter"]]
    assert receive == sorted(receive)
    assert abs(receive[0] / 1e9 - time.time()) < 120  # receive stamps from the node clock


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_signal_mid_run_leaves_a_readable_bag(tmp_path: Path, sig: signal.Signals) -> None:
    bag = tmp_path / "cut_bag"
    script = tmp_path / "publisher.py"
    script.write_text(PUBLISHER)
    recorder = _start_recorder(bag, "['/chatter']")
    pub = subprocess.Popen(
        [sys.executable, str(script), "0", "chatter"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert pub.stdout is not None
        assert pub.stdout.readline().strip() == "publishing"
        assert pub.stdout.readline().strip() == "acked 50"
        log = _stop(recorder, sig)
    finally:
        pub.send_signal(signal.SIGINT)
        pub.communicate(timeout=20)
        if recorder.poll() is None:
            recorder.kill()
    assert "finished:" in log
    chatter = [int(m.data[1:]) for _, m in _read(bag)["/chatter"]]
    assert len(chatter) > 10
    assert chatter == list(range(chatter[0], chatter[0] + len(chatter)))  # reliable: no gaps


@pytest.mark.ros
def test_recorder_refuses_an_existing_output(tmp_path: Path) -> None:
    bag = tmp_path / "exists"
    bag.mkdir()
    proc = _start_recorder(bag)
    out, _ = proc.communicate(timeout=20)
    assert proc.returncode == 1
    assert f"{bag}: output exists already" in out
    assert list(bag.iterdir()) == []


@pytest.mark.ros
def test_shipped_config_loads(tmp_path: Path, repo_root: Path) -> None:
    bag = tmp_path / "cfg_bag"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "grade_replay.node.recorder",
            "--ros-args",
            "--params-file",
            str(repo_root / "config" / "recorder.yaml"),
            "-p",
            f"output:={bag}",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert "['/clock', '/tf', '/tf_static', '/starting_experiment']" in first, first
    log = first + _stop(proc, signal.SIGINT)
    assert "finished: 0 messages" in log
    with Reader(bag) as reader:
        assert reader.message_count == 0
