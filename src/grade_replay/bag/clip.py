"""`grade bag clip`: keep a time window, or everything from the experiment start marker on."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from grade_replay.bag.io import (
    NS_PER_S,
    START_MARKER_TOPIC,
    atomic_output,
    copy_connection,
    open_bag,
    open_writer,
)
from grade_replay.errors import ReplayConfigError, TopicNotFoundError


@dataclass(frozen=True)
class ClipConfig:
    """The window to keep: seconds after the bag's first message, or after the start marker.

    Latched (transient local) messages from before the window, such as /tf_static, are kept
    with their stamps: without them the clipped bag would lose its static frames.
    """

    start_s: float | None = None
    end_s: float | None = None
    after_start_marker: bool = False

    def __post_init__(self) -> None:
        window = self.start_s is not None or self.end_s is not None
        if window == self.after_start_marker:
            raise ReplayConfigError(
                "clip: give either a window (--start/--end) or "
                "--after-start-marker, not both and not neither"
            )
        for name in ("start_s", "end_s"):
            value = getattr(self, name)
            if value is not None and (not math.isfinite(value) or value < 0):
                raise ReplayConfigError(f"clip: {name}={value} must be a finite number >= 0")
        if self.start_s is not None and self.end_s is not None and self.end_s <= self.start_s:
            raise ReplayConfigError(
                f"clip: end_s={self.end_s} must be greater than start_s={self.start_s}"
            )


@dataclass(frozen=True)
class ClipReport:
    """What `clip` kept: the absolute window and message counts."""

    window_start_ns: int
    window_stop_ns: int | None
    kept: int
    dropped: int
    latched_kept: int

    def format(self) -> str:
        """One line per fact."""
        stop = "end" if self.window_stop_ns is None else f"{self.window_stop_ns / NS_PER_S:.6f} s"
        return (
            f"window: {self.window_start_ns / NS_PER_S:.6f} s .. {stop}\n"
            f"kept {self.kept} messages ({self.latched_kept} latched from before the "
            f"window), dropped {self.dropped}"
        )


def _marker_ns(src: Path) -> int:
    with open_bag(src) as bag:
        conns = [c for c in bag.connections if c.topic == START_MARKER_TOPIC]
        if not conns:
            raise TopicNotFoundError(
                f"{src}: no start marker topic {START_MARKER_TOPIC} in the "
                "bag; clip it with --start/--end instead"
            )
        for _, t_ns, _ in bag.messages(conns):
            return t_ns
    raise TopicNotFoundError(f"{src}: start marker topic {START_MARKER_TOPIC} has no messages")


def clip_bag(
    src: Path | str, out: Path | str, config: ClipConfig, progress: bool = False
) -> ClipReport:
    """Write the part of `src` inside the window to the new bag `out`.

    Raises:
        BagError: the input bag cannot be read.
        TopicNotFoundError: --after-start-marker on a bag without the marker.
        BagOutputExistsError: `out` exists.
    """
    src = Path(src)
    start_ns: int
    stop_ns: int | None = None
    with open_bag(src) as bag:
        if config.after_start_marker:
            start_ns = _marker_ns(src)
        else:
            start_ns = bag.start_ns + round((config.start_s or 0.0) * NS_PER_S)
            if config.end_s is not None:
                stop_ns = bag.start_ns + round(config.end_s * NS_PER_S)
        kept = dropped = latched = 0
        with atomic_output(out, src) as tmp:
            writer = open_writer(tmp)
            try:
                conn_map = {c.id: copy_connection(writer, c, bag) for c in bag.connections}
                latched_ids = {c.id for c in bag.connections if bag.is_latched(c)}
                for conn, t_ns, data in bag.messages(progress=progress, desc="clip"):
                    inside = t_ns >= start_ns and (stop_ns is None or t_ns < stop_ns)
                    before_latched = t_ns < start_ns and conn.id in latched_ids
                    if inside or before_latched:
                        writer.write(conn_map[conn.id], t_ns, data)
                        kept += 1
                        latched += int(before_latched)
                    else:
                        dropped += 1
            finally:
                writer.close()
    return ClipReport(start_ns, stop_ns, kept, dropped, latched)
