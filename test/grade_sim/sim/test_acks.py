"""AckGate: a follower's acknowledgements pace the messages of its input topic."""

from __future__ import annotations

import threading
import time

import pytest

from grade_common.errors import ConfigError
from grade_sim.sim.acks import AckGate, AckLink, parse_ack_links
from grade_sim.sim.commands import LockstepTimeoutError

DEPTH, ACK = "/uav1/camera/depth/image_raw", "/uav1/explorer/depth_ack"


def test_links_parse_from_colon_pairs_separated_by_commas() -> None:
    assert parse_ack_links("") == ()
    assert parse_ack_links(f" {DEPTH}:{ACK} , /a:/b") == (AckLink(DEPTH, ACK), AckLink("/a", "/b"))


@pytest.mark.parametrize(
    ("value", "named"),
    [("uav1/depth:/ack", "uav1/depth:/ack"), ("/a", "/a"), ("/a:/b,/a:/c", "listed twice")],
)
def test_a_malformed_link_is_refused_naming_it(value: str, named: str) -> None:
    with pytest.raises(ConfigError, match="lockstep_acks") as err:
        parse_ack_links(value)
    assert named in str(err.value)


def test_the_first_message_passes_and_the_next_waits_for_its_acknowledgement() -> None:
    gate = AckGate((AckLink(DEPTH, ACK),), timeout_s=5.0)
    gate.before_publish(DEPTH, 100, b"first")  # nothing pending yet
    gate.before_publish("/uav1/imu", 100, b"x")  # unlinked topics are never held
    released = threading.Event()

    def publish_second() -> None:
        gate.before_publish(DEPTH, 200, b"second")
        released.set()

    thread = threading.Thread(target=publish_second)
    thread.start()
    assert not released.wait(0.2), "the second message went out before the first was acked"
    gate.acknowledge(ACK, 99)  # an older stamp does not count
    assert not released.wait(0.2)
    gate.acknowledge(ACK, 100)
    assert released.wait(2.0)
    thread.join()


def test_an_overdue_acknowledgement_resends_then_times_out_naming_the_topics() -> None:
    gate = AckGate((AckLink(DEPTH, ACK),), timeout_s=1.2)
    resent: list[tuple[str, bytes]] = []
    gate.resend = lambda topic, cdr: resent.append((topic, cdr))
    gate.before_publish(DEPTH, 5_000_000_000, b"frame")
    start = time.monotonic()
    with pytest.raises(LockstepTimeoutError, match=f"{ACK}.*5.000000 s on {DEPTH}"):
        gate.before_publish(DEPTH, 6_000_000_000, b"next")
    assert time.monotonic() - start >= 1.2
    assert resent
    assert all(item == (DEPTH, b"frame") for item in resent)
