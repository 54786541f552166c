"""RateSchedule: exact counts over any duration, evenly spaced, no drift; step stamps."""

from __future__ import annotations

import numpy as np
import pytest

from grade_sim.sensors.schedule import (
    RateSchedule,
    stamp_ns_of,
    step_stamps_ns,
    steps_at_or_before,
)

CASES = [
    # rate, physics rate, seconds (rate * seconds is whole)
    (240.0, 240.0, 2.0),
    (120.0, 240.0, 2.0),
    (60.0, 240.0, 3.0),
    (30.0, 240.0, 5.0),
    (50.0, 240.0, 3.0),  # 240 / 50 = 4.8 steps
    (100.0, 240.0, 2.0),  # 2.4 steps
    (7.0, 240.0, 4.0),
    (30.0, 1000.0, 3.0),  # 33.3 steps
    (0.5, 240.0, 10.0),
    (29.97, 240.0, 100.0),  # NTSC
]


@pytest.mark.parametrize(("rate", "physics", "seconds"), CASES)
def test_fires_round_rate_times_seconds_plus_step_zero(
    rate: float, physics: float, seconds: float
) -> None:
    sched = RateSchedule(rate, physics)
    n_steps = round(seconds * physics) + 1  # steps 0 .. seconds * physics inclusive
    fired = np.array([k for k in range(n_steps) if sched.due(k)])
    assert len(fired) == round(rate * seconds) + 1
    assert fired[0] == 0
    gaps = np.diff(fired)
    period = physics / rate
    assert gaps.min() >= np.floor(period)
    assert gaps.max() <= np.ceil(period)
    # No drift: the n-th firing is within one step of n * period.
    assert np.all(np.abs(fired - np.arange(len(fired)) * period) < 1.0)


def test_every_step_when_rates_match() -> None:
    sched = RateSchedule(240.0, 240.0)
    assert all(sched.due(k) for k in range(1000))


@pytest.mark.parametrize("physics_hz", [240.0, 1000.0, 333.0, 97.3])
def test_step_stamps_and_the_step_at_or_before_a_time_are_exact(physics_hz: float) -> None:
    steps = np.arange(0, 50_000, 7)
    stamps = step_stamps_ns(steps, physics_hz)
    assert stamps.tolist() == [stamp_ns_of(int(k), physics_hz) for k in steps]
    # On a step's own stamp (where the float product can land a hair below it), 1 ns before
    # and 1 ns after.
    assert np.array_equal(steps_at_or_before(stamps, physics_hz), steps)
    assert np.array_equal(steps_at_or_before(stamps - 1, physics_hz), steps - 1)
    assert np.array_equal(steps_at_or_before(stamps + 1, physics_hz), steps)


@pytest.mark.parametrize(("rate", "physics", "seconds"), CASES)
def test_fires_where_the_fraction_formula_does(rate: float, physics: float, seconds: float) -> None:
    from fractions import Fraction

    ratio = Fraction(rate).limit_denominator(1_000_000) / Fraction(physics).limit_denominator(
        1_000_000
    )
    sched = RateSchedule(rate, physics)
    steps = range(1, round(seconds * physics) + 1)
    assert [sched.due(k) for k in steps] == [int(k * ratio) > int((k - 1) * ratio) for k in steps]
