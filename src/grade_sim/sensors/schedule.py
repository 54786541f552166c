"""When each stream is due: exact integer arithmetic on physics steps, so rates never drift."""

from __future__ import annotations

from fractions import Fraction
from typing import Protocol


class RateSchedule:
    """Fires at step 0 and whenever floor(step * rate / physics_rate) increases."""

    def __init__(self, rate_hz: float, physics_hz: float) -> None:
        self._ratio = Fraction(rate_hz).limit_denominator(1_000_000) / Fraction(
            physics_hz
        ).limit_denominator(1_000_000)

    def due(self, step: int) -> bool:
        if step == 0:
            return True
        return int(step * self._ratio) > int((step - 1) * self._ratio)


class AtStep:
    """Fires at exactly one step (latched messages: /tf_static at 0, the experiment start)."""

    def __init__(self, step: int) -> None:
        self.step = step

    def due(self, step: int) -> bool:
        return step == self.step


class Schedule(Protocol):
    """When a stream is due; RateSchedule and AtStep are the two kinds."""

    def due(self, step: int) -> bool: ...
