"""When each stream is due: exact integer arithmetic on physics steps, so rates never drift."""

from __future__ import annotations

from fractions import Fraction
from typing import Protocol

import numpy as np
from numpy.typing import NDArray


def stamp_ns_of(step: int, physics_hz: float) -> int:
    """Exact integer stamp of a physics step (no accumulated rounding)."""
    return round(step * 1e9 / physics_hz)


def step_stamps_ns(steps: NDArray[np.int64], physics_hz: float) -> NDArray[np.int64]:
    """stamp_ns_of for many steps at once (numpy rounds halves to even, as round does)."""
    out: NDArray[np.int64] = np.round(np.asarray(steps) * 1e9 / physics_hz).astype(np.int64)
    return out


def steps_at_or_before(times_ns: NDArray[np.int64], physics_hz: float) -> NDArray[np.int64]:
    """The last physics step whose stamp is at or before each time. The float product can land
    a hair below a step's own stamp; the step is then found exactly from the stamps."""
    times = np.asarray(times_ns)
    steps: NDArray[np.int64] = np.floor(times * physics_hz / 1e9).astype(np.int64)
    steps += step_stamps_ns(steps + 1, physics_hz) <= times
    steps -= step_stamps_ns(steps, physics_hz) > times
    return steps


class RateSchedule:
    """Fires at step 0 and whenever floor(step * rate / physics_rate) increases."""

    def __init__(self, rate_hz: float, physics_hz: float) -> None:
        ratio = Fraction(rate_hz).limit_denominator(1_000_000) / Fraction(
            physics_hz
        ).limit_denominator(1_000_000)
        # floor(step * ratio) in plain integers: Fraction arithmetic at every step of every
        # stream cost about 0.05 CPU s per simulated second in the default scenario.
        self._num, self._den = ratio.numerator, ratio.denominator

    def due(self, step: int) -> bool:
        if step == 0:
            return True
        return (step * self._num) // self._den > ((step - 1) * self._num) // self._den


class AtStep:
    """Fires at exactly one step (latched messages: /tf_static at 0, the experiment start)."""

    def __init__(self, step: int) -> None:
        self.step = step

    def due(self, step: int) -> bool:
        return step == self.step


class Schedule(Protocol):
    """When a stream is due; RateSchedule and AtStep are the two kinds."""

    def due(self, step: int) -> bool: ...
