"""Lockstep with followers that consume sensor data (mappers, explorers, SLAM front ends).

Lockstep on odometry paces the simulator to the controller only: a slower node downstream of a
sensor topic falls behind and, on a busy machine, sees the run end before it has caught up. An
ack link names an input topic the simulator publishes and a topic on which a follower reports
(as a std_msgs/Header stamp) each input message it has finished with. Before publishing the next
message on the input topic, the simulator waits until the previous one is acknowledged, so the
follower lags at most one message however slow the machine is.

Links are written `INPUT:ACK` (a colon never occurs in a ROS topic name), several separated by
commas: `/uav1/camera/depth/image_raw:/uav1/explorer/depth_ack`.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from grade_common.errors import ConfigError
from grade_sim.sim.commands import RESEND_AFTER_S, LockstepTimeoutError

# An absolute ROS topic name: /token(/token)*, tokens of letters, digits and underscores.
_TOPIC = r"/[A-Za-z_][A-Za-z0-9_]*(?:/[A-Za-z_][A-Za-z0-9_]*)*"
_LINK = re.compile(rf"({_TOPIC}):({_TOPIC})")


@dataclass(frozen=True)
class AckLink:
    """Every message on `input_topic` is acknowledged by a stamp on `ack_topic`."""

    input_topic: str
    ack_topic: str


def parse_ack_links(value: str, name: str = "lockstep_acks") -> tuple[AckLink, ...]:
    """`INPUT:ACK[,INPUT:ACK...]` -> links; "" -> none.

    Raises:
        ConfigError: a link is malformed or an input topic is listed twice (names `name`).
    """
    links: list[AckLink] = []
    for item in (part.strip() for part in value.split(",")) if value.strip() else ():
        match = _LINK.fullmatch(item)
        if match is None:
            raise ConfigError(
                f"parameter {name!r}: {item!r} is not a link; allowed: INPUT:ACK with absolute "
                "topic names, several separated by commas "
                "(e.g. /uav1/camera/depth/image_raw:/uav1/explorer/depth_ack)"
            )
        link = AckLink(match.group(1), match.group(2))
        if any(other.input_topic == link.input_topic for other in links):
            raise ConfigError(
                f"parameter {name!r}: input topic {link.input_topic!r} is listed twice"
            )
        links.append(link)
    return tuple(links)


class AckGate:
    """Thread-safe: acknowledgements arrive from subscriptions, the simulation thread waits."""

    def __init__(self, links: tuple[AckLink, ...], timeout_s: float = 10.0) -> None:
        self.links = links
        self.timeout_s = timeout_s
        self._ack_of = {link.input_topic: link.ack_topic for link in links}
        self._acked_ns: dict[str, int] = {}  # by ack topic: the latest stamp acknowledged
        self._pending: dict[str, tuple[int, bytes]] = {}  # by input topic: last published
        self._cond = threading.Condition()
        # Called with (input topic, message) while its acknowledgement is overdue: the message
        # may have been dropped on the way, so it is sent again.
        self.resend: Callable[[str, bytes], None] | None = None

    def acknowledge(self, ack_topic: str, stamp_ns: int) -> None:
        with self._cond:
            self._acked_ns[ack_topic] = max(stamp_ns, self._acked_ns.get(ack_topic, -1))
            self._cond.notify_all()

    def before_publish(self, input_topic: str, stamp_ns: int, cdr: bytes) -> None:
        """Block until the previous message on `input_topic` is acknowledged; then remember
        this one as pending. Topics without a link pass at once.

        Raises:
            LockstepTimeoutError: no acknowledgement within `timeout_s` of wall time.
        """
        ack_topic = self._ack_of.get(input_topic)
        if ack_topic is None:
            return
        with self._cond:
            pending = self._pending.get(input_topic)
            if pending is not None:
                self._wait(input_topic, ack_topic, pending)
            self._pending[input_topic] = (stamp_ns, cdr)

    def _wait(self, input_topic: str, ack_topic: str, pending: tuple[int, bytes]) -> None:
        stamp_ns, cdr = pending

        def acked() -> bool:
            return self._acked_ns.get(ack_topic, -1) >= stamp_ns

        deadline = time.monotonic() + self.timeout_s
        while not self._cond.wait_for(
            acked, timeout=max(0.0, min(RESEND_AFTER_S, deadline - time.monotonic()))
        ):
            if time.monotonic() >= deadline:
                raise LockstepTimeoutError(
                    f"lockstep: no acknowledgement on {ack_topic} of the message stamped "
                    f"{stamp_ns / 1e9:.6f} s on {input_topic} within {self.timeout_s} s; is the "
                    "follower running with acknowledgements on?"
                )
            if self.resend is not None:
                self._cond.release()
                try:
                    self.resend(input_topic, cdr)
                finally:
                    self._cond.acquire()
