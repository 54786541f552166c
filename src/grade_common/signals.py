"""SIGINT/SIGTERM as a flag: the one way every grade loop and node learns it should stop.

A signal only sets a `threading.Event` that the loop checks between steps, so nothing is
interrupted half-way (a bag half-written, an exception thrown into native rclpy code).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

_last_signal: list[
    int
] = []  # stop signals received in this process (stop_flag, interrupt_on_sigterm)


def stopped_exit_code() -> int:
    """The exit code of a command that a signal stopped: 128 + the signal's number (130 for
    SIGINT, 143 for SIGTERM, the shell convention); 130 when no signal was seen (Ctrl-C raised
    as KeyboardInterrupt)."""
    return 128 + (_last_signal[-1] if _last_signal else int(signal.SIGINT))


def _on_signal(event: threading.Event) -> Callable[[int, FrameType | None], None]:
    def handler(signum: int, _frame: FrameType | None) -> None:
        _last_signal.append(signum)
        event.set()

    return handler


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
    on_signal = _on_signal(event)
    previous = {sig: signal.signal(sig, on_signal) for sig in STOP_SIGNALS}
    try:
        yield event
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _interrupt(signum: int, _frame: FrameType | None) -> None:
    _last_signal.append(signum)
    raise KeyboardInterrupt


@contextmanager
def interrupt_on_sigterm() -> Iterator[None]:
    """While active, SIGTERM acts like Ctrl-C (a KeyboardInterrupt, so `finally` blocks remove
    temporary folders) and both are remembered for `stopped_exit_code` (130 / 143). For
    command-line entry points, in the main thread; loops that must not be cut use `stop_flag`
    inside it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _interrupt) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
