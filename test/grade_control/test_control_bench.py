"""`grade bench control` runs and the circle is tracked far better with feed-forward."""

from __future__ import annotations

import pytest

from grade_control.bench import main, track_circle


def test_bench_prints_cost_and_tracking_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--updates", "50"]) == 0
    out = capsys.readouterr().out
    assert "mean" in out
    assert "us" in out
    assert out.count("RMS position error") == 2


def test_circle_tracking_error_bounds() -> None:
    with_ff = track_circle(feed_forward=True)
    without = track_circle(feed_forward=False)
    assert with_ff["rms_position_m"] < 0.01
    assert with_ff["rms_yaw_deg"] < 0.5
    assert without["rms_position_m"] > 5 * with_ff["rms_position_m"]


def test_closed_loop_on_the_plant_repeats_bit_for_bit() -> None:
    import numpy as np

    from grade_control.bench import circle_trajectory
    from grade_control.config import ControllerConfig
    from grade_control.controller import JointController, simulate_first_order

    runs = []
    for _ in range(2):
        controller = JointController(ControllerConfig.uav())
        times, positions, quats, velocities, yaw_rates = circle_trajectory(1.0, 20.0, 1.5, 5.0)
        controller.tracker.set_trajectory(
            times, positions, quats, velocities, yaw_rates, "world", 0.0
        )
        runs.append(simulate_first_order(controller, np.array([0.8, 0.1, 1.2, 0, 0, 1.0]), 5.0))
    for first, second in zip(runs[0], runs[1], strict=True):
        assert np.array_equal(first, second)
