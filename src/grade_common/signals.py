"""SIGINT/SIGTERM as a flag: the one way every grade loop and node learns it should stop.

A signal only sets a `threading.Event` that the loop checks between steps, so nothing is
interrupted half-way (a bag half-written, an exception thrown into native rclpy code).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def stop_flag(stop: threading.Event | None = None) -> Iterator[threading.Event]:
    """An event set by SIGINT/SIGTERM while the context is active.

    Args:
        stop: the event to set (default: a new one).

    Signal handlers can only be installed from the main thread; elsewhere the event is still
    yielded (set by whoever owns it) and the handlers stay as they are.
    """
    event = threading.Event() if stop is None else stop
    if threading.current_thread() is not threading.main_thread():
        yield event
        return
    previous = {sig: signal.signal(sig, lambda *_: event.set()) for sig in STOP_SIGNALS}
    try:
        yield event
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
